"""Does ProbSparse pick the queries it should? The sampled top-u against the exact top-u, over many windows, with
an interval.

For every window and every ProbSparse (site, head): overlap@u = |sampled top-u ∩ exact top-u| / u, where the
sampled top-u is what the model selected (the u largest sampled M̄) and the exact top-u the u largest exact
M = ln Σ_j exp(s_ij) − mean_j s_ij over the allowed keys (analysis.attention.sparsity.exact_sparsity). The mean over windows
comes with its 95 % interval over windows (analysis.intervals), next to chance (u / L_Q: a random top-u's expected
overlap). The windows are strided evenly through the split; their dependence span is counted in picked windows (those
within seq_len + pred_len rows of each other).

Only queries, keys and sampled scores are recorded, a batch of windows at a time: memory does not grow with the
number of windows.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from informer_lab.model import Informer
from informer_lab.model.attention import sample_sizes

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.intervals import mean_intervals
from informer_lab.analysis.row_memory import data_span
from informer_lab.analysis.attention.recording import record_forward, window_batch
from informer_lab.analysis.attention.sparsity import exact_sparsity, topk_agreement
from informer_lab.analysis.learning.windows import WindowDataset


def strided_windows(prepared: PreparedData, split: str, max_windows: int) -> tuple[np.ndarray, int]:
    """(up to `max_windows` window indices spread evenly over the split, the stride between them)."""
    n = len(WindowDataset(prepared, split))
    if n < 1:
        raise ValueError(f"the {split} split has no complete window")
    stride = max(1, math.ceil(n / max(1, max_windows)))
    return np.arange(0, n, stride), stride


def topu_agreement(model: Informer, prepared: PreparedData, split: str = "test", *, max_windows: int = 256,
                   seed: int = 0, batch_size: int = 32) -> pd.DataFrame:
    """One row per ProbSparse (site, head): site, kind, layer, replica, head, u, L_Q, chance_overlap,
    overlap_at_u with overlap_at_u_lo / _hi (95 % over windows, analysis.intervals), windows."""
    windows, stride = strided_windows(prepared, split, max_windows)
    sparse = [s for s in model.sites if model.attention_layer(s).kind == "prob"]
    if not sparse:
        return pd.DataFrame(columns=["site", "kind", "layer", "replica", "head", "u", "L_Q", "chance_overlap",
                                     "overlap_at_u", "overlap_at_u_lo", "overlap_at_u_hi", "windows"])
    per_window, shapes = [], {}
    patterns = [f"{s.name}.{k}" for s in sparse for k in ("queries", "keys", "scores")]
    for start in range(0, len(windows), batch_size):
        batch = window_batch(prepared, split, windows[start:start + batch_size])
        records = record_forward(model, batch, seed, *patterns)
        columns = []
        for site in sparse:
            Q = records[f"{site.name}.queries"].transpose(1, 2)  # [B, H, L_Q, D]
            K = records[f"{site.name}.keys"].transpose(1, 2)  # [B, H, L_K, D]
            sampled = records[f"{site.name}.scores"].double()  # [B, H, L_Q]
            layer = model.attention_layer(site)
            exact, _ = exact_sparsity(Q, K, layer.causal)
            u = sample_sizes(layer.factor, Q.shape[2], K.shape[2], layer.active_counts)[1]  # as the layer selects
            shapes[site.name] = (u, sampled.shape[-1])
            columns.append(topk_agreement(sampled, exact, u).overlap)  # [B, H]
        per_window.append(np.concatenate(columns, axis=1))  # [B, sites·H]
    values = np.concatenate(per_window)  # [windows, sites·H]
    est, lo, hi = mean_intervals(values, span=data_span(prepared, split, stride))
    H = model.config.n_heads
    rows = []
    for i, site in enumerate(sparse):
        u, L_Q = shapes[site.name]
        for h in range(H):
            j = i * H + h
            rows.append({"site": site.name, "kind": site.kind, "layer": site.layer, "replica": site.replica,
                         "head": h, "u": u, "L_Q": L_Q, "chance_overlap": u / L_Q, "overlap_at_u": est[j],
                         "overlap_at_u_lo": lo[j], "overlap_at_u_hi": hi[j], "windows": len(values)})
    return pd.DataFrame(rows)


__all__ = ["strided_windows", "topu_agreement"]
