"""Every efficient attention kind behind one call: its parameters, where it is meaningful, its table, its result.

    sparse_attention(kind, Q, K, V, causal=…, options={…}) → SparseResult(context, rows, scores)

Kinds and their parameters (defaults in DEFAULTS; each module cites its paper):

    logsparse   local (cells read densely before the exponential steps; default ⌈log2 L⌉)
    strided     stride (default ⌈√L⌉)
    fixed       block (default ⌈√L⌉), summary (cells per block every query reads; 1)
    window      window (cells each side; 8), dilation (1), globals (global positions, e.g. [0, -1]; none)
    block       blocks (2)
    compressed  block (local block; 16), stride (compression; 4), compress ("mean" | "conv")
    lsh         buckets (8), rounds (2), chunk (32), shared (True: shared-QK; False: a swap's separate keys)
    adaptive    max_span (64), ramp (8), span (the learned spans' start, and a swap's fixed span; 32),
                span_loss (λ of the paper's ℓ1 penalty λ/M·Σ z_i on the M learned spans, added to the training loss;
                2e-6, the paper's)

Positional kinds (all but lsh) read keys by their distance or block in the sequence, so they are meant for
self-attention (L_Q = L_K: the encoder and the decoder's causal self-attention); LSH is content-based and works at
every site, cross-attention included.
"""
from __future__ import annotations

from typing import NamedTuple

import torch

from .adaptive import adaptive_table
from .block import block_attention, block_table
from .compressed import compress, local_table, memory_visible
from .fixed import fixed_table
from .logsparse import logsparse_table
from .lsh import hash_vectors, lsh_attention_sorted, lsh_table, random_rotations, shared_keys
from .strided import strided_table
from .table import KeyTable, dense_pattern, table_attention
from .window import global_positions, window_table

SPARSE_KINDS = ("logsparse", "strided", "fixed", "window", "block", "compressed", "lsh", "adaptive")
POSITIONAL = frozenset(SPARSE_KINDS) - {"lsh"}
DEFAULTS: dict[str, dict] = {
    "logsparse": {"local": None}, "strided": {"stride": None}, "fixed": {"block": None, "summary": 1},
    "window": {"window": 8, "dilation": 1, "globals": ()}, "block": {"blocks": 2},
    "compressed": {"block": 16, "stride": 4, "compress": "conv"},
    "lsh": {"buckets": 8, "rounds": 2, "chunk": 32, "shared": True},
    "adaptive": {"max_span": 64, "ramp": 8.0, "span": 32.0, "span_loss": 2e-6},
}
# Parameters a kind learns when trained with it (a same-weights swap uses the parameter-free form instead).
LEARNED = {"compressed": "compress='conv': the strided convolution", "adaptive": "each head's span z",
           "lsh": "shared='True': keys are the queries (no key projection)"}


class SparseResult(NamedTuple):
    context: torch.Tensor  # [B, H, L_Q, D]
    rows: torch.Tensor | None  # [B, H, L_Q, L_K] the weights on the keys (None: not asked for)
    scores: torch.Tensor | None  # [B, H, L_Q] M on the computed rows (max − mean of q·k/√D over the keys read)
    pattern: torch.Tensor | None = None  # bool [.., L_Q, L_K] the keys each query reads, with the rows (else None)


# Each parameter's allowed values: (type, low, high) for numbers (None allowed where the default is None), a tuple of
# choices for strings, "positions" for a list of integer positions (negative counts from the end).
RULES: dict[str, dict[str, object]] = {
    "logsparse": {"local": (int, 0, 1 << 20)}, "strided": {"stride": (int, 1, 1 << 20)},
    "fixed": {"block": (int, 1, 1 << 20), "summary": (int, 1, 1 << 20)},
    "window": {"window": (int, 0, 1 << 20), "dilation": (int, 1, 1 << 10), "globals": "positions"},
    "block": {"blocks": (int, 1, 1 << 16)},
    "compressed": {"block": (int, 1, 1 << 20), "stride": (int, 1, 1 << 12), "compress": ("mean", "conv")},
    "lsh": {"buckets": (int, 1, 1 << 12), "rounds": (int, 1, 64), "chunk": (int, 1, 1 << 16), "shared": bool},
    "adaptive": {"max_span": (int, 1, 1 << 20), "ramp": (float, 1e-6, 1e6), "span": (float, 0.0, 1e6),
                 "span_loss": (float, 0.0, 1e3)},
}


