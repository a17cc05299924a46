"""Gradient head importance (Michel, Levy & Neubig 2019, "Are Sixteen Heads Really Better than One?").

Every head h of every site carries a gate ξ_h (1: on). Its importance is the expected size of the loss's
sensitivity to that gate, at the unmasked model:

    I_h = E_x |∂L(x)/∂ξ_h|  at ξ = 1,      L(x) = MSE of window x's forecast (standardised scale)

computed with one gate per window (gates [B, n_sites, H], `HeadMask(gates)`), so the derivative for window b
is that window's alone (in eval mode windows do not interact), and captum's `Saliency(abs=True)` gives
|∂L_b/∂ξ_b| for all windows of a batch in one backward pass. As in Michel et al., scores are also
normalised per layer (site) by their L2 norm over its heads.

`method="integrated_gradients"` instead integrates ∂L/∂ξ along ξ = α·1, α: 0 → 1 (all heads off → on),
importance = E_x |attribution_h|; its completeness error (Σ_h attribution_h − (L(1) − L(0)), per window)
is reported as `convergence_delta`, the mean absolute value over windows. ProbSparse's top-u selection is
piecewise constant in the gates, so expect a non-zero delta at coarse `n_steps`.

Key samples: the same scheme as `predict`/`evaluate_masks` (one generator seeded with `seed`, reset to each
window batch's state for every forward of that batch), so scores and ablations see the same samples.
Gradients run in fp32 (no autocast). The model's weights are never modified; gradients are taken with
respect to the gates only (no parameter `.grad` is written).

A null reference. I_h is a mean of magnitudes: positive for any head whose gate moves the loss at all, so an
interval of I_h above 0 says nothing. The reference is the same head against errors it is unrelated to: the loss's
sensitivity when window w's forecast error is replaced by that of a window half the split away (a fixed cyclic
shift, far beyond seq_len + pred_len), i.e. targets y'_w = f_w − e_{w + n/2} with f_w held fixed, so that
∂L'/∂ξ_h = (2/m) Σ e_{w+n/2} · ∂f_w/∂ξ_h against ∂L/∂ξ_h = (2/m) Σ e_w · ∂f_w/∂ξ_h. The two have the same
distribution when the head's effect on a window's forecast carries no information about that window's own error;
a head is `above_null` when its per-window excess |∂L/∂ξ_h| − |∂L'/∂ξ_h| is shown to be above 0 (one-sided t test,
the interval machinery of analysis.intervals), with Benjamini–Hochberg across the heads. A head that helps (its
effect points along the error) or hurts (its own noise is part of the error) is above its reference; a head whose
effect is unrelated to where the forecast errs is not, however large its gradients.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Batch, HeadMask, Informer, key_generator

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.discoveries import Q, adjusted_p_values
from informer_lab.analysis.intervals import window_means
from informer_lab.analysis.row_memory import data_span
from informer_lab.analysis.heads.masking import BASELINE, AblationMode, all_heads, reference_means
from informer_lab.analysis.learning.windows import limit_windows, split_batches

Method = Literal["saliency", "integrated_gradients"]


@dataclass(frozen=True)
class HeadImportance:
    """table: one row per (site, head) in gate order: site, site_index, kind, replica, layer, head,
    importance (E|∂L/∂ξ_h|, or E|IG attribution|) with importance_lo / importance_hi (its 95 % interval over windows,
    analysis.intervals), importance_normalised (÷ the site's L2 norm over heads); with the null reference (module
    docstring): importance_null, excess (importance − importance_null) with excess_lo / excess_hi, excess_p
    (one-sided), excess_p_bh (BH across the heads), above_null (after BH at q), above_null_raw (excess_lo > 0),
    interval (why none). convergence_delta: integrated gradients only, mean |completeness error| over windows."""

    table: pd.DataFrame
    method: str
    windows: int
    convergence_delta: float | None = None


def window_losses(model: Informer, batch: Batch, y: torch.Tensor, gates: torch.Tensor, *,
                  means: Sequence[torch.Tensor] | None = None,
                  generator: torch.Generator | None = None) -> torch.Tensor:
    """Per-window MSE under per-window gates: gates [B, n_sites, H], y [B, pred_len, c_out] → [B]."""
    out = model(batch, head_mask=HeadMask(gates, None if means is None else tuple(means)), generator=generator)
    return (out.float() - y.to(out.device)).square().mean(dim=(1, 2))


@torch.no_grad()
def _errors(model: Informer, prepared: PreparedData, split: str, batch_size: int, base_gates: torch.Tensor, means,
            seed: int, dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Forecasts and errors [n, pred_len, c_out] of every window at the base gates, under the key samples the
    gradient passes draw (one generator seeded with `seed`, one forward per window batch)."""
    device = base_gates.device
    generator = key_generator(seed)
    forecasts, errors = [], []
    for batch, y in split_batches(prepared, split, batch_size):
        batch = Batch(*(t.to(device=device, dtype=dtype) for t in
                        (batch.x_enc, batch.mark_enc, batch.x_dec, batch.mark_dec)))
        gates = base_gates.expand(y.shape[0], *base_gates.shape)
        f = model(batch, head_mask=HeadMask(gates, means), generator=generator).to(dtype)
        forecasts.append(f)
        errors.append(f - y.to(device=device, dtype=dtype))
    return torch.cat(forecasts), torch.cat(errors)


