"""How many windows and training steps a split gives for chosen sizes, and sizes that fit a short series.

A window needs seq_len + pred_len rows; a split of n rows gives n − seq_len − pred_len + 1 windows, and an epoch
⌈train windows / batch size⌉ steps. A 257-row monthly series with the paper's 96/48/24 windows gives 60 train
windows: 2 steps an epoch, a model that has learnt nothing. `window_budget` says so before training, and
`fitting_sizes` proposes windows that leave enough: from the series' season when its step has one (an encoder of
two seasons, a horizon of one: 24 / 12 / 12 for months), shrinking the batch before the windows.

The test split also bounds what can be said about a model: its windows share rows, and an interval for a mean over
them needs about `windows_needed(span)` windows (`analysis.intervals`). `WindowBudget.notes` says when it has fewer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from informer_lab.analysis.intervals import overlap_span, windows_needed
from informer_lab.analysis.errors import count
from .calendar import seasonal_period

# Official ETT borders in hours: 12 months train, 4 months val, 4 months test (30-day months).
ETT_HOURLY_BORDERS = (12 * 30 * 24, 16 * 30 * 24, 20 * 30 * 24)  # 8640, 11520, 14400

MIN_STEPS_PER_EPOCH = 4  # fewer optimiser steps an epoch than this: the split is too short for the sizes
MIN_BATCH = 8  # the batch shrinks to this before the windows do; below it only when no windows fit at 8
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
            out.append(f"the train split gives {count(self.windows['train'], 'window')}: {self.steps_per_epoch} "
                       f"step{'s' if self.steps_per_epoch != 1 else ''} an epoch at batch size {self.batch_size} "
                       f"(at least {MIN_STEPS_PER_EPOCH} are needed to learn anything)")
        return out

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def interval_windows(self) -> int:
        """The test windows an honest 95 % interval for a mean over them needs (they share seq_len + pred_len rows
        each with their neighbours)."""
        return windows_needed(overlap_span(self.rows_needed, 0))  # stride 1: the span is the window's rows

    @property
    def notes(self) -> list[str]:
        """What the sizes allow but limit: a test split too short for intervals on its errors."""
        test = self.windows["test"]
        if 1 <= test < self.interval_windows:
            return [f"the test split gives {count(test, 'window')}; an honest 95 % interval over windows that share "
                    f"{self.rows_needed:,} rows needs about {self.interval_windows:,}, so its errors and verdicts will "
                    "carry no interval (a longer file, or shorter windows, give one)"]
        return []


def window_budget(n_rows: int, spec: "DataSpec", batch_size: int, *, ett_steps_per_hour: int | None = None
                  ) -> WindowBudget:
    """The windows each split of an `n_rows`-row series gives for `spec` (borders as `prepare` draws them)."""
    borders = split_borders(n_rows, spec.seq_len, ett_steps_per_hour=ett_steps_per_hour)
    need = spec.seq_len + spec.pred_len
    rows = {name: max(0, min(stop, n_rows) - start) for name, (start, stop) in borders.items()}
    windows = {name: max(0, r - need + 1) for name, r in rows.items()}
    steps = math.ceil(windows["train"] / max(1, batch_size))
    return WindowBudget(rows, windows, steps, batch_size, need)


def _window_choices(spec: "DataSpec", season: int | None) -> list[tuple[int, int, bool]]:
    """(seq_len, pred_len, from the season) in the order they are proposed, none longer than asked: two seasons of
    history and a season's horizon, then one season of history; then the ladders, longest horizon first."""
    preds = [p for p in PRED_LADDER if p <= spec.pred_len] or [1]
    seqs = [s for s in SEQ_LADDER if s <= spec.seq_len] or [2]
    seasonal = []
    if season and season >= 2:
        seasonal = [(seq, min(spec.pred_len, season)) for seq in (2 * season, season) if seq <= spec.seq_len]
    ladder = [(seq, pred) for pred in preds for seq in seqs if (seq, pred) not in seasonal]
    return [(seq, pred, True) for seq, pred in seasonal] + [(seq, pred, False) for seq, pred in ladder]


def _batches(batch_size: int, smallest: int) -> list[int]:
    """batch_size, then the powers of two below it down to `smallest`."""
    below = [1 << k for k in range(batch_size.bit_length() - 1, -1, -1) if smallest <= 1 << k < batch_size]
    return [batch_size, *below]


def suggest_sizes(n_rows: int, spec: "DataSpec", batch_size: int, *, freq: str | None = None,
                  ett_steps_per_hour: int | None = None) -> "DataSpec | None":
    """The first windows of `_window_choices` (label_len half of seq_len) whose budget is fine at `batch_size`;
    None when none is."""
    fit = _first_fit(n_rows, spec, [batch_size], freq, ett_steps_per_hour)
    return None if fit is None else fit.spec


def _first_fit(n_rows: int, spec: "DataSpec", batches: list[int], freq: str | None, ett: int | None
               ) -> "Fit | None":
    for seq_len, pred_len, seasonal in _window_choices(spec, _season(freq)):
        candidate = replace(spec, seq_len=seq_len, label_len=max(1, seq_len // 2), pred_len=pred_len)
        for batch in batches:  # the batch shrinks before the windows do
            if window_budget(n_rows, candidate, batch, ett_steps_per_hour=ett).ok:
                return Fit(candidate, batch, seasonal)
    return None


def _season(freq: str | None) -> int | None:
    if not freq:
        return None
    try:
        return seasonal_period(freq)
    except ValueError:
        return None


@dataclass(frozen=True)
class Fit:
    """Sizes that fit a series: the windows, and the batch size (smaller than the one asked for when the windows
    need it: the batch shrinks before the windows do)."""

    spec: "DataSpec"
    batch_size: int
    seasonal: bool = False  # the windows were set from the series' season (two seasons of history, one ahead)

    def flags(self, asked_batch: int | None = None) -> str:
        """'--seq-len 24 --label-len 12 --pred-len 6' (and '--batch-size 8' when it had to change)."""
        s = self.spec
        text = f"--seq-len {s.seq_len} --label-len {s.label_len} --pred-len {s.pred_len}"
        return text + (f" --batch-size {self.batch_size}" if asked_batch and self.batch_size != asked_batch else "")


def fitting_sizes(n_rows: int, spec: "DataSpec", batch_size: int = 32, *, freq: str | None = None,
                  ett_steps_per_hour: int | None = None) -> Fit | None:
    """Sizes that fit an `n_rows` series with step `freq`: `spec` and `batch_size` themselves when they do; else the
    first windows of `_window_choices` that fit at `batch_size` or a smaller power of two down to MIN_BATCH (the
    batch shrinks before the windows); else at any smaller batch; None when not even one window of 2 + 1 rows fits
    every split.

    A 144-row monthly series at 96 / 48 / 24 and batch 32 gets 24 / 12 / 12 at batch 16 (keeping batch 32 would
    leave windows of 2 / 1 / 2 steps)."""
    if window_budget(n_rows, spec, batch_size, ett_steps_per_hour=ett_steps_per_hour).ok:
        return Fit(spec, batch_size)
    ett = ett_steps_per_hour
    return (_first_fit(n_rows, spec, _batches(batch_size, min(MIN_BATCH, batch_size)), freq, ett)
            or _first_fit(n_rows, spec, _batches(batch_size, 1), freq, ett))


__all__ = ["ETT_HOURLY_BORDERS", "Fit", "MIN_BATCH", "MIN_STEPS_PER_EPOCH", "WindowBudget", "fitting_sizes", "split_borders",
           "suggest_sizes", "window_budget"]
