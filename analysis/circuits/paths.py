"""Path patching (Wang et al. 2022, "Interpretability in the Wild", §3 and appendix B) in the lab's convention: clean
window A into corrupted input B, as `analysis.instruments.patching` (Wang et al. patch the corrupted activation into
the clean run; the lab's direction is the reverse, so "restored" reads as in activation patching).

A sender head (site, head) and receivers (site, head, what), what ∈ {"q", "k", "v", "out"}: a receiver head's query,
key or value input (hook sites "<site>.queries / keys / values", [B, L, H, D], the head's slice) or its whole output
(its per-head context, "<site>.context", [B, L_Q, H, D], at the head gate).

    0. run A, recording the sender's context; run B, recording every context and the receivers' inputs;
    1. run B with the sender's context replaced by A's and every head that is neither the sender nor a receiver
       frozen at its context in B (HeadMask: gate 0, B's contexts as the per-window replacement); receivers and
       everything that is not a head (embeddings, FFNs, LayerNorms, distilling) are computed; record the receivers'
       slices;
    2. run B with only the receivers' recorded slices put in, everything else computed freely: "out" receivers by
       the head gate (gate 0, the recorded context as replacement), "q"/"k"/"v" receivers by patching the hook site
       with the tensor that run computes there, the receiver heads' slices replaced (`model.patching` takes whole
       tensors: where a receiver lies upstream of a q/k/v receiver's site, one more pass records what that site
       computes under the patches before it, so the other heads there are not held at B's values).

The forecast's change from B is the sender's effect through those paths alone. A receiver no path from the sender
reaches (analysis.circuits.reach), or the sender itself, is refused by name: its patch would read as a measured 0. Receivers are free in step 1 (Wang
et al. freeze them too): a path sender → R1 → R2 counts, and with every head an "out" receiver (the sender included,
`path_forecasts(unreached=True)`) path patching is activation patching of the sender. Key samples: every forward draws from a generator freshly seeded
with `seed` (`key_generator`), as patching.py does: every run sees the same sample.

Pairs: K (A, B) window pairs, A = w and B = w + offset (default: half the split's windows), w evenly spread over
the first n − offset windows, one in `stride` = ⌈(n − offset) / K⌉. Per pair and step, standardised: delta = the mean
over columns of f_patched − f_B; restored = Σ_c (f_patched − f_B)(f_A − f_B) / Σ_c (f_A − f_B)² (patching.py's).
Over pairs: delta by `analysis.intervals.window_means` (span = `data_span` of the pairs' spacing); restored as the
ratio of the pairs' mean numerator to their mean denominator (`ratio_interval`), so a pair whose A and B nearly agree
weighs little instead of exploding a ratio. The last pairs' A windows may share rows with the first pairs' B windows:
the intervals count neighbouring pairs only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Batch, HeadMask, Informer, Site

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.discoveries import discovery_columns
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.instruments.patching import patched_forward
from informer_lab.analysis.circuits.reach import check_reachable, execution_order, why_unreached
from informer_lab.analysis.intervals import ratio_interval, window_means
from informer_lab.analysis.row_memory import data_span
from informer_lab.analysis.learning.windows import WindowDataset, collate

WHATS = {"q": "queries", "k": "keys", "v": "values", "out": "context"}
PAIRS = 32
BATCH = 32
COLUMNS = ("sender", "receiver", "step", "delta", "low", "high", "restored", "restored_low", "restored_high", "pairs",
           "reason")
GRID_COLUMNS = ("sender", "receiver", "what", "delta", "low", "high", "restored", "restored_low", "restored_high",
                "rms", "pairs", "reason", "delta_p", "delta_p_bh", "delta_bh")


@dataclass(frozen=True)
class Receiver:
    """A receiver: head `head` of `site` (a site name), reading `what` ∈ q | k | v | out."""

    site: str
    head: int
    what: str

    @property
    def label(self) -> str:
        return f"{self.site}:{self.head}.{self.what}"


@dataclass(frozen=True, eq=False)
class PathResult:
    """Path patching of one sender into a set of receivers over K window pairs (T steps, C columns).

    table: one row per horizon step: sender ("site:head"), receiver (the receivers' labels "site:head.what", joined
           by ", "; "(none)"), step (1 … T), delta (mean over pairs of the mean change over columns), low, high,
           restored, restored_low, restored_high, pairs, reason ('' where both intervals exist, else why not)
    clean, corrupt, patched: [K, T, C] standardised forecasts of A, B and B with the paths patched
    pairs: [K, 2] (A window, B window) of `split`; stride, span: the A windows' spacing and dependence span
    """

    split: str
    sender: str
    receivers: tuple[Receiver, ...]
    seed: int
    table: pd.DataFrame
    clean: np.ndarray
    corrupt: np.ndarray
    patched: np.ndarray
    pairs: np.ndarray
    stride: int
    span: int


@dataclass(frozen=True, eq=False)
class GridResult:
    """Every head of a sender site × every head of a receiver site (`what` of each), pooled over horizon steps.

    table: one row per (sender, receiver): sender, receiver ("site:head"), what, delta (mean over pairs of the mean
           change over steps and columns), low, high, restored (pooled over steps and pairs), restored_low,
           restored_high, rms (mean over pairs of the RMS change), pairs, reason, delta_p, delta_p_bh, delta_bh
           (Benjamini–Hochberg across the grid's cells at q = 0.05)
    clean, corrupt: [K, T, C]; patched: [H_sender, H_receiver, K, T, C]; pairs, stride, span as in PathResult
    """

    split: str
    sender_site: str
    receiver_site: str
    what: str
    seed: int
    table: pd.DataFrame
    clean: np.ndarray
    corrupt: np.ndarray
    patched: np.ndarray
    pairs: np.ndarray
    stride: int
    span: int


# --------------------------------------------------------------------------------------------
# Sites, receivers, forwards
# --------------------------------------------------------------------------------------------
def _site(model: Informer, site) -> Site:
    name = site.name if isinstance(site, Site) else str(site)
    found = [s for s in model.sites if s.name == name]
    if found:
        return found[0]
    raise ConfigError(f"no attention site {name!r}; sites: {', '.join(s.name for s in model.sites)}")


def _head(model: Informer, head) -> int:
    try:
        h = int(head)
    except (TypeError, ValueError):
        h = -1
    if not 0 <= h < model.config.n_heads:
        raise ConfigError(f"head {head!r} out of range: the model has {model.config.n_heads} heads (0 … "
                          f"{model.config.n_heads - 1})")
    return h


def resolve_sender(model: Informer, sender) -> tuple[Site, int]:
    """(site, head) or "site:head" (e.g. "decoder_self.0:1") → (Site, head), checked."""
    site, _, head = sender.rpartition(":") if isinstance(sender, str) else ("", "", "")
    site, head = (site, head) if isinstance(sender, str) else tuple(sender)
    return _site(model, site), _head(model, head)


def resolve_receivers(model: Informer, receivers) -> tuple[Receiver, ...]:
    """Receivers from (site, head, what) triples, or strings "site:head:what" / "site:head.what" (e.g. "cross.0:2:q"),
    checked; duplicates dropped, order kept."""
    out: list[Receiver] = []
    for item in receivers:
        if isinstance(item, str):
            site, _, rest = item.partition(":")
            head, _, what = rest.replace(".", ":").partition(":")
        else:
            site, head, what = (item.site, item.head, item.what) if isinstance(item, Receiver) else item
        if what not in WHATS:
            raise ConfigError(f"a receiver reads one of {', '.join(WHATS)}, got {what!r} in {item!r}")
        r = Receiver(_site(model, site).name, _head(model, head), what)
        if r not in out:
            out.append(r)
    return tuple(out)


def _check_grid(sender: Site, receiver: Site, what: str) -> None:
    """A ConfigError when `what` is no input or when no path from the sender site reaches the receiver site's."""
    if what not in WHATS:
        raise ConfigError(f"a receiver reads one of {', '.join(WHATS)}, got {what!r}")
    why = why_unreached(sender, receiver, what)
    if why is not None:
        raise ConfigError(f"no path from {sender.name} reaches {receiver.name}'s {WHATS[what]} ({why}): choose a "
                          "receiver site after the sender on its way to the forecast")


def _check_eval(model: Informer) -> None:
    if model.training:
        raise ValueError("the model is in training mode; analyse a model in eval mode (checkpoints load that way)")


def _names(receivers) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f"{r.site}.{WHATS[r.what]}" for r in receivers))


