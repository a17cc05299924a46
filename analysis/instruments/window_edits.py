"""Edits of one encoder window, in the data's original units: presets, the CLI syntax, and a hand-edited table.

An edit acts on the window's [seq_len, enc_in] values in ORIGINAL units (what the user sees); the edited
cells are then scaled with the model's scaler. Cells an edit leaves equal keep their exact scaled value, so an
edit that changes nothing changes nothing, bit for bit. The decoder's known part is the last label_len rows
of the encoder window (`analysis.learning.windows.decoder_values`): it is rebuilt from the edited window, so an edit
there reaches the model twice, as it would in data. Time marks are never edited (they are calendar facts).

Presets (CLI syntax `kind:key=value,...`; steps t are 0-based positions in the encoder window; `column`
defaults to the target; sizes are in units of the column's TRAINING std unless `units=abs`, then in the
column's own units):

    none                                   nothing
    spike:t=40,size=3                      x[t] += size
    shift:t=60,size=-1                     x[s] += size for s ≥ t (a level shift)
    scale:factor=1.5[,t=0][,around=mean]   x[s] = m + factor·(x[s] − m) for s ≥ t, m = mean of x[t:]
                                           (around=zero: x[s] = factor·x[s])
    trend:slope=0.1[,t=0]                  x[s] += slope·(s − t) for s ≥ t (slope per step)
    zero:column=NAME[,t=0]                 x[s] = the column's training mean for s ≥ t ("zeroed": 0 once scaled)
    shuffle:column=NAME[,seed=0]           the column's values permuted over time (numpy seeded permutation)
    paste:window=N,t=..,length=..[,column=NAME]   rows t … t+length−1 copied from window N of the same split
                                           (every input column unless `column` is given)

A hand-edited window is `Edit("table", table=frame)`: a DataFrame with seq_len rows and every input column
(other columns, e.g. timestamp, are ignored), such as `window_frame(...)` returns.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Batch

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.learning.windows import WindowDataset, decoder_values

# kind → {parameter: (type, required)}
EDIT_KINDS: dict[str, dict[str, tuple[str, bool]]] = {
    "none": {},
    "spike": {"t": ("int", True), "size": ("float", True), "column": ("str", False), "units": ("units", False)},
    "shift": {"t": ("int", True), "size": ("float", True), "column": ("str", False), "units": ("units", False)},
    "scale": {"factor": ("float", True), "t": ("int", False), "column": ("str", False), "around": ("around", False)},
    "trend": {"slope": ("float", True), "t": ("int", False), "column": ("str", False), "units": ("units", False)},
    "zero": {"column": ("str", True), "t": ("int", False)},
    "shuffle": {"column": ("str", True), "seed": ("int", False)},
    "paste": {"window": ("int", True), "t": ("int", True), "length": ("int", True), "column": ("str", False)},
}
CHOICES = {"units": ("std", "abs"), "around": ("mean", "zero")}


@dataclass(frozen=True, eq=False)
class Edit:
    """One edit of an encoder window (see the module docstring). Parameters a kind does not take stay None."""

    kind: str = "none"
    t: int | None = None
    size: float | None = None
    factor: float | None = None
    slope: float | None = None
    column: str | None = None
    units: str | None = None
    around: str | None = None
    seed: int | None = None
    window: int | None = None
    length: int | None = None
    table: pd.DataFrame | None = None

    def describe(self) -> str:
        """The CLI text of this edit ('table' for a hand-edited window)."""
        if self.kind in ("none", "table"):
            return self.kind
        given = [f"{name}={_text(getattr(self, name))}" for name in EDIT_KINDS[self.kind]
                 if getattr(self, name) is not None]
        return f"{self.kind}:{','.join(given)}"


def _text(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def check_edit(edit: Edit) -> None:
    """ConfigError when the kind is unknown, a parameter it needs is missing or one it does not take is set."""
    if edit.kind == "table":
        if not isinstance(edit.table, pd.DataFrame):
            raise ConfigError("a 'table' edit needs the edited window as a DataFrame")
        return
    if edit.kind not in EDIT_KINDS:
        raise ConfigError(f"unknown edit {edit.kind!r}; choose {', '.join(EDIT_KINDS)}")
    takes = EDIT_KINDS[edit.kind]
    for name in ("t", "size", "factor", "slope", "column", "units", "around", "seed", "window", "length"):
        value = getattr(edit, name)
        if name in takes and takes[name][1] and value is None:
            raise ConfigError(f"edit {edit.describe()!r}: {edit.kind} needs {name}")
        if name not in takes and value is not None:
            raise ConfigError(f"edit {edit.kind!r} takes {', '.join(takes) or 'no parameters'}, not {name}")
        if name in CHOICES and value is not None and value not in CHOICES[name]:
            raise ConfigError(f"edit {edit.describe()!r}: {name} must be {' or '.join(CHOICES[name])}, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"edit {edit.describe()!r}: {name} must be a finite number, got {value}")
        if name in MINIMUM and value is not None and (not isinstance(value, (int, np.integer)) or value < MINIMUM[name]):
            raise ConfigError(f"edit {edit.describe()!r}: {name} must be a whole number ≥ {MINIMUM[name]}, got {value!r}")


MINIMUM = {"t": 0, "seed": 0, "window": 0, "length": 1}  # whole-number parameters and their least value


class _Shown(str):
    """An edit's text as messages echo it: its start, so a 10-KB edit shows what it begins with."""

    def __repr__(self) -> str:
        return repr(str(self)) if len(self) <= 60 else f"{str(self)[:60]!r}… ({len(self):,} characters)"


