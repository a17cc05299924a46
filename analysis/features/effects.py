"""What a feature does to the forecast, and which heads write it (DESIGN §9; analysis/features/residual.py).

- Direct effect (descriptive of the weights on this pass): the feature's write z_f·s·W_dec[:, f] carried linearly to the
  forecast with every LayerNorm's σ and every cross-attention row frozen at their values in the pass — along the
  decoder's residual stream for a decoder site; for an encoder site through the rest of its replica's stream (a
  distilling step has no residual path: there is none), its closing norm, and each cross-attention's values. In data
  units per horizon step and column. Linear in the write, so the features' effects plus the effect of what the
  dictionary leaves (its bias, the mean, the reconstruction error) sum to the site's own direct effect exactly.
- Ablation / scaling (causal): the forecast with the site's x replaced by x + (α − 1)·z_f·s·W_dec[:, f] at every
  position (α = 0 ablates; the dictionary's error stays in), against the model's, same windows and key samples; the
  mean change per step and column over windows with the lab's interval, and the change of the MSE.
- Heads (correlational: a linear split of one pass): the feature's pre-activation a_f = W_enc[f]·((x − μ)/s − b) + c_f
  split into each head's write carried to the site through the frozen norms between them (heads of the same
  residual segment, before the site), and a remainder (embeddings, FFNs, biases, μ, b, c): parts + remainder = a_f.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Batch, Informer

from informer_lab.analysis.anatomy.lens import BATCH, spread_windows, window_batches
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.features.residual import Chain, ResidualPass, chain, locate, norms_between, residual_pass
from informer_lab.analysis.features.sae import TopKSAE
from informer_lab.analysis.features.sites import check_site
from informer_lab.analysis.instruments.patching import patched_forward
from informer_lab.analysis.intervals import window_means
from informer_lab.analysis.row_memory import data_span

NO_PATH = ("no direct path: a distilling step (conv, BatchNorm, ELU, max-pool, no residual) lies between this site "
           "and the memory; the ablation measures the feature's effect")


@dataclass(frozen=True, eq=False)
class DirectMap:
    """The linear map site → forecast of one ResidualPass. residual: (Chain at the forecast rows, U [C, d], first
    forecast row) for a decoder site; cross: per cross-attention (pre scale [B, L_site], rows A [B, H, P, L_site],
    post scale [B, P], U [H, C, d]); reason: why there is no map ('' where there is)."""

    site: str
    residual: tuple | None
    cross: tuple
    reason: str = ""


def _memory_slice(model: Informer, rp: ResidualPass, replica: int) -> slice:
    lengths = [rp.records[f"encoder.{r}.out"].shape[1] for r in range(len(model.encoder.replicas))]
    start = sum(lengths[:replica])
    return slice(start, start + lengths[replica])


def direct_map(model: Informer, rp: ResidualPass, site: str) -> DirectMap:
    c = model.config
    d, P, H = c.d_model, c.pred_len, c.n_heads
    W = model.projection.weight.detach().double().cpu()  # [C, d]
    B, L = rp.records[site].shape[:2]
    dec = len(rp.segments) - 1
    if site.startswith("decoder."):
        s, i = locate(rp, "site", site)
        ch = chain(rp, norms_between(rp, s, i), d, (B, P), rows=slice(L - P, None))
        return DirectMap(site, (ch, W @ ch.matrix, L - P), ())
    if site == "encoder.out":
        pre, memory = Chain(torch.eye(d, dtype=torch.float64), torch.ones(B, L, dtype=torch.float64)), slice(None)
    else:
        s, i = locate(rp, "site", site)
        last_kind, last_name = rp.segments[s][-1]
        if last_kind != "memory":
            return DirectMap(site, None, (), NO_PATH)
        pre = chain(rp, norms_between(rp, s, i), d, (B, L))
        memory = _memory_slice(model, rp, int(last_name.split(".")[1]))
    terms = []
    for layer in model.decoder.layers:
        att = layer.cross_attention
        name = model.sites[att.index].name
        if att.kind != "full" or att.mix or f"{name}.rows" not in rp.records:
            return DirectMap(site, None, (), f"no direct path computed: {name} is not full attention without mixing")
        rows = rp.records[f"{name}.rows"][:, :, -P:, memory].double()  # [B, H, P, L_site]
        _, k = locate(rp, "heads", name)
        post = chain(rp, norms_between(rp, dec, k), d, (B, P), rows=slice(-P, None))
        D = d // H
        W_O = att.out_projection.weight.detach().double().cpu()  # [d, H·D]
        W_V = att.value_projection.weight.detach().double().cpu()  # [H·D, d]
        U = torch.stack([W @ post.matrix @ W_O[:, h * D:(h + 1) * D] @ W_V[h * D:(h + 1) * D] @ pre.matrix
                         for h in range(H)])  # [H, C, d]
        terms.append((pre.scale, rows, post.scale, U))
    return DirectMap(site, None, tuple(terms))


def effect_of(m: DirectMap, v: torch.Tensor) -> torch.Tensor:
    """The direct effect of a write v [B, L_site, d] at the site: [B, P, C] model units (before the rescale)."""
    v = v.double()
    if m.residual is not None:
        ch, U, first = m.residual
        return ch.scale[..., None] * (v[:, first:] @ U.T)
    out = 0
    for pre, rows, post, U in m.cross:
        carried = torch.einsum("hcd,bjd->bhjc", U, v * pre[..., None])  # [B, H, L, C]
        out = out + post[..., None] * torch.einsum("bhtj,bhjc->btc", rows, carried)
    return out


def feature_effects(m: DirectMap, z: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
    """Every feature's direct effect at once: z [B, L_site, M], directions [d, M] → [B, P, C, M] model units."""
    z, directions = z.double(), directions.double()
    if m.residual is not None:
        ch, U, first = m.residual
        return ch.scale[..., None, None] * z[:, first:, None, :] * (U @ directions)[None, None]
    out = 0
    for pre, rows, post, U in m.cross:
        weights = torch.einsum("bhtj,bjf->bhtf", rows, z * pre[..., None])  # [B, H, P, M]
        out = out + post[..., None, None] * torch.einsum("bhtf,hcf->btcf", weights, U @ directions)
    return out