def _step_one(model, corrupt, seed, sender: Site, head: int, clean_context, contexts_B, receivers):
    """Records of step 1 (module docstring): hook name → tensor; the sender's own "context" there is A's."""
    gates = torch.zeros_like(model.full_gates(1))
    for r in receivers:
        gates[0, _site(model, r.site).index, r.head] = 1.0
    gates[0, sender.index, head] = 0.0
    means = [contexts_B[f"{s.name}.context"].clone() for s in model.sites]
    means[sender.index][:, :, head] = clean_context[:, :, head]
    _, records = patched_forward(model, corrupt, seed, _names(receivers), head_mask=HeadMask(gates, tuple(means)))
    context = f"{sender.name}.context"
    if context in records:  # the hook sees the computed context; the sender puts out A's
        records[context] = records[context].clone()
        records[context][:, :, head] = clean_context[:, :, head]
    return records


def _step_two(model, corrupt, seed, records_B, records_1, receivers) -> torch.Tensor:
    """B with only the receivers' step-1 slices put in (module docstring). → forecast [K, T, C]."""
    order = execution_order(model)
    outs = [r for r in receivers if r.what == "out"]
    head_mask = None
    if outs:
        gates = model.full_gates(1)
        means: list = [None] * model.n_sites
        for r in outs:
            site = _site(model, r.site)
            gates[0, site.index, r.head] = 0.0
            name = f"{r.site}.context"
            if means[site.index] is None:
                means[site.index] = records_B[name].clone()
            means[site.index][:, :, r.head] = records_1[name][:, :, r.head]
        head_mask = HeadMask(gates, tuple(means))
    patches: dict[str, torch.Tensor] = {}
    inputs = [r for r in receivers if r.what != "out"]
    for site in sorted({r.site for r in inputs}, key=order.get):
        here = [r for r in inputs if r.site == site]
        names = _names(here)
        upstream = any(order[r.site] < order[site] for r in receivers)  # then record what this site computes
        live = patched_forward(model, corrupt, seed, names, patches, head_mask)[1] if upstream else records_B
        for name in names:
            patches[name] = live[name].clone()
        for r in here:
            name = f"{r.site}.{WHATS[r.what]}"
            patches[name][:, :, r.head] = records_1[name][:, :, r.head]
    return patched_forward(model, corrupt, seed, (), patches, head_mask)[0]


