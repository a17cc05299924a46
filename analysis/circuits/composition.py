"""Composition scores from the weights alone (Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits";
TransformerLens `HookedTransformer.all_composition_scores`), on the paths the Informer's architecture has.

Convention (row vectors, x ↦ x·M, as TransformerLens). For head h of a site, D = d_model / H:

    W_Q^h = query_projection.weight[h·D:(h+1)·D].T      [d, D]   (W_K^h, W_V^h alike)
    W_O^h = out_projection.weight[:, h·D:(h+1)·D].T     [D, d]
    OV_h  = W_V^h · W_O^h   [d, d]: what head h writes for a value row x is x·OV_h (weighted by its attention)
    QK_h  = W_Q^h · W_K^hᵀ  [d, d]: its score between a query row x_q and a key row x_k is x_q·QK_h·x_kᵀ (/√D)

A sender A writes x·OV_A; on its way to a receiver B the write passes linear maps G [d, d] (below), folded into the
receiver's side as TransformerLens folds LayerNorm into the reading weights. With M_B' = G·M_B:

    V-composition:  ‖OV_A · G·OV_B‖_F   / (‖OV_A‖_F ‖G·OV_B‖_F)     the write enters B's values
    Q-composition:  ‖OV_A · G·QK_B‖_F   / (‖OV_A‖_F ‖G·QK_B‖_F)     … B's queries (the left side of QK_B)
    K-composition:  ‖OV_A · G·QK_Bᵀ‖_F  / (‖OV_A‖_F ‖G·QK_Bᵀ‖_F)    … B's keys (the right side of QK_B)

G on each path (a LayerNorm's linear part is x ↦ (x − mean(x))/σ · γ: the centring C = I − 11ᵀ/d, then diag(γ); σ is
a scalar per row and cancels in the score; β and the projections' biases are affine, not part of a product of maps):

    encoder.r.l → encoder.r.(l+1)  (Q, K, V)  norm1 · norm2 of the sender's layer · distilling (conv + BatchNorm)
    encoder.r.last → cross.l       (K, V)     norm1 · norm2 · the encoder's final norm (every replica, every layer l)
    decoder_self.l → cross.l       (Q)        norm1 of layer l
    decoder_self.l → decoder_self.(l+1) (Q, K, V), → cross.(l+1) (Q)   norm1 · norm2 · norm3 [· norm1 of layer l+1]
    cross.l → decoder_self.(l+1)   (Q, K, V), → cross.(l+1) (Q)        norm2 · norm3 [· norm1 of layer l+1]

Only the residual path is carried: each layer's FFN adds a non-linear function of its input, left out (as
TransformerLens leaves the MLPs out). The distilling step is Conv1d(k = 3, circular) → BatchNorm → ELU → MaxPool: its
channel map is Σ over the 3 taps of conv.weight (a position-independent d × d map, each output channel reading every
input channel at three neighbouring steps), with eval-mode BatchNorm's per-channel scale a = γ_bn / √(running_var +
eps) after it; the ELU and the max-pool are not linear and are left out. Cross-attention's keys and values read the
encoder's memory, never the decoder: no decoder head K- or V-composes with a cross head.

Mix sites (config.mix: decoder self-attention in Informer2020, every site with mix_sites="all") interleave heads and
time before the output projection: the context [B, H, L, D] is viewed as [B, L, H·D], so head h's value at
position s lands in output row ⌊(h·L + s)/H⌋ through the block W_O^k, k = (h·L + s) mod H. A head there has no single
OV (its write depends on the position), so such a site is not scored as a sender, nor as a V-composition receiver;
its queries and keys are not mixed, so Q- and K-composition into it are scored.

Shared-QK LSH attention (kind "lsh", shared) keys with the normalised queries: its QK is W_Q·W_Qᵀ here (the per-row
normalisation is not linear and is left out).

Baseline. A score alone says little (for random d × d matrices it is about 1/√d, not 0). Beside each score the same
score of random matrices of the same factor shapes: A = X₁Y₁, B = X₂Y₂ with X [d, D], Y [D, d] of iid N(0, 1) entries,
`draws` draws from a generator seeded with `seed`, no G between them: `random_mean` and `random_q95` (its 95th
percentile); `above_q95` says the model's score exceeds it. One baseline per (d, D_sender, D_receiver), cached.

Computation: never a d × d product. With A = X_A·Y_A and B' = X_B'·Y_B (X_B' = G·X_B), ‖A‖² = tr(X_AᵀX_A · Y_AY_Aᵀ) and
‖AB'‖² = tr(X_AᵀX_A · M · Y_BY_Bᵀ · Mᵀ) with M = Y_A·X_B' [D, D]: Gram matrices of D × D only, in float64.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn

from model import Informer, Site

KINDS = ("Q", "K", "V")
DRAWS = 200
CHUNK = 25  # random draws per batch of Gram matrices (memory: CHUNK · d · D float64 per factor)
NOT_LINEAR = ("left out: each FFN (non-linear, added to the residual), the distilling step's ELU and max-pool, "
              "LayerNorm's per-row σ (a scalar: cancels), every bias and LayerNorm β")


@dataclass(frozen=True, eq=False)
class CompositionResult:
    """Composition scores of every connected (sender head, receiver head, kind).

    table: one row per (sender, receiver, kind): sender, receiver ("site:head", e.g. "encoder.0.0:1", "cross.0:2"),
           kind (Q | K | V), score, random_mean, random_q95, above_q95, sender_site, sender_head, receiver_site,
           receiver_head, path (the maps G between them, in order), reason ('' where scored; else why not: score
           and above_q95 then NaN / False)
    d_model, head_dim: d and D; draws, seed: the random baseline's; center: LayerNorm's centring folded in
    left_out: what the scores do not carry (module docstring)
    """

    table: pd.DataFrame
    d_model: int
    head_dim: int
    draws: int
    seed: int
    center: bool
    left_out: str = NOT_LINEAR


# --------------------------------------------------------------------------------------------
# Weights as factors
# --------------------------------------------------------------------------------------------
def head_factors(layer: nn.Module) -> dict[str, torch.Tensor]:
    """An AttentionLayer's per-head factors, float64: W_Q, W_K, W_V [H, d, D]; W_O [H, D, d] (module docstring).
    Shared-QK LSH: W_K is W_Q."""
    H = layer.n_heads

    def reading(linear: nn.Linear) -> torch.Tensor:  # weight [H·D, d] → [H, d, D]
        w = linear.weight.detach().double()
        return w.view(H, w.shape[0] // H, w.shape[1]).transpose(1, 2)

    w_o = layer.out_projection.weight.detach().double()  # [d, H·D]
    d = w_o.shape[0]
    factors = {"W_Q": reading(layer.query_projection), "W_K": reading(layer.key_projection),
               "W_V": reading(layer.value_projection), "W_O": w_o.view(d, H, -1).permute(1, 2, 0)}
    if shared_qk(layer):
        factors["W_K"] = factors["W_Q"]
    return factors


def shared_qk(layer: nn.Module) -> bool:
    """Shared-QK LSH attention: the keys are the (normalised) queries."""
    if getattr(layer, "kind", None) != "lsh" or getattr(layer, "site_type", "") == "cross":
        return False
    from model.attention.dispatch import options_for

    return bool(options_for("lsh", layer.options)["shared"])


def layer_norm_map(norm: nn.Module, d: int, center: bool = True) -> torch.Tensor | None:
    """A LayerNorm's linear part as a row-vector map [d, d]: C·diag(γ) (C = I − 11ᵀ/d when `center`), σ left out;
    None for nn.Identity (no norm)."""
    if not isinstance(norm, nn.LayerNorm):
        return None
    gamma = norm.weight.detach().double() if norm.weight is not None else torch.ones(d, dtype=torch.float64)
    G = torch.diag(gamma)
    if center:
        G = G - gamma.unsqueeze(0) / d  # (I − 11ᵀ/d)·diag(γ): row i is e_i·γ − γ/d
    return G


def distilling_map(distil: nn.Module) -> torch.Tensor:
    """The distilling step's linear channel map as a row-vector map [d, d]: (Σ_taps conv.weight)ᵀ · diag(a), a the
    eval-mode BatchNorm scale γ_bn / √(running_var + eps) (the ELU and the pool are not linear: left out)."""
    w = distil.conv.weight.detach().double().sum(dim=-1)  # [O, C]: out_o = Σ_c w[o, c]·x_c (taps summed)
    bn = distil.norm
    a = (bn.running_var.detach().double() + bn.eps).rsqrt()
    if bn.weight is not None:
        a = a * bn.weight.detach().double()
    return w.T * a.unsqueeze(0)  # x ↦ x·wᵀ·diag(a)


# --------------------------------------------------------------------------------------------
# Scores of factored matrices
# --------------------------------------------------------------------------------------------
def factored_scores(X_A: torch.Tensor, Y_A: torch.Tensor, X_B: torch.Tensor, Y_B: torch.Tensor,
                    pairwise: bool = True) -> torch.Tensor:
    """‖(X_A Y_A)(X_B Y_B)‖_F / (‖X_A Y_A‖_F ‖X_B Y_B‖_F) without forming d × d matrices.

    X_A [a, d, D_A], Y_A [a, D_A, d], X_B [b, d, D_B], Y_B [b, D_B, d] → [a, b] (pairwise) or [a] (pairwise=False:
    a == b, sender i with receiver i).
    """
    gram_xa = X_A.transpose(-1, -2) @ X_A  # [a, D_A, D_A]
    gram_ya = Y_A @ Y_A.transpose(-1, -2)
    gram_xb = X_B.transpose(-1, -2) @ X_B  # [b, D_B, D_B]
    gram_yb = Y_B @ Y_B.transpose(-1, -2)
    norm_a = (gram_xa * gram_ya).sum(dim=(-1, -2)).clamp(min=0).sqrt()  # tr(PQ) = Σ P∘Qᵀ, Q symmetric
    norm_b = (gram_xb * gram_yb).sum(dim=(-1, -2)).clamp(min=0).sqrt()
    if pairwise:
        M = Y_A.unsqueeze(1) @ X_B.unsqueeze(0)  # [a, b, D_A, D_B]
        left = gram_xa.unsqueeze(1) @ M  # Gx_A · M
        right = M @ gram_yb.unsqueeze(0)  # M · Gy_B
        product = (left * right).sum(dim=(-1, -2)).clamp(min=0).sqrt()  # tr(Gx M Gy Mᵀ) = Σ (Gx M)∘(M Gy)
        return product / (norm_a.unsqueeze(1) * norm_b.unsqueeze(0))
    M = Y_A @ X_B  # [a, D_A, D_B]
    product = ((gram_xa @ M) * (M @ gram_yb)).sum(dim=(-1, -2)).clamp(min=0).sqrt()
    return product / (norm_a * norm_b)


def score(A: torch.Tensor, B: torch.Tensor) -> float:
    """‖A·B‖_F / (‖A‖_F ‖B‖_F) of two dense matrices (the definition, for checks and small cases)."""
    A, B = A.double(), B.double()
    return float(torch.linalg.matrix_norm(A @ B) / (torch.linalg.matrix_norm(A) * torch.linalg.matrix_norm(B)))


def random_scores(d: int, D_sender: int, D_receiver: int, draws: int = DRAWS, seed: int = 0) -> np.ndarray:
    """`draws` scores of random A = X₁Y₁, B = X₂Y₂ (X [d, D], Y [D, d], iid N(0, 1); sender D_sender, receiver
    D_receiver), drawn from torch.Generator seeded with `seed`, in that order. [draws] float64."""
    generator = torch.Generator().manual_seed(int(seed))
    out = []
    for start in range(0, int(draws), CHUNK):
        n = min(CHUNK, int(draws) - start)
        X_A = torch.randn(n, d, D_sender, generator=generator, dtype=torch.float64)
        Y_A = torch.randn(n, D_sender, d, generator=generator, dtype=torch.float64)
        X_B = torch.randn(n, d, D_receiver, generator=generator, dtype=torch.float64)
        Y_B = torch.randn(n, D_receiver, d, generator=generator, dtype=torch.float64)
        out.append(factored_scores(X_A, Y_A, X_B, Y_B, pairwise=False))
    return torch.cat(out).numpy() if out else np.zeros(0)


@functools.lru_cache(maxsize=64)
def random_baseline(d: int, D_sender: int, D_receiver: int, draws: int = DRAWS, seed: int = 0) -> tuple[float, float]:
    """(mean, 95th percentile) of `random_scores` (cached per shapes, draws and seed)."""
    if draws < 1:
        return float("nan"), float("nan")
    s = random_scores(d, D_sender, D_receiver, draws, seed)
    return float(s.mean()), float(np.quantile(s, 0.95))


# --------------------------------------------------------------------------------------------
# The architecture's paths
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Connection:
    """A sender site writing into a receiver site through the maps `maps` (row-vector maps [d, d], in order;
    names in `path`), read by the receiver as `kinds`."""

    sender: Site
    receiver: Site
    kinds: tuple[str, ...]
    maps: tuple[torch.Tensor, ...]
    path: str


def connections(model: Informer, center: bool = True) -> list[Connection]:
    """Every (sender site, receiver site) pair the architecture connects by a residual path (module docstring)."""
    d = model.config.d_model
    by_name = {site.name: site for site in model.sites}
    out: list[Connection] = []

    def chain(*named):
        kept = [(name, G) for name, G in named if G is not None]
        return tuple(G for _, G in kept), " · ".join(name for name, _ in kept) or "identity"

    def ln(norm, name):
        return name, layer_norm_map(norm, d, center)

    for r, replica in enumerate(model.encoder.replicas):
        last = len(replica.layers) - 1
        for l, layer in enumerate(replica.layers):
            sender = by_name[f"encoder.{r}.{l}"]
            steps = [ln(layer.norm1, f"encoder.{r}.{l}.norm1"), ln(layer.norm2, f"encoder.{r}.{l}.norm2")]
            if l < last:
                distil = replica.distils[l] if l < len(replica.distils) else None
                if distil is not None:
                    steps.append((f"encoder.{r}.distil{l} (conv·BN)", distilling_map(distil)))
                maps, path = chain(*steps)
                out.append(Connection(sender, by_name[f"encoder.{r}.{l + 1}"], KINDS, maps, path))
            else:
                maps, path = chain(*steps, ln(replica.norm, f"encoder.{r}.norm"))
                for k in range(len(model.decoder.layers)):
                    out.append(Connection(sender, by_name[f"cross.{k}"], ("K", "V"), maps, path))
    layers = model.decoder.layers
    for l, layer in enumerate(layers):
        self_site, cross_site = by_name[f"decoder_self.{l}"], by_name[f"cross.{l}"]
        norm1 = ln(layer.norm1, f"decoder.{l}.norm1")
        maps, path = chain(norm1)
        out.append(Connection(self_site, cross_site, ("Q",), maps, path))
        if l + 1 < len(layers):
            later = layers[l + 1]
            tail = [ln(layer.norm2, f"decoder.{l}.norm2"), ln(layer.norm3, f"decoder.{l}.norm3")]
            next_self, next_cross = by_name[f"decoder_self.{l + 1}"], by_name[f"cross.{l + 1}"]
            next_norm1 = ln(later.norm1, f"decoder.{l + 1}.norm1")
            for sender, head in ((self_site, [norm1]), (cross_site, [])):
                maps, path = chain(*head, *tail)
                out.append(Connection(sender, next_self, KINDS, maps, path))
                maps, path = chain(*head, *tail, next_norm1)
                out.append(Connection(sender, next_cross, ("Q",), maps, path))
    return out


def _receiver_factors(factors: dict[str, torch.Tensor], kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(X, Y) with M_B = X·Y: Q → W_Q·W_Kᵀ (QK), K → W_K·W_Qᵀ (QKᵀ), V → W_V·W_O (OV)."""
    if kind == "Q":
        return factors["W_Q"], factors["W_K"].transpose(1, 2)
    if kind == "K":
        return factors["W_K"], factors["W_Q"].transpose(1, 2)
    return factors["W_V"], factors["W_O"]


