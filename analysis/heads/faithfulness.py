"""Is a head's attention an explanation? The two baselines of the attention-explanation literature, for every head of
any model (real data too):

- uniform rows (Wiegreffe & Pinter 2019): the head's computed rows replaced by rows that weigh every key its query
  may see equally;
- permuted rows (Jain & Wallace 2019): each computed row's weights shuffled among those keys, `draws` seeded draws,
  reported as the median over draws and their spread.

If the forecast moves no more under either than it moves between two ProbSparse key samples of the unchanged model
(the noise every reading of this model carries), the head's particular weights are not what its forecast rests on.
Rows are replaced per call (`model.replacing_rows`): the shared model is never changed. A ProbSparse head's lazy
rows already are mean(V) (uniform) in the encoder and a running mean of V in the decoder: only its top-u rows change.

Figures per head, over the same windows and key samples as the unchanged forecast (paired): the mean squared change
of the standardised forecast, and the change in test MSE; 95 % intervals over windows (analysis.intervals). The
floor: the same change between the key
sample of `seed` and those of `key_seeds` other seeds (0 for a model without ProbSparse sites: then compare with the
spread between models trained from other seeds, e.g. a study's).

Beyond the floor. A head's rows matter when its change exceeds the floor window by window: the paired difference
(change − floor) per window, one-sided t test of its mean > 0 from the same interval machinery; the 2·H tests (each
head, each baseline) go through Benjamini–Hochberg together (`*_beyond`, raw decision `*_beyond_raw`: the
difference's interval above 0). A head without an interval is in no list.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Informer, RowEdit

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.discoveries import Q, adjusted_p_values
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.intervals import window_means
from informer_lab.analysis.heads.masking import all_heads, head_label
from informer_lab.analysis.instruments.paired import paired_forecast, spread_windows

MAX_WINDOWS = 128
MAX_DRAWS, MAX_KEY_SEEDS = 100, 50  # each is a pass over every head's windows: 16 heads × 100 draws is 1,600 passes
ROUNDING = 1e-9  # × the forecast's mean square: below it a mean squared change is float rounding (float32 ~1e-14)


@dataclass(frozen=True, eq=False)
class Faithfulness:
    """table: one row per head: site, head, label, kind, attention (prob / full), uniform_change (+ _lo/_hi),
    permuted_change (median over draws, + _lo/_hi), permuted_spread_lo/_hi (min and max over draws),
    delta_mse_uniform, delta_mse_permuted (+ _lo/_hi), floor (key-sample change, + _lo/_hi), uniform_beyond_p /
    permuted_beyond_p (one-sided, change above the floor), their BH-adjusted `_p_bh`, `uniform_beyond` and
    `permuted_beyond` (after BH at q across every head and both baselines), `*_beyond_raw`, interval (why none),
    reading."""

    table: pd.DataFrame
    windows: int
    total_windows: int
    draws: int
    key_seeds: int
    floor: float
    floor_hi: float
    mse: float
    notes: tuple[str, ...]


def attention_baselines(model: Informer, prepared: PreparedData, *, split: str = "test", seed: int = 0,
                        max_windows: int = MAX_WINDOWS, draws: int = 5, key_seeds: int = 3, batch_size: int = 64,
                        q: float = Q,
                        progress: Callable[[int, int], None] | None = None) -> Faithfulness:
    """Uniform and permuted rows for every head, against the key-sample floor (see the module docstring)."""
    if model.training:
        raise ValueError("the model is in training mode; analyse a model in eval mode (checkpoints load that way)")
    if not 1 <= draws <= MAX_DRAWS or not 1 <= key_seeds <= MAX_KEY_SEEDS:
        raise ConfigError(f"draws must be 1 … {MAX_DRAWS} and key_seeds 1 … {MAX_KEY_SEEDS} (each is a pass over "
                          f"every head's windows), got {draws} and {key_seeds}")
    windows = spread_windows(prepared, split, max_windows, batch_size)
    batches, truth, span = windows.batches, windows.truth, windows.span
    heads = all_heads(model)
    steps, done = len(heads) * (1 + draws) + key_seeds + 1, 0

    def tick():
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, steps)

    base = paired_forecast(model, batches, seed)
    tick()
    base_sq = ((base - truth) ** 2).mean(axis=(1, 2))  # [n]
    rounding = ROUNDING * float((base ** 2).mean())  # a squared change this small is float rounding, no finding

    def change(f: np.ndarray) -> np.ndarray:
        return ((f - base) ** 2).mean(axis=(1, 2))  # [n] mean squared change per window

    floors = []
    for k in range(1, key_seeds + 1):
        floors.append(change(paired_forecast(model, batches, seed + k)))
        tick()
    floor_windows = np.mean(floors, axis=0)
    floor_means = window_means(floor_windows, span=span)
    floor, floor_lo, floor_hi = float(floor_means.estimate), float(floor_means.lo), float(floor_means.hi)
    prob = any(model.attention_layer(s).kind == "prob" for s in model.sites)
    rows = []
    for s, h in heads:
        site = model.sites[s]
        uniform = paired_forecast(model, batches, seed, edits={site.name: RowEdit((h,), "uniform")})
        tick()
        permuted = []
        for d in range(draws):
            g = torch.Generator().manual_seed(seed * 7919 + 104729 * (d + 1) + 131 * s + h)
            permuted.append(paired_forecast(model, batches, seed, edits={site.name: RowEdit((h,), "permute", g)}))
            tick()
        changes = np.stack([change(f) for f in permuted])  # [draws, n]
        perm_sq = np.stack([((f - truth) ** 2).mean(axis=(1, 2)) for f in permuted])  # [draws, n]
        median = int(np.argsort(changes.mean(axis=1))[len(permuted) // 2])  # the median draw
        values = np.stack([change(uniform), changes[median], ((uniform - truth) ** 2).mean(axis=(1, 2)) - base_sq,
                           perm_sq[median] - base_sq, change(uniform) - floor_windows,
                           changes[median] - floor_windows], axis=1)
        means = window_means(values, span=span)
        est, lo, hi = means.estimate, means.lo, means.hi
        beyond_p = means.p_values(rounding, "greater")[4:]
        spread = changes.mean(axis=1)
        rows.append({"site": site.name, "head": h, "label": head_label(model, s, h), "kind": site.kind,
                     "attention": model.attention_layer(site).kind,
                     "uniform_change": est[0], "uniform_change_lo": lo[0], "uniform_change_hi": hi[0],
                     "permuted_change": est[1], "permuted_change_lo": lo[1], "permuted_change_hi": hi[1],
                     "permuted_spread_lo": float(spread.min()), "permuted_spread_hi": float(spread.max()),
                     "delta_mse_uniform": est[2], "delta_mse_uniform_lo": lo[2], "delta_mse_uniform_hi": hi[2],
                     "delta_mse_permuted": est[3], "delta_mse_permuted_lo": lo[3], "delta_mse_permuted_hi": hi[3],
                     "floor": floor, "floor_lo": floor_lo, "floor_hi": floor_hi,
                     "uniform_beyond_p": beyond_p[0], "permuted_beyond_p": beyond_p[1],
                     "uniform_beyond_raw": bool(lo[4] > rounding), "permuted_beyond_raw": bool(lo[5] > rounding),
                     "interval": means.reasons()[4]})
    table = _beyond(pd.DataFrame(rows), q, prob)
    notes = [windows.describe() + f"; {draws} permutation draws per head (median shown, spread min–max over draws)",
             "change = mean squared change of the standardised forecast against the unchanged model under the same "
             "key samples; ΔMSE against the test truth"]
    if prob:
        notes.append(f"floor: the same change between key-sample seed {seed} and {key_seeds} other seed(s); "
                     "ProbSparse heads: only the top-u rows are replaced, lazy rows already are mean(V)")
    else:
        notes.append("no ProbSparse site: the key sample changes nothing (floor 0); compare with models trained "
                     "from other seeds (a study)")
    notes.append(f"beyond the floor: one-sided test of (change − floor) per window, Benjamini–Hochberg at q = {q:g} "
                 f"across {2 * len(heads)} tests ({len(heads)} heads × 2 baselines)")
    return Faithfulness(table, len(windows.indices), windows.total, draws, key_seeds, floor, floor_hi,
                        float(base_sq.mean()), tuple(notes))


def _beyond(table: pd.DataFrame, q: float, prob: bool) -> pd.DataFrame:
    """BH across every head and both baselines, and each head's reading from the adjusted decisions."""
    p = np.concatenate([table["uniform_beyond_p"].to_numpy(dtype=np.float64),
                        table["permuted_beyond_p"].to_numpy(dtype=np.float64)])
    adjusted = adjusted_p_values(p)
    n = len(table)
    table["uniform_beyond_p_bh"], table["permuted_beyond_p_bh"] = adjusted[:n], adjusted[n:]
    table["uniform_beyond"] = np.isfinite(adjusted[:n]) & (adjusted[:n] <= q)
    table["permuted_beyond"] = np.isfinite(adjusted[n:]) & (adjusted[n:] <= q)
    table["reading"] = [_reading(u, pm, tested, prob) for u, pm, tested in
                        zip(table["uniform_beyond"], table["permuted_beyond"], np.isfinite(adjusted[:n]))]
    return table


def _reading(uniform: bool, permuted: bool, tested: bool, prob: bool) -> str:
    """What the two baselines say about a head, in words."""
    if not tested:
        return "no interval (too few windows): no reading"
    noise = "key-sample noise" if prob else "zero"
    above = [name for name, beyond in (("uniform", uniform), ("permuted", permuted)) if beyond]
    if len(above) == 2:
        return f"its weights matter: both baselines move the forecast beyond {noise}"
    if above:
        return f"only {above[0]} rows move the forecast beyond {noise}"
    return f"no more than {noise}: its particular weights explain little"


__all__ = ["Faithfulness", "MAX_WINDOWS", "attention_baselines"]