@torch.no_grad()
def path_forecasts(model: Informer, clean: Batch, corrupt: Batch, sender, receivers, *, seed: int = 0,
                   unreached: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(f_A, f_B, f_patched), each [K, T, C] float64, of K clean windows (Batch `clean`) path-patched into K
    corrupted inputs (`corrupt`, row k paired with row k). sender, receivers: see resolve_sender / resolve_receivers.
    unreached: let receivers no path reaches through (the sender itself as "out": its whole effect), for the
    engine's identities with activation patching; analyses refuse them."""
    _check_eval(model)
    site, head = resolve_sender(model, sender)
    receivers = resolve_receivers(model, receivers)
    if not unreached:
        check_reachable(model, site, head, receivers)
    f_A, rec_A = patched_forward(model, clean, seed, (f"{site.name}.context",))
    f_B, rec_B = patched_forward(model, corrupt, seed, ("*.context",) + _names(receivers))
    if receivers:
        records_1 = _step_one(model, corrupt, seed, site, head, rec_A[f"{site.name}.context"], rec_B, receivers)
        f_P = _step_two(model, corrupt, seed, rec_B, records_1, receivers)
    else:  # nothing receives: B itself, run as step 2 would run it
        f_P = patched_forward(model, corrupt, seed, (), {}, None)[0]
    return tuple(f.double().cpu().numpy() for f in (f_A, f_B, f_P))


# --------------------------------------------------------------------------------------------
# Window pairs and intervals
# --------------------------------------------------------------------------------------------
def window_pairs(prepared: PreparedData, split: str, pairs: int = PAIRS,
                 offset: int | None = None) -> tuple[np.ndarray, int, int]:
    """([K, 2] (A, B) windows, stride, span): A = w evenly spread over the first n − offset windows of `split` (one in
    stride), B = w + offset (default offset: n // 2); span = data_span(prepared, split, stride)."""
    n = len(WindowDataset(prepared, split))
    offset = n // 2 if offset is None else int(offset)
    if int(pairs) < 1:
        raise ConfigError(f"choose at least one window pair, got {pairs}")
    if not 1 <= offset < n:
        raise ConfigError(f"the {split} split has {n} windows: the offset between a pair's windows must lie in "
                          f"[1, {n - 1}], got {offset}")
    stride = max(1, math.ceil((n - offset) / int(pairs)))
    clean = np.arange(0, n - offset, stride, dtype=np.int64)
    return np.stack([clean, clean + offset], axis=1), stride, data_span(prepared, split, stride)


def _pair_batches(prepared, split, pair_index: np.ndarray, batch_size: int):
    dataset = WindowDataset(prepared, split)
    for start in range(0, len(pair_index), batch_size):
        chunk = pair_index[start:start + batch_size]
        yield (collate([dataset[int(w)] for w in chunk[:, 0]])[0], collate([dataset[int(w)] for w in chunk[:, 1]])[0])


def _share(numerator: np.ndarray, denominator: np.ndarray, span: int, min_gap: float, columns: int):
    """restored share pooled over pairs (ratio_interval) → (estimate, lo, hi, reason)."""
    if math.sqrt(max(float(denominator.mean()), 0.0) / columns) < min_gap:
        return math.nan, math.nan, math.nan, f"A and B agree (RMS gap below {min_gap:g}): no share"
    i = ratio_interval(numerator, denominator, span=span)
    return i.estimate, i.lo, i.hi, i.reason


# --------------------------------------------------------------------------------------------
# Public
# --------------------------------------------------------------------------------------------
def path_patching(model: Informer, prepared: PreparedData, split: str, sender, receivers, *,
                  pairs: int = PAIRS, seed: int = 0, offset: int | None = None, batch_size: int = BATCH,
                  min_gap: float = 1e-4) -> PathResult:
    """Path patching of `sender` ((site, head) or "site:head") into `receivers` ((site, head, what) or "site:head:what")
    over `pairs` window pairs of `split` (module docstring), per horizon step with the lab's intervals. min_gap: the RMS gap between A and B
    (standardised) below which no restored share is given (patching.py's)."""
    _check_eval(model)
    site, head = resolve_sender(model, sender)
    receivers = resolve_receivers(model, receivers)
    check_reachable(model, site, head, receivers)  # before any forward pass
    index, stride, span = window_pairs(prepared, split, pairs, offset)
    parts = [path_forecasts(model, a, b, (site.name, head), receivers, seed=seed)
             for a, b in _pair_batches(prepared, split, index, batch_size)]
    f_A, f_B, f_P = (np.concatenate(p) for p in zip(*parts))  # [K, T, C]
    change, gap = f_P - f_B, f_A - f_B
    K, T, C = f_P.shape
    delta = change.mean(axis=-1)  # [K, T]
    numerator, denominator = (change * gap).sum(axis=-1), (gap * gap).sum(axis=-1)  # [K, T]
    means = window_means(delta, span=span)
    reasons = means.reasons()
    rows = []
    for t in range(T):
        share = _share(numerator[:, t], denominator[:, t], span, min_gap, C)
        reason = "; ".join(dict.fromkeys(r for r in (reasons[t], share[3]) if r))
        rows.append((f"{site.name}:{head}", ", ".join(r.label for r in receivers) or "(none)", t + 1,
                     float(means.estimate[t]), float(means.lo[t]), float(means.hi[t]), *share[:3], K, reason))
    for array in (f_A, f_B, f_P):
        array.setflags(write=False)
    return PathResult(split, f"{site.name}:{head}", receivers, int(seed), pd.DataFrame(rows, columns=COLUMNS),
                      f_A, f_B, f_P, index, stride, span)


@torch.no_grad()
def grid_forecasts(model: Informer, clean: Batch, corrupt: Batch, sender_site, receiver_site, what: str, *,
                   seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(f_A [K, T, C], f_B [K, T, C], f_patched [H, H, K, T, C]): every head s of `sender_site` path-patched into
    each head r of `receiver_site` alone (`what` of it). Step 1 is run once per sender head with every head of the
    receiver site free: what a receiver site's head reads or puts out depends only on the sites before it, so its
    record is the one a run with that head alone as receiver makes."""
    _check_eval(model)
    sender, receiver = _site(model, sender_site), _site(model, receiver_site)
    _check_grid(sender, receiver, what)
    every = resolve_receivers(model, [(receiver.name, r, what) for r in range(model.config.n_heads)])
    f_A, rec_A = patched_forward(model, clean, seed, (f"{sender.name}.context",))
    f_B, rec_B = patched_forward(model, corrupt, seed, ("*.context",) + _names(every))
    patched = []
    for s in range(model.config.n_heads):
        records_1 = _step_one(model, corrupt, seed, sender, s, rec_A[f"{sender.name}.context"], rec_B, every)
        patched.append(torch.stack([_step_two(model, corrupt, seed, rec_B, records_1, (r,)) for r in every]))
    return f_A.double().cpu().numpy(), f_B.double().cpu().numpy(), torch.stack(patched).double().cpu().numpy()


def path_grid(model: Informer, prepared: PreparedData, split: str, sender_site, receiver_site, what: str = "q", *,
              pairs: int = PAIRS, seed: int = 0, offset: int | None = None, batch_size: int = BATCH,
              min_gap: float = 1e-4) -> GridResult:
    """Every head of `sender_site` × every head of `receiver_site` (reading `what`), each pair of heads path-patched
    alone over `pairs` window pairs of `split`, pooled over horizon steps (GridResult)."""
    _check_eval(model)
    sender, receiver = _site(model, sender_site), _site(model, receiver_site)
    _check_grid(sender, receiver, what)
    index, stride, span = window_pairs(prepared, split, pairs, offset)
    parts = [grid_forecasts(model, a, b, sender.name, receiver.name, what, seed=seed)
             for a, b in _pair_batches(prepared, split, index, batch_size)]
    f_A, f_B = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    f_P = np.concatenate([p[2] for p in parts], axis=2)  # [H, H, K, T, C]
    H, K, (T, C) = f_P.shape[0], f_P.shape[2], f_P.shape[3:]
    change, gap = f_P - f_B, f_A - f_B
    delta = change.mean(axis=(-1, -2)).reshape(H * H, K).T  # [K, H·H]
    means = window_means(delta, span=span)
    reasons = means.reasons()
    numerator = (change * gap).sum(axis=(-1, -2)).reshape(H * H, K)
    denominator = (gap * gap).sum(axis=(-1, -2))  # [K]
    rms = np.sqrt((change ** 2).mean(axis=(-1, -2))).mean(axis=-1).reshape(-1)
    rows = []
    for cell in range(H * H):
        s, r = divmod(cell, H)
        share = _share(numerator[cell], denominator, span, min_gap, T * C)
        notes = [reasons[cell], share[3]]
        rows.append((f"{sender.name}:{s}", f"{receiver.name}:{r}", what, float(means.estimate[cell]),
                     float(means.lo[cell]), float(means.hi[cell]), *share[:3], float(rms[cell]), K,
                     "; ".join(dict.fromkeys(n for n in notes if n))))
    table = pd.DataFrame(rows, columns=GRID_COLUMNS[:12])
    table = discovery_columns(table, means.p_values(), "delta")
    for array in (f_A, f_B, f_P):
        array.setflags(write=False)
    return GridResult(split, sender.name, receiver.name, what, int(seed), table, f_A, f_B, f_P, index, stride, span)


__all__ = ["COLUMNS", "GRID_COLUMNS", "GridResult", "PathResult", "Receiver", "WHATS", "execution_order",
           "grid_forecasts", "path_forecasts", "path_grid", "path_patching", "resolve_receivers", "resolve_sender",
           "window_pairs"]