def option_problems(kind: str, options: dict | None) -> list[str]:
    """What is wrong with a kind's parameters (unknown names, types, ranges), as short sentences; [] when nothing."""
    if kind in ("prob", "full"):
        return [f"{kind} attention takes no parameters, got {', '.join(map(str, options))}"] if options else []
    if kind not in RULES:
        return [f"unknown attention kind {str(kind)[:40]!r}; kinds: {', '.join(('prob', 'full') + SPARSE_KINDS)}"]
    if options is not None and not isinstance(options, dict):
        return [f"{kind} attention's parameters must be a mapping of names to values"]
    problems = []
    for name, value in (options or {}).items():
        rule = RULES[kind].get(name)
        if rule is None:
            problems.append(f"{kind} attention has no parameter {str(name)[:40]!r}; it takes {', '.join(RULES[kind])}")
        elif rule is bool:
            if not isinstance(value, bool):
                problems.append(f"{kind} {name} must be true or false, got {repr(value)[:40]}")
        elif rule == "positions":
            if (not isinstance(value, (list, tuple)) or len(value) > 64
                    or not all(isinstance(v, int) and not isinstance(v, bool) and abs(v) < 1 << 20 for v in value)):
                problems.append(f"{kind} {name} must be a list of at most 64 positions (e.g. [0, -1]), "
                                f"got {repr(value)[:40]}")
        elif isinstance(rule, tuple) and isinstance(rule[0], str):
            if value not in rule:
                problems.append(f"{kind} {name} must be one of {', '.join(rule)}, got {repr(value)[:40]}")
        else:
            typ, low, high = rule
            ok_type = isinstance(value, (int, float)) and not isinstance(value, bool) and \
                (typ is float or float(value).is_integer())
            if value is None and DEFAULTS[kind][name] is None:
                continue
            if not ok_type or not low <= value <= high:
                what = "a whole number" if typ is int else "a number"
                problems.append(f"{kind} {name} must be {what} in {low}..{high:,}, got {repr(value)[:40]}")
    return problems


def options_for(kind: str, options: dict | None) -> dict:
    """The kind's parameters: its defaults updated by `options`; an unknown parameter is a ValueError."""
    if kind not in DEFAULTS:
        raise ValueError(f"unknown attention kind {kind!r}; kinds: {', '.join(('prob', 'full') + SPARSE_KINDS)}")
    problems = option_problems(kind, options)
    if problems:
        raise ValueError("; ".join(problems))
    out = dict(DEFAULTS[kind])
    out.update(options or {})
    for name, rule in RULES[kind].items():  # whole numbers as int (JSON may carry 3.0), positions as a tuple
        if isinstance(rule, tuple) and rule[0] is int and out[name] is not None:
            out[name] = int(out[name])
        elif rule == "positions":
            out[name] = tuple(int(v) for v in out[name])
    return out


def positional_table(kind: str, L: int, H: int, *, causal: bool, options: dict, span: torch.Tensor | None = None,
                     device=None) -> KeyTable:
    """The table of a positional kind at length L (for the engine, and for the patterns the screens compare)."""
    o = options_for(kind, options)
    if kind == "logsparse":
        return logsparse_table(L, causal=causal, local=o["local"], device=device)
    if kind == "strided":
        return strided_table(L, causal=causal, stride=o["stride"], device=device)
    if kind == "fixed":
        return fixed_table(L, causal=causal, block=o["block"], summary=o["summary"], device=device)
    if kind == "window":
        return window_table(L, causal=causal, window=o["window"], dilation=o["dilation"], globals_=o["globals"],
                            device=device)
    if kind == "block":
        return block_table(L, H, causal=causal, blocks=o["blocks"], device=device)
    if kind == "compressed":
        return local_table(L, causal=causal, block=o["block"], device=device)
    if kind == "adaptive":
        spans = span if span is not None else torch.full((H,), float(o["span"]), device=device)
        return adaptive_table(L, spans, causal=causal, max_span=o["max_span"], ramp=float(o["ramp"]), device=device)
    raise ValueError(f"{kind} is not a positional kind")


