"""What to forecast (DataSpec) and the scaled train / val / test splits of a frame (prepare)."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np
import pandas as pd

from informer_lab.analysis.errors import ConfigError, DataError

from .budget import ETT_HOURLY_BORDERS, fitting_sizes, split_borders
from .calendar import n_time_features, time_features
from .reading import SeriesFrame
from .scaling import Scaler, fit_scaler

logger = logging.getLogger(__name__)

Features = Literal["M", "S", "MS"]

ETT_COLUMNS = ("HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT")
ETT_STEPS_PER_HOUR = {"h": 1, "15min": 4}
SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class DataSpec:
    """What to forecast and with which windows.

    target:    the column to forecast (for 'M' every column is forecast; target just goes last)
    features:  'M' all columns in, all out; 'S' target in, target out; 'MS' all in, target out
    seq_len:   encoder window (paper: 96)
    label_len: known steps that open the decoder input (paper: 48); at most seq_len
    pred_len:  forecast horizon (paper: 24)
    """

    target: str
    features: Features = "M"
    seq_len: int = 96
    label_len: int = 48
    pred_len: int = 24

    def __post_init__(self) -> None:
        if not isinstance(self.target, str) or not self.target:
            raise ConfigError("target must be a column name")
        if self.features not in ("M", "S", "MS"):
            raise ConfigError(f"features must be 'M', 'S' or 'MS', got {self.features!r}")
        for field in ("seq_len", "label_len", "pred_len"):
            value = getattr(self, field)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"{field} must be a whole number > 0, got {value!r}")
        if self.label_len > self.seq_len:
            raise ConfigError(
                f"label_len ({self.label_len}) cannot exceed seq_len ({self.seq_len}): the decoder "
                "starts with the last label_len steps of the encoder window"
            )

    def check_columns(self, columns: Sequence[str]) -> None:
        """ConfigError unless the target is one of the numeric `columns`."""
        if self.target not in columns:
            raise ConfigError(f"target column {self.target!r} is not among the numeric columns: {', '.join(columns)}")


def column_layout(value_columns: Sequence[str], spec: DataSpec) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(input columns, target columns). Inputs are the other columns then the target last (as the
    official code orders them), or only the target for 'S'; targets are all inputs for 'M', else
    the target alone — always the last c_out input columns."""
    spec.check_columns(value_columns)
    if spec.features == "S":
        inputs: tuple[str, ...] = (spec.target,)
    else:
        inputs = tuple(c for c in value_columns if c != spec.target) + (spec.target,)
    targets = inputs if spec.features == "M" else (spec.target,)
    return inputs, targets


def ett_steps_per_hour(frame: SeriesFrame) -> int | None:
    """1 or 4 when `frame` is an ETT file (its columns and 'h' / '15min' step) long enough for the
    official borders; None otherwise."""
    steps = ETT_STEPS_PER_HOUR.get(frame.freq)
    if steps is None or sorted(frame.columns) != sorted(ETT_COLUMNS):
        return None
    if frame.n_rows < ETT_HOURLY_BORDERS[-1] * steps:
        logger.info("%s has ETT columns but only %d rows: using the 70/10/20 split", frame.name, frame.n_rows)
        return None
    return steps


@dataclass(frozen=True, eq=False)
class Split:
    """One split's rows, ready for windowing.

    start, stop: its rows [start, stop) in the frame (val and test include seq_len history rows)
    values:      [N, enc_in] float32, scaled input columns
    marks:       [N, n_marks] float32, time features
    timestamps:  [N]
    original:    [N, enc_in] float64, the input columns as read (what a table shows as the truth: a float32 value
                 scaled back gives 24529.0002 for the file's 24529)
    """

    name: str
    start: int
    stop: int
    values: np.ndarray
    marks: np.ndarray
    timestamps: pd.DatetimeIndex
    original: np.ndarray | None = None

    def __len__(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True, eq=False)
