"""How many windows and training steps a split gives for chosen sizes, and sizes that fit a short series.

A window needs seq_len + pred_len rows; a split of n rows gives n − seq_len − pred_len + 1 windows, and an epoch
⌈train windows / batch size⌉ steps. A 257-row monthly series with the paper's 96/48/24 windows gives 60 train
windows: 2 steps an epoch, a model that has learnt nothing. `window_budget` says so before training, and
`suggest_sizes` proposes the longest encoder window (from a ladder of usual lengths) that leaves enough.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from dataclasses import replace

# Official ETT borders in hours: 12 months train, 4 months val, 4 months test (30-day months).
ETT_HOURLY_BORDERS = (12 * 30 * 24, 16 * 30 * 24, 20 * 30 * 24)  # 8640, 11520, 14400

MIN_STEPS_PER_EPOCH = 4  # fewer optimiser steps an epoch than this: the split is too short for the sizes
SEQ_LADDER = (720, 512, 336, 192, 168, 96, 72, 64, 48, 36, 32, 24, 16, 12, 8, 6, 4, 2)
PRED_LADDER = (336, 168, 96, 48, 24, 12, 8, 6, 4, 3, 2, 1)


def split_borders(n_rows: int, seq_len: int, *, ett_steps_per_hour: int | None = None) -> dict[str, tuple[int, int]]:
    """Row ranges [start, stop) of train / val / test, in time order.

    ETT (`ett_steps_per_hour` 1 or 4): train [0, 8640), val [8640 - seq_len, 11520),
    test [11520 - seq_len, 14400) in hours, times the steps per hour. Otherwise 70 / 10 / 20 by row
    count. Val and test start seq_len rows early so that their first window's history is real.
    """
    if ett_steps_per_hour is not None:
        train_end, val_end, test_end = (b * ett_steps_per_hour for b in ETT_HOURLY_BORDERS)
    else:
        num_train = int(n_rows * 0.7)
        num_test = int(n_rows * 0.2)
        num_val = n_rows - num_train - num_test
        train_end, val_end, test_end = num_train, num_train + num_val, n_rows
    return {
        "train": (0, train_end),
        "val": (max(0, train_end - seq_len), val_end),
        "test": (max(0, val_end - seq_len), test_end),
    }


@dataclass(frozen=True)
class WindowBudget:
    """Rows and windows per split for one DataSpec, and the training steps an epoch at `batch_size`."""

    rows: dict[str, int]
    windows: dict[str, int]
    steps_per_epoch: int
    batch_size: int
    rows_needed: int  # seq_len + pred_len: the rows of one window

    @property
    def problems(self) -> list[str]:
        out = [f"the {name} split has no complete window ({self.rows[name]:,} rows for windows of "
               f"{self.rows_needed:,})" for name, n in self.windows.items() if n < 1]
        if self.windows["train"] >= 1 and self.steps_per_epoch < MIN_STEPS_PER_EPOCH:
            out.append(f"the train split gives {self.windows['train']:,} windows: {self.steps_per_epoch} "
                       f"step{'s' if self.steps_per_epoch != 1 else ''} an epoch at batch size {self.batch_size} "
                       f"(at least {MIN_STEPS_PER_EPOCH} are needed to learn anything)")
        return out

    @property
    def ok(self) -> bool:
        return not self.problems


def window_budget(n_rows: int, spec: "DataSpec", batch_size: int, *, ett_steps_per_hour: int | None = None
                  ) -> WindowBudget:
    """The windows each split of an `n_rows`-row series gives for `spec` (borders as `prepare` draws them)."""
    borders = split_borders(n_rows, spec.seq_len, ett_steps_per_hour=ett_steps_per_hour)
    need = spec.seq_len + spec.pred_len
    rows = {name: max(0, min(stop, n_rows) - start) for name, (start, stop) in borders.items()}
    windows = {name: max(0, r - need + 1) for name, r in rows.items()}
    steps = math.ceil(windows["train"] / max(1, batch_size))
    return WindowBudget(rows, windows, steps, batch_size, need)


def suggest_sizes(n_rows: int, spec: "DataSpec", batch_size: int, *, ett_steps_per_hour: int | None = None
                  ) -> "DataSpec | None":
    """The longest seq_len from the ladder (label_len half of it), with the longest pred_len not above the one
    asked for, whose budget is fine at `batch_size`; None when even the shortest windows are not enough."""
    for pred_len in [p for p in PRED_LADDER if p <= spec.pred_len] or [1]:
        for seq_len in SEQ_LADDER:
            candidate = replace(spec, seq_len=seq_len, label_len=max(1, seq_len // 2), pred_len=pred_len)
            if window_budget(n_rows, candidate, batch_size, ett_steps_per_hour=ett_steps_per_hour).ok:
                return candidate
    return None


@dataclass(frozen=True)
class Fit:
    """Sizes that fit a series: the windows, and the batch size (smaller than the one asked for only when no
    window leaves enough steps an epoch at it)."""

    spec: "DataSpec"
    batch_size: int

    def flags(self, asked_batch: int | None = None) -> str:
        """'--seq-len 24 --label-len 12 --pred-len 6' (and '--batch-size 8' when it had to change)."""
        s = self.spec
        text = f"--seq-len {s.seq_len} --label-len {s.label_len} --pred-len {s.pred_len}"
        return text + (f" --batch-size {self.batch_size}" if asked_batch and self.batch_size != asked_batch else "")


def fitting_sizes(n_rows: int, spec: "DataSpec", batch_size: int = 32, *, ett_steps_per_hour: int | None = None
                  ) -> Fit | None:
    """Sizes that fit an `n_rows` series: `spec` and `batch_size` themselves when they do, else `suggest_sizes` at
    `batch_size`, else at the largest smaller power of two that lets some window fit; None when not even one
    window of 2 + 1 rows fits every split."""
    if window_budget(n_rows, spec, batch_size, ett_steps_per_hour=ett_steps_per_hour).ok:
        return Fit(spec, batch_size)
    smaller = (1 << k for k in range(batch_size.bit_length() - 1, -1, -1))
    for batch in [batch_size, *(b for b in smaller if b < batch_size)]:
        proposal = suggest_sizes(n_rows, spec, batch, ett_steps_per_hour=ett_steps_per_hour)
        if proposal is not None:
            return Fit(proposal, batch)
    return None


__all__ = ["ETT_HOURLY_BORDERS", "Fit", "MIN_STEPS_PER_EPOCH", "WindowBudget", "fitting_sizes", "split_borders",
           "suggest_sizes", "window_budget"]
