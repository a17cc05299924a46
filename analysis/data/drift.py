"""How far a split's level leaves the train split's range: the mark of a trending series, which the train split's
scaler maps outside every value the model saw while training (the remedy: reversible instance normalisation)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .budget import split_borders
from .splits import PreparedData

OUT_OF_RANGE = 0.2  # a split with at least this share of its forecast rows outside the train range has left it


@dataclass(frozen=True)
class RangeDeparture:
    """Shares of `split`'s forecast rows whose target (any target column) lies above the train split's highest
    value, and below its lowest."""

    split: str
    above: float
    below: float

    @property
    def outside(self) -> float:
        return self.above + self.below

    @property
    def left(self) -> bool:
        return self.outside >= OUT_OF_RANGE

    def describe(self) -> str:
        parts = [f"{share:.0%} of its rows {where} the train split's {end} value"
                 for share, where, end in ((self.above, "above", "highest"), (self.below, "below", "lowest"))
                 if share > 0]
        return f"the {self.split} split's target leaves the train range: " + " and ".join(parts)


def range_departure(prepared: PreparedData, split: str = "test") -> RangeDeparture:
    """The rows `split`'s windows forecast (after its first seq_len rows of history) against the train rows."""
    k = len(prepared.target_columns)
    values = prepared.split(split).values
    rows = values[min(prepared.spec.seq_len, max(0, len(values) - 1)):, -k:]
    return _departure(prepared.train.values[:, -k:], rows, split)


def column_departure(values: np.ndarray, seq_len: int, split: str = "test") -> RangeDeparture:
    """The same for one column of a whole series (before any model: the Train form's hint), split as `prepare`
    splits it (70 / 10 / 20 by rows)."""
    values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
    borders = split_borders(len(values), seq_len)
    (_, train_end), (start, stop) = borders["train"], borders[split]
    return _departure(values[:train_end], values[start + seq_len:stop] if start + seq_len < stop else values[:0],
                      split)


def _departure(train: np.ndarray, rows: np.ndarray, split: str) -> RangeDeparture:
    train, rows = (a[np.isfinite(a).all(axis=1)] for a in (train, rows))
    if not len(rows) or not len(train):
        return RangeDeparture(split, 0.0, 0.0)
    high, low = train.max(axis=0), train.min(axis=0)
    above = (rows > high).any(axis=1)
    below = (rows < low).any(axis=1) & ~above
    return RangeDeparture(split, float(above.mean()), float(below.mean()))


__all__ = ["OUT_OF_RANGE", "RangeDeparture", "column_departure", "range_departure"]
