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
TransformerLens leaves the MLPs out). Where TransformerLens scores every head against every head of each later layer
of one residual stream, the lab scores only the pairs above: adjacent layers, since a path further down the encoder
passes another distilling step (ELU, max-pool) and the decoder's residual reads the encoder only through
cross-attention's keys and values. The distilling step is Conv1d(k = 3, circular) → BatchNorm → ELU → MaxPool: its
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

What a score can reach. ‖AB‖_F ≤ ‖A‖_F‖B‖_F, so a score is at most 1, and 1 needs rank one: two heads whose OV and
QK have D equal singular values, the receiver reading exactly the subspace the sender writes, score 1/√D (D = 16:
0.25), not 1. A head's score with itself is not 1 either: it asks whether the head reads (through W_V, or W_Q, W_K)
the subspace it writes (through W_O), which nothing in training asks for; measured 0.105–0.144 on trained models at
d_model 64, about the random level 1/√d = 0.125. So a self-score near the random baseline is the expected reading,
and a pair matters when its score clears the random matrices' 95 % quantile, whatever its size.

Baseline. A score alone says little (for random d × d matrices it is about 1/√d, not 0). Beside each score the same
score of random matrices of the same factor shapes: A = X₁Y₁, B = X₂Y₂ with X [d, D], Y [D, d] of iid N(0, 1) entries,
`draws` draws (numpy's generator seeded with `seed`, in D × D blocks: `random_scores`), no G between them:
`random_mean` and `random_q95` (its 95th percentile); `above_q95` says the model's score exceeds it. One baseline per
(d, D_sender, D_receiver, draws, seed), cached.

Computation: no d × d OV or QK matrix is formed. With A = X_A·Y_A and B' = X_B'·Y_B (X_B' = G·X_B), ‖A‖² = tr(X_AᵀX_A · Y_AY_Aᵀ) and
‖AB'‖² = tr(X_AᵀX_A · M · Y_BY_Bᵀ · Mᵀ) with M = Y_A·X_B' [D, D]: Gram matrices of D × D only, in float32 (the
weights' precision); a LayerNorm's fold costs O(d²), the distilling conv's one d × d by d × H·D product per
receiving kind.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn

from informer_lab.model import Informer, Site, on_cpu

KINDS = ("Q", "K", "V")
DRAWS = 200
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
    from informer_lab.model.attention.dispatch import options_for

    return bool(options_for("lsh", layer.options)["shared"])


@dataclass(frozen=True, eq=False)
class Fold:
    """One linear map on the residual path, as a row-vector map x ↦ x·G [d, d]. kind "layer_norm": G = C·diag(γ)
    (C = I − 11ᵀ/d when `center`); kind "dense": G = `matrix` itself."""

    name: str
    kind: str
    weight: torch.Tensor  # γ [d] (layer_norm) or G [d, d] (dense)
    center: bool = True

    @property
    def matrix(self) -> torch.Tensor:
        """G [d, d]."""
        if self.kind == "dense":
            return self.weight
        d = self.weight.shape[0]
        G = torch.diag(self.weight)
        return G - self.weight.unsqueeze(0) / d if self.center else G  # row i: e_i·γ − γ/d

    def apply(self, X: torch.Tensor) -> torch.Tensor:
        """G·X for X [d, n] (a LayerNorm's in O(d·n): scale the rows by γ, then centre each column)."""
        if self.kind == "dense":
            return self.weight.to(X.dtype) @ X
        Y = self.weight.to(X.dtype).unsqueeze(1) * X
        return Y - Y.mean(dim=0, keepdim=True) if self.center else Y


def layer_norm_map(norm: nn.Module, name: str, center: bool = True) -> Fold | None:
    """A LayerNorm's linear part (σ left out: a scalar per row); None for nn.Identity (no norm)."""
    if not isinstance(norm, nn.LayerNorm):
        return None
    d = norm.normalized_shape[0]
    gamma = norm.weight.detach() if norm.weight is not None else torch.ones(d)
    return Fold(name, "layer_norm", gamma.double(), center)


def distilling_map(distil: nn.Module, name: str = "distil") -> Fold:
    """The distilling step's linear channel map: G = (Σ_taps conv.weight)ᵀ · diag(a), a the eval-mode BatchNorm scale
    γ_bn / √(running_var + eps) (the ELU and the pool are not linear: left out)."""
    w = distil.conv.weight.detach().double().sum(dim=-1)  # [O, C]: out_o = Σ_c w[o, c]·x_c (taps summed)
    bn = distil.norm
    a = (bn.running_var.detach().double() + bn.eps).rsqrt()
    if bn.weight is not None:
        a = a * bn.weight.detach().double()
    return Fold(name, "dense", w.T * a.unsqueeze(0))  # x ↦ x·wᵀ·diag(a)


def fold_matrix(folds) -> torch.Tensor | None:
    """The product G = G₁·G₂·… of a path's maps, [d, d] (None: no map)."""
    return functools.reduce(torch.matmul, [f.matrix for f in folds]) if folds else None


# --------------------------------------------------------------------------------------------
# Scores of factored matrices
# --------------------------------------------------------------------------------------------
def _gram_rows(Y: torch.Tensor) -> torch.Tensor:  # [..., D, d] → Y·Yᵀ [..., D, D]
    return Y @ Y.transpose(-1, -2)


def _gram_columns(X: torch.Tensor) -> torch.Tensor:  # [..., d, D] → XᵀX [..., D, D]
    return X.transpose(-1, -2) @ X


def _norms(X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """‖X·Y‖_F = √tr(XᵀX · YYᵀ) for X [..., d, D], Y [..., D, d] → [...]."""
    return (_gram_columns(X) * _gram_rows(Y)).sum(dim=(-1, -2)).clamp(min=0).sqrt()  # Σ P∘Q = tr(PQ), Q symmetric


def factored_scores(X_A: torch.Tensor, Y_A: torch.Tensor, X_B: torch.Tensor, Y_B: torch.Tensor,
                    pairwise: bool = True) -> torch.Tensor:
    """‖(X_A Y_A)(X_B Y_B)‖_F / (‖X_A Y_A‖_F ‖X_B Y_B‖_F) without forming a d × d matrix.

    X_A [a, d, D_A], Y_A [a, D_A, d], X_B [b, d, D_B], Y_B [b, D_B, d] → [a, b] (pairwise: every sender with every
    receiver) or [a] (pairwise=False: a == b, sender i with receiver i). ‖AB‖² = tr(Gx_A · M · Gy_B · Mᵀ), M = Y_A·X_B.
    """
    gram_xa, gram_yb = _gram_columns(X_A), _gram_rows(Y_B)
    norm_a, norm_b = _norms(X_A, Y_A), _norms(X_B, Y_B)
    if not pairwise:
        M = Y_A @ X_B  # [a, D_A, D_B]
        product = ((gram_xa @ M) * (M @ gram_yb)).sum(dim=(-1, -2)).clamp(min=0).sqrt()
        return product / (norm_a * norm_b)
    (a, D_A, d), (b, _, D_B) = Y_A.shape, X_B.shape
    M = Y_A.reshape(a * D_A, d) @ X_B.permute(1, 0, 2).reshape(d, b * D_B)  # one GEMM: [a·D_A, b·D_B]
    left = (gram_xa @ M.view(a, D_A, b * D_B)).view(a, D_A, b, D_B)  # Gx_A · M
    right = (M.view(a * D_A, b, D_B).transpose(0, 1) @ gram_yb).transpose(0, 1).reshape(a, D_A, b, D_B)  # M · Gy_B
    product = (left * right).sum(dim=(1, 3)).clamp(min=0).sqrt()  # [a, b]
    return product / (norm_a.unsqueeze(1) * norm_b.unsqueeze(0))


def score(A: torch.Tensor, B: torch.Tensor) -> float:
    """‖A·B‖_F / (‖A‖_F ‖B‖_F) of two dense matrices (the definition, for checks and small cases)."""
    A, B = A.double(), B.double()
    return float(torch.linalg.matrix_norm(A @ B) / (torch.linalg.matrix_norm(A) * torch.linalg.matrix_norm(B)))


def _wishart(rng: np.random.Generator, dof: int, p: int, n: int) -> np.ndarray:
    """n draws of Wishart_p(dof, I) = GᵀG for G [dof, p] iid N(0, 1), by Bartlett's decomposition A·Aᵀ (A lower
    triangular, A_ii² ~ χ²(dof − i), A_ij ~ N(0, 1) below the diagonal); G drawn outright when dof < p. [n, p, p]."""
    if dof < p:
        G = rng.standard_normal((n, dof, p))
        return G.transpose(0, 2, 1) @ G
    A = np.tril(rng.standard_normal((n, p, p)), k=-1)
    A[:, np.arange(p), np.arange(p)] = np.sqrt(rng.chisquare(dof - np.arange(p), size=(n, p)))
    return A @ A.transpose(0, 2, 1)


def random_scores(d: int, D_sender: int, D_receiver: int, draws: int = DRAWS, seed: int = 0) -> np.ndarray:
    """`draws` scores of random A = X₁Y₁, B = X₂Y₂ (X [d, D], Y [D, d], iid N(0, 1); sender D_sender = D₁, receiver
    D_receiver = D₂), from numpy's Generator seeded with `seed`. [draws] float64.

    Drawn in D × D blocks, never d × D: the score reads X₁ only through X₁ᵀX₁ ~ Wishart_D₁(d) and Y₂ through Y₂Y₂ᵀ ~
    Wishart_D₂(d); with Y₁ᵀ = Q·R (QR: Q Haar on the Stiefel manifold, independent of R, R's Bartlett entries),
    Y₁Y₁ᵀ = RᵀR and M = Y₁X₂ = Rᵀ·Z with Z = QᵀX₂ [D₁, D₂] iid N(0, 1), and X₂ᵀX₂ = ZᵀZ + WᵀW with WᵀW ~
    Wishart_D₂(d − D₁) independent of Z (rotation invariance of X₂)."""
    rng = np.random.default_rng(int(seed))
    n, D1, D2 = int(draws), int(D_sender), int(D_receiver)
    if n < 1:
        return np.zeros(0)
    R = np.triu(rng.standard_normal((n, D1, D1)), k=1)
    R[:, np.arange(D1), np.arange(D1)] = np.sqrt(rng.chisquare(d - np.arange(D1), size=(n, D1)))
    Z = rng.standard_normal((n, D1, D2))
    rest = _wishart(rng, d - D1, D2, n) if d > D1 else np.zeros((n, D2, D2))
    gram_xa, gram_yb = _wishart(rng, d, D1, n), _wishart(rng, d, D2, n)
    M = R.transpose(0, 2, 1) @ Z  # Y₁X₂ [n, D₁, D₂]
    gram_ya, gram_xb = R.transpose(0, 2, 1) @ R, Z.transpose(0, 2, 1) @ Z + rest
    product = ((gram_xa @ M) * (M @ gram_yb)).sum(axis=(1, 2))
    norm_a, norm_b = (gram_xa * gram_ya).sum(axis=(1, 2)), (gram_xb * gram_yb).sum(axis=(1, 2))
    return np.sqrt(np.maximum(product, 0) / (norm_a * norm_b))


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
@dataclass(frozen=True, eq=False)
class Connection:
    """A sender site writing into a receiver site through `folds` (in the order the write meets them), read by the
    receiver as `kinds`."""

    sender: Site
    receiver: Site
    kinds: tuple[str, ...]
    folds: tuple[Fold, ...]

    @property
    def path(self) -> str:
        return " · ".join(f.name for f in self.folds) or "identity"


def connections(model: Informer, center: bool = True) -> list[Connection]:
    """Every (sender site, receiver site) pair the architecture connects by a residual path (module docstring)."""
    by_name = {site.name: site for site in model.sites}
    out: list[Connection] = []

    def ln(norm, name):
        return layer_norm_map(norm, name, center)

    def connect(sender: str, receiver: str, kinds, *folds):
        out.append(Connection(by_name[sender], by_name[receiver], tuple(kinds), tuple(f for f in folds if f)))

    for r, replica in enumerate(model.encoder.replicas):
        last = len(replica.layers) - 1
        for l, layer in enumerate(replica.layers):
            own = (ln(layer.norm1, f"encoder.{r}.{l}.norm1"), ln(layer.norm2, f"encoder.{r}.{l}.norm2"))
            if l < last:
                distil = (distilling_map(replica.distils[l], f"encoder.{r}.distil{l}(conv·BN)")
                          if l < len(replica.distils) else None)
                connect(f"encoder.{r}.{l}", f"encoder.{r}.{l + 1}", KINDS, *own, distil)
            else:
                for k in range(len(model.decoder.layers)):
                    connect(f"encoder.{r}.{l}", f"cross.{k}", ("K", "V"), *own, ln(replica.norm, f"encoder.{r}.norm"))
    layers = model.decoder.layers
    for l, layer in enumerate(layers):
        norm1 = ln(layer.norm1, f"decoder.{l}.norm1")
        connect(f"decoder_self.{l}", f"cross.{l}", ("Q",), norm1)
        if l + 1 < len(layers):
            tail = (ln(layer.norm2, f"decoder.{l}.norm2"), ln(layer.norm3, f"decoder.{l}.norm3"))
            next_norm1 = ln(layers[l + 1].norm1, f"decoder.{l + 1}.norm1")
            for sender, head in ((f"decoder_self.{l}", (norm1,)), (f"cross.{l}", ())):
                connect(sender, f"decoder_self.{l + 1}", KINDS, *head, *tail)
                connect(sender, f"cross.{l + 1}", ("Q",), *head, *tail, next_norm1)
    return out


def receiver_factors(factors: dict[str, torch.Tensor], kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(X, Y) with M_B = X·Y: Q → W_Q·W_Kᵀ (QK), K → W_K·W_Qᵀ (QKᵀ), V → W_V·W_O (OV). X [H, d, D], Y [H, D, d]."""
    if kind == "Q":
        return factors["W_Q"], factors["W_K"].transpose(1, 2)
    if kind == "K":
        return factors["W_K"], factors["W_Q"].transpose(1, 2)
    return factors["W_V"], factors["W_O"]


def fold_into(folds, X: torch.Tensor) -> torch.Tensor:
    """G·X for every head: X [H, d, D] → [H, d, D], G = G₁·G₂·… applied right to left (last fold first)."""
    H, d, D = X.shape
    flat = X.permute(1, 0, 2).reshape(d, H * D)
    for fold in reversed(folds):
        flat = fold.apply(flat)
    return flat.view(d, H, D).permute(1, 0, 2)


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
    writing weights to the same effect); False folds diag(γ) alone. Computed in float32 (the weights' precision),
    on the CPU (weights only: no forward pass)."""
    model = on_cpu(model)
    c = model.config
    d, H = c.d_model, c.n_heads
    D = d // H
    mean, q95 = random_baseline(d, D, D, int(draws), int(seed))
    factors = {site.name: {k: v.float() for k, v in head_factors(model.attention_layer(site)).items()}
               for site in model.sites}
    parts = []
    for conn in connections(model, center):
        send, recv = factors[conn.sender.name], factors[conn.receiver.name]
        for kind in conn.kinds:
            reason = _not_scored(model.attention_layer(conn.sender), model.attention_layer(conn.receiver), kind)
            if reason:
                scores = np.full((H, H), np.nan)
            else:
                X_B, Y_B = receiver_factors(recv, kind)
                scores = factored_scores(send["W_V"], send["W_O"], fold_into(conn.folds, X_B), Y_B).double().numpy()
            a, b = np.divmod(np.arange(H * H), H)
            parts.append(pd.DataFrame({
                "sender": [f"{conn.sender.name}:{h}" for h in a], "receiver": [f"{conn.receiver.name}:{h}" for h in b],
                "kind": kind, "score": scores.reshape(-1), "random_mean": mean, "random_q95": q95,
                "above_q95": scores.reshape(-1) > q95, "sender_site": conn.sender.name, "sender_head": a,
                "receiver_site": conn.receiver.name, "receiver_head": b, "path": conn.path, "reason": reason}))
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)
    return CompositionResult(table, d, D, int(draws), int(seed), bool(center))


COLUMNS = ("sender", "receiver", "kind", "score", "random_mean", "random_q95", "above_q95", "sender_site",
           "sender_head", "receiver_site", "receiver_head", "path", "reason")

__all__ = ["COLUMNS", "CompositionResult", "Connection", "Fold", "KINDS", "composition_scores", "connections",
           "distilling_map", "factored_scores", "fold_into", "fold_matrix", "head_factors", "layer_norm_map",
           "random_baseline", "random_scores", "receiver_factors", "score"]