def parse_edit(text: str) -> Edit:
    """'spike:t=40,size=3' → Edit. ConfigError naming the bad part (kind, key, or value)."""
    text = _Shown(str(text).strip())
    kind, _, rest = text.partition(":")
    kind = kind.strip().lower()
    if kind not in EDIT_KINDS:
        raise ConfigError(f"edit {text!r}: unknown edit {_Shown(kind)!r}; choose {', '.join(EDIT_KINDS)}")
    takes, values = EDIT_KINDS[kind], {}
    for part in (p.strip() for p in rest.split(",")) if rest.strip() else ():
        key, eq, raw = part.partition("=")
        key, raw = key.strip().lower(), raw.strip()
        if not eq or not key or not raw:
            raise ConfigError(f"edit {text!r}: {_Shown(part)!r} is not key=value")
        if key not in takes:
            raise ConfigError(f"edit {text!r}: {kind} takes {', '.join(takes) or 'no parameters'}, not "
                              f"{_Shown(key)!r}")
        if key in values:
            raise ConfigError(f"edit {text!r}: {key} is given twice")
        values[key] = _parse_value(text, key, raw, takes[key][0])
    missing = [name for name, (_, required) in takes.items() if required and name not in values]
    if missing:
        raise ConfigError(f"edit {text!r}: {kind} needs {', '.join(missing)}")
    return Edit(kind, **values)


def _parse_value(text: str, key: str, raw: str, kind: str):
    if kind == "int":
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"edit {text!r}: {key} must be a whole number, got {_Shown(raw)!r}") from None
        if value < MINIMUM.get(key, value):
            raise ConfigError(f"edit {text!r}: {key} must be a whole number ≥ {MINIMUM[key]}, got {value}")
        return value
    if kind == "float":
        try:
            value = float(raw)
        except ValueError:
            value = float("nan")
        if not math.isfinite(value):
            raise ConfigError(f"edit {text!r}: {key} must be a finite number, got {_Shown(raw)!r}")
        return value
    if kind in CHOICES and raw.lower() not in CHOICES[kind]:
        raise ConfigError(f"edit {text!r}: {key} must be {' or '.join(CHOICES[kind])}, got {_Shown(raw)!r}")
    return raw.lower() if kind in CHOICES else raw


# --------------------------------------------------------------------------------------------
# Applying an edit
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class EditedWindow:
    """One window before and after an edit. [seq_len, enc_in] each, columns in `prepared.columns` order.

    original / edited:        float64, original units
    x_enc / x_enc_edited:     float32 tensors, scaled (what the model reads); unchanged cells keep their exact value
    changed:                  bool, the cells the edit changed
    """

    original: np.ndarray
    edited: np.ndarray
    x_enc: torch.Tensor
    x_enc_edited: torch.Tensor
    changed: np.ndarray


def window_frame(prepared: PreparedData, split: str, window: int) -> pd.DataFrame:
    """Window `window`'s encoder rows in original units: timestamp, then every input column (edit it, pass it
    back as Edit("table", table=...))."""
    dataset = _dataset(prepared, split, window)
    x_enc = dataset[window][0].numpy()
    frame = pd.DataFrame(prepared.scaler.inverse_transform(x_enc.astype(np.float64), list(prepared.columns)),
                         columns=list(prepared.columns))
    frame.insert(0, "timestamp", prepared.split(split).timestamps[window:window + prepared.spec.seq_len])
    return frame


def _dataset(prepared: PreparedData, split: str, window: int) -> WindowDataset:
    dataset = WindowDataset(prepared, split)
    if not 0 <= int(window) < len(dataset):
        raise ConfigError(f"window {window} is outside the {split} split's {len(dataset)} windows")
    return dataset


