"""Score many head masks over a split, paired by key sample: the engine of the ablation studies.

`evaluate_masks` scores n masks ([n, n_sites, H] gates) over every window of a split, several masks per forward
call (`HeadMask(..., variants=True)`), with the ProbSparse key samples of each window batch shared by every
mask. The studies (`analysis.heads.ablation`) build their masks and call it once.

Pairing. `predict`/`evaluate` seed one generator per evaluation and let it run on through the window
batches. `evaluate_masks` does the same, and before each chunk of masks it restores the generator to the
state it had at the start of that window batch. So mask k sees exactly the key samples that
`evaluate(model, prepared, split, seed=seed, batch_size=batch_size, head_mask=HeadMask(gates[k:k+1]))`
would draw, whichever chunk it falls in, and differences between masks are not sampling noise.

Mean ablation replaces a head with its mean context per position over reference windows (see
`analysis.heads.masking.mean_contexts`); when `means` is None the reference is the train split (256 windows
evenly strided, the same key-sample seed).

`max_windows`: evaluate only the first `max_windows` windows of the split (`analysis.learning.windows.limit_windows`),
for quick looks and tests; None is the whole split.

Pure functions: the model is never modified (its mode is set to eval, as `predict` does).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
import torch

from informer_lab.model import HeadMask, Informer, key_generator

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.heads.masking import AblationMode, check_mode, reference_means
from informer_lab.analysis.discoveries import adjusted_p_values
from informer_lab.analysis.intervals import add_interval_columns, window_means
from informer_lab.analysis.row_memory import data_span
from informer_lab.analysis.learning.training import Metrics
from informer_lab.analysis.learning.windows import limit_windows, split_batches

# Rows (windows × masks) in one forward call: at most 4096, and fewer for big models, so that the largest
# activation (rows × L × max(d_model, d_ff) fp32 values) stays near 1 GiB. The paper's size (L 96, d_ff 2048)
# gets 1365 rows; the small default model (d_ff 128) 4096.
DEFAULT_MAX_ROWS = 4096
ACTIVATION_BUDGET_VALUES = 1 << 28  # fp32 values: 1 GiB


def default_max_rows(model: Informer) -> int:
    c = model.config
    per_row = max(c.seq_len, c.dec_len) * max(c.d_model, c.d_ff)
    return max(1, min(DEFAULT_MAX_ROWS, ACTIVATION_BUDGET_VALUES // per_row))


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
    window_mse: np.ndarray | None = None  # [n, windows] standardised MSE of each window under each mask
    window_mae: np.ndarray | None = None  # [n, windows]
    span: int = 1  # windows that share rows with one window (seq_len + pred_len): the intervals' dependence

    def __len__(self) -> int:
        return len(self.mse)

    def metrics(self, k: int) -> Metrics:
        """Mask k's metrics as `analysis.learning.training.Metrics` (what `evaluate` returns)."""
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
    check_mode(mode)
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
    window_sq, window_abs = [], []  # per window batch: [n, B]
    windows = 0

    generator = key_generator(seed)
    model.eval()
    for batch, y in split_batches(prepared, split, batch_size):
        batch = batch.to(device)
        B = y.shape[0]
        y = y.to(torch.float64)  # [B, pred_len, c_out]
        batch_sq, batch_abs = torch.zeros(n, B, dtype=torch.float64), torch.zeros(n, B, dtype=torch.float64)
        start_state = generator.get_state()
        for idx, g in zip(chunks, chunk_gates):
            generator.set_state(start_state)  # every chunk draws the key samples of this window batch
            out = model(batch, head_mask=HeadMask(g, means, variants=True), generator=generator)  # float32
            out = out.float().cpu().to(torch.float64).view(len(idx), B, pred_len, -1)  # [v, B, pred_len, c_out]
            err = out - y  # [v, B, pred_len, c_out]
            sq, ab = err.square(), err.abs()
            sum_sq_step[idx] += sq.sum(dim=(1, 3))
            sum_abs[idx] += ab.sum(dim=(1, 2, 3))
            sum_sq_orig[idx] += (sq * std.square()).sum(dim=(1, 2, 3))
            sum_abs_orig[idx] += (ab * std).sum(dim=(1, 2, 3))
            batch_sq[idx], batch_abs[idx] = sq.mean(dim=(2, 3)), ab.mean(dim=(2, 3))
        window_sq.append(batch_sq)
        window_abs.append(batch_abs)
        windows += B
    if windows == 0:
        raise ConfigError(f"the {split} split has no complete window")
    c_out = len(targets)
    count = windows * pred_len * c_out
    return MaskEvaluation(mse=(sum_sq_step.sum(dim=1) / count).numpy(), mae=(sum_abs / count).numpy(),
                          mse_original=(sum_sq_orig / count).numpy(), mae_original=(sum_abs_orig / count).numpy(),
                          mse_per_step=(sum_sq_step / (windows * c_out)).numpy(), windows=windows,
                          window_mse=torch.cat(window_sq, dim=1).numpy(), window_mae=torch.cat(window_abs, dim=1).numpy(),
                          span=data_span(prepared, split, pred_len=pred_len))


