"""The data pipeline, tensor half: Informer windows and batches over the splits of `analysis.data`.

    WindowDataset / split_batches          (Batch, y) windows for training and evaluation
    limit_windows(prepared, split, n)      the same data with a split cut to its first n windows
    forecast_batch(frame, spec, scaler)    the Batch that forecasts past the last row

Shapes use the paper's names (see `analysis.data`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset

from informer_lab.analysis.data import DataSpec, PreparedData, Scaler, SeriesFrame, future_timestamps, time_features
from informer_lab.analysis.errors import ConfigError, DataError
from informer_lab.model.batch import Batch


def decoder_values(history: torch.Tensor, label_len: int, pred_len: int) -> torch.Tensor:
    """[..., L, C] known values → [..., label_len + pred_len, C]: the last label_len rows, then zeros."""
    known = history[..., history.shape[-2] - label_len:, :]  # [..., label_len, C]
    zeros = history.new_zeros(*history.shape[:-2], pred_len, history.shape[-1])  # [..., pred_len, C]
    return torch.cat([known, zeros], dim=-2)


class WindowDataset(Dataset):
    """Sliding windows over one split; item i starts at split row i.

    item → (x_enc [seq_len, enc_in], mark_enc [seq_len, F],
            x_dec [label_len + pred_len, dec_in], mark_dec [label_len + pred_len, F],
            y [pred_len, c_out]) float32, where x_dec is the last label_len rows of x_enc then
    pred_len zeros, mark_dec carries the true future marks, and y is the true future of the
    target columns.
    """

    def __init__(self, prepared: PreparedData, split: str) -> None:
        part = prepared.split(split)
        self.spec = prepared.spec
        self.c_out = prepared.c_out
        self.values = torch.from_numpy(np.ascontiguousarray(part.values, dtype=np.float32))  # [N, C]
        self.marks = torch.from_numpy(np.ascontiguousarray(part.marks, dtype=np.float32))  # [N, F]
        self.timestamps = part.timestamps

    def __len__(self) -> int:
        return max(0, len(self.values) - self.spec.seq_len - self.spec.pred_len + 1)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, ...]:
        if not 0 <= i < len(self):
            raise IndexError(f"window {i} out of range [0, {len(self)})")
        seq_len, label_len, pred_len = self.spec.seq_len, self.spec.label_len, self.spec.pred_len
        enc_end = i + seq_len
        x_enc = self.values[i:enc_end]  # [seq_len, C]
        mark_enc = self.marks[i:enc_end]  # [seq_len, F]
        x_dec = decoder_values(x_enc, label_len, pred_len)  # [label_len + pred_len, C]
        mark_dec = self.marks[enc_end - label_len:enc_end + pred_len]  # [label_len + pred_len, F]
        y = self.values[enc_end:enc_end + pred_len, -self.c_out:]  # [pred_len, c_out]
        return x_enc, mark_enc, x_dec, mark_dec, y

    def window_timestamps(self, i: int) -> pd.DatetimeIndex:
        """[pred_len] timestamps of window i's forecast."""
        start = i + self.spec.seq_len
        return self.timestamps[start:start + self.spec.pred_len]


def collate(items: Sequence[tuple[torch.Tensor, ...]]) -> tuple[Batch, torch.Tensor]:
    """Stack WindowDataset items into (Batch [B, ...], y [B, pred_len, c_out])."""
    x_enc, mark_enc, x_dec, mark_dec, y = (torch.stack(parts) for parts in zip(*items))
    return Batch(x_enc, mark_enc, x_dec, mark_dec), y


def split_batches(prepared: PreparedData, split: str, batch_size: int, *, shuffle: bool = False,
                  generator: torch.Generator | None = None, drop_last: bool = False) -> DataLoader:
    """A DataLoader of (Batch, y) over one split; single-process, shuffled only with `generator`'s draws."""
    if batch_size <= 0:
        raise ConfigError(f"batch_size must be > 0, got {batch_size}")
    return DataLoader(WindowDataset(prepared, split), batch_size=batch_size, shuffle=shuffle,
                      generator=generator, drop_last=drop_last, collate_fn=collate, num_workers=0)


def limit_windows(prepared: PreparedData, split: str, max_windows: int | None) -> PreparedData:
    """The same data with `split` cut to its first `max_windows` windows (None, or more than it has: unchanged)."""
    if max_windows is None:
        return prepared
    if max_windows < 1:
        raise ConfigError(f"max_windows must be at least 1, got {max_windows}")
    part = prepared.split(split)
    rows = max_windows + prepared.spec.seq_len + prepared.spec.pred_len - 1  # window i reads rows i … i+rows−1
    if rows >= len(part.values):
        return prepared
    cut = replace(part, stop=part.start + rows, values=part.values[:rows], marks=part.marks[:rows],
                  timestamps=part.timestamps[:rows])
    return replace(prepared, **{split: cut})


def forecast_batch(frame: SeriesFrame, spec: DataSpec, scaler: Scaler) -> tuple[Batch, pd.DatetimeIndex]:
    """The Batch (B = 1) that forecasts the pred_len steps after the frame's last row, and their timestamps.

    The input columns are `scaler.columns` (the model's column schema, target last); they must all
    be in the frame. x_enc is the last seq_len rows scaled with `scaler`; mark_dec ends with the
    marks of `future_timestamps`.
    """
    columns = scaler.columns
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(
            f"{frame.name} lacks column {missing[0]!r} that the model was trained on "
            f"(it needs {', '.join(columns)}; the file has {', '.join(frame.columns)})",
            column=missing[0],
        )
    if columns[-1] != spec.target or (spec.features == "S" and len(columns) != 1):
        raise ConfigError(f"the scaler's columns ({', '.join(columns)}) do not fit target {spec.target!r} "
                          f"with features {spec.features!r}")
    if frame.n_rows < spec.seq_len:
        raise DataError(f"forecasting needs the last seq_len = {spec.seq_len} rows, but {frame.name} has {frame.n_rows}")
    history_times = frame.timestamps[-spec.seq_len:]
    future = future_timestamps(frame.timestamps[-1], frame.freq, spec.pred_len)
    history = scaler.transform(frame.values[list(columns)].to_numpy()[-spec.seq_len:])  # [seq_len, C]
    x_enc = torch.as_tensor(history, dtype=torch.float32)
    x_dec = decoder_values(x_enc, spec.label_len, spec.pred_len)
    mark_enc = torch.from_numpy(time_features(history_times, frame.freq))
    mark_dec = torch.from_numpy(time_features(history_times[-spec.label_len:].append(future), frame.freq))
    batch = Batch(x_enc[None], mark_enc[None], x_dec[None], mark_dec[None])  # each [1, L, ·]
    return batch, future
