"""The query/key map: one head's queries and keys from many windows, projected jointly into 2-D.

For a chosen attention site and head, the queries q and keys k of N windows (N·L_Q + N·L_K points; 256
windows of the paper's L = 96 make ~49 000) are put in ONE cloud and projected by PCA, so a query lands near
the keys it scores highly only if distance in the map reflects the dot product. Following AttentionViz
(Yeh et al., 2023) two changes are made first, both chosen so that no softmax row changes:

1. **Scale** queries by c and keys by 1/c: every q·k is unchanged. c = √(mean‖k − k̄‖ / mean‖q − q̄‖), so
   queries and keys have the same mean distance from their (shared, see 2.) centre — without it one cloud
   may sit as a dot inside the other.
2. **Translate the keys** (only) by t = c·q̄ − k̄/c, so the centroid of the keys falls on that of the queries.
   Adding one vector t to every key adds q·t/√D to every logit of query q's row: a constant per row, so every
   softmax row is unchanged (and so are ProbSparse's M̄ = max − mean, and its top-u). Translating the
   *queries* instead would add t·k_j/√D, which differs from key to key: it changes the rows, and is not done.

Then ‖q − k‖² = ‖q‖² + ‖k‖² − 2q·k, with both clouds centred on one point and equally spread: near means
a large dot product, as far as the norms allow. `normalise=False` maps the raw vectors.

PCA: the top two eigenvectors of the covariance of the centred joint cloud (float64, accumulated in chunks:
the same as an SVD of the centred matrix, without ever holding it), each signed so that its largest loading
is positive (deterministic). Computed in torch; no other dependency.

Recording. Only the site's queries, keys, sampled M̄ ("scores") and ProbSparse top-u ("selected") are
recorded, a batch of windows at a time, keeping only the chosen head: memory is 4·N·(L_Q + L_K)·D bytes for
the points plus one batch's recording. Every batch runs with a generator freshly seeded with `seed`, and key
samples depend on lengths only, so every window is scored on the same key sample whatever the batch size.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Informer, Site

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.heads.mask_scoring import default_max_rows
from informer_lab.analysis.attention.positions import site_positions, steps_or_unknown
from informer_lab.analysis.attention.recording import record_until, window_batch
from informer_lab.analysis.learning.windows import WindowDataset

CHUNK_ROWS = 1 << 16  # points per float64 chunk of the PCA


def find_site(model: Informer, name: str) -> Site:
    """The site called `name` ('encoder.0.1', 'decoder_self.0', 'cross.0'); ConfigError naming the choices."""
    for site in model.sites:
        if site.name == name:
            return site
    raise ConfigError(f"no attention site {name!r}; the model has {', '.join(s.name for s in model.sites)}")


def pick_windows(prepared: PreparedData, split: str, windows: int | Sequence[int]) -> np.ndarray:
    """A count → that many windows evenly strided through the split (all when it has fewer); a list → itself."""
    n = len(WindowDataset(prepared, split))
    if n == 0:
        raise ConfigError(f"the {split} split has no complete window")
    if isinstance(windows, (int, np.integer)):
        if windows < 1:
            raise ConfigError(f"choose at least one window, got {windows}")
        return np.unique(np.linspace(0, n - 1, num=min(n, int(windows))).round().astype(np.int64))
    picked = np.asarray([int(w) for w in windows], dtype=np.int64)
    bad = picked[(picked < 0) | (picked >= n)]
    if len(picked) == 0 or len(bad):
        raise ConfigError(f"window {int(bad[0]) if len(bad) else None} is outside the {split} split's {n} windows")
    return picked


# --------------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class QKPoints:
    """One head's raw vectors over N windows (row n is windows[n]).

    queries: [N, L_Q, D] float32; keys: [N, L_K, D] float32
    mbar:    [N, L_Q] sampled M̄ on the q·k/√D scale (NaN at a full-attention site)
    selected:[N, L_Q] bool: the query is in ProbSparse's top-u (every query at a full-attention site)
    """

    site: str
    head: int
    windows: np.ndarray
    queries: torch.Tensor
    keys: torch.Tensor
    mbar: np.ndarray
    selected: np.ndarray


def collect_qk(model: Informer, prepared: PreparedData, split: str, site: str, head: int, *,
               windows: int | Sequence[int] = 256, seed: int = 0, batch_size: int = 64) -> QKPoints:
    """Record `site`'s queries and keys of head `head` over `windows` (see `pick_windows`), `batch_size` at a time."""
    s = find_site(model, site)
    H = model.config.n_heads
    if not 0 <= head < H:
        raise ConfigError(f"head must be in 0 … {H - 1}, got {head}")
    if batch_size < 1:
        raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
    picks = pick_windows(prepared, split, windows)
    batch_size = min(batch_size, default_max_rows(model))
    names = [f"{site}.{suffix}" for suffix in ("queries", "keys", "scores", "selected")]
    fired = names if model.attention_layer(s).kind == "prob" else names[:2]  # full attention samples nothing
    queries, keys, mbar, selected = [], [], [], []
    for start in range(0, len(picks), batch_size):
        part = picks[start:start + batch_size]
        records = record_until(model, window_batch(prepared, split, part), seed, *fired)  # stops after the site
        queries.append(records[names[0]][:, :, head].float().clone())  # [b, L_Q, D]
        keys.append(records[names[1]][:, :, head].float().clone())  # [b, L_K, D]
        L_Q = queries[-1].shape[1]
        if names[2] in records:
            mbar.append(records[names[2]][:, head].double().numpy())  # [b, L_Q]
            chosen = np.zeros((len(part), L_Q), dtype=bool)
            np.put_along_axis(chosen, records[names[3]][:, head].numpy().astype(np.int64), True, axis=1)
            selected.append(chosen)
        else:  # full attention: every query has its softmax row, no M̄ is sampled
            mbar.append(np.full((len(part), L_Q), np.nan))
            selected.append(np.ones((len(part), L_Q), dtype=bool))
        del records
    return QKPoints(s.name, head, picks, torch.cat(queries), torch.cat(keys), np.concatenate(mbar),
                    np.concatenate(selected))


