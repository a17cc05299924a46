"""Head ablation studies: many head masks scored over a split, paired by one key sample.

The engine is `evaluate_masks`: n masks ([n, n_sites, H] gates) over every window of a split, several
masks per forward call (`HeadMask(..., variants=True)`), with the ProbSparse key samples of each window
batch shared by every mask. The studies build their masks and call it once:

    single_head_sweep      one head off at a time                        → one row per (site, head)
    leave_one_in           at one site, every head off but one           → one row per (site, head)
    layer_masking          every head of one site off                    → one row per site
    random_masking         round(k·N) of all N heads off, R draws        → one row per draw
    pruning_curve          iteratively remove the least important heads  → one row per step

Pairing. `predict`/`evaluate` seed one generator per evaluation and let it run on through the window
batches. `evaluate_masks` does the same, and before each chunk of masks it restores the generator to the
state it had at the start of that window batch. So mask k sees exactly the key samples that
`evaluate(model, prepared, split, seed=seed, batch_size=batch_size, head_mask=HeadMask(gates[k:k+1]))`
would draw, whichever chunk it falls in, and differences between masks are not sampling noise.

Mean ablation replaces a head with its mean context per position over reference windows (see
`analysis.masking.mean_contexts`); when `means` is None the reference is the train split (256 windows
evenly strided, the same key-sample seed).

`max_windows` (every study): evaluate only the first `max_windows` windows of the split (`limit_windows`),
for quick looks and tests; None is the whole split.

Pure functions: the model is never modified (its mode is set to eval, as `predict` does).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterable, Literal, Sequence

import numpy as np
import pandas as pd
import torch

from model import HeadMask, Informer, autocast_context

from .data import PreparedData
from .windows import split_batches
from .errors import ConfigError
from .masking import AblationMode, mean_contexts
from .training import Metrics

# Rows (windows × masks) in one forward call: at most 4096, and fewer for big models, so that the largest
# activation (rows × L × max(d_model, d_ff) fp32 values) stays near 1 GiB. The paper's size (L 96, d_ff 2048)
# gets 1365 rows; the small default model (d_ff 128) 4096.
DEFAULT_MAX_ROWS = 4096
ACTIVATION_BUDGET_VALUES = 1 << 28  # fp32 values: 1 GiB


def default_max_rows(model: Informer) -> int:
    c = model.config
    per_row = max(c.seq_len, c.dec_len) * max(c.d_model, c.d_ff)
    return max(1, min(DEFAULT_MAX_ROWS, ACTIVATION_BUDGET_VALUES // per_row))
BASELINE = "baseline"

Importance = Literal["ablation", "gradient"]


# --------------------------------------------------------------------------------------------
# Windows and labels
# --------------------------------------------------------------------------------------------
def limit_windows(prepared: PreparedData, split: str, max_windows: int | None) -> PreparedData:
    """The same data with `split` cut to its first `max_windows` windows (None, or more than it has: unchanged)."""
    if max_windows is None:
        return prepared
    if max_windows < 1:
        raise ConfigError(f"max_windows must be at least 1, got {max_windows}")
    part = prepared.split(split)
    rows = max_windows + prepared.spec.seq_len + prepared.spec.pred_len - 1  # window i reads rows i … i+rows−1
    if rows >= len(part.values):
        return prepared
    cut = replace(part, stop=part.start + rows, values=part.values[:rows], marks=part.marks[:rows],
                  timestamps=part.timestamps[:rows])
    return replace(prepared, **{split: cut})


def head_label(model: Informer, site: int, head: int) -> str:
    """'encoder.0.1:2' — head 2 of site 1. The form `removed_heads` and `masked_heads` columns use."""
    return f"{model.sites[site].name}:{head}"


def heads_label(model: Informer, heads: Iterable[tuple[int, int]]) -> str:
    """'site:head;site:head;…' in the order given ('' for none)."""
    return ";".join(head_label(model, s, h) for s, h in heads)


def all_heads(model: Informer) -> list[tuple[int, int]]:
    """Every (site index, head) in gate order."""
    return [(s, h) for s in range(model.n_sites) for h in range(model.config.n_heads)]


def _site_columns(model: Informer, site: int | None) -> dict:
    if site is None:
        return {"site": BASELINE, "site_index": -1, "kind": BASELINE, "replica": -1, "layer": -1}
    s = model.sites[site]
    return {"site": s.name, "site_index": s.index, "kind": s.kind, "replica": s.replica, "layer": s.layer}


def _check_mode(mode: str) -> None:
    if mode not in ("zero", "mean"):
        raise ConfigError(f"ablation mode must be 'zero' or 'mean', got {mode!r}")


def reference_means(model: Informer, prepared: PreparedData, mode: AblationMode,
                    means: Sequence[torch.Tensor] | None, seed: int) -> tuple[torch.Tensor, ...] | None:
    """What mean ablation replaces heads with: `means` if given, else each site's mean context over the
    train split. None in zero mode."""
    _check_mode(mode)
    if mode == "zero":
        return None
    if means is None:
        means = mean_contexts(model, prepared, "train", seed=seed)
    if len(means) != model.n_sites:
        raise ConfigError(f"mean ablation needs one mean context per site ({model.n_sites}), got {len(means)}")
    return tuple(means)


# --------------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MaskEvaluation:
    """Metrics of n masks over the same windows (index k: mask k of the gates passed in).

    mse, mae:                     [n] on the standardised scale (as papers report)
    mse_original, mae_original:   [n] in the data's original units
    mse_per_step:                 [n, pred_len] standardised MSE per horizon step (1 … pred_len)
    windows:                      how many windows were scored
    """

    mse: np.ndarray
    mae: np.ndarray
    mse_original: np.ndarray
    mae_original: np.ndarray
    mse_per_step: np.ndarray
    windows: int

    def __len__(self) -> int:
        return len(self.mse)

    def metrics(self, k: int) -> Metrics:
        """Mask k's metrics as `analysis.training.Metrics` (what `evaluate` returns)."""
        return Metrics(float(self.mse[k]), float(self.mae[k]), float(self.mse_original[k]),
                       float(self.mae_original[k]), self.windows)