def sparse_attention(kind: str, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, *, causal: bool,
                     options: dict | None = None, need_rows: bool = False, need_scores: bool = False,
                     generator: torch.Generator | None = None,
                     span: torch.Tensor | None = None, conv: torch.nn.Module | None = None) -> SparseResult:
    """One kind's attention. Q: [B, H, L_Q, D], K, V: [B, H, L_K, D]. span: adaptive's learned spans [H];
    conv: compressed attention's learned convolution (None: the parameter-free forms)."""
    o = options_for(kind, options)
    B, H, L_Q, _ = Q.shape
    L_K = K.shape[2]
    if kind in POSITIONAL and L_Q != L_K:
        raise ValueError(f"{kind} attention is positional (self-attention, L_Q = L_K); this site has L_Q = {L_Q}, "
                         f"L_K = {L_K}: use lsh, prob or full here")
    memory = None
    if kind == "lsh":
        rotations = random_rotations(Q.shape[-1], int(o["buckets"]), int(o["rounds"]), generator, Q.device)
        shared = bool(o["shared"]) and L_Q == L_K
        if shared:
            K = shared_keys(Q)
        q_buckets = hash_vectors(Q, rotations, int(o["buckets"]))
        k_buckets = q_buckets if shared else hash_vectors(K, rotations, int(o["buckets"]))
        if not causal and not need_rows and not need_scores:  # the Reformer's sorted chunks: GEMMs, no gathers
            return SparseResult(lsh_attention_sorted(Q, K, V, q_buckets, k_buckets, chunk=int(o["chunk"]),
                                                     shared=shared), None, None)
        table = lsh_table(q_buckets, k_buckets, chunk=int(o["chunk"]), causal=causal, shared=shared)
    elif kind == "block":  # dense per (head, block) pair: no table, SDPA's kernel
        context, rows, scores = block_attention(Q, K, V, causal=causal, blocks=int(o["blocks"]),
                                                need_rows=need_rows, need_scores=need_scores)
        pattern = dense_pattern(block_table(L_Q, H, causal=causal, blocks=int(o["blocks"]), device=Q.device),
                                L_K) if need_rows else None
        return SparseResult(context, rows, scores, pattern)
    else:
        table = positional_table(kind, L_Q, H, causal=causal, options=o, span=span, device=Q.device)
        if kind == "compressed":
            stride = int(o["stride"])
            visible = memory_visible(L_K, causal=causal, block=int(o["block"]), stride=stride, device=Q.device)
            if bool(visible.any()):
                learned = conv if o["compress"] == "conv" else None
                memory = (compress(K, stride, learned), compress(V, stride, learned), visible)
    context, rows, scores = table_attention(Q, K, V, table, memory=memory, need_rows=need_rows,
                                            need_scores=need_scores)
    pattern = dense_pattern(table, L_K) if need_rows else None  # [L_Q | H, L_Q | B, H, L_Q, L_K]
    if kind == "window":
        G = global_positions(L_Q, o["globals"])
        if G:  # the global queries read every key (causal: every key up to them)
            context, rows, scores = _global_rows(Q, K, V, G, causal, context, rows, scores)
            if pattern is not None:
                g = torch.tensor(G, device=Q.device)
                pattern[..., g, :] = (torch.arange(L_K, device=Q.device) <= g.view(-1, 1)) if causal else True
    if rows is not None and rows.shape[-1] != L_K:
        rows = rows[..., :L_K]  # the summaries' weights are not weights on keys: rows keep the exact part
    return SparseResult(context, rows, scores, pattern)


def _global_rows(Q, K, V, G: list[int], causal: bool, context, rows, scores):
    import math

    g = torch.tensor(G, device=Q.device)
    s = (Q[:, :, g] @ K.transpose(-2, -1)) / math.sqrt(Q.shape[-1])  # [B, H, |G|, L_K]
    if causal:
        s = s.masked_fill(torch.arange(K.shape[2], device=Q.device).view(1, -1) > g.view(-1, 1), float("-inf"))
    p = torch.softmax(s, dim=-1)
    context = context.clone()
    context[:, :, g] = p @ V
    if scores is not None:
        seen = torch.isfinite(s)
        scores = scores.clone()
        scores[:, :, g] = (s.amax(dim=-1) - torch.where(seen, s, 0).sum(dim=-1) / seen.sum(dim=-1)).detach()
    if rows is not None:
        rows = rows.clone()
        rows[:, :, g, : K.shape[2]] = p
    return context, rows, scores


__all__ = ["DEFAULTS", "LEARNED", "POSITIONAL", "RULES", "SPARSE_KINDS", "SparseResult", "option_problems",
           "options_for", "positional_table", "sparse_attention"]