# --------------------------------------------------------------------------------------------
# The AttentionViz normalisation and the joint PCA
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Normalisation:
    """queries → scale·q; keys → k / scale + translation. scale = c (1 and 0 when not normalised)."""

    scale: float
    translation: np.ndarray  # [D]

    def apply(self, queries: torch.Tensor, keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """[..., D] queries and keys → the normalised pair (same shapes and dtype)."""
        t = torch.as_tensor(self.translation, dtype=keys.dtype, device=keys.device)
        return queries * self.scale, keys / self.scale + t


def attentionviz_normalisation(queries: torch.Tensor, keys: torch.Tensor) -> Normalisation:
    """c and t of the module docstring from [N_q, D] queries and [N_k, D] keys (float64 statistics).

    c = √(mean‖k − k̄‖ / mean‖q − q̄‖) (1 when either cloud is a single point); t = c·q̄ − k̄/c.
    """
    def mean_and_spread(x: torch.Tensor) -> tuple[torch.Tensor, float]:  # chunked: no float64 copy of x
        mean = sum(x[part].double().sum(dim=0) for part in _chunks(len(x))) / len(x)
        spread = sum(float((x[part].double() - mean).norm(dim=1).sum()) for part in _chunks(len(x))) / len(x)
        return mean, spread

    (q_mean, q_spread), (k_mean, k_spread) = mean_and_spread(queries), mean_and_spread(keys)
    c = math.sqrt(k_spread / q_spread) if q_spread > 0 and k_spread > 0 else 1.0
    return Normalisation(c, (c * q_mean - k_mean / c).numpy())


def _chunks(total: int):
    for start in range(0, total, CHUNK_ROWS):
        yield slice(start, min(total, start + CHUNK_ROWS))


def joint_pca(points: torch.Tensor, is_query: np.ndarray | None = None, normalisation: Normalisation | None = None,
              n_components: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PCA of [P, D] points: (coordinates [P, n], components [n, D], share of the variance [n]).

    With `normalisation`, the rows where `is_query` is True are queries and the rest keys, normalised on the fly.
    Covariance and projection in float64, CHUNK_ROWS points at a time (memory: the points and one chunk).
    Components beyond D are zero.
    """
    P, D = points.shape

    def chunk(part: slice) -> torch.Tensor:
        x = points[part].double()
        if normalisation is None:
            return x
        queries = torch.as_tensor(is_query[part])
        q, k = normalisation.apply(x[queries], x[~queries])
        out = torch.empty_like(x)
        out[queries], out[~queries] = q, k
        return out

    centre = torch.zeros(D, dtype=torch.float64)
    for part in _chunks(P):
        centre += chunk(part).sum(dim=0)
    centre /= max(P, 1)
    cov = torch.zeros(D, D, dtype=torch.float64)
    for part in _chunks(P):
        x = chunk(part) - centre
        cov += x.T @ x
    cov /= max(P, 1)
    values, vectors = torch.linalg.eigh(cov)  # ascending
    order = torch.argsort(values, descending=True)[:n_components]
    V = vectors[:, order]  # [D, k]
    flip = torch.sign(V.gather(0, V.abs().argmax(dim=0, keepdim=True)))  # largest loading positive
    V = V * torch.where(flip == 0, torch.ones_like(flip), flip)
    total = float(values.clamp_min(0).sum())
    explained = (values[order].clamp_min(0) / total).numpy() if total > 0 else np.zeros(len(order))
    xy = np.zeros((P, n_components))
    for part in _chunks(P):
        xy[part, :V.shape[1]] = ((chunk(part) - centre) @ V).numpy()
    components = np.zeros((n_components, D))
    components[:V.shape[1]] = V.T.numpy()
    explained = np.concatenate([explained, np.zeros(n_components - len(explained))])
    return xy, components, explained


# --------------------------------------------------------------------------------------------
# The map
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class QKMap:
    """One head's queries and keys in one 2-D map. P = N·L_Q + N·L_K points: every query (window-major, then
    position), then every key.

    xy:        [P, 2] map coordinates (PCA of the normalised joint cloud)
    is_query:  [P] bool;  window: [P] window of the split;  position: [P] row along the site's L_Q / L_K axis
    step:      [P] input step of the query / key (start of its span; analysis.attention.positions; −1 where it does not
               place the model's positions);  timestamp: [P] (NaT where step is −1)
    selected:  [P] bool: the query is in its window's ProbSparse top-u for this head (full attention: every
               query); always False for keys
    mbar:      [P] sampled M̄ of the query (q·k/√D scale); NaN for keys and at full-attention sites
    normalisation: the scale c and key translation applied (scale 1, translation 0 when normalise=False)
    components:[2, D] the principal axes;  explained: [2] their share of the joint variance
    attention: "prob" or "full" (how the site ran)
    """

    site: str
    head: int
    split: str
    seed: int
    windows: np.ndarray
    xy: np.ndarray
    is_query: np.ndarray
    window: np.ndarray
    position: np.ndarray
    step: np.ndarray
    timestamp: pd.DatetimeIndex
    selected: np.ndarray
    mbar: np.ndarray
    normalisation: Normalisation
    components: np.ndarray
    explained: np.ndarray
    attention: str

    @property
    def n_points(self) -> int:
        return len(self.xy)


def qk_map(model: Informer, prepared: PreparedData, split: str, site: str, head: int, *,
           windows: int | Sequence[int] = 256, seed: int = 0, normalise: bool = True,
           batch_size: int = 64) -> QKMap:
    """The query/key map of head `head` at `site` over `windows` of `split` (a count: evenly strided).

    normalise: the AttentionViz scaling and key translation before the PCA (module docstring).
    batch_size: windows per forward call, capped by `mask_scoring.default_max_rows` (~1 GiB per activation).
    Raises ConfigError for an unknown site, a head or window out of range; ValueError for a model in train mode.
    """
    points = collect_qk(model, prepared, split, site, head, windows=windows, seed=seed, batch_size=batch_size)
    N, L_Q, D = points.queries.shape
    L_K = points.keys.shape[1]
    q, k = points.queries.reshape(-1, D), points.keys.reshape(-1, D)
    norm = attentionviz_normalisation(q, k) if normalise else Normalisation(1.0, np.zeros(D))
    is_query = np.concatenate([np.ones(N * L_Q, bool), np.zeros(N * L_K, bool)])
    xy, components, explained = joint_pca(torch.cat([q, k]), is_query, norm if normalise else None)

    s = find_site(model, site)
    pos = site_positions(model.config, s)
    w = points.windows
    window = np.concatenate([np.repeat(w, L_Q), np.repeat(w, L_K)])
    position = np.concatenate([np.tile(np.arange(L_Q), N), np.tile(np.arange(L_K), N)])
    q_steps, k_steps = steps_or_unknown(pos.query_start, L_Q), steps_or_unknown(pos.key_start, L_K)
    step = np.concatenate([np.tile(q_steps, N), np.tile(k_steps, N)]).astype(np.int64)
    stamps = prepared.split(split).timestamps[window + np.maximum(step, 0)].where(step >= 0)
    for array in (xy, components, explained, window, position, step):
        array.setflags(write=False)
    return QKMap(site=s.name, head=head, split=split, seed=seed, windows=w, xy=xy,
                 is_query=is_query, window=window,
                 position=position, step=step, timestamp=stamps,
                 selected=np.concatenate([points.selected.reshape(-1), np.zeros(N * L_K, bool)]),
                 mbar=np.concatenate([points.mbar.reshape(-1), np.full(N * L_K, np.nan)]), normalisation=norm,
                 components=components, explained=explained, attention=model.attention_layer(s).kind)


def qk_map_table(m: QKMap) -> pd.DataFrame:
    """One row per point: kind ("query" | "key"), x, y, window, position, step, timestamp, selected, mbar."""
    return pd.DataFrame({
        "kind": np.where(m.is_query, "query", "key"), "x": m.xy[:, 0], "y": m.xy[:, 1], "window": m.window,
        "position": m.position, "step": m.step, "timestamp": m.timestamp, "selected": m.selected, "mbar": m.mbar,
    })


__all__ = ["Normalisation", "QKMap", "QKPoints", "attentionviz_normalisation", "collect_qk", "find_site",
           "joint_pca", "pick_windows", "qk_map", "qk_map_table"]