def first_masked_site(gates: torch.Tensor) -> torch.Tensor:
    """[n, n_sites, H] gates → [n] index of the earliest site where a gate differs from 1 (n_sites: none).

    Masks that agree up to a site can share the forward computation up to it; sorting by this index puts
    them in the same call.
    """
    touched = (gates != 1).any(dim=-1)  # [n, n_sites]
    n_sites = gates.shape[1]
    first = torch.where(touched, torch.arange(n_sites, device=gates.device), n_sites)
    return first.amin(dim=-1)


@torch.no_grad()
def evaluate_masks(model: Informer, prepared: PreparedData, split: str, gates: torch.Tensor, *,
                   mode: AblationMode = "zero", means: Sequence[torch.Tensor] | None = None, seed: int = 0,
                   batch_size: int = 64, max_variants_per_call: int | None = None,
                   max_rows: int | None = None, max_windows: int | None = None) -> MaskEvaluation:
    """Score n head masks over the windows of a split. gates: [n, n_sites, H] in `model.sites` order.

    Each forward call carries `batch_size` windows × up to max(1, max_rows // batch_size) masks (and at most
    `max_variants_per_call`); max_rows None: `default_max_rows(model)` (≤ 4096, ~1 GiB per activation).
    Masks are grouped by the first site they touch. Key samples: see the module docstring — mask k's numbers
    equal `evaluate(..., seed=seed, batch_size=batch_size)` under mask k alone.
    """
    _check_mode(mode)
    H = model.config.n_heads
    if gates.dim() != 3 or gates.shape[1:] != (model.n_sites, H) or gates.shape[0] < 1:
        raise ValueError(f"gates have shape {list(gates.shape)}, expected [n ≥ 1, {model.n_sites}, {H}]")
    max_rows = default_max_rows(model) if max_rows is None else max_rows
    if batch_size < 1 or max_rows < 1 or (max_variants_per_call is not None and max_variants_per_call < 1):
        raise ConfigError("batch_size, max_rows and max_variants_per_call must be at least 1")
    means = reference_means(model, prepared, mode, means, seed)
    prepared = limit_windows(prepared, split, max_windows)
    p = next(model.parameters())
    device = p.device
    gates = gates.detach().to(device=device, dtype=p.dtype)
    means = None if means is None else tuple(m.to(device=device, dtype=p.dtype) for m in means)

    n = gates.shape[0]
    per_call = max(1, max_rows // batch_size)
    if max_variants_per_call is not None:
        per_call = min(per_call, max_variants_per_call)
    order = torch.sort(first_masked_site(gates).cpu(), stable=True).indices  # [n]
    chunks = [order[i:i + per_call] for i in range(0, n, per_call)]
    chunk_gates = [gates[idx.to(device)] for idx in chunks]  # each [v, n_sites, H]

    targets = list(prepared.target_columns)
    unit = np.ones((1, len(targets)))
    std = torch.as_tensor(prepared.scaler.inverse_transform(unit, targets) -
                          prepared.scaler.inverse_transform(0 * unit, targets), dtype=torch.float64)[0]  # [c_out]
    pred_len = prepared.spec.pred_len
    sum_sq_step = torch.zeros(n, pred_len, dtype=torch.float64)
    sum_abs = torch.zeros(n, dtype=torch.float64)
    sum_sq_orig = torch.zeros(n, dtype=torch.float64)
    sum_abs_orig = torch.zeros(n, dtype=torch.float64)
    windows = 0

    generator = torch.Generator(device=device).manual_seed(seed)
    model.eval()
    for batch, y in split_batches(prepared, split, batch_size):
        batch = batch.to(device)
        B = y.shape[0]
        y = y.to(torch.float64)  # [B, pred_len, c_out]
        start_state = generator.get_state()
        for idx, g in zip(chunks, chunk_gates):
            generator.set_state(start_state)  # every chunk draws the key samples of this window batch
            with autocast_context(device):
                out = model(batch, head_mask=HeadMask(g, means, variants=True), generator=generator)
            out = out.float().cpu().to(torch.float64).view(len(idx), B, pred_len, -1)  # [v, B, pred_len, c_out]
            err = out - y  # [v, B, pred_len, c_out]
            sq, ab = err.square(), err.abs()
            sum_sq_step[idx] += sq.sum(dim=(1, 3))
            sum_abs[idx] += ab.sum(dim=(1, 2, 3))
            sum_sq_orig[idx] += (sq * std.square()).sum(dim=(1, 2, 3))
            sum_abs_orig[idx] += (ab * std).sum(dim=(1, 2, 3))
        windows += B
    if windows == 0:
        raise ConfigError(f"the {split} split has no complete window")
    c_out = len(targets)
    count = windows * pred_len * c_out
    return MaskEvaluation(mse=(sum_sq_step.sum(dim=1) / count).numpy(), mae=(sum_abs / count).numpy(),
                          mse_original=(sum_sq_orig / count).numpy(), mae_original=(sum_abs_orig / count).numpy(),
                          mse_per_step=(sum_sq_step / (windows * c_out)).numpy(), windows=windows)


def _metric_rows(evaluation: MaskEvaluation, meta: list[dict]) -> pd.DataFrame:
    """One row per mask: `meta[k]` then metrics and their change from mask 0 (the baseline)."""
    e = evaluation
    table = pd.DataFrame(meta)
    table["mse"], table["mae"] = e.mse, e.mae
    table["mse_original"], table["mae_original"] = e.mse_original, e.mae_original
    table["delta_mse"], table["delta_mae"] = e.mse - e.mse[0], e.mae - e.mae[0]
    table["delta_mse_original"] = e.mse_original - e.mse_original[0]
    table["delta_mae_original"] = e.mae_original - e.mae_original[0]
    table["windows"] = e.windows
    return table


def _per_step_rows(evaluation: MaskEvaluation, meta: list[dict]) -> pd.DataFrame:
    """Tidy: one row per (mask, horizon step) with mse and delta_mse from mask 0."""
    per_step = evaluation.mse_per_step  # [n, pred_len]
    n, pred_len = per_step.shape
    delta = per_step - per_step[0]
    rows = [{**meta[k], "step": t + 1, "mse": per_step[k, t], "delta_mse": delta[k, t]}
            for k in range(n) for t in range(pred_len)]
    return pd.DataFrame(rows)


def _gates_off(model: Informer, off_sets: Sequence[Iterable[tuple[int, int]]]) -> torch.Tensor:
    """[len(off_sets), n_sites, H] ones with zeros at each set's (site, head) pairs."""
    gates = model.full_gates(len(off_sets))
    for k, off in enumerate(off_sets):
        for s, h in off:
            gates[k, s, h] = 0.0
    return gates


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
    gates = _gates_off(model, [[]] + [[sh] for sh in heads])
    evaluation = evaluate_masks(model, prepared, split, gates, mode=mode, means=means, seed=seed,
                                batch_size=batch_size, max_windows=max_windows, max_rows=max_rows)
    meta = [{**_site_columns(model, None), "head": -1}] + [{**_site_columns(model, s), "head": h} for s, h in heads]
    return HeadSweep(_metric_rows(evaluation, meta), _per_step_rows(evaluation, meta))


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
    gates = _gates_off(model, [[]] + [[(s, other) for other in range(H) if other != h] for s, h in pairs])
    evaluation = evaluate_masks(model, prepared, split, gates, mode=mode, means=means, seed=seed,
                                batch_size=batch_size, max_windows=max_windows)
    meta = [{**_site_columns(model, None), "head": -1}] + [{**_site_columns(model, s), "head": h} for s, h in pairs]
    return _metric_rows(evaluation, meta)


def layer_masking(model: Informer, prepared: PreparedData, split: str = "test", *, mode: AblationMode = "zero",
                  means: Sequence[torch.Tensor] | None = None, seed: int = 0, batch_size: int = 64,
                  max_windows: int | None = None) -> pd.DataFrame:
    """Every head of one site off at a time. Rows: baseline, then one per site (head −1: all of them);
    columns as `single_head_sweep` plus n_masked."""
    H = model.config.n_heads
    gates = _gates_off(model, [[]] + [[(s, h) for h in range(H)] for s in range(model.n_sites)])
    evaluation = evaluate_masks(model, prepared, split, gates, mode=mode, means=means, seed=seed,
                                batch_size=batch_size, max_windows=max_windows)
    meta = [{**_site_columns(model, None), "head": -1, "n_masked": 0}] + \
           [{**_site_columns(model, s), "head": -1, "n_masked": H} for s in range(model.n_sites)]
    return _metric_rows(evaluation, meta)


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
    Rows: repeat (0-based), n_masked, mse, mae, mse_original, mae_original, delta_mse, delta_mae,
    delta_mse_original, delta_mae_original, masked_heads ('site:head;…').
    """
    sets = random_head_sets(model, fraction, repeats, seed)
    gates = _gates_off(model, [[]] + sets)
    evaluation = evaluate_masks(model, prepared, split, gates, mode=mode, means=means, seed=eval_seed,
                                batch_size=batch_size, max_windows=max_windows)
    meta = [{"repeat": -1, "n_masked": 0, "masked_heads": ""}] + \
           [{"repeat": r, "n_masked": len(s), "masked_heads": heads_label(model, s)} for r, s in enumerate(sets)]
    table = _metric_rows(evaluation, meta).iloc[1:].reset_index(drop=True)
    columns = ["repeat", "n_masked", "mse", "mae", "mse_original", "mae_original", "delta_mse", "delta_mae",
               "delta_mse_original", "delta_mae_original", "masked_heads"]
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
      importance="gradient": E|∂L/∂ξ_h| at the current mask (`analysis.importance.head_importance`).
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
        current = _gates_off(model, [removed])  # [1, n_sites, H]
        remaining = [sh for sh in heads if sh not in removed]
        if importance == "ablation":
            candidates = _gates_off(model, [removed] + [removed + [sh] for sh in remaining])
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
            from .importance import head_importance  # gradient scoring lives with the attribution code

            table = head_importance(model, select, select_split, base_gates=current[0], mode=mode, means=means,
                                    seed=seed, batch_size=batch_size).table
            by_head = {(int(r.site_index), int(r.head)): float(r.importance) for r in table.itertuples()}
            scores = np.array([by_head[sh] for sh in remaining])
        order = np.argsort(scores, kind="stable")[:per_step]
        removed = removed + [remaining[i] for i in order]

    report = evaluate_masks(model, prepared, report_split, _gates_off(model, [s["removed"] for s in steps]),
                            max_windows=max_windows, **common)
    rows = []
    for k, s in enumerate(steps):
        rows.append({"step": k, "n_removed": len(s["removed"]), "fraction_removed": len(s["removed"]) / len(heads),
                     "mse": float(report.mse[k]), "mae": float(report.mae[k]),
                     "mse_original": float(report.mse_original[k]), "mae_original": float(report.mae_original[k]),
                     "val_mse": s["val_mse"], "val_mae": s["val_mae"], "within_tolerance": bool(s["within"]),
                     "newly_removed": heads_label(model, s["new"]), "removed_heads": heads_label(model, s["removed"])})
    return pd.DataFrame(rows)


__all__ = ["DEFAULT_MAX_ROWS", "HeadSweep", "MaskEvaluation", "all_heads", "default_max_rows", "evaluate_masks",
           "first_masked_site", "head_label", "head_sweep", "heads_label", "layer_masking", "leave_one_in",
           "limit_windows", "n_to_mask", "pruning_curve", "random_head_sets", "random_masking",
           "random_masking_summary", "reference_means", "single_head_sweep", "single_head_sweep_per_step"]