def _data_factor(prepared: PreparedData, rp: ResidualPass) -> torch.Tensor:
    """[B, 1, C]: model units → data units (the window's rescale, then the scaler's std)."""
    targets = list(prepared.target_columns)
    std = np.asarray(prepared.scaler.std, dtype=np.float64)[[prepared.scaler.columns.index(t) for t in targets]]
    return rp.factor.double() * torch.from_numpy(std)


@dataclass(frozen=True, eq=False)
class DirectEffects:
    """values: [S, P, C, M] each feature's direct effect per window, step and column (data units); site: [S, P, C]
    the site's own; remainder: [S, P, C] site − Σ features. windows / stride / span: the windows scored."""

    site: str
    values: np.ndarray | None
    total: np.ndarray | None
    remainder: np.ndarray | None
    columns: tuple[str, ...]
    windows: np.ndarray
    stride: int
    span: int
    reason: str = ""

    def rms(self) -> np.ndarray:
        """[M] the root mean square of each feature's effect over windows, steps and columns (NaN without a path)."""
        if self.values is None:
            return np.full(0, np.nan)
        return np.sqrt((self.values ** 2).mean(axis=(0, 1, 2)))

    def per_step(self, feature: int) -> pd.DataFrame:
        """step, column, effect (mean over windows), effect_low, effect_high, reason."""
        v = self.values[..., feature]  # [S, P, C]
        S, P, C = v.shape
        mean = window_means(v.reshape(S, -1), span=self.span)
        return pd.DataFrame({"step": np.repeat(np.arange(1, P + 1), C), "column": np.tile(self.columns, P),
                             "effect": mean.estimate, "effect_low": mean.lo, "effect_high": mean.hi,
                             "reason": mean.reasons()})


@torch.no_grad()
def direct_effects(model: Informer, prepared: PreparedData, sae: TopKSAE, site: str, *, split: str = "test",
                   windows: int = 64, seed: int = 0, batch_size: int = BATCH) -> DirectEffects:
    """Every feature's direct effect on `windows` windows spread over `split` (module docstring)."""
    check_site(model, site)
    indices, stride, _ = spread_windows(prepared, split, windows)
    span = data_span(prepared, split, stride)
    columns = tuple(prepared.target_columns)
    values, totals, remainders = [], [], []
    for batch, _ in window_batches(prepared, split, indices, batch_size):
        rp = residual_pass(model, batch, seed)
        m = direct_map(model, rp, site)
        if m.reason:
            return DirectEffects(site, None, None, None, columns, indices, stride, span, m.reason)
        x = rp.records[site].float()
        z = sae.codes(x)  # [B, L, M]
        scale = _data_factor(prepared, rp)  # [B, 1, C]
        features = feature_effects(m, z, sae.directions) * scale[..., None]
        total = effect_of(m, x) * scale
        values.append(features.numpy())
        totals.append(total.numpy())
        remainders.append((total - features.sum(-1)).numpy())
    return DirectEffects(site, np.concatenate(values), np.concatenate(totals), np.concatenate(remainders), columns,
                         indices, stride, span)


