"""Shaping for the Head masking screen: checkbox keys, site labels, the mask in words, one column's rows."""
from __future__ import annotations

from typing import Iterable

import pandas as pd

SITE_KINDS = (("encoder", "Encoder self-attention"), ("decoder_self", "Decoder self-attention (causal)"),
              ("cross", "Decoder cross-attention"))


def head_key(model_key: str, site_index: int, head: int) -> str:
    """The session-state key of one head's checkbox; the model key keeps masks of different models apart."""
    return f"head_on::{model_key}::{site_index}::{head}"


def layer_label(site) -> str:
    if site.kind == "encoder":
        return f"replica {site.replica} · layer {site.layer}" if site.replica else f"layer {site.layer}"
    return f"layer {site.layer}"


def off_description(off: Iterable[tuple[int, int]], sites) -> str:
    off = sorted(off)
    if not off:
        return "all heads on"
    by_index = {s.index: s for s in sites}
    return ", ".join(f"{by_index[s].name} h{h}" for s, h in off)


def window_table(table: pd.DataFrame, column: str) -> pd.DataFrame:
    """The masked-window forecast rows of one target column, in horizon order."""
    rows = table[table["column"] == column].sort_values("step")
    return rows[["step", "timestamp", "truth", "baseline", "masked", "baseline_error", "masked_error",
                 "error_change"]].reset_index(drop=True)
