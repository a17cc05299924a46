"""How well a dictionary explains its site on held-out windows (DESIGN §9), and its codes there.

    FVU   = Σ‖x − x̂‖² / Σ‖x − x̄‖² over every position of every window scored (x̄ their mean)
    L0    = the mean number of latents firing (z > 0) per position
    dead  = the share of latents that fire at no position of the windows scored (N positions; say N beside it:
            a latent of density 1/N fires once on average)
    spliced MSE: the forecast's MSE with x̂ passed on at the site instead of x (a hook-site patch, `model.patching`,
            scoped to the call: the shared model is never changed), beside the model's own MSE, on the same windows
            and key samples; the difference per window is averaged with the lab's interval (analysis.intervals:
            window means, the cosine long-run variance, none where too few independent stretches exist).

Each batch runs twice from a generator freshly seeded with `seed`: once recording the site (the model's forecast),
once with the reconstruction spliced in; the layers before the site see the same key sample in both, so the
difference is the reconstruction's alone. Splicing in x itself gives the model's forecast exactly (a test).
MSE on the standardised scale, over the horizon and the forecast columns, as the lab's test MSE.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np
import torch

from informer_lab.model import Informer

from informer_lab.analysis.anatomy.lens import BATCH, check_eval, spread_windows, window_batches
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.features.sae import TopKSAE, fvu
from informer_lab.analysis.features.sites import SiteActivations, check_site, position_spans
from informer_lab.analysis.instruments.patching import patched_forward
from informer_lab.analysis.intervals import window_means
from informer_lab.analysis.row_memory import data_span


@dataclass(frozen=True, eq=False)
class FeatureCodes:
    """The k largest codes of every position: values [n, L, k] ≥ 0 and their latents indices [n, L, k]; m latents."""

    values: np.ndarray
    indices: np.ndarray
    m: int

    def feature(self, f: int) -> np.ndarray:
        """z_f [n, L] (0 where f is not among a position's k)."""
        return np.where(self.indices == f, self.values, 0.0).sum(axis=-1)

    def dense(self) -> np.ndarray:
        """z [n, L, m] float32."""
        n, L, k = self.values.shape
        out = np.zeros((n * L, self.m), dtype=np.float32)
        np.put_along_axis(out, self.indices.reshape(-1, k), self.values.reshape(-1, k), axis=1)
        return out.reshape(n, L, self.m)

    def fires(self) -> np.ndarray:
        """[m] positions at which each latent fires (z > 0)."""
        return np.bincount(self.indices[self.values > 0].reshape(-1), minlength=self.m)

    @property
    def positions(self) -> int:
        return int(np.prod(self.values.shape[:2]))


@dataclass(frozen=True)
class SAEMetrics:
    """The figures of the module docstring on `windows` windows of `split` (one in `stride`), `positions` in all."""

    fvu: float
    l0: float
    dead_fraction: float
    model_mse: float
    spliced_mse: float
    spliced_delta_mse: float
    spliced_delta_mse_low: float
    spliced_delta_mse_high: float
    reason: str  # why there is no interval ('' where there is one)
    split: str
    windows: int
    positions: int
    stride: int
    span: int

    @property
    def relative_delta(self) -> float:
        """spliced_delta_mse / model_mse (the issue's "within 5 %")."""
        return self.spliced_delta_mse / self.model_mse if self.model_mse > 0 else float("nan")

    def as_dict(self) -> dict:
        return {**asdict(self), "relative_delta": self.relative_delta}


@dataclass(frozen=True, eq=False)
class Evaluation:
    """metrics, the held-out activations and their codes, and per window the two MSEs [n]."""

    metrics: SAEMetrics
    activations: SiteActivations
    codes: FeatureCodes
    model_mse: np.ndarray
    spliced_mse: np.ndarray


@torch.no_grad()
def spliced_forecasts(model: Informer, batch, site: str, sae: TopKSAE | None, seed: int):
    """(x [B, L, d], x̂ [B, L, d], the model's forecast, the forecast with x̂ spliced in) of one batch; sae None
    splices x itself."""
    forecast, records = patched_forward(model, batch, seed, (site,))
    x = records[site].float().cpu()
    x_hat = sae(x)[0] if sae is not None else x
    spliced, _ = patched_forward(model, batch, seed, patches={site: x_hat})
    return x, x_hat, forecast.float().cpu(), spliced.float().cpu()


def evaluate(model: Informer, prepared: PreparedData, sae: TopKSAE, site: str, *, split: str = "test",
             windows: int = 256, seed: int = 0, batch_size: int = BATCH, splice_sae: bool = True,
             progress: Callable[[int, int], None] | None = None) -> Evaluation:
    """The dictionary `sae` of `site` on at most `windows` windows spread evenly over `split` (module docstring).
    splice_sae=False splices x itself (the identity: Δ is exactly 0; a check of the machinery)."""
    check_eval(model)
    check_site(model, site)
    indices, stride, total = spread_windows(prepared, split, windows)
    xs, values, latents, model_mse, spliced_mse = [], [], [], [], []
    for batch, y in window_batches(prepared, split, indices, batch_size):
        x, x_hat, forecast, spliced = spliced_forecasts(model, batch, site, sae if splice_sae else None, seed)
        top, where = sae.encode(x)
        xs.append(x)
        values.append(top.numpy())
        latents.append(where.numpy().astype(np.int32))
        model_mse.append(((forecast - y) ** 2).mean(dim=(1, 2)).double().numpy())
        spliced_mse.append(((spliced - y) ** 2).mean(dim=(1, 2)).double().numpy())
        if progress is not None:
            progress(min(len(indices), len(xs) * batch_size), len(indices))
    x = torch.cat(xs)  # [n, L, d]
    codes = FeatureCodes(np.concatenate(values), np.concatenate(latents), sae.m)
    model_mse, spliced_mse = np.concatenate(model_mse), np.concatenate(spliced_mse)
    x_hat = sae.decode(torch.from_numpy(codes.dense())) if splice_sae else x
    span = data_span(prepared, split, stride)
    delta = window_means((spliced_mse - model_mse)[:, None], span=span)
    fires = codes.fires()
    metrics = SAEMetrics(fvu(x.numpy(), x_hat.numpy()), float((codes.values > 0).sum(axis=-1).mean()),
                         float((fires == 0).mean()), float(model_mse.mean()), float(spliced_mse.mean()),
                         float(delta.estimate[0]), float(delta.lo[0]), float(delta.hi[0]), delta.reasons()[0],
                         split, len(indices), codes.positions, stride, span)
    spans = position_spans(model, site)
    if len(spans) != x.shape[1]:
        spans = np.full((x.shape[1], 2), -1, dtype=np.int64)
    activations = SiteActivations(site, split, indices, stride, total, x, spans, int(seed))
    return Evaluation(metrics, activations, codes, model_mse, spliced_mse)


__all__ = ["Evaluation", "FeatureCodes", "SAEMetrics", "evaluate", "spliced_forecasts"]