def metric_rows(evaluation: MaskEvaluation, meta: list[dict], *, seed: int = 0) -> pd.DataFrame:
    """One row per mask: `meta[k]` then metrics and their change from mask 0 (the baseline).

    mse, delta_mse and delta_mae carry 95 % intervals (`_lo`, `_hi`) over windows (analysis.intervals: the
    cosine long-run variance of each window series, a t quantile; NaN where too few windows give no honest
    interval, `interval` says why). Deltas are paired: each window's difference from the baseline under the same
    key sample. delta_mse also carries its standard error and degrees of freedom (`delta_mse_se`, `delta_mse_dof`)
    and the p-value of ΔMSE ≠ 0 (`delta_mse_p`), raw and Benjamini–Hochberg-adjusted across the masks after the
    baseline (`delta_mse_p_bh`). `seed` is unused (the intervals draw nothing); kept for callers.
    """
    e = evaluation
    table = pd.DataFrame(meta)
    table["mse"], table["mae"] = e.mse, e.mae
    table["mse_original"], table["mae_original"] = e.mse_original, e.mae_original
    table["delta_mse"], table["delta_mae"] = e.mse - e.mse[0], e.mae - e.mae[0]
    table["delta_mse_original"] = e.mse_original - e.mse_original[0]
    table["delta_mae_original"] = e.mae_original - e.mae_original[0]
    table["windows"] = e.windows
    if e.window_mse is not None:
        per_window = np.concatenate([e.window_mse, e.window_mse - e.window_mse[:1], e.window_mae - e.window_mae[:1]])
        n = len(e.mse)
        floor = np.concatenate([np.zeros(n), np.full(2 * n, np.nan)])  # an MSE is never negative
        means = window_means(per_window.T, span=e.span, floor=floor)  # every column [3n]
        for i, metric in enumerate(("mse", "delta_mse", "delta_mae")):
            table = add_interval_columns(table, metric, means.lo[i * n:(i + 1) * n], means.hi[i * n:(i + 1) * n])
        delta = slice(n, 2 * n)
        p = means.p_values()[delta]
        p[0] = np.nan  # the baseline against itself is no test
        table["delta_mse_se"], table["delta_mse_dof"] = means.se[delta], means.dof[delta]
        table["delta_mse_p"], table["delta_mse_p_bh"] = p, adjusted_p_values(p)
        table["interval"] = means.reasons()[delta]
    return table


def per_step_rows(evaluation: MaskEvaluation, meta: list[dict]) -> pd.DataFrame:
    """Tidy: one row per (mask, horizon step) with mse and delta_mse from mask 0."""
    per_step = evaluation.mse_per_step  # [n, pred_len]
    n, pred_len = per_step.shape
    delta = per_step - per_step[0]
    rows = [{**meta[k], "step": t + 1, "mse": per_step[k, t], "delta_mse": delta[k, t]}
            for k in range(n) for t in range(pred_len)]
    return pd.DataFrame(rows)


__all__ = ["ACTIVATION_BUDGET_VALUES", "DEFAULT_MAX_ROWS", "MaskEvaluation", "default_max_rows", "evaluate_masks",
           "first_masked_site"]
