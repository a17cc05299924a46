"""Attention: ProbSparse (Zhou et al. 2021, §3.1) and full, behind one multi-head layer.

Inner attentions are pure functions on [B, H, L, D] tensors; `AttentionLayer` owns the projections,
the head split ([B, L, H, D] in and out, checked), the per-call head gate and the hook sites.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from .dropout import dropout
from .hooks import HookPoint
from .kinds import options_for, sparse_attention
from .kinds.compressed import compressed_conv
from .probsparse_blocks import shared_sample_attention
from .row_edits import apply_row_edit, row_edit


def active_count(factor: int, length: int) -> int:
    """u = c·⌈ln L⌉ (queries) or U = c·⌈ln L⌉ (sampled keys), capped at L and at least 1."""
    return max(1, min(length, factor * math.ceil(math.log(length)))) if length > 1 else 1


def sample_sizes(factor: int, L_Q: int, L_K: int, counts: str = "paper") -> tuple[int, int]:
    """(U sampled keys, u active queries). "paper": U = c·⌈ln L_K⌉, u = c·⌈ln L_Q⌉ (`active_count`). "hf" (Hugging
    Face's ProbSparse): U = c·L_Q·⌈ln(1 + L_K)⌉, u = c·⌈ln(1 + L_Q)⌉. Each capped at its length."""
    if counts == "hf":
        return (max(1, min(L_K, factor * L_Q * math.ceil(math.log1p(L_K)))),
                max(1, min(L_Q, factor * math.ceil(math.log1p(L_Q)))))
    return active_count(factor, L_K), active_count(factor, L_Q)


# --------------------------------------------------------------------------------------------
# Key sampling and the query sparsity measurement M̄
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KeySample:
    """Keys drawn (uniformly, with replacement) to score each query.

    draws: [n_blocks, U] long; queries i with equal i // block share row i // block (block 1: the official scheme).
    index: [L_Q, U]; row i lists the keys that query i is scored against (expanded from the draws when first read).
    """

    draws: torch.Tensor
    block: int
    L_Q: int

    @functools.cached_property
    def index(self) -> torch.Tensor:
        return self.draws.repeat_interleave(min(self.block, self.L_Q), dim=0)[:self.L_Q] if self.block > 1 \
            else self.draws


def draw_key_sample(L_Q: int, L_K: int, U: int, block: int, generator: torch.Generator | None,
                    device: torch.device) -> KeySample:
    """One draw per block of queries. With block=1 this is exactly the official `torch.randint(L_K, (L_Q, U))`."""
    n_blocks = -(-L_Q // block)
    gen_device = generator.device if generator is not None else torch.device("cpu")
    draws = torch.randint(L_K, (n_blocks, U), generator=generator, device=gen_device)  # [n_blocks, U]
    return KeySample(draws.to(device), block, L_Q)


def sampled_dot_products(Q: torch.Tensor, K: torch.Tensor, sample: KeySample) -> torch.Tensor:
    """q_i·k_j for every query i and its sampled keys j = index[i, s], unscaled.

    Q: [B, H, L_Q, D], K: [B, H, L_K, D] → [B, H, L_Q, U].
    Shared blocks are scored as one batched GEMM (no [B, H, L_Q, U, D] tensor is ever built);
    block=1 gathers from the whole QKᵀ when that is small, else gathers keys in chunks that bound memory.
    """
    B, H, L_Q, D = Q.shape
    U = sample.index.shape[1]
    if sample.block > 1:
        block = min(sample.block, L_Q)  # a block longer than L_Q is one block of L_Q queries
        n_full = L_Q // block
        parts = []
        if n_full:
            Q_blocks = Q[:, :, : n_full * block].reshape(B, H, n_full, block, D)
            K_blocks = K[:, :, sample.index[: n_full * block : block]]  # [B, H, n_full, U, D]
            parts.append((Q_blocks @ K_blocks.transpose(-2, -1)).reshape(B, H, n_full * block, U))
        if L_Q > n_full * block:  # the last, partial block
            K_rest = K[:, :, sample.index[n_full * block]]  # [B, H, U, D]
            parts.append(Q[:, :, n_full * block:] @ K_rest.transpose(-2, -1))  # [B, H, rest, U]
        return parts[0] if len(parts) == 1 else torch.cat(parts, dim=2)
    L_K = K.shape[2]
    if B * H * L_Q * L_K <= (1 << 22):
        # Short sequences: the whole QKᵀ (≤ 16 MB) and a gather from it are far cheaper, forward and backward,
        # than B·H·L_Q tiny [U, D] products (7× a whole training step at L = 96).
        return torch.gather(Q @ K.transpose(-2, -1), 3, sample.index.expand(B, H, L_Q, U))
    out = Q.new_empty(B, H, L_Q, U)
    chunk = max(1, (1 << 24) // max(1, B * H * U * D))  # ≤ 64 MB of gathered fp32 keys at a time
    for start in range(0, L_Q, chunk):
        stop = min(L_Q, start + chunk)
        K_sampled = K[:, :, sample.index[start:stop]]  # [B, H, c, U, D]
        out[:, :, start:stop] = (K_sampled @ Q[:, :, start:stop, :, None]).squeeze(-1)
    return out


def sparsity_from_samples(QK_sample: torch.Tensor, L_K: int, mean_divisor: str) -> torch.Tensor:
    """M̄(q_i, K) = max_j q_i·k_j − (Σ_j q_i·k_j) / n over the sampled j, unscaled. [B, H, L_Q, U] → [B, H, L_Q].

    n = U (a mean over the sample) or L_K (the official code, issue #582).
    """
    divisor = QK_sample.shape[-1] if mean_divisor == "U" else L_K
    return QK_sample.amax(dim=-1) - QK_sample.sum(dim=-1) / divisor


def causal_sparsity_from_samples(QK_sample: torch.Tensor, index: torch.Tensor, positions: torch.Tensor,
                                 QK_self: torch.Tensor, mean_divisor: str) -> torch.Tensor:
    """M̄ over the keys a causal query may attend to: its sampled keys j ≤ i, plus its own key j = i.

    QK_sample: [B, H, c, U]; index: [c, U] sampled keys; positions: [c] the queries i; QK_self: [B, H, c] q_i·k_i.
    n = the allowed samples + 1 ("U") or the allowed keys i + 1 ("L_K"). Unscaled → [B, H, c].
    """
    allowed = index <= positions.unsqueeze(1)  # [c, U]
    peak = torch.maximum(QK_sample.masked_fill(~allowed, float("-inf")).amax(dim=-1), QK_self)
    total = (QK_sample * allowed).sum(dim=-1) + QK_self
    n = allowed.sum(dim=-1) + 1 if mean_divisor == "U" else positions + 1
    return peak - total / n.to(QK_sample.dtype)


def sampled_sparsity(Q: torch.Tensor, K: torch.Tensor, sample: KeySample, mean_divisor: str,
                     causal: bool = False) -> torch.Tensor:
    """M̄ for every query, unscaled: [B, H, L_Q]. Scored a few blocks at a time, so the
    [B, H, L_Q, U] table of sampled dot products never exists whole (it would be the largest tensor).

    causal=True scores each query only on the sampled keys it may attend to (see causal_sparsity_from_samples);
    causal=False uses every sampled key (the official code does so even in the causal decoder).
    """
    B, H, L_Q, _ = Q.shape
    U, block = sample.draws.shape[1], sample.block
    chunk = max(block, ((1 << 21) // max(1, B * H * U)) // block * block)  # ≤ 8 MB of fp32 scores at a time
    parts = []
    for start in range(0, L_Q, chunk):  # a chunk starts at a block's first query
        stop = min(L_Q, start + chunk)
        part = KeySample(sample.draws[start // block:-(-stop // block)], block, stop - start)
        Q_part, index = Q[:, :, start:stop], part.index
        QK_sample = sampled_dot_products(Q_part, K, part)
        if causal:
            positions = torch.arange(start, stop, device=Q.device)
            QK_self = (Q_part * K[:, :, start:stop]).sum(dim=-1)  # [B, H, c]
            parts.append(causal_sparsity_from_samples(QK_sample, index, positions, QK_self, mean_divisor))
        else:
            parts.append(sparsity_from_samples(QK_sample, K.shape[2], mean_divisor))
    return parts[0] if len(parts) == 1 else torch.cat(parts, dim=-1)


# --------------------------------------------------------------------------------------------
# Inner attentions: [B, H, L, D] in, [B, H, L_Q, D] context out
# --------------------------------------------------------------------------------------------
class AttentionResult(NamedTuple):
    context: torch.Tensor  # [B, H, L_Q, D] after the lazy fill
    rows: torch.Tensor | None  # [B, H, u, L_K] softmax rows of the computed queries (None: not asked for)
    selected: torch.Tensor | None  # [B, H, u] which queries the rows belong to (None: all, in order)
    scores: torch.Tensor | None  # [B, H, L_Q] sampled M̄ on the q·k/√D scale (ProbSparse only)
    sample: KeySample | None  # the key sample (ProbSparse only)

    @property
    def key_index(self) -> torch.Tensor | None:  # [L_Q, U]
        return None if self.sample is None else self.sample.index


def causal_mask(L_Q: int, L_K: int, device: torch.device) -> torch.Tensor:
    """True where key j lies in the future of query i (j > i). [L_Q, L_K]."""
    return torch.ones(L_Q, L_K, dtype=torch.bool, device=device).triu(1)


def full_attention(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, *, causal: bool, dropout_p: float = 0.0,
                   need_rows: bool = False) -> AttentionResult:
    """softmax(QKᵀ/√D)V. SDPA when nobody records the rows; the explicit path (same maths) when they do, and
    for attention dropout on the CPU, where SDPA falls back to the same maths with a slow `bernoulli_`."""
    scale = 1.0 / math.sqrt(Q.shape[-1])
    if not need_rows and (dropout_p == 0.0 or Q.device.type != "cpu"):
        context = F.scaled_dot_product_attention(Q, K, V, dropout_p=dropout_p, is_causal=causal, scale=scale)
        return AttentionResult(context, None, None, None, None)
    scores = (Q @ K.transpose(-2, -1)) * scale  # [B, H, L_Q, L_K]
    if causal:
        scores = scores.masked_fill(causal_mask(Q.shape[2], K.shape[2], Q.device), float("-inf"))
    rows = torch.softmax(scores, dim=-1)
    context = dropout(rows, dropout_p, True) @ V if dropout_p > 0 else rows @ V
    return AttentionResult(context, rows, None, None, None)


def lazy_context(V: torch.Tensor, L_Q: int, *, causal: bool, decoder_lazy: str) -> torch.Tensor:
    """What an unselected ("lazy") query returns. V: [B, H, L_K, D] → [B, H, L_Q, D].

    Non-causal: mean_j(v_j) on every row. Causal (L_Q = L_K): row i gets Σ_{j≤i} v_j (official, "cumsum")
    or its mean (1/(i+1))·Σ_{j≤i} v_j ("cummean").
    """
    if not causal:
        return V.mean(dim=-2, keepdim=True).expand(-1, -1, L_Q, -1)
    if V.shape[2] != L_Q:
        raise ValueError(f"causal ProbSparse needs L_Q == L_K, got {L_Q} and {V.shape[2]}")
    running = V.cumsum(dim=-2)
    if decoder_lazy == "cummean":
        counts = torch.arange(1, L_Q + 1, device=V.device, dtype=V.dtype).view(1, 1, L_Q, 1)
        running = running / counts
    return running


def probsparse_attention(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, *, factor: int, causal: bool,
                         mean_divisor: str, decoder_lazy: str, sample_block: int, causal_sampling: bool = True,
                         generator: torch.Generator | None = None, sample: KeySample | None = None,
                         need_rows: bool = False, counts: str = "paper",
                         single_head_union: bool = False, need_scores: bool = True) -> AttentionResult:
    """ProbSparse self-attention.

    1. Score every query by M̄ on U = c·⌈ln L_K⌉ sampled keys (causal: only those it may attend to, unless
       causal_sampling=False, the official behaviour, which also counts keys in the query's future).
    2. The u = c·⌈ln L_Q⌉ highest-scoring queries (per batch element and head) attend to all keys.
    3. Every other query takes the lazy context; the selected rows overwrite it.
    Q: [B, H, L_Q, D], K, V: [B, H, L_K, D]. need_rows=False skips materialising the u × L_K rows (SDPA).
    counts: how u and U follow the lengths (`sample_sizes`). single_head_union (TSL, one head only): every window
    computes the rows of the whole batch's top-u queries (selected is then [B, 1, B·u], with repeats).
    need_scores=False: the encoder form (`model.probsparse_blocks`) keeps M̄ in its work space (scores None).
    """
    B, H, L_Q, D = Q.shape
    L_K = K.shape[2]
    U, u = sample_sizes(factor, L_Q, L_K, counts)
    scale = 1.0 / math.sqrt(D)
    if sample is None:
        sample = draw_key_sample(L_Q, L_K, U, sample_block, generator, Q.device)
    if not causal and sample.block > 1 and not (single_head_union and H == 1 and B > 1):  # the encoder form
        return AttentionResult(*shared_sample_attention(Q, K, V, sample.draws, sample.block, u,
                                                        U if mean_divisor == "U" else L_K, need_rows, need_scores),
                               sample)

    M_bar = sampled_sparsity(Q, K, sample, mean_divisor, causal=causal and causal_sampling)  # [B, H, L_Q]
    selected = M_bar.topk(u, dim=-1, sorted=True).indices  # [B, H, u]
    if single_head_union and H == 1 and B > 1:  # TSL's squeeze quirk (InformerConfig.single_head_union)
        selected = selected.reshape(1, 1, B * u).expand(B, 1, B * u)

    Q_top = torch.gather(Q, 2, selected.unsqueeze(-1).expand(-1, -1, -1, D))  # [B, H, u, D]
    future = None
    if causal:
        future = torch.arange(L_K, device=Q.device).view(1, 1, 1, L_K) > selected.unsqueeze(-1)  # [B, H, u, L_K]
    rows = None
    if need_rows:
        scores_top = (Q_top @ K.transpose(-2, -1)) * scale  # [B, H, u, L_K]
        if causal:
            scores_top = scores_top.masked_fill(future, float("-inf"))
        rows = torch.softmax(scores_top, dim=-1)  # [B, H, u, L_K]
        context_top = rows @ V  # [B, H, u, D]
    else:  # the same softmax(q·K/√D)V for the u selected queries, without materialising their rows
        context_top = F.scaled_dot_product_attention(Q_top, K, V, attn_mask=None if future is None else ~future,
                                                     scale=scale)

    context = lazy_context(V, L_Q, causal=causal, decoder_lazy=decoder_lazy).contiguous()  # [B, H, L_Q, D]
    context = context.scatter_(2, selected.unsqueeze(-1).expand(-1, -1, -1, D), context_top.type_as(context))
    return AttentionResult(context, rows, selected, M_bar * scale, sample)


# --------------------------------------------------------------------------------------------
# Head gates
# --------------------------------------------------------------------------------------------
def gate_heads(context: torch.Tensor, gate: torch.Tensor | None, mean: torch.Tensor | None) -> torch.Tensor:
    """Silence heads on every row, after the lazy fill: gate·context + (1 − gate)·mean.

    context: [B, L_Q, H, D]; gate: [B or 1, H] (1 keeps a head, 0 removes it); mean: None (zero), [L_Q, H, D]
    (one replacement for every batch row: mean ablation) or [B or 1, L_Q, H, D] (one per batch row: activation
    patching puts another run's context there, gate 0 taking it whole).
    """
    if gate is None:
        return context
    g = gate.to(context.dtype)[:, None, :, None]  # [B, 1, H, 1]
    if mean is None:
        return context * g
    if mean.shape[-3:] != context.shape[-3:] or (mean.dim() == 4 and mean.shape[0] not in (1, context.shape[0])):
        raise ValueError(f"head replacement has shape {list(mean.shape)}, expected [L_Q, H, D] or [B, L_Q, H, D] "
                         f"for a context of shape {list(context.shape)}")
    return context * g + mean.to(context.dtype) * (1 - g)


# --------------------------------------------------------------------------------------------
# The multi-head layer
# --------------------------------------------------------------------------------------------
def resolve_kind(override, own_kind: str, own_options: dict, site_type: str) -> tuple[str, dict]:
    """(kind, parameters) one site computes with under a per-call override.

    override: None (its own); "prob" or "full" (every site, as before the other kinds came); another kind's name
    (the self-attention sites, encoder and decoder self; cross-attention keeps its own, positional kinds cannot
    sit there); or a mapping site type → kind name or (kind, parameters), sites not named keeping their own.
    """
    if override is None:
        return own_kind, own_options
    if isinstance(override, str):
        if override in ("prob", "full") or site_type != "cross":
            return override, (own_options if override == own_kind else {})
        return own_kind, own_options
    spec = override.get(site_type)
    if spec is None:
        return own_kind, own_options
    if isinstance(spec, str):
        return spec, (own_options if spec == own_kind else {})
    return spec[0], dict(spec[1] or {})


class AttentionLayer(nn.Module):
    """Projections d_model → H·D, an inner attention, the head gate, projection H·D → d_model.

    Hook sites (named "<site>.<suffix>" by the model): queries, keys, values [B, L, H, D];
    key_index [L_Q, U]; scores [B, H, L_Q]; selected [B, H, u]; rows [B, H, u, L_K]
    (full attention: u = L_Q and selected = 0..L_Q−1); context [B, L_Q, H, D] before the gate.
    """

    def __init__(self, kind: str, d_model: int, n_heads: int, *, causal: bool, mix: bool, factor: int,
                 dropout: float, mean_divisor: str, decoder_lazy: str, sample_block: int,
                 causal_sampling: bool = True, active_counts: str = "paper", single_head_union: bool = False,
                 options: dict | None = None, site_type: str = "encoder"):
        super().__init__()
        self.kind, self.n_heads, self.causal, self.mix = kind, n_heads, causal, mix
        self.options, self.site_type = dict(options or {}), site_type
        self.factor, self.attention_dropout = factor, dropout
        self.mean_divisor, self.decoder_lazy, self.sample_block = mean_divisor, decoder_lazy, sample_block
        self.causal_sampling = causal_sampling
        self.active_counts, self.single_head_union = active_counts, single_head_union
        self.index = -1  # position in the model's gate tensor, set by the model
        self.query_projection = nn.Linear(d_model, d_model)
        self.key_projection = nn.Linear(d_model, d_model)
        self.value_projection = nn.Linear(d_model, d_model)
        self.out_projection = nn.Linear(d_model, d_model)
        for suffix in ("queries", "keys", "values", "key_index", "scores", "selected", "rows", "context"):
            setattr(self, f"hook_{suffix}", HookPoint(suffix))
        if kind not in ("prob", "full"):  # the parameters a kind learns when trained with it (model/kinds)
            o = options_for(kind, options)
            if kind == "adaptive":  # Sukhbaatar et al.: each head's span z, learned (clamped to [0, max_span])
                self.span = nn.Parameter(torch.full((n_heads,), float(o["span"])))
            elif kind == "compressed" and o["compress"] == "conv":  # Liu et al.: the strided convolution
                self.compress_conv = compressed_conv(d_model // n_heads, int(o["stride"]))

    def forward(self, x_q: torch.Tensor, x_kv: torch.Tensor, *, gate: torch.Tensor | None = None,
                mean: torch.Tensor | None = None, generator: torch.Generator | None = None,
                kind: str | dict | None = None) -> torch.Tensor:
        """x_q: [B, L_Q, d_model], x_kv: [B, L_K, d_model] → [B, L_Q, d_model]. `kind`: a per-call override of
        the attention (see resolve_kind)."""
        return self.project(self.attend(x_q, x_kv, generator=generator, kind=kind), gate, mean)

    def attend(self, x_q: torch.Tensor, x_kv: torch.Tensor, *, generator: torch.Generator | None = None,
               kind: str | dict | None = None) -> torch.Tensor:
        """The per-head context, after the lazy fill and before any gate: [B, L_Q, H, D]."""
        B, L_Q, _ = x_q.shape
        L_K, H = x_kv.shape[1], self.n_heads
        Q = self.hook_queries(self.query_projection(x_q).view(B, L_Q, H, -1))  # [B, L_Q, H, D]
        K = self.hook_keys(self.key_projection(x_kv).view(B, L_K, H, -1))  # [B, L_K, H, D]
        V = self.hook_values(self.value_projection(x_kv).view(B, L_K, H, -1))  # [B, L_K, H, D]
        Qh, Kh, Vh = (t.transpose(1, 2) for t in (Q, K, V))  # [B, H, L, D]
        edit = row_edit(self.hook_rows.name.rpartition(".")[0])  # a per-call row replacement (model/row_edits.py)
        need_rows = edit is not None or self.hook_rows.wanted()
        kind, options = resolve_kind(kind, self.kind, self.options, self.site_type)

        if kind == "prob":
            result = probsparse_attention(Qh, Kh, Vh, factor=self.factor, causal=self.causal,
                                          mean_divisor=self.mean_divisor, decoder_lazy=self.decoder_lazy,
                                          sample_block=self.sample_block, generator=generator,
                                          causal_sampling=self.causal_sampling, need_rows=need_rows,
                                          counts=self.active_counts, single_head_union=self.single_head_union,
                                          need_scores=self.hook_scores.wanted())
        elif kind == "full":
            # The official ProbAttention never applies attention dropout; full attention does.
            result = full_attention(Qh, Kh, Vh, causal=self.causal,
                                    dropout_p=self.attention_dropout if self.training else 0.0,
                                    need_rows=need_rows)
        else:
            result = self._sparse(kind, options, Qh, Kh, Vh, need_rows, generator)
        if edit is not None:
            rows, context = apply_row_edit(edit, result.rows, result.selected, Vh, result.context, self.causal)
            result = result._replace(rows=rows, context=context)
        self._record(result, B, L_Q)

        context = result.context.transpose(1, 2)  # [B, L_Q, H, D]
        if context.shape != Q.shape[:2] + (H, Vh.shape[-1]):
            raise ValueError(f"inner attention returned {tuple(context.shape)}, expected [B, L_Q, H, D]")
        return self.hook_context(context)

    def _sparse(self, kind: str, options: dict, Q, K, V, need_rows: bool,
                generator: torch.Generator | None) -> AttentionResult:
        """One of model/kinds: with this layer's learned span / convolution / shared keys when the kind is its own,
        in their parameter-free forms when the kind is swapped in (fixed span, mean compression, separate keys)."""
        own = kind == self.kind
        options = dict(options)
        if kind == "lsh" and not own:
            options.setdefault("shared", False)  # a swap keeps the model's own keys (it has no shared-QK training)
        r = sparse_attention(kind, Q, K, V, causal=self.causal, options=options, need_rows=need_rows,
                             need_scores=self.hook_scores.wanted(), generator=generator,
                             span=getattr(self, "span", None) if own else None,
                             conv=getattr(self, "compress_conv", None) if own else None)
        return AttentionResult(r.context, r.rows, None, r.scores, None)

    def project(self, context: torch.Tensor, gate: torch.Tensor | None = None,
                mean: torch.Tensor | None = None) -> torch.Tensor:
        """Gate the heads, merge them and project: [B, L_Q, H, D] → [B, L_Q, d_model]."""
        B, L_Q = context.shape[:2]
        context = gate_heads(context, gate, mean)
        if self.mix:  # Informer2020 / TSL quirk: [B, H, L_Q, D] viewed as [B, L_Q, H·D] interleaves heads and time
            merged = context.transpose(1, 2).reshape(B, L_Q, -1)
        else:
            merged = context.reshape(B, L_Q, -1)  # head h owns columns h·D … (h+1)·D − 1
        return self.out_projection(merged)

    def _record(self, result: AttentionResult, B: int, L_Q: int) -> None:
        """ProbSparse: key_index, scores and selected on every call; rows when wanted. Full attention and the other
        kinds: rows and selected (every query, in order) when rows are wanted; the other kinds' scores (M on the
        keys each query reads) when wanted."""
        if result.sample is not None and self.hook_key_index.wanted():  # expanded from the draws only when recorded
            self.hook_key_index(result.sample.index)
        if result.scores is not None:  # M̄ (ProbSparse) or M on the read keys (other kinds), when a recorder wants it
            self.hook_scores(result.scores)
        selected = result.selected
        if result.rows is not None:
            self.hook_rows(result.rows)
            if selected is None:
                selected = torch.arange(L_Q, device=result.rows.device).expand(B, self.n_heads, L_Q)
        if selected is not None:
            self.hook_selected(selected)
