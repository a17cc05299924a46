"""Attention, one module per kind, behind one multi-head layer (layer.py).

    full.py               full attention (SDPA, or explicit rows when recorded) and AttentionResult
    probsparse.py         ProbSparse (Zhou et al. 2021): top-u queries, lazy rows; probsparse_sample.py its key sample
                          and M̄; probsparse_blocks.py the encoder's form in few large kernels
    logsparse.py, strided.py, fixed.py, window.py, block.py, compressed.py, lsh.py, adaptive.py
                          the efficient attentions of the Informer paper's comparison and the survey, each computed over
                          a table of keys (table.py, offsets.py); dispatch.py names them, their parameters and checks
    layer.py              AttentionLayer: projections, the site's kind or a per-call swap, head gates, hook sites

Inner attentions are pure functions on [B, H, L, D] tensors; the layer owns the projections and the head split.
"""
from .dispatch import DEFAULTS, LEARNED, POSITIONAL, RULES, SPARSE_KINDS, SparseResult, option_problems, options_for, \
    positional_table, sparse_attention
from .full import AttentionResult, causal_mask, full_attention
from .layer import AttentionLayer, gate_heads, resolve_kind
from .probsparse import lazy_context, probsparse_attention
from .probsparse_sample import KeySample, active_count, causal_sparsity_from_samples, draw_key_sample, \
    sample_sizes, sampled_dot_products, sampled_sparsity, sparsity_from_samples
from .table import KeyTable, dense_pattern, table_attention

__all__ = [
    "DEFAULTS", "LEARNED", "POSITIONAL", "RULES", "SPARSE_KINDS", "AttentionLayer", "AttentionResult", "KeySample",
    "KeyTable", "SparseResult", "active_count", "causal_mask", "causal_sparsity_from_samples", "dense_pattern",
    "draw_key_sample", "full_attention", "gate_heads", "lazy_context", "option_problems", "options_for",
    "positional_table", "probsparse_attention", "resolve_kind", "sample_sizes", "sampled_dot_products",
    "sampled_sparsity", "sparse_attention", "sparsity_from_samples", "table_attention",
]
