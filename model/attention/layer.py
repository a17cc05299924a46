"""The multi-head attention layer: projections, the inner attention of the site's kind (or a per-call swap), the
head gate and the hook sites."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..hooks import HookPoint, observed
from ..row_edits import apply_row_edit, row_edit
from .compressed import compressed_conv
from .dispatch import options_for, sparse_attention
from .full import AttentionResult, full_attention
from .probsparse import probsparse_attention


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
# Head split
# --------------------------------------------------------------------------------------------
class _SplitHeads(torch.autograd.Function):
    """[B, L, n, H, D] (n stacked projections) → n contiguous [B, H, L, D] in one copy; the backward writes the n
    gradients straight back into one [B, L, n, H, D] tensor (autograd's unbind would stack them first: a second
    copy of the whole)."""

    @staticmethod
    def forward(ctx, stacked):
        return tuple(stacked.permute(2, 0, 3, 1, 4).contiguous().unbind(0))

    @staticmethod
    def backward(ctx, *grads):
        B, H, L, D = next(g for g in grads if g is not None).shape
        out = grads[0].new_empty(B, L, len(grads), H, D)
        for i, g in enumerate(grads):
            if g is None:
                out[:, :, i].zero_()
            else:
                out[:, :, i].copy_(g.transpose(1, 2))
        return out


def split_heads(stacked: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """n projections side by side, [B, L, n, H, D] → n contiguous [B, H, L, D]."""
    return _SplitHeads.apply(stacked)


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
        if kind not in ("prob", "full"):  # the parameters a kind learns when trained with it (model/attention)
            o = options_for(kind, options)
            if kind == "adaptive":  # Sukhbaatar et al.: each head's span z, learned (clamped to [0, max_span])
                self.span = nn.Parameter(torch.full((n_heads,), float(o["span"])))
                self.span_loss, self.max_span = float(o["span_loss"]), int(o["max_span"])
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
        Qh, Kh, Vh = self.heads(x_q, x_kv)  # [B, H, L, D]
        edit = row_edit(self.hook_rows.name.rpartition(".")[0])  # a per-call row replacement (model/row_edits.py)
        need_rows = edit is not None or self.hook_rows.wanted()
        kind, options = resolve_kind(kind, self.kind, self.options, self.site_type)

        pattern = None  # the keys each query may read, where a kind reads fewer than (causal) full attention
        if kind == "prob":
            result = probsparse_attention(Qh, Kh, Vh, factor=self.factor, causal=self.causal,
                                          mean_divisor=self.mean_divisor, decoder_lazy=self.decoder_lazy,
                                          sample_block=self.sample_block, generator=generator,
                                          causal_sampling=self.causal_sampling, need_rows=need_rows,
                                          counts=self.active_counts, single_head_union=self.single_head_union,
                                          need_scores=self.hook_scores.wanted(),
                                          order_selected=need_rows or self.hook_selected.wanted())
        elif kind == "full":
            # The official ProbAttention never applies attention dropout; full attention does.
            result = full_attention(Qh, Kh, Vh, causal=self.causal,
                                    dropout_p=self.attention_dropout if self.training else 0.0,
                                    need_rows=need_rows)
        else:
            result, pattern = self._sparse(kind, options, Qh, Kh, Vh, need_rows, generator)
        if edit is not None:
            rows, context = apply_row_edit(edit, result.rows, result.selected, Vh, result.context, self.causal,
                                           pattern)
            result = result._replace(rows=rows, context=context)
        self._record(result, B, L_Q)

        context = result.context.transpose(1, 2)  # [B, L_Q, H, D]
        if context.shape != (B, L_Q, H, Vh.shape[-1]):
            raise ValueError(f"inner attention returned {tuple(context.shape)}, expected [B, L_Q, H, D]")
        return self.hook_context(context)

    def heads(self, x_q: torch.Tensor, x_kv: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Q, K, V projected and split into heads: [B, H, L_Q, D], [B, H, L_K, D], [B, H, L_K, D], contiguous.

        Self-attention projects with one GEMM (the three weights stacked at call time; the parameters stay three
        Linears) and splits heads with one copy; cross-attention projects K and V together. The hook sites see
        [B, L, H, D]; where a patch replaces one, the split follows the patched tensors.
        """
        B, L_Q, _ = x_q.shape
        L_K, H = x_kv.shape[1], self.n_heads
        q, k, v = self.query_projection, self.key_projection, self.value_projection
        if x_kv is x_q:
            qkv = F.linear(x_q, torch.cat([q.weight, k.weight, v.weight]), torch.cat([q.bias, k.bias, v.bias]))
            Q, K, V = qkv.view(B, L_Q, 3, H, -1).unbind(2)  # [B, L, H, D] views
        else:
            Q = q(x_q).view(B, L_Q, H, -1)
            kv = F.linear(x_kv, torch.cat([k.weight, v.weight]), torch.cat([k.bias, v.bias]))
            K, V = kv.view(B, L_K, 2, H, -1).unbind(2)
        if not observed():  # nothing records or patches them: one copy splits the heads
            if x_kv is x_q:
                return split_heads(qkv.view(B, L_Q, 3, H, -1))
            return (Q.transpose(1, 2).contiguous(), *split_heads(kv.view(B, L_K, 2, H, -1)))
        Q, K, V = self.hook_queries(Q), self.hook_keys(K), self.hook_values(V)
        return tuple(t.transpose(1, 2).contiguous() for t in (Q, K, V))

    def _sparse(self, kind: str, options: dict, Q, K, V, need_rows: bool,
                generator: torch.Generator | None) -> tuple[AttentionResult, torch.Tensor | None]:
        """One of model/attention: with this layer's learned span / convolution / shared keys when the kind is its own,
        in their parameter-free forms when the kind is swapped in (fixed span, mean compression, separate keys)."""
        own = kind == self.kind
        options = dict(options)
        if kind == "lsh" and not own:
            options.setdefault("shared", False)  # a swap keeps the model's own keys (it has no shared-QK training)
        r = sparse_attention(kind, Q, K, V, causal=self.causal, options=options, need_rows=need_rows,
                             need_scores=self.hook_scores.wanted(), generator=generator,
                             span=getattr(self, "span", None) if own else None,
                             conv=getattr(self, "compress_conv", None) if own else None)
        return AttentionResult(r.context, r.rows, None, r.scores, None), r.pattern

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
