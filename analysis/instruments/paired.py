"""Paired passes: many variants of one model (rows replaced, another attention) forecast the same evenly spread windows
with the same key sample per batch, so every difference between them is paired window by window.

    spread = spread_windows(prepared, "test", max_windows=128, batch_size=32)
    base = paired_forecast(model, spread.batches, seed)                       # [n, pred_len, c_out]
    other = paired_forecast(model, spread.batches, seed, attention="logsparse")
    mean_intervals(per_window_values, span=spread.span)                       # windows within seq_len + pred_len
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from informer_lab.model import Informer, key_generator, replacing_rows

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.compare.verdict import chosen_windows
from informer_lab.analysis.row_memory import data_span
from informer_lab.analysis.learning.windows import WindowDataset, collate
from informer_lab.analysis.errors import count


@dataclass(frozen=True, eq=False)
class SpreadWindows:
    """indices: the windows, evenly spread (one in `stride`); span: how many of them share rows with one (within
    seq_len + pred_len steps: the intervals' dependence); batches: their (Batch, y); truth [n, pred_len, c_out]."""

    split: str
    indices: np.ndarray
    total: int
    stride: int
    span: int
    batches: list
    truth: np.ndarray

    def describe(self) -> str:
        return (f"{len(self.indices):,} of {count(self.total, self.split + ' window')}"
                + (f", one in {self.stride}" if self.stride > 1 else ""))


def spread_windows(prepared: PreparedData, split: str, max_windows: int, batch_size: int) -> SpreadWindows:
    """At most `max_windows` windows spread evenly over `split` (analysis.compare.verdict.chosen_windows), batched."""
    spec = prepared.spec
    dataset = WindowDataset(prepared, split)
    total = len(dataset)
    if total < 1:
        raise ValueError(f"the {split} split has no complete window")
    windows = chosen_windows(total, spec.seq_len, max_windows)
    stride = int(windows[1] - windows[0]) if len(windows) > 1 else 1
    span = data_span(prepared, split, stride)
    batches = [collate([dataset[int(w)] for w in windows[i:i + batch_size]])
               for i in range(0, len(windows), batch_size)]
    truth = np.concatenate([y.numpy() for _, y in batches]).astype(np.float64)
    return SpreadWindows(split, windows, total, stride, span, batches, truth)


@torch.no_grad()
def paired_forecast(model: Informer, batches, seed: int, *, edits: dict | None = None,
                    attention=None) -> np.ndarray:
    """Forecasts of every batch [n, pred_len, c_out] (float64), batch b's key sample drawn from seed·1_000_003 + b,
    so every pass pairs with every other pass of the same seed, whatever rows it replaces (`edits`, see
    model.replacing_rows) or attention it swaps in (`attention`, see Informer.forward)."""
    device = next(model.parameters()).device
    out = []
    for b, (batch, _) in enumerate(batches):
        generator = key_generator(seed * 1_000_003 + b)
        with replacing_rows(edits or {}):
            out.append(model(batch.to(device), generator=generator, attention=attention).float().cpu().numpy())
    return np.concatenate(out).astype(np.float64)


__all__ = ["SpreadWindows", "paired_forecast", "spread_windows"]
