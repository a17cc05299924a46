"""Head ablation studies: many head masks scored over a split, paired by one key sample.

Each study builds its masks ([n, n_sites, H] gates; the first mask, the baseline, removes nothing) and scores
them in one call of `analysis.heads.mask_scoring.evaluate_masks`, which shares each window batch's key samples
between all masks (see there: mask k's numbers equal `evaluate(...)` under mask k alone):

    single_head_sweep      one head off at a time                        → one row per (site, head)
    leave_one_in           at one site, every head off but one           → one row per (site, head)
    layer_masking          every head of one site off                    → one row per site
    random_masking         round(k·N) of all N heads off, R draws        → one row per draw
    pruning_curve          iteratively remove the least important heads  → one row per step

Mean ablation replaces a head with its mean context per position over reference windows (see
`analysis.heads.masking.mean_contexts`); when `means` is None the reference is the train split (256 windows
evenly strided, the same key-sample seed).

`max_windows` (every study): evaluate only the first `max_windows` windows of the split
(`analysis.learning.windows.limit_windows`), for quick looks and tests; None is the whole split.

Pure functions: the model is never modified (its mode is set to eval, as `predict` does).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Informer

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.heads.importance import head_importance
from informer_lab.analysis.heads.lists import REMOVABLE, removable_heads
from informer_lab.analysis.heads.mask_scoring import metric_rows, per_step_rows, evaluate_masks
from informer_lab.analysis.heads.masking import BASELINE, AblationMode, all_heads, gates_with_sets_off, heads_label, reference_means
from informer_lab.analysis.learning.windows import limit_windows

Importance = Literal["ablation", "gradient"]


def _site_columns(model: Informer, site: int | None) -> dict:
    if site is None:
        return {"site": BASELINE, "site_index": -1, "kind": BASELINE, "replica": -1, "layer": -1}
    s = model.sites[site]
    return {"site": s.name, "site_index": s.index, "kind": s.kind, "replica": s.replica, "layer": s.layer}


# --------------------------------------------------------------------------------------------
# Studies
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HeadSweep:
    """A single-head sweep, both tidy.

    table:    baseline row (site "baseline", head −1, deltas 0), then one row per (site, head):
              site, site_index, kind, replica, layer, head, mse, mae, mse_original, mae_original,
              delta_mse, delta_mae, delta_mse_original, delta_mae_original, windows
    per_step: the same masks × horizon steps: site, site_index, kind, replica, layer, head, step, mse, delta_mse
    """

    table: pd.DataFrame
    per_step: pd.DataFrame


def head_sweep(model: Informer, prepared: PreparedData, split: str = "test", *, mode: AblationMode = "zero",
               means: Sequence[torch.Tensor] | None = None, seed: int = 0, batch_size: int = 64,
               max_windows: int | None = None, max_rows: int | None = None) -> HeadSweep:
    """Remove each head alone (zero or mean ablation) and score the split: the baseline + n_sites·H masks."""
    heads = all_heads(model)
    gates = gates_with_sets_off(model, [[]] + [[sh] for sh in heads])
    evaluation = evaluate_masks(model, prepared, split, gates, mode=mode, means=means, seed=seed,
                                batch_size=batch_size, max_windows=max_windows, max_rows=max_rows)
    meta = [{**_site_columns(model, None), "head": -1}] + [{**_site_columns(model, s), "head": h} for s, h in heads]
    return HeadSweep(metric_rows(evaluation, meta, seed=seed), per_step_rows(evaluation, meta))


def single_head_sweep(model: Informer, prepared: PreparedData, split: str = "test", *, mode: AblationMode = "zero",
                      means: Sequence[torch.Tensor] | None = None, seed: int = 0, batch_size: int = 64,
                      max_windows: int | None = None) -> pd.DataFrame:
    """`head_sweep(...).table`: one row for the baseline, one per (site, head) with that head removed."""
    return head_sweep(model, prepared, split, mode=mode, means=means, seed=seed, batch_size=batch_size,
                      max_windows=max_windows).table


def single_head_sweep_per_step(model: Informer, prepared: PreparedData, split: str = "test", *,
                               mode: AblationMode = "zero", means: Sequence[torch.Tensor] | None = None,
                               seed: int = 0, batch_size: int = 64, max_windows: int | None = None) -> pd.DataFrame:
    """`head_sweep(...).per_step`: MSE and ΔMSE per horizon step for the baseline and each removed head.
    (Call `head_sweep` once to get both tables.)"""
    return head_sweep(model, prepared, split, mode=mode, means=means, seed=seed, batch_size=batch_size,
                      max_windows=max_windows).per_step


def leave_one_in(model: Informer, prepared: PreparedData, split: str = "test", *, mode: AblationMode = "zero",
                 means: Sequence[torch.Tensor] | None = None, seed: int = 0, batch_size: int = 64,
                 max_windows: int | None = None) -> pd.DataFrame:
    """At each site keep only head h (the site's other heads off, every other site whole).

    Rows: baseline, then one per (site, head kept); columns as `single_head_sweep`, `head` being the head kept.
    """
    H = model.config.n_heads
    pairs = all_heads(model)
    gates = gates_with_sets_off(model, [[]] + [[(s, other) for other in range(H) if other != h] for s, h in pairs])
    evaluation = evaluate_masks(model, prepared, split, gates, mode=mode, means=means, seed=seed,
                                batch_size=batch_size, max_windows=max_windows)
    meta = [{**_site_columns(model, None), "head": -1}] + [{**_site_columns(model, s), "head": h} for s, h in pairs]
    return metric_rows(evaluation, meta, seed=seed)


def layer_masking(model: Informer, prepared: PreparedData, split: str = "test", *, mode: AblationMode = "zero",
                  means: Sequence[torch.Tensor] | None = None, seed: int = 0, batch_size: int = 64,
                  max_windows: int | None = None) -> pd.DataFrame:
    """Every head of one site off at a time. Rows: baseline, then one per site (head −1: all of them);
    columns as `single_head_sweep` plus n_masked."""
    H = model.config.n_heads
    gates = gates_with_sets_off(model, [[]] + [[(s, h) for h in range(H)] for s in range(model.n_sites)])
    evaluation = evaluate_masks(model, prepared, split, gates, mode=mode, means=means, seed=seed,
                                batch_size=batch_size, max_windows=max_windows)
    meta = [{**_site_columns(model, None), "head": -1, "n_masked": 0}] + \
           [{**_site_columns(model, s), "head": -1, "n_masked": H} for s in range(model.n_sites)]
    return metric_rows(evaluation, meta, seed=seed)


def n_to_mask(fraction: float, n_heads_total: int) -> int:
    """round(fraction · N), halves rounded up (Python's round() would send 2.5 to 2)."""
    if not 0.0 <= fraction <= 1.0:
        raise ConfigError(f"fraction must be in [0, 1], got {fraction}")
    return min(n_heads_total, int(math.floor(fraction * n_heads_total + 0.5)))


def random_head_sets(model: Informer, fraction: float, repeats: int, seed: int) -> list[list[tuple[int, int]]]:
    """`repeats` sets of round(fraction·N) distinct (site, head) pairs drawn uniformly from all N heads
    (torch.randperm on a generator seeded with `seed`; each set sorted in gate order)."""
    if repeats < 1:
        raise ConfigError(f"repeats must be at least 1, got {repeats}")
    heads = all_heads(model)
    k = n_to_mask(fraction, len(heads))
    generator = torch.Generator().manual_seed(seed)
    return [sorted(heads[i] for i in torch.randperm(len(heads), generator=generator)[:k].tolist())
            for _ in range(repeats)]


def random_masking(model: Informer, prepared: PreparedData, split: str = "test", *, fraction: float = 0.2,
                   repeats: int = 20, seed: int = 0, eval_seed: int = 0, mode: AblationMode = "zero",
                   means: Sequence[torch.Tensor] | None = None, batch_size: int = 64,
                   max_windows: int | None = None) -> pd.DataFrame:
    """Mask round(fraction·N) heads chosen at random (N = n_sites·H), `repeats` times.

    seed draws the head sets (`random_head_sets`); eval_seed is the key-sample seed shared by every
    evaluation, so each draw is compared with the baseline on the same samples.
    Rows: repeat (0-based), n_masked, mse (with mse_lo, mse_hi), mae, mse_original, mae_original, delta_mse,
    delta_mae (each with _lo, _hi: the paired interval over windows, analysis.intervals), delta_mse_original,
    delta_mae_original, masked_heads ('site:head;…').
    """
    sets = random_head_sets(model, fraction, repeats, seed)
    gates = gates_with_sets_off(model, [[]] + sets)
    evaluation = evaluate_masks(model, prepared, split, gates, mode=mode, means=means, seed=eval_seed,
                                batch_size=batch_size, max_windows=max_windows)
    meta = [{"repeat": -1, "n_masked": 0, "masked_heads": ""}] + \
           [{"repeat": r, "n_masked": len(s), "masked_heads": heads_label(model, s)} for r, s in enumerate(sets)]
    table = metric_rows(evaluation, meta, seed=eval_seed).iloc[1:].reset_index(drop=True)
    columns = ["repeat", "n_masked", "mse", "mse_lo", "mse_hi", "mae", "mse_original", "mae_original", "delta_mse",
               "delta_mse_lo", "delta_mse_hi", "delta_mae", "delta_mae_lo", "delta_mae_hi", "delta_mse_original",
               "delta_mae_original", "masked_heads"]
    return table[columns]


def random_masking_summary(table: pd.DataFrame,
                           quantiles: Sequence[float] = (0.05, 0.25, 0.5, 0.75, 0.95)) -> pd.DataFrame:
    """Quantiles of delta_mse and delta_mae over the repeats of `random_masking`: one row per quantile
    (quantile, delta_mse, delta_mae), then rows 'mean' and 'std' (quantile column holds the name)."""
    cols = ["delta_mse", "delta_mae"]
    q = table[cols].quantile(list(quantiles))
    rows = [{"quantile": float(p), **{c: float(q.loc[p, c]) for c in cols}} for p in quantiles]
    rows.append({"quantile": "mean", **{c: float(table[c].mean()) for c in cols}})
    rows.append({"quantile": "std", **{c: float(table[c].std(ddof=1)) if len(table) > 1 else 0.0 for c in cols}})
    return pd.DataFrame(rows)


def pruning_curve(model: Informer, prepared: PreparedData, *, step_fraction: float = 0.1, tolerance: float = 0.10,
                  importance: Importance = "ablation", mode: AblationMode = "zero",
                  means: Sequence[torch.Tensor] | None = None, seed: int = 0, select_split: str = "val",
                  report_split: str = "test", batch_size: int = 64, max_windows: int | None = None) -> pd.DataFrame:
    """Iterative head pruning (Michel et al. 2019): remove the least important heads step by step.

    Each step removes round(step_fraction · N) heads (N = all heads, at least 1) — the lowest-scoring of the
    heads still on, scored afresh on top of the current mask:
      importance="ablation": ΔMSE of removing that head as well (one `evaluate_masks` call per step);
      importance="gradient": E|∂L/∂ξ_h| at the current mask (`analysis.heads.importance.head_importance`).
    Heads are chosen, and the stopping rule applied, on `select_split` (val); the metrics reported are
    on `report_split` (test), which never influences a choice. Stopping: after the first step whose
    select-split MSE exceeds (1 + tolerance) × its baseline MSE; that step is kept as the last row with
    within_tolerance False. Otherwise the curve runs until every head is removed.

    Rows: step (0 = baseline), n_removed, fraction_removed, mse, mae, mse_original, mae_original
    (report split), val_mse, val_mae (select split), within_tolerance, newly_removed and removed_heads
    (cumulative), both as 'site:head;…'.
    """
    if not 0.0 < step_fraction <= 1.0:
        raise ConfigError(f"step_fraction must be in (0, 1], got {step_fraction}")
    if tolerance < 0:
        raise ConfigError(f"tolerance must be ≥ 0, got {tolerance}")
    if importance not in ("ablation", "gradient"):
        raise ConfigError(f"importance must be 'ablation' or 'gradient', got {importance!r}")
    means = reference_means(model, prepared, mode, means, seed)
    heads = all_heads(model)
    per_step = max(1, n_to_mask(step_fraction, len(heads)))
    select = limit_windows(prepared, select_split, max_windows)
    common = dict(mode=mode, means=means, seed=seed, batch_size=batch_size)

    removed: list[tuple[int, int]] = []
    steps: list[dict] = []
    limit = math.inf
    while True:
        current = gates_with_sets_off(model, [removed])  # [1, n_sites, H]
        remaining = [sh for sh in heads if sh not in removed]
        if importance == "ablation":
            candidates = gates_with_sets_off(model, [removed] + [removed + [sh] for sh in remaining])
            ev = evaluate_masks(model, select, select_split, candidates, **common)
            scores = ev.mse[1:] - ev.mse[0]
        else:
            ev = evaluate_masks(model, select, select_split, current, **common)
            scores = None
        val_mse, val_mae = float(ev.mse[0]), float(ev.mae[0])
        if not steps:
            limit = (1.0 + tolerance) * val_mse
        within = val_mse <= limit
        steps.append({"removed": list(removed), "new": list(removed[len(steps[-1]["removed"]):]) if steps else [],
                      "val_mse": val_mse, "val_mae": val_mae, "within": within})
        if not within or not remaining:
            break
        if scores is None:
            table = head_importance(model, select, select_split, base_gates=current[0], mode=mode, means=means,
                                    seed=seed, batch_size=batch_size, null=False).table
            by_head = {(int(r.site_index), int(r.head)): float(r.importance) for r in table.itertuples()}
            scores = np.array([by_head[sh] for sh in remaining])
        order = np.argsort(scores, kind="stable")[:per_step]
        removed = removed + [remaining[i] for i in order]

    report = evaluate_masks(model, prepared, report_split,
                            gates_with_sets_off(model, [s["removed"] for s in steps]), max_windows=max_windows,
                            **common)
    rows = []
    for k, s in enumerate(steps):
        rows.append({"step": k, "n_removed": len(s["removed"]), "fraction_removed": len(s["removed"]) / len(heads),
                     "mse": float(report.mse[k]), "mae": float(report.mae[k]),
                     "mse_original": float(report.mse_original[k]), "mae_original": float(report.mae_original[k]),
                     "val_mse": s["val_mse"], "val_mae": s["val_mae"], "within_tolerance": bool(s["within"]),
                     "newly_removed": heads_label(model, s["new"]), "removed_heads": heads_label(model, s["removed"])})
    return pd.DataFrame(rows)


__all__ = ["REMOVABLE", "removable_heads", "HeadSweep", "head_sweep", "layer_masking", "leave_one_in", "n_to_mask", "pruning_curve",
           "random_head_sets", "random_masking", "random_masking_summary", "single_head_sweep",
           "single_head_sweep_per_step"]
