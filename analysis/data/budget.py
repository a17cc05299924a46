"""How many windows and training steps a split gives for chosen sizes, and sizes that fit a short series.

A window needs seq_len + pred_len rows; a split of n rows gives n − seq_len − pred_len + 1 windows, and an epoch
⌈train windows / batch size⌉ steps. A 257-row monthly series with the paper's 96/48/24 windows gives 60 train
windows: 2 steps an epoch, a model that has learnt nothing. `window_budget` says so before training, and
`suggest_sizes` proposes the longest encoder window (from a ladder of usual lengths) that leaves enough.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .splits import DataSpec, split_borders

MIN_STEPS_PER_EPOCH = 4  # fewer optimiser steps an epoch than this: the split is too short for the sizes
SEQ_LADDER = (720, 512, 336, 192, 168, 96, 72, 64, 48, 36, 32, 24, 16, 12, 8, 6, 4, 2)
PRED_LADDER = (336, 168, 96, 48, 24, 12, 8, 6, 4, 3, 2, 1)


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


def window_budget(n_rows: int, spec: DataSpec, batch_size: int, *, ett_steps_per_hour: int | None = None
                  ) -> WindowBudget:
    """The windows each split of an `n_rows`-row series gives for `spec` (borders as `prepare` draws them)."""
    borders = split_borders(n_rows, spec.seq_len, ett_steps_per_hour=ett_steps_per_hour)
    need = spec.seq_len + spec.pred_len
    rows = {name: max(0, min(stop, n_rows) - start) for name, (start, stop) in borders.items()}
    windows = {name: max(0, r - need + 1) for name, r in rows.items()}
    steps = math.ceil(windows["train"] / max(1, batch_size))
    return WindowBudget(rows, windows, steps, batch_size, need)


def suggest_sizes(n_rows: int, spec: DataSpec, batch_size: int, *, ett_steps_per_hour: int | None = None
                  ) -> DataSpec | None:
    """The longest seq_len from the ladder (label_len half of it), with the longest pred_len not above the one
    asked for, whose budget is fine; None when even the shortest windows are not enough."""
    for pred_len in [p for p in PRED_LADDER if p <= spec.pred_len] or [1]:
        for seq_len in SEQ_LADDER:
            candidate = DataSpec(spec.target, spec.features, seq_len, max(1, seq_len // 2), pred_len)
            if window_budget(n_rows, candidate, batch_size, ett_steps_per_hour=ett_steps_per_hour).ok:
                return candidate
    return None


__all__ = ["MIN_STEPS_PER_EPOCH", "WindowBudget", "suggest_sizes", "window_budget"]