def _not_scored(sender_layer, receiver_layer, kind: str) -> str:
    if sender_layer.mix:
        return ("sender mixes heads and time (mix=True): a head's write goes through a different W_O block at "
                "each position, so it has no single OV")
    if kind == "V" and receiver_layer.mix:
        return "receiver mixes heads and time (mix=True): its OV is not one d × d map"
    return ""


@torch.no_grad()
def composition_scores(model: Informer, *, draws: int = DRAWS, seed: int = 0, center: bool = True) -> CompositionResult:
    """Q-, K- and V-composition scores of every connected pair of heads, beside random matrices of the same shapes
    (module docstring). center: fold LayerNorm's centring (I − 11ᵀ/d) with its gain γ (TransformerLens centres the
    writing weights to the same effect); False folds diag(γ) alone."""
    c = model.config
    d, H = c.d_model, c.n_heads
    D = d // H
    mean, q95 = random_baseline(d, D, D, int(draws), int(seed))
    factors = {site.name: head_factors(model.attention_layer(site)) for site in model.sites}
    columns: dict[str, list] = {k: [] for k in ("sender", "receiver", "kind", "score", "random_mean", "random_q95",
                                                "above_q95", "sender_site", "sender_head", "receiver_site",
                                                "receiver_head", "path", "reason")}
    for conn in connections(model, center):
        send, recv = factors[conn.sender.name], factors[conn.receiver.name]
        G = functools.reduce(torch.matmul, conn.maps) if conn.maps else None
        for kind in conn.kinds:
            reason = _not_scored(model.attention_layer(conn.sender), model.attention_layer(conn.receiver), kind)
            if reason:
                scores = torch.full((H, H), float("nan"), dtype=torch.float64)
            else:
                X_B, Y_B = _receiver_factors(recv, kind)
                X_B = X_B if G is None else G @ X_B  # M_B' = G·M_B
                scores = factored_scores(send["W_V"], send["W_O"], X_B, Y_B)  # [H_sender, H_receiver]
            for a in range(H):
                for b in range(H):
                    s = float(scores[a, b])
                    columns["sender"].append(f"{conn.sender.name}:{a}")
                    columns["receiver"].append(f"{conn.receiver.name}:{b}")
                    columns["kind"].append(kind)
                    columns["score"].append(s)
                    columns["random_mean"].append(mean)
                    columns["random_q95"].append(q95)
                    columns["above_q95"].append(bool(s > q95))
                    columns["sender_site"].append(conn.sender.name)
                    columns["sender_head"].append(a)
                    columns["receiver_site"].append(conn.receiver.name)
                    columns["receiver_head"].append(b)
                    columns["path"].append(conn.path)
                    columns["reason"].append(reason)
    return CompositionResult(pd.DataFrame(columns), d, D, int(draws), int(seed), bool(center))


__all__ = ["CompositionResult", "Connection", "KINDS", "composition_scores", "connections", "distilling_map",
           "factored_scores", "head_factors", "layer_norm_map", "random_baseline", "random_scores", "score"]