def head_parts(model: Informer, rp: ResidualPass, sae: TopKSAE, site: str, feature: int
               ) -> tuple[tuple[str, ...], torch.Tensor, torch.Tensor]:
    """(head labels 'SITE:HEAD', parts [n_heads, B, L], a_f [B, L]): each head's share of feature f's pre-activation
    at every position of the site (module docstring); remainder = a_f − parts.sum(0)."""
    x = rp.records[site].float()
    pre = sae.pre_activations(x)[..., feature].double()  # [B, L]
    B, L, d = x.shape
    w = sae.W_enc[feature].detach().double() / float(sae.scale)  # [d]
    if site == "encoder.out":
        targets = [(f"encoder.{r}.out", _memory_slice(model, rp, r)) for r in range(len(model.encoder.replicas))]
    else:
        targets = [(site, slice(None))]
    labels, parts = [], []
    for target, where in targets:
        s, i = locate(rp, "site", target)
        for k, (kind, name) in enumerate(rp.segments[s][:i]):
            if kind != "heads":
                continue
            writes = rp.writes[name]  # [H, B, L_seg, d]
            ch = chain(rp, norms_between(rp, s, k, i), d, tuple(writes.shape[1:3]))
            share = ch.apply(writes) @ w  # [H, B, L_seg]
            for h in range(share.shape[0]):
                full = torch.zeros(B, L, dtype=torch.float64)
                full[:, where] = share[h]
                labels.append(f"{name}:{h}")
                parts.append(full)
    return tuple(labels), (torch.stack(parts) if parts else torch.zeros(0, B, L, dtype=torch.float64)), pre


@torch.no_grad()
def feature_heads(model: Informer, prepared: PreparedData, sae: TopKSAE, site: str, feature: int, *,
                  split: str = "test", windows: int = 64, seed: int = 0, batch_size: int = BATCH) -> pd.DataFrame:
    """head, attribution (mean share of a_f over the positions where the feature fires), share (of the mean a_f
    there), positions; the remainder last. Empty where the feature fires nowhere in these windows."""
    check_site(model, site)
    indices, _, _ = spread_windows(prepared, split, windows)
    sums, total, count, labels = None, 0.0, 0, ()
    for batch, _ in window_batches(prepared, split, indices, batch_size):
        rp = residual_pass(model, batch, seed)
        labels, parts, pre = head_parts(model, rp, sae, site, feature)
        fired = sae.codes(rp.records[site].float())[..., feature] > 0  # [B, L]
        here = torch.cat([parts, (pre - parts.sum(0))[None]])[:, fired].sum(dim=1)  # [n + 1]
        sums = here if sums is None else sums + here
        total += float(pre[fired].sum())
        count += int(fired.sum())
    heads = list(labels) + ["remainder"]
    if not count:
        return pd.DataFrame({"head": pd.Series(dtype=str), "attribution": pd.Series(dtype=float),
                             "share": pd.Series(dtype=float), "positions": pd.Series(dtype=int)})
    mean = (sums / count).numpy()
    table = pd.DataFrame({"head": heads, "attribution": mean, "share": mean / (total / count), "positions": count})
    body = table.iloc[:-1].reindex(table.iloc[:-1].attribution.abs().sort_values(ascending=False).index)
    return pd.concat([body, table.iloc[-1:]], ignore_index=True)


def _repeat(batch: Batch, n: int) -> Batch:
    return Batch(*(t.repeat(n, *([1] * (t.dim() - 1))) for t in (batch.x_enc, batch.mark_enc, batch.x_dec,
                                                                 batch.mark_dec)))


@dataclass(frozen=True, eq=False)
class Intervention:
    """The forecast with feature `feature` scaled by `scale` (0: ablated). table: step, column, delta (mean change,
    data units), delta_low, delta_high, reason; delta_mse (standardised) and its interval; rms: the change's root
    mean square (standardised)."""

    feature: int
    scale: float
    table: pd.DataFrame
    delta_mse: float
    delta_mse_low: float
    delta_mse_high: float
    reason: str
    rms: float
    windows: int