def head_importance(model: Informer, prepared: PreparedData, split: str = "val", *, method: Method = "saliency",
                    base_gates: torch.Tensor | None = None, mode: AblationMode = "zero",
                    means: Sequence[torch.Tensor] | None = None, seed: int = 0, batch_size: int = 64,
                    max_windows: int | None = None, n_steps: int = 20, null: bool = True,
                    q: float = Q) -> HeadImportance:
    """Gradient importance of every head over the windows of a split (the first `max_windows` if given).

    base_gates: [n_sites, H] gates to differentiate at (default all ones; pruning passes its current mask,
    where removed heads sit at 0). mode="mean" differentiates g·context + (1 − g)·mean instead of g·context.
    null: also score every head against its null reference (module docstring; twice the gradient passes), and list
    the heads shown above it (BH at q). Pruning, which only ranks, passes False.
    """
    if method not in ("saliency", "integrated_gradients"):
        raise ConfigError(f"method must be 'saliency' or 'integrated_gradients', got {method!r}")
    p = next(model.parameters())
    device = p.device
    n_sites, H = model.n_sites, model.config.n_heads
    if base_gates is None:
        base_gates = model.full_gates(1)[0]
    if tuple(base_gates.shape) != (n_sites, H):
        raise ValueError(f"base_gates have shape {list(base_gates.shape)}, expected [{n_sites}, {H}]")
    base_gates = base_gates.detach().to(device=device, dtype=p.dtype)
    means = reference_means(model, prepared, mode, means, seed)
    means = None if means is None else tuple(m.to(device=device, dtype=p.dtype) for m in means)
    prepared = limit_windows(prepared, split, max_windows)
    model.eval()
    if null:
        forecasts, errors = _errors(model, prepared, split, batch_size, base_gates, means, seed, p.dtype)
        shifted = torch.roll(errors, -(len(errors) // 2), dims=0)  # window w gets the error of w + n/2

    generator = key_generator(seed)
    state = {"at": generator.get_state()}

    def forward(gates, x_enc, mark_enc, x_dec, mark_dec, y):
        generator.set_state(state["at"])  # every call for this window batch draws the same key samples
        return window_losses(model, Batch(x_enc, mark_enc, x_dec, mark_dec), y, gates, means=means,
                             generator=generator)

    from captum.attr import IntegratedGradients, Saliency  # at use: importing captum.attr costs ~1 s of CPU

    attributor = Saliency(forward) if method == "saliency" else IntegratedGradients(forward)

    def magnitudes(batch: Batch, y: torch.Tensor) -> torch.Tensor:
        B = y.shape[0]
        gates = base_gates.expand(B, n_sites, H).clone().requires_grad_()  # [B, n_sites, H], one gate per window
        extra = (batch.x_enc, batch.mark_enc, batch.x_dec, batch.mark_dec, y)
        if method == "saliency":
            attribution = attributor.attribute(gates, additional_forward_args=extra, abs=True)
        else:
            attribution, delta = attributor.attribute(gates, baselines=torch.zeros_like(gates),
                                                      additional_forward_args=extra, n_steps=n_steps,
                                                      internal_batch_size=B, return_convergence_delta=True)
            deltas.append(delta.detach().abs().double().cpu())
        return attribution.detach().abs().double().cpu()  # [B, n_sites, H]

    per_window: list[torch.Tensor] = []  # [B, n_sites, H] per window batch
    per_window_null: list[torch.Tensor] = []
    deltas: list[torch.Tensor] = []
    windows = 0
    for batch, y in split_batches(prepared, split, batch_size):
        batch = Batch(*(t.to(device=device, dtype=p.dtype) for t in
                        (batch.x_enc, batch.mark_enc, batch.x_dec, batch.mark_dec)))
        y = y.to(device=device, dtype=p.dtype)  # [B, pred_len, c_out]
        B = y.shape[0]
        state["at"] = generator.get_state()
        per_window.append(magnitudes(batch, y))
        if null:
            n_deltas = len(deltas)
            per_window_null.append(magnitudes(batch, forecasts[windows:windows + B] - shifted[windows:windows + B]))
            del deltas[n_deltas:]  # the completeness error is reported for the real loss only
        windows += B
    if windows == 0:
        raise ConfigError(f"the {split} split has no complete window")

    values = torch.cat(per_window).reshape(windows, -1).numpy()  # [windows, n_sites·H]
    importance = values.mean(axis=0).reshape(n_sites, H)
    span = data_span(prepared, split)
    if null:
        reference = torch.cat(per_window_null).reshape(windows, -1).numpy()
        means_all = window_means(np.concatenate([values, values - reference], axis=1), span=span)
        k = n_sites * H
        excess_p = means_all.p_values(0.0, "greater")[k:]
        columns = {"importance_null": reference.mean(axis=0), "excess": means_all.estimate[k:],
                   "excess_lo": means_all.lo[k:], "excess_hi": means_all.hi[k:], "excess_p": excess_p,
                   "excess_p_bh": adjusted_p_values(excess_p), "interval": means_all.reasons()[k:]}
        lo, hi = means_all.lo[:k], means_all.hi[:k]
    else:
        plain = window_means(values, span=span)
        lo, hi, columns = plain.lo, plain.hi, {}
    norms = np.linalg.norm(importance, axis=1, keepdims=True)  # [n_sites, 1]
    normalised = np.divide(importance, norms, out=np.zeros_like(importance), where=norms > 0)
    rows = []
    for s, h in all_heads(model):
        site = model.sites[s]
        j = s * H + h
        rows.append({"site": site.name, "site_index": s, "kind": site.kind, "replica": site.replica,
                     "layer": site.layer, "head": h, "importance": float(importance[s, h]),
                     "importance_lo": float(lo[j]), "importance_hi": float(hi[j]),
                     "importance_normalised": float(normalised[s, h]),
                     **{name: (v[j] if isinstance(v[j], str) else float(v[j])) for name, v in columns.items()}})
    table = pd.DataFrame(rows)
    if null:
        table["above_null"] = np.isfinite(table["excess_p_bh"]) & (table["excess_p_bh"] <= q)
        table["above_null_raw"] = table["excess_lo"] > 0
    delta = float(torch.cat(deltas).mean()) if deltas else None
    return HeadImportance(table, method, windows, delta)


def rank_correlation(importance: pd.DataFrame | HeadImportance, sweep: pd.DataFrame, *,
                     column: str = "importance", target: str = "delta_mse") -> float:
    """Spearman ρ between gradient importance and the measured single-head ΔMSE (sweep's baseline row dropped).

    Ranks with pandas (ties get their average rank), then the Pearson correlation of the ranks.
    NaN when either side is constant or fewer than two heads match.
    """
    importance = getattr(importance, "table", importance)
    measured = sweep[sweep["site"] != BASELINE]
    both = importance[["site", "head", column]].merge(measured[["site", "head", target]], on=["site", "head"])
    if len(both) < 2:
        return float("nan")
    a, b = both[column].rank(method="average"), both[target].rank(method="average")
    if a.std() == 0 or b.std() == 0:
        return float("nan")
    return float(np.corrcoef(a.to_numpy(), b.to_numpy())[0, 1])


__all__ = ["HeadImportance", "head_importance", "rank_correlation", "window_losses"]
