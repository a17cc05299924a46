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
of the standardised forecast, and the change in test MSE; 95 % intervals by the block bootstrap over windows
(analysis.intervals, blocks covering seq_len + pred_len input steps). The floor: the same change between the key
sample of `seed` and those of `key_seeds` other seeds (0 for a model without ProbSparse sites: then compare with the
spread between models trained from other seeds, e.g. a study's).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import torch

from model import Informer, RowEdit

from analysis.data import PreparedData
from analysis.intervals import mean_intervals
from analysis.heads.masking import all_heads, head_label
from analysis.instruments.paired import paired_forecast, spread_windows

MAX_WINDOWS = 128


@dataclass(frozen=True, eq=False)
class Faithfulness:
    """table: one row per head: site, head, label, kind, attention (prob / full), uniform_change (+ _lo/_hi),
    permuted_change (median over draws, + _lo/_hi), permuted_spread_lo/_hi (min and max over draws),
    delta_mse_uniform, delta_mse_permuted (+ _lo/_hi), floor (key-sample change, + _lo/_hi), reading."""

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
                        progress: Callable[[int, int], None] | None = None) -> Faithfulness:
    """Uniform and permuted rows for every head, against the key-sample floor (see the module docstring)."""
    if model.training:
        raise ValueError("the model is in training mode; analyse a model in eval mode (checkpoints load that way)")
    if draws < 1 or key_seeds < 1:
        raise ValueError("draws and key_seeds must be at least 1")
    windows = spread_windows(prepared, split, max_windows, batch_size)
    batches, truth, block = windows.batches, windows.truth, windows.block
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

    def change(f: np.ndarray) -> np.ndarray:
        return ((f - base) ** 2).mean(axis=(1, 2))  # [n] mean squared change per window

    floors = []
    for k in range(1, key_seeds + 1):
        floors.append(change(paired_forecast(model, batches, seed + k)))
        tick()
    floor_windows = np.mean(floors, axis=0)
    floor, floor_lo, floor_hi = (float(v[0]) for v in mean_intervals(floor_windows[:, None], block=block, seed=seed))
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
                           perm_sq[median] - base_sq], axis=1)
        est, lo, hi = mean_intervals(values, block=block, seed=seed)
        spread = changes.mean(axis=1)
        rows.append({"site": site.name, "head": h, "label": head_label(model, s, h), "kind": site.kind,
                     "attention": model.attention_layer(site).kind,
                     "uniform_change": est[0], "uniform_change_lo": lo[0], "uniform_change_hi": hi[0],
                     "permuted_change": est[1], "permuted_change_lo": lo[1], "permuted_change_hi": hi[1],
                     "permuted_spread_lo": float(spread.min()), "permuted_spread_hi": float(spread.max()),
                     "delta_mse_uniform": est[2], "delta_mse_uniform_lo": lo[2], "delta_mse_uniform_hi": hi[2],
                     "delta_mse_permuted": est[3], "delta_mse_permuted_lo": lo[3], "delta_mse_permuted_hi": hi[3],
                     "floor": floor, "floor_lo": floor_lo, "floor_hi": floor_hi,
                     "reading": _reading(lo[0], lo[1], floor_hi, prob)})
    notes = [windows.describe() + f"; {draws} permutation draws per head (median shown, spread min–max over draws)",
             "change = mean squared change of the standardised forecast against the unchanged model under the same "
             "key samples; ΔMSE against the test truth"]
    if prob:
        notes.append(f"floor: the same change between key-sample seed {seed} and {key_seeds} other seed(s); "
                     "ProbSparse heads: only the top-u rows are replaced, lazy rows already are mean(V)")
    else:
        notes.append("no ProbSparse site: the key sample changes nothing (floor 0); compare with models trained "
                     "from other seeds (a study)")
    return Faithfulness(pd.DataFrame(rows), len(windows.indices), windows.total, draws, key_seeds, floor, floor_hi,
                        float(base_sq.mean()), tuple(notes))


def _reading(uniform_lo: float, permuted_lo: float, floor_hi: float, prob: bool) -> str:
    """What the two baselines say about a head, in words."""
    above = [name for name, lo in (("uniform", uniform_lo), ("permuted", permuted_lo))
             if not np.isnan(lo) and lo > (floor_hi if prob else 0.0)]
    if len(above) == 2:
        return "its weights matter: both baselines move the forecast beyond key-sample noise"
    if above:
        return f"only {above[0]} rows move the forecast beyond key-sample noise"
    return "no more than key-sample noise: its particular weights explain little"


__all__ = ["Faithfulness", "MAX_WINDOWS", "attention_baselines"]