@torch.no_grad()
def intervene(model: Informer, prepared: PreparedData, sae: TopKSAE, site: str, feature: int, *, scale: float = 0.0,
              split: str = "test", windows: int = 64, seed: int = 0, batch_size: int = BATCH) -> Intervention:
    """Feature `feature` scaled by `scale` at every position of `site` (module docstring)."""
    check_site(model, site)
    indices, stride, _ = spread_windows(prepared, split, windows)
    direction = sae.directions[:, feature]  # [d]
    deltas, mse = [], []
    targets = list(prepared.target_columns)
    std = np.asarray(prepared.scaler.std, dtype=np.float64)[[prepared.scaler.columns.index(t) for t in targets]]
    for batch, y in window_batches(prepared, split, indices, batch_size):
        forecast, rec = patched_forward(model, batch, seed, (site,))
        x = rec[site].float().cpu()
        z = sae.codes(x)[..., feature]  # [B, L]
        edited, _ = patched_forward(model, batch, seed, patches={site: x + (scale - 1.0) * z[..., None] * direction})
        forecast, edited = forecast.float().cpu(), edited.float().cpu()
        deltas.append((edited - forecast).double().numpy())
        mse.append((((edited - y) ** 2).mean(dim=(1, 2)) - ((forecast - y) ** 2).mean(dim=(1, 2))).double().numpy())
    delta, mse = np.concatenate(deltas), np.concatenate(mse)  # [S, P, C], [S]
    S, P, C = delta.shape
    span = data_span(prepared, split, stride)
    means = window_means(np.concatenate([(delta * std).reshape(S, -1), mse[:, None]], axis=1), span=span)
    reasons = means.reasons()
    table = pd.DataFrame({"step": np.repeat(np.arange(1, P + 1), C), "column": np.tile(targets, P),
                          "delta": means.estimate[:-1], "delta_low": means.lo[:-1], "delta_high": means.hi[:-1],
                          "reason": reasons[:-1]})
    return Intervention(int(feature), float(scale), table, float(means.estimate[-1]), float(means.lo[-1]),
                        float(means.hi[-1]), reasons[-1], float(np.sqrt((delta ** 2).mean())), S)


@torch.no_grad()
def ablation_effects(model: Informer, prepared: PreparedData, sae: TopKSAE, site: str, *, split: str = "test",
                     windows: int = 16, seed: int = 0, max_rows: int = 512) -> pd.DataFrame:
    """Every feature ablated in turn on `windows` windows, many features per forward pass (the batch repeated,
    one copy per feature): feature, ablation_rms (root mean square change of the forecast, standardised),
    ablation_delta_mse (mean change of the MSE)."""
    check_site(model, site)
    indices, _, _ = spread_windows(prepared, split, windows)
    batch, y = next(window_batches(prepared, split, indices, len(indices)))
    forecast, rec = patched_forward(model, batch, seed, (site,))
    x = rec[site].float().cpu()  # [B, L, d]
    z = sae.codes(x)  # [B, L, M]
    B, M = x.shape[0], sae.m
    base = ((forecast.float().cpu() - y) ** 2).mean(dim=(1, 2))  # [B]
    rms, dmse = np.zeros(M), np.zeros(M)
    per_call = max(1, max_rows // B)
    for start in range(0, M, per_call):
        fs = torch.arange(start, min(M, start + per_call))
        parts = z[..., fs].permute(2, 0, 1)[..., None] * sae.directions[:, fs].T[:, None, None, :]  # [F, B, L, d]
        patched = (x[None] - parts).reshape(-1, *x.shape[1:])
        out, _ = patched_forward(model, _repeat(batch, len(fs)), seed, patches={site: patched})
        out = out.float().cpu().reshape(len(fs), B, *forecast.shape[1:])
        rms[fs.numpy()] = ((out - forecast.float().cpu()[None]) ** 2).mean(dim=(1, 2, 3)).sqrt().double().numpy()
        dmse[fs.numpy()] = (((out - y[None]) ** 2).mean(dim=(2, 3)) - base[None]).mean(dim=1).double().numpy()
    return pd.DataFrame({"feature": np.arange(M), "ablation_rms": rms, "ablation_delta_mse": dmse})


__all__ = ["DirectEffects", "DirectMap", "Intervention", "NO_PATH", "ablation_effects", "direct_effects", "direct_map",
           "effect_of", "feature_effects", "feature_heads", "head_parts", "intervene"]
