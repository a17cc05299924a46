"""Each decoder head's direct share of the forecast, the LayerNorm scales frozen (DESIGN §7; TransformerLens's
`stack_head_results` + `apply_ln_to_stack`, `incl_remainder`).

The decoder is run layer by layer with the model's own modules (post-norm; in eval mode each dropout is the identity):

    x1 = norm1(x0 + self(x0)),   x2 = norm2(x1 + cross(x1, memory)),   x3 = norm3(x2 + FFN(x2)),
    y  = rescale(proj(LN_dec(x_last))[-pred_len:])

Every LayerNorm's σ = √(var(z) + eps) of its input z is kept per row. Head h's WRITE at row q is the out_projection
without its bias applied to the merged context in which every other head is zeroed (the merge is linear, so this holds
for mix=True too, where a row of the merge interleaves heads and time). The write is carried along the residual path
only, at the same row, through every later LayerNorm with its scale frozen, w ↦ γ ⊙ (w − mean(w)) / σ (no β), then
the decoder's closing norm the same way, then proj's weight (no bias), then the per-window rescale's linear factor
(RevIN: σ_window / (γ + eps²); HF's instance scaling: its scale; else 1) and the data scaler's std: a share in data
units. remainder = forecast − Σ shares (every bias, β, FFN non-linearity and the frozen σ's own dependence on the
input live there), so the parts sum to the forecast exactly. A head gated off by the head mask writes exactly 0.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from informer_lab.model import Batch, HeadMask, Informer, gate_heads, key_generator
from informer_lab.model.lags import instance_scale

from informer_lab.analysis.anatomy.lens import BATCH, check_eval, spread_windows, window_batches
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.intervals import window_means
from informer_lab.analysis.row_memory import data_span

REMAINDER, FORECAST = "remainder", "forecast"


@dataclass(frozen=True, eq=False)
class DecoderPass:
    """One batch of B windows through the decoder, layer by layer. P = pred_len, C = c_out, H heads, d = d_model.

    forecast: [B, P, C] model units (equal to model(batch, head_mask=…, generator=key_generator(seed)))
    sigmas:   {norm name: [B, P]} σ of each LayerNorm's input at the forecast rows, in decoder order:
              "layer{l}.norm1", "layer{l}.norm2", "layer{l}.norm3", …, "final" (None when the decoder has no
              closing norm)
    writes:   {site name: [H, B, P, d]} each head's write at the forecast rows (out_projection without bias)
    attended: {site name: [B, P, d]} the site's output (out_projection with bias) at the forecast rows
    shares:   {site name: [H, B, P, C]} each head's direct share in model units (float64)
    factor:   [B, 1, C] the per-window rescale's linear factor
    """

    forecast: torch.Tensor
    sigmas: dict
    writes: dict
    attended: dict
    shares: dict
    factor: torch.Tensor


def rescale_factor(model: Informer, batch: Batch, statistics) -> torch.Tensor:
    """The linear factor of model.rescale, [B, 1, C]: rescale(y) = factor·y + offset per window and column."""
    c = model.config.c_out
    if statistics is not None:  # RevIN (model/revin.py denormalise): (ŷ − β)/(γ + eps²)·σ + μ
        std = statistics[1][..., -c:]
        return std / (model.revin.weight[-c:] + model.revin.eps ** 2)
    if model.config.instance_scaling != "none":  # model/lags.py rescale_forecast: loc + scale·y
        _, scale = instance_scale(batch.x_enc[:, model.config.history_len:, -c:], model.config.instance_scaling)
        return scale
    return batch.x_enc.new_ones(batch.x_enc.shape[0], 1, c)


def _sigma(z: torch.Tensor, norm: nn.Module) -> torch.Tensor | None:
    """σ of a LayerNorm's input per row, [B, L] (float64); None for an Identity."""
    if not isinstance(norm, nn.LayerNorm):
        return None
    return torch.sqrt(z.double().var(dim=-1, unbiased=False) + norm.eps)