def apply_edit(prepared: PreparedData, split: str, window: int, edit: Edit) -> EditedWindow:
    """Window `window` of `split` with `edit` applied (module docstring). ConfigError for an edit that does not fit."""
    check_edit(edit)
    dataset = _dataset(prepared, split, window)
    columns, scaler = list(prepared.columns), prepared.scaler
    x_enc = dataset[window][0]  # [seq_len, enc_in] float32, scaled
    original = scaler.inverse_transform(x_enc.numpy().astype(np.float64), columns)
    edited = _edited_values(prepared, dataset, original, edit)
    if not np.isfinite(edited).all():
        raise ConfigError(f"edit {edit.describe()!r} makes values that are not finite numbers")
    changed = edited != original
    scaled = torch.as_tensor(scaler.transform(edited, columns), dtype=torch.float32)
    x_edited = torch.where(torch.as_tensor(changed), scaled, x_enc)
    for array in (original, edited, changed):
        array.setflags(write=False)
    return EditedWindow(original, edited, x_enc, x_edited, changed)


def _edited_values(prepared: PreparedData, dataset: WindowDataset, original: np.ndarray, e: Edit) -> np.ndarray:
    L, columns = original.shape[0], list(prepared.columns)
    values = original.copy()
    if e.kind == "none":
        return values
    if e.kind == "table":
        return _table_values(e.table, columns, L)
    label = e.describe()
    if e.t is not None and not 0 <= e.t < L:
        raise ConfigError(f"edit {label!r}: t={e.t} is outside the encoder window's steps 0 … {L - 1}")
    column = e.column if e.column is not None else prepared.spec.target
    if column not in columns:
        raise ConfigError(f"edit {label!r}: column {column!r} is not an input column of this model "
                          f"(inputs: {', '.join(columns)})")
    c = columns.index(column)
    std = 1.0 if e.units == "abs" else float(prepared.scaler.std[c])
    t = e.t or 0
    x = values[:, c]  # a view: edits land in `values`
    if e.kind == "spike":
        x[t] += e.size * std
    elif e.kind == "shift":
        x[t:] += e.size * std
    elif e.kind == "scale":
        centre = 0.0 if e.around == "zero" else x[t:].mean()
        x[t:] = centre + e.factor * (x[t:] - centre)
    elif e.kind == "trend":
        x[t:] += e.slope * std * np.arange(L - t)
    elif e.kind == "zero":
        x[t:] = float(prepared.scaler.mean[c])
    elif e.kind == "shuffle":
        x[:] = x[np.random.default_rng(e.seed or 0).permutation(L)]
    elif e.kind == "paste":
        if e.length < 1 or e.t + e.length > L:
            raise ConfigError(f"edit {label!r}: t + length must stay within the window's {L} steps "
                              f"(t={e.t}, length={e.length})")
        if not 0 <= e.window < len(dataset):
            raise ConfigError(f"edit {label!r}: window {e.window} is outside the split's {len(dataset)} windows")
        source = prepared.scaler.inverse_transform(dataset[e.window][0].numpy().astype(np.float64), columns)
        cols = [c] if e.column is not None else list(range(len(columns)))
        values[e.t:e.t + e.length, cols] = source[e.t:e.t + e.length, cols]
    return values


def _table_values(table: pd.DataFrame, columns: list[str], L: int) -> np.ndarray:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ConfigError(f"the edited window lacks column {missing[0]!r} (it needs {', '.join(columns)})")
    if len(table) != L:
        raise ConfigError(f"the edited window has {len(table)} rows, the model's window has seq_len = {L}")
    values = table[columns].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.argwhere(~np.isfinite(values))
    if len(bad):
        row, col = bad[0]
        raise ConfigError(f"the edited window's {columns[col]!r} at row {row} is not a finite number")
    return values


def edited_batches(prepared: PreparedData, split: str, window: int, edit: Edit) -> tuple[Batch, Batch, EditedWindow]:
    """(original Batch, edited Batch, EditedWindow) of one window (B = 1). The edited x_dec is rebuilt from the
    edited x_enc (its last label_len rows, then zeros); the marks are the window's own."""
    e = apply_edit(prepared, split, window, edit)
    _, mark_enc, x_dec, mark_dec, _ = _dataset(prepared, split, window)[window]
    spec = prepared.spec
    x_dec_edited = decoder_values(e.x_enc_edited, spec.label_len, spec.pred_len)
    original = Batch(e.x_enc[None], mark_enc[None], x_dec[None], mark_dec[None])
    edited = Batch(e.x_enc_edited[None], mark_enc[None], x_dec_edited[None], mark_dec[None])
    return original, edited, e


__all__ = ["EDIT_KINDS", "Edit", "EditedWindow", "apply_edit", "check_edit", "edited_batches", "parse_edit",
           "window_frame"]
