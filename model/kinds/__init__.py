"""The efficient attentions of the Informer paper's comparison and of the survey, one module per kind (see
dispatch.py for the list and their parameters), all computed over a table of keys (table.py)."""
from .dispatch import DEFAULTS, LEARNED, POSITIONAL, SPARSE_KINDS, SparseResult, option_problems, options_for, \
    positional_table, sparse_attention
from .table import KeyTable, dense_pattern, table_attention

__all__ = ["DEFAULTS", "KeyTable", "LEARNED", "POSITIONAL", "SPARSE_KINDS", "SparseResult", "dense_pattern",
           "option_problems", "options_for", "positional_table", "sparse_attention", "table_attention"]
