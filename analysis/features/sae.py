"""A TopK sparse autoencoder (Gao et al. 2024, "Scaling and evaluating sparse autoencoders") on one site's activations.

Written here, one module, after the definitions of SAELens (`sae_lens/saes/topk_sae.py`) and EleutherAI's sparsify
(`sparsify/sparse_coder.py`). SAELens 6.x can train on any iterator of activations, but its wheel requires
transformer-lens, transformers, datasets and nltk (a language-model stack of several hundred MB that nothing else in
the lab uses); sparsify needs transformers and datasets too. For a desktop app that trains a dictionary of a few
hundred latents over d_model = 64 … 512 on the CPU, that weight is wrong: the maths below is forty lines.

Definitions (DESIGN §9), x ∈ R^d one position of one window at the site, m = expansion·d latents:

    x_n = (x − μ) / s               μ the train mean (mean-centring keeps most latents alive), s = √(E‖x − μ‖² / d)
    a   = W_enc (x_n − b) + c       [m] pre-activations
    z   = TopK_k(ReLU(a))           the k largest kept, the rest 0 (fewer than k where fewer are positive)
    x̂   = s·(W_dec z + b) + μ       W_dec's columns have unit norm: z_f is feature f's size along its direction

Training: Adam on ‖x_n − x̂_n‖² / d (the normalised MSE; its test value is the FVU) plus α·AuxK: the latents that have
not fired for `dead_after` tokens are "dead"; the k_aux largest of their pre-activations reconstruct the residual
e = x_n − x̂_n (detached), loss ‖e − ê‖² / ‖e − ē‖² (sparsify's normalisation), α = 1/32. Initialisation: unit random
decoder columns, W_enc = W_decᵀ, b = c = 0. After every step the decoder columns are renormalised; before it the
gradient's component parallel to each column is removed (it would only change the norm). The learning rate decays
linearly to 0 over the last fifth of the steps. Every draw (initialisation, the batches) comes from `seed`, so the
same activations and settings give the same dictionary.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from informer_lab.analysis.errors import ConfigError

MAX_LATENTS = 65_536
MAX_STEPS = 200_000


@dataclass(frozen=True)
class SAESettings:
    """How to train one dictionary. k: latents kept per position (the L0 it cannot exceed); expansion: m / d."""

    k: int = 16
    expansion: int = 4  # m = 4·d: at d_model 64 and ~50k train positions, 8 left more latents dead on test windows
    steps: int = 2_000
    batch_size: int = 256  # many small steps reconstructed better than fewer large ones in the same time
    learning_rate: float = 2e-3
    aux_k: int | None = None  # dead latents AuxK may use per position (default d / 2, as Gao et al.)
    aux_coef: float = 1 / 32
    dead_after: int = 20_000  # tokens without firing after which a latent counts as dead for AuxK
    seed: int = 0

    def check(self, d: int) -> None:
        """ConfigError naming the setting that cannot work for a site of width d."""
        m = self.expansion * d
        if not 1 <= self.expansion <= 64:
            raise ConfigError(f"--expansion must be in 1 … 64, got {self.expansion}")
        if m > MAX_LATENTS:
            raise ConfigError(f"{m:,} latents (expansion {self.expansion} × d_model {d}) is over {MAX_LATENTS:,}; "
                              "lower --expansion")
        if not 1 <= self.k <= m:
            raise ConfigError(f"--k must be in 1 … {m} (the latents: expansion × d_model), got {self.k}")
        if not 1 <= self.steps <= MAX_STEPS:
            raise ConfigError(f"--steps must be in 1 … {MAX_STEPS:,}, got {self.steps}")
        if not 1 <= self.batch_size <= 65_536:
            raise ConfigError(f"the batch size must be in 1 … 65,536 positions, got {self.batch_size}")
        if not (math.isfinite(self.learning_rate) and 0 < self.learning_rate <= 1):
            raise ConfigError(f"the learning rate must be in (0, 1], got {self.learning_rate}")
        if not (math.isfinite(self.aux_coef) and self.aux_coef >= 0) or self.dead_after < 1:
            raise ConfigError("aux_coef must be ≥ 0 and dead_after ≥ 1 token")
        if self.aux_k is not None and not 1 <= self.aux_k <= m:
            raise ConfigError(f"aux_k must be in 1 … {m}, got {self.aux_k}")


class TopKSAE(nn.Module):
    """The dictionary (module docstring). Inputs and outputs in the site's own units, [..., d]."""

    def __init__(self, d: int, m: int, k: int):
        super().__init__()
        self.d, self.m, self.k = int(d), int(m), int(k)
        self.W_enc = nn.Parameter(torch.zeros(m, d))  # [m, d]
        self.c = nn.Parameter(torch.zeros(m))  # [m] encoder bias
        self.W_dec = nn.Parameter(torch.zeros(d, m))  # [d, m] unit columns
        self.b = nn.Parameter(torch.zeros(d))  # [d] decoder bias, subtracted before encoding
        self.register_buffer("mean", torch.zeros(d))  # μ [d]
        self.register_buffer("scale", torch.ones(()))  # s

    def pre_activations(self, x: torch.Tensor) -> torch.Tensor:
        """[..., d] → a [..., m] (before the ReLU)."""
        return F.linear((x - self.mean) / self.scale - self.b, self.W_enc, self.c)

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """[..., d] → (values [..., k] ≥ 0, indices [..., k]) of the k largest ReLU(a)."""
        return F.relu(self.pre_activations(x)).topk(self.k, dim=-1)

    def codes(self, x: torch.Tensor) -> torch.Tensor:
        """z [..., m], dense (k entries at most are non-zero)."""
        values, indices = self.encode(x)
        return torch.zeros(*x.shape[:-1], self.m, dtype=values.dtype, device=values.device).scatter(-1, indices, values)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """z [..., m] → x̂ [..., d] in the site's units."""
        return F.linear(z, self.W_dec, self.b) * self.scale + self.mean

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x [..., d] → (x̂ [..., d], z [..., m])."""
        z = self.codes(x)
        return self.decode(z), z

    @property
    def directions(self) -> torch.Tensor:
        """[d, m] what one unit of z_f adds to the site: s·W_dec[:, f]."""
        return self.W_dec * self.scale

    @torch.no_grad()
    def normalise_decoder(self) -> None:
        self.W_dec /= self.W_dec.norm(dim=0, keepdim=True).clamp_min(1e-12)


@dataclass(frozen=True, eq=False)
class TrainedSAE:
    """A trained dictionary (eval mode, no gradients) and how it was trained.

    losses / aux_losses: [steps] the normalised MSE and the AuxK loss (0 where nothing was dead) per step
    tokens: positions it was trained on; dead_at_end: latents AuxK counted as dead at the last step
    """

    sae: TopKSAE
    settings: SAESettings
    losses: np.ndarray
    aux_losses: np.ndarray
    tokens: int
    seconds: float
    dead_at_end: int

    @property
    def d(self) -> int:
        return self.sae.d

    @property
    def m(self) -> int:
        return self.sae.m


def _flat(activations) -> torch.Tensor:
    x = torch.as_tensor(np.asarray(activations) if not torch.is_tensor(activations) else activations)
    x = x.detach().to(torch.float32).reshape(-1, x.shape[-1])  # [N, d]
    if x.shape[0] < 2:
        raise ConfigError(f"a dictionary needs at least 2 positions to learn from, got {x.shape[0]}")
    if not torch.isfinite(x).all():
        raise ConfigError("the site's activations hold NaN or infinite values; check the model's weights")
    return x


def initial_sae(x: torch.Tensor, settings: SAESettings, generator: torch.Generator) -> TopKSAE:
    """The dictionary before training: μ, s from x [N, d], random unit decoder columns, W_enc = W_decᵀ."""
    N, d = x.shape
    mean = x.mean(dim=0)
    scale = float(((x - mean) ** 2).sum(dim=1).mean().div(d).sqrt())
    if not scale > 0:
        raise ConfigError("the site's activations are the same at every position: there is nothing to explain")
    sae = TopKSAE(d, settings.expansion * d, settings.k)
    with torch.no_grad():
        sae.mean.copy_(mean)
        sae.scale.fill_(scale)
        sae.W_dec.copy_(torch.randn(d, sae.m, generator=generator))
        sae.normalise_decoder()
        sae.W_enc.copy_(sae.W_dec.T)
    return sae


def train_sae(activations, settings: SAESettings = SAESettings(),
              progress: Callable[[int, int], None] | None = None) -> TrainedSAE:
    """Train a TopK SAE on activations [..., d] (flattened to positions) with `settings` (module docstring).
    progress(step, steps) is called every 100 steps and at the end."""
    x = _flat(activations)
    N, d = x.shape
    settings.check(d)
    generator = torch.Generator().manual_seed(int(settings.seed))
    sae = initial_sae(x, settings, generator)
    xn = (x - sae.mean) / sae.scale  # [N, d] normalised once
    m, k, B = sae.m, sae.k, min(settings.batch_size, N)
    aux_k = settings.aux_k or max(1, d // 2)
    params = [sae.W_enc, sae.c, sae.W_dec, sae.b]
    optimiser = torch.optim.Adam(params, lr=settings.learning_rate)
    decay_from = int(0.8 * settings.steps)
    since_fired = torch.zeros(m, dtype=torch.long)
    losses, aux_losses = np.zeros(settings.steps), np.zeros(settings.steps)
    start = time.perf_counter()
    for step in range(settings.steps):
        if step >= decay_from:
            for group in optimiser.param_groups:
                group["lr"] = settings.learning_rate * (settings.steps - step) / (settings.steps - decay_from)
        batch = xn[torch.randint(N, (B,), generator=generator)]  # [B, d]
        pre = F.relu(F.linear(batch - sae.b, sae.W_enc, sae.c))  # [B, m]
        values, indices = pre.topk(k, dim=-1)  # [B, k]
        z = torch.zeros_like(pre).scatter(-1, indices, values)
        error = batch - F.linear(z, sae.W_dec, sae.b)  # [B, d]
        loss = error.pow(2).sum(dim=1).mean() / d
        with torch.no_grad():
            fired = torch.zeros(m, dtype=torch.bool).scatter(0, indices[values > 0], True)
            since_fired += B
            since_fired[fired] = 0
            dead = since_fired >= settings.dead_after
        total = loss
        if settings.aux_coef > 0 and bool(dead.any()):
            k_aux = min(aux_k, int(dead.sum()))
            aux_values, aux_indices = torch.where(dead, pre, pre.new_tensor(-1.0)).topk(k_aux, dim=-1)
            z_aux = torch.zeros_like(pre).scatter(-1, aux_indices, aux_values.clamp_min(0))
            residual = error.detach()
            e_hat = F.linear(z_aux, sae.W_dec)  # [B, d], no bias
            aux = (e_hat - residual).pow(2).sum() / (residual - residual.mean(0)).pow(2).sum().clamp_min(1e-12)
            total = loss + settings.aux_coef * aux
            aux_losses[step] = float(aux.detach())
        optimiser.zero_grad(set_to_none=True)
        total.backward()
        with torch.no_grad():  # no change of a column's norm from the gradient (Gao et al. §A.4)
            g = sae.W_dec.grad
            g -= (g * sae.W_dec).sum(dim=0, keepdim=True) * sae.W_dec
        optimiser.step()
        sae.normalise_decoder()
        losses[step] = float(loss.detach())
        if progress is not None and ((step + 1) % 100 == 0 or step + 1 == settings.steps):
            progress(step + 1, settings.steps)
    sae.eval()
    sae.requires_grad_(False)
    return TrainedSAE(sae, settings, losses, aux_losses, N, time.perf_counter() - start, int(dead.sum()))


def fvu(x: np.ndarray, x_hat: np.ndarray) -> float:
    """Fraction of variance unexplained: Σ‖x − x̂‖² / Σ‖x − x̄‖² over positions [..., d] (x̄ their mean)."""
    x = np.asarray(x, dtype=np.float64).reshape(-1, np.shape(x)[-1])
    x_hat = np.asarray(x_hat, dtype=np.float64).reshape(x.shape)
    total = ((x - x.mean(axis=0)) ** 2).sum()
    return float(((x - x_hat) ** 2).sum() / total) if total > 0 else float("nan")


__all__ = ["MAX_LATENTS", "MAX_STEPS", "SAESettings", "TopKSAE", "TrainedSAE", "fvu", "initial_sae", "train_sae"]