def _frozen(w: torch.Tensor, norm: nn.Module, sigma: torch.Tensor | None) -> torch.Tensor:
    """A LayerNorm with its σ frozen, applied to writes w [..., B, P, d] (float64): γ ⊙ (w − mean(w)) / σ."""
    if sigma is None:
        return w
    out = (w - w.mean(dim=-1, keepdim=True)) / sigma[..., None]
    return out * norm.weight.double() if norm.weight is not None else out


def head_writes(attention: nn.Module, context: torch.Tensor, rows: int) -> torch.Tensor:
    """Each head's write at the last `rows` query rows: [B, L_Q, H, D] (gated) context → [H, B, rows, d_model].

    The merge is the one of AttentionLayer.project: mix=False gives head h columns h·D … (h+1)·D − 1 of its own row;
    mix=True reads [B, H, L_Q, D] as [B, L_Q, H·D], so a row gathers several heads at several times."""
    B, L_Q, H, D = context.shape
    if not attention.mix:
        context = context[:, -rows:]
        L_Q = rows
    eye = torch.eye(H, dtype=context.dtype, device=context.device)
    alone = context.unsqueeze(0) * eye[:, None, None, :, None]  # [H, B, L_Q, H, D]: head h alone
    merged = alone.transpose(2, 3).reshape(H, B, L_Q, H * D) if attention.mix else alone.reshape(H, B, L_Q, H * D)
    return F.linear(merged[:, :, -rows:], attention.out_projection.weight)


@torch.no_grad()
def decoder_pass(model: Informer, batch: Batch, seed: int, head_mask: HeadMask | None = None) -> DecoderPass:
    """The forecast computed decoder layer by decoder layer, with each head's write and direct share (module
    docstring). head_mask: zero ablation only (gates [1 or B, n_sites, H], no means, no variants)."""
    check_eval(model)
    device = next(model.parameters()).device
    batch = batch.to(device)
    model.check_batch(batch)
    if head_mask is not None:
        if head_mask.means is not None or head_mask.variants:
            raise ValueError("direct shares take a zero-ablation head mask (gates only, no means, no variants)")
        model.check_head_mask(head_mask, batch.size)
    generator = key_generator(int(seed))

    def layer_args(module) -> dict:
        gate = head_mask.gates[:, module.index] if head_mask is not None else None
        return {"gate": gate, "mean": None, "generator": generator, "kind": None}

    inputs, statistics = model.normalise(batch)
    memory = model.encoder(model.hook_enc_embedding(model.enc_embedding(inputs.x_enc, inputs.mark_enc)), layer_args)
    x = model.hook_dec_embedding(model.embed_decoder(inputs))  # [B, L_dec, d_model]
    P = model.config.pred_len
    norms, sigmas, writes, attended, entry = [], {}, {}, {}, {}

    def add_norm(name: str, norm: nn.Module, z: torch.Tensor) -> torch.Tensor:
        sigma = _sigma(z[:, -P:], norm)
        norms.append((norm, sigma))
        sigmas[name] = sigma
        return norm(z)

    def attend(att, x_q: torch.Tensor, x_kv: torch.Tensor) -> torch.Tensor:
        args = layer_args(att)
        context = att.attend(x_q, x_kv, generator=generator)  # [B, L_Q, H, D] before the gate
        out = att.project(context, args["gate"])
        name = model.sites[att.index].name
        writes[name] = head_writes(att, gate_heads(context, args["gate"], None), P)
        attended[name] = out[:, -P:]
        entry[name] = len(norms)  # the first LayerNorm its write passes through
        return out

    for l, layer in enumerate(model.decoder.layers):
        x = add_norm(f"layer{l}.norm1", layer.norm1, x + attend(layer.self_attention, x, x))
        x = add_norm(f"layer{l}.norm2", layer.norm2, x + attend(layer.cross_attention, x, memory))
        x = layer.hook_out(add_norm(f"layer{l}.norm3", layer.norm3, layer.ffn.residual(x)))
    x = add_norm("final", model.decoder.norm, x[:, -P:])
    forecast = model.rescale(model.projection(x), batch, statistics)  # [B, P, C]

    factor = rescale_factor(model, batch, statistics)
    weight = model.projection.weight.double()
    shares = {}
    for name, w in writes.items():
        w = w.double()
        for norm, sigma in norms[entry[name]:]:
            w = _frozen(w, norm, sigma)
        shares[name] = F.linear(w, weight) * factor.double()  # [H, B, P, C]
    return DecoderPass(forecast, sigmas, writes, attended, shares, factor)