class PreparedData:
    """A frame cut into scaled train / val / test splits for one DataSpec.

    columns:        the enc_in input columns, target last ('S': the target only)
    target_columns: the c_out forecast columns, the last c_out of `columns`
    scaler:         fitted on the train rows only, over `columns`
    """

    spec: DataSpec
    columns: tuple[str, ...]
    target_columns: tuple[str, ...]
    scaler: Scaler
    train: Split
    val: Split
    test: Split
    freq: str
    is_ett: bool

    @property
    def enc_in(self) -> int:
        return len(self.columns)

    @property
    def dec_in(self) -> int:
        return len(self.columns)

    @property
    def c_out(self) -> int:
        return len(self.target_columns)

    @property
    def n_marks(self) -> int:
        return n_time_features(self.freq)

    def split(self, name: str) -> Split:
        if name not in SPLITS:
            raise ConfigError(f"unknown split {name!r}; choose train, val or test")
        return getattr(self, name)


def prepare(frame: SeriesFrame, spec: DataSpec) -> PreparedData:
    """Order columns, split in time, fit the scaler on train rows only, and compute time features.

    DataError if any split has fewer than seq_len + pred_len rows (no complete window).
    """
    columns, targets = column_layout(frame.columns, spec)
    ett = ett_steps_per_hour(frame)
    borders = split_borders(frame.n_rows, spec.seq_len, ett_steps_per_hour=ett)
    _check_split_sizes(borders, spec, frame, ett)
    raw = frame.values[list(columns)].to_numpy(dtype="float64")  # [N_all, enc_in]
    train_start, train_stop = borders["train"]
    scaler = fit_scaler(raw[train_start:train_stop], columns)
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = scaler.transform(raw).astype(np.float32)
    broken = ~np.isfinite(scaled).all(axis=0)
    if broken.any():
        column = columns[int(np.argmax(broken))]
        raise DataError(f"column {column!r}: its values do not fit float32 once standardised (they span more than "
                        "float64 can subtract); rescale the column", column=column)
    marks = time_features(frame.timestamps, frame.freq)  # [N_all, F]
    splits = {
        name: Split(name, start, stop, scaled[start:stop], marks[start:stop], frame.timestamps[start:stop],
                    raw[start:stop])
        for name, (start, stop) in borders.items()
    }
    return PreparedData(spec, columns, targets, scaler, splits["train"], splits["val"], splits["test"],
                        frame.freq, ett is not None)


def windows_fit(frame: SeriesFrame, spec: DataSpec) -> bool:
    """Whether every split of `frame` holds a complete window of `spec`: the check `prepare` makes first, without
    scaling anything."""
    ett = ett_steps_per_hour(frame)
    return _short_split(split_borders(frame.n_rows, spec.seq_len, ett_steps_per_hour=ett), spec, frame.n_rows) is None


def _short_split(borders: dict[str, tuple[int, int]], spec: DataSpec, n_rows: int) -> tuple[str, int] | None:
    """The first split with fewer than seq_len + pred_len rows, and its rows; None when every split holds a window."""
    for name, (start, stop) in borders.items():
        have = max(0, min(stop, n_rows) - start)
        if have < spec.seq_len + spec.pred_len:
            return name, have
    return None


def _check_split_sizes(borders: dict[str, tuple[int, int]], spec: DataSpec, frame: SeriesFrame, ett: int | None
                       ) -> None:
    short = _short_split(borders, spec, frame.n_rows)
    if short is None:
        return
    name, have = short
    fit = fitting_sizes(frame.n_rows, spec, freq=frame.freq, ett_steps_per_hour=ett)
    way = (f"use a longer file, or windows that fit it: {fit.flags(32)} (in the app: the button under the "
           "Train form)") if fit is not None else "use a longer file: not even the shortest windows fit"
    raise DataError(
        f"the file is too short for these windows: its {name} split has {have} rows, but a window needs "
        f"seq_len + pred_len = {spec.seq_len} + {spec.pred_len} = {spec.seq_len + spec.pred_len} (of "
        f"{frame.n_rows} rows in all); {way}")


__all__ = ["DataSpec", "ETT_COLUMNS", "ETT_HOURLY_BORDERS", "ETT_STEPS_PER_HOUR", "Features", "PreparedData", "SPLITS",
           "Split", "column_layout", "ett_steps_per_hour", "prepare", "split_borders", "windows_fit"]
