"""Shaping for the Head masking screen: checkbox keys, site labels, the mask in words, one column's rows."""
from __future__ import annotations

from typing import Iterable

import pandas as pd
from informer_lab.analysis.heads.names import head_name

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
    return ", ".join(head_name(by_index[s].name, h) for s, h in off)


def window_table(table: pd.DataFrame, column: str) -> pd.DataFrame:
    """The masked-window forecast rows of one target column, in horizon order."""
    rows = table[table["column"] == column].sort_values("step")
    return rows[["step", "timestamp", "truth", "baseline", "masked", "baseline_error", "masked_error",
                 "error_change"]].reset_index(drop=True)


def mask_for_other(off: Iterable[tuple[int, int]], sites, other_sites, other_heads: int
                   ) -> tuple[list[tuple[int, int]], list[str]]:
    """The same heads switched off in another model, matched by site name and head number: (its (site index,
    head) pairs, the names of the heads it lacks)."""
    names = {s.index: s.name for s in sites}
    other = {s.name: s.index for s in other_sites}
    mapped, missing = [], []
    for index, head in sorted(off):
        name = names[index]
        if name in other and head < other_heads:
            mapped.append((other[name], head))
        else:
            missing.append(head_name(name, head))
    return mapped, missing


def paired_effect(first: pd.DataFrame, second: pd.DataFrame, names: tuple[str, str]) -> pd.DataFrame:
    """Per forecast timestamp both models share (window_table rows of one column): each model's masked − baseline
    forecast and error change, and whether the mask moves the two errors in opposite directions."""
    a, b = names
    keep = ["timestamp", "truth", "baseline", "masked", "error_change"]
    merged = first[keep].merge(second[keep].drop(columns="truth"), on="timestamp", suffixes=(f" · {a}", f" · {b}"))
    out = merged[["timestamp", "truth"]].copy()
    for name in names:
        out[f"masked − baseline · {name}"] = merged[f"masked · {name}"] - merged[f"baseline · {name}"]
        out[f"error change · {name}"] = merged[f"error_change · {name}"]
    ca, cb = out[f"error change · {a}"], out[f"error change · {b}"]
    out["opposite"] = (ca * cb) < 0
    return out