# --------------------------------------------------------------------------------------------
# Over the windows of a split
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class DirectShares:
    """Direct shares over the windows of a split, in data units.

    table: window, step (1 … P), column, part, value; part is 'SITE:HEAD' (e.g. 'cross.0:2'), 'remainder' or
           'forecast'; per (window, step, column) the head parts and the remainder sum to the forecast.
    heads: the head parts in model.sites order; gated: the parts the head mask switched off (their shares are 0).
    windows: the split's windows (evenly spread, one in `stride`); span: `data_span` of that spacing."""

    table: pd.DataFrame
    heads: tuple[str, ...]
    gated: tuple[str, ...]
    columns: tuple[str, ...]
    split: str
    windows: np.ndarray
    stride: int
    span: int
    seed: int


def batch_parts(model: Informer, prepared: PreparedData, batch: Batch, seed: int,
                head_mask: HeadMask | None = None) -> np.ndarray:
    """[B, P, C, n_heads + 2] in data units: every decoder head's direct share (model.sites order, heads in order),
    then the remainder, then the forecast (the parts before it sum to it)."""
    targets = list(prepared.target_columns)
    std = np.asarray(prepared.scaler.std, dtype=np.float64)[[prepared.scaler.columns.index(c) for c in targets]]
    sites = [s for s in model.sites if s.kind != "encoder"]
    p = decoder_pass(model, batch, seed, head_mask)
    share = torch.stack([p.shares[s.name][h] for s in sites for h in range(model.config.n_heads)],
                        dim=-1).cpu().numpy() * std[:, None]  # [B, P, C, n_heads]
    forecast = prepared.scaler.inverse_transform(p.forecast.double().cpu().numpy(), targets)  # [B, P, C]
    return np.concatenate([share, (forecast - share.sum(-1))[..., None], forecast[..., None]], axis=-1)


def window_parts(model: Informer, prepared: PreparedData, split: str, window: int, seed: int = 0) -> pd.DataFrame:
    """One window's parts in data units: step, column, part ('SITE:HEAD', 'remainder', 'forecast'), value."""
    check_eval(model)
    batch, _ = next(window_batches(prepared, split, [int(window)]))
    values = batch_parts(model, prepared, batch, seed)[0]  # [P, C, n_parts]
    P, C, n = values.shape
    sites = [s for s in model.sites if s.kind != "encoder"]
    parts = tuple(f"{s.name}:{h}" for s in sites for h in range(model.config.n_heads)) + (REMAINDER, FORECAST)
    return pd.DataFrame({"step": np.repeat(np.arange(1, P + 1), C * n),
                         "column": np.tile(np.repeat(list(prepared.target_columns), n), P),
                         "part": np.tile(parts, P * C), "value": values.reshape(-1)})


def direct_shares(model: Informer, prepared: PreparedData, split: str = "test", *, windows: int = 64,
                  seed: int = 0, head_mask: HeadMask | None = None, batch_size: int = BATCH) -> DirectShares:
    """Every decoder head's direct share of the forecast at every step and column, for `windows` windows spread
    evenly over `split`, each batch's key sample drawn from `seed`. head_mask: zero ablation, gates [1, n_sites, H]
    (the same for every window) or [windows scored, n_sites, H]."""
    check_eval(model)
    if batch_size < 1:
        raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
    indices, stride, _ = spread_windows(prepared, split, windows)
    if head_mask is not None and head_mask.gates.shape[0] not in (1, len(indices)):
        raise ValueError(f"head_mask.gates has {head_mask.gates.shape[0]} rows; give 1 or one per window scored "
                         f"({len(indices)})")
    sites = [s for s in model.sites if s.kind != "encoder"]
    H = model.config.n_heads
    heads = tuple(f"{s.name}:{h}" for s in sites for h in range(H))
    values = []  # per batch: [B, P, C, n_heads + 2]
    for start, (batch, _) in zip(range(0, len(indices), batch_size), window_batches(prepared, split, indices,
                                                                                     batch_size)):
        mask = head_mask
        if head_mask is not None and head_mask.gates.shape[0] > 1:
            mask = HeadMask(head_mask.gates[start:start + batch.size])
        values.append(batch_parts(model, prepared, batch, seed, mask))
    values = np.concatenate(values)  # [S, P, C, n_parts]
    S, P, C, n_parts = values.shape
    parts = heads + (REMAINDER, FORECAST)
    targets = list(prepared.target_columns)
    table = pd.DataFrame({"window": np.repeat(indices, P * C * n_parts),
                          "step": np.tile(np.repeat(np.arange(1, P + 1), C * n_parts), S),
                          "column": np.tile(np.repeat(targets, n_parts), S * P),
                          "part": np.tile(parts, S * P * C), "value": values.reshape(-1)})
    gated = ()
    if head_mask is not None:
        off = (head_mask.gates == 0).all(dim=0).cpu().numpy()  # [n_sites, H]
        gated = tuple(f"{s.name}:{h}" for s in sites for h in range(H) if off[s.index, h])
    return DirectShares(table, heads, gated, tuple(targets), split, indices, stride,
                        data_span(prepared, split, stride), int(seed))


def _abs_values(shares: DirectShares) -> np.ndarray:
    """|share| per window as [S, P, C, n_heads] (the table's head rows)."""
    table = shares.table[shares.table.part.isin(shares.heads)]
    S, P, C = len(shares.windows), int(table.step.max()), len(shares.columns)
    return np.abs(table.value.to_numpy()).reshape(S, P, C, len(shares.heads))


def share_summary(shares: DirectShares) -> pd.DataFrame:
    """Mean |share| per head, column and step over the windows, with the lab's interval: part, site, head, column,
    step, mean_abs, mean_abs_low, mean_abs_high, windows, reason (data units). A mean of |share| is positive by
    construction: compare heads with each other, not with 0."""
    values = _abs_values(shares)
    S, P, C, n = values.shape
    m = window_means(values.reshape(S, -1), span=shares.span)
    reasons = np.asarray(m.reasons(), dtype=object).reshape(P, C, n)
    grid = np.meshgrid(np.arange(P), np.arange(C), np.arange(n), indexing="ij")
    t, c, k = (g.reshape(-1) for g in grid)
    parts = np.asarray(shares.heads)[k]
    return pd.DataFrame({"part": parts, "site": [p.rpartition(":")[0] for p in parts],
                         "head": [int(p.rpartition(":")[2]) for p in parts], "column": np.asarray(shares.columns)[c],
                         "step": t + 1, "mean_abs": m.estimate.reshape(-1), "mean_abs_low": m.lo.reshape(-1),
                         "mean_abs_high": m.hi.reshape(-1), "windows": S, "reason": reasons.reshape(-1)})


def top_heads(shares: DirectShares, k: int = 5) -> pd.DataFrame:
    """Per column, the k heads with the largest mean over windows of their mean |share| over the horizon, with the
    interval: column, rank (1 = largest), part, mean_abs, mean_abs_low, mean_abs_high, reason."""
    values = _abs_values(shares).mean(axis=1)  # [S, C, n_heads]
    S, C, n = values.shape
    m = window_means(values.reshape(S, -1), span=shares.span)
    reasons = np.asarray(m.reasons(), dtype=object).reshape(C, n)
    estimate, lo, hi = (a.reshape(C, n) for a in (m.estimate, m.lo, m.hi))
    rows = []
    for c, column in enumerate(shares.columns):
        for rank, i in enumerate(np.argsort(-estimate[c], kind="stable")[:k], start=1):
            rows.append({"column": column, "rank": rank, "part": shares.heads[i], "mean_abs": estimate[c, i],
                         "mean_abs_low": lo[c, i], "mean_abs_high": hi[c, i], "reason": reasons[c, i]})
    return pd.DataFrame(rows, columns=["column", "rank", "part", "mean_abs", "mean_abs_low", "mean_abs_high",
                                       "reason"])


__all__ = ["DecoderPass", "DirectShares", "FORECAST", "REMAINDER", "batch_parts", "decoder_pass", "direct_shares",
           "head_writes", "rescale_factor", "share_summary", "top_heads", "window_parts"]
