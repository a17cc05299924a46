"""A generated file's answer (analysis.planted.synth) put against a model's windows: the Bayes forecasts of those windows,
the encoder cells that hold the planted (column, lag) pairs, and where the planted events sit.

Rows. A window w of a split reads split rows w … w + seq_len − 1 and forecasts the pred_len rows after them; split
row r is row `split.start + r` of the file, the row numbering of the answer's events and regimes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from informer_lab.analysis.data import PreparedData, SeriesFrame
from informer_lab.analysis.errors import DataError
from informer_lab.analysis.planted.synth import Answer


def check_fits(answer: Answer, frame: SeriesFrame) -> None:
    """DataError unless `frame` is the file the answer belongs to (its columns and length)."""
    missing = [c for c in answer.columns if c not in frame.columns]
    if missing:
        raise DataError(f"{frame.name} lacks column {missing[0]!r} of the answer (it has {', '.join(frame.columns)}): "
                        "this answer belongs to another file")
    if frame.n_rows != answer.spec.get("rows", frame.n_rows):
        raise DataError(f"{frame.name} has {frame.n_rows:,} rows, the answer's file {answer.spec['rows']:,}: "
                        "this answer belongs to another file")


def _regime_at(answer: Answer, rows: np.ndarray) -> np.ndarray:
    """The regime (0 = A, 1 = B) in force at each file row (0 everywhere without regimes)."""
    if not answer.regime_of_row:
        return np.zeros(len(rows), dtype=np.int64)
    firsts = np.array([r for r, _ in answer.regime_of_row])
    regimes = np.array([g for _, g in answer.regime_of_row])
    return regimes[np.searchsorted(firsts, rows, side="right") - 1]


def bayes_forecasts(answer: Answer, frame: SeriesFrame, first_rows: np.ndarray, pred_len: int) -> dict[str, np.ndarray]:
    """The Bayes forecast of every column for the pred_len rows from each of `first_rows` (file rows), in the
    file's units: the equations iterated with future innovations at their mean, 0 (a regime's as in force, known).
    Needs every lag's row to exist (first_row − lag ≥ 0). → column → [n, pred_len]."""
    order = [e.column for e in answer.equations]
    raw = {c: frame.values[c].to_numpy(dtype=np.float64) for c in order}
    first_rows = np.asarray(first_rows, dtype=np.int64)
    n = len(first_rows)
    lags = [t.lag for e in (*answer.equations, *answer.regimes) for t in e.terms]
    if n and first_rows.min() - max(lags) < 0:
        raise ValueError("a forecast start lies within the longest lag of the file's first row")
    out = {c: np.zeros((n, pred_len)) for c in order}

    def value(column: str, h: int, lag: int) -> np.ndarray:  # column at row first + h − lag (h 0-based)
        back = h - lag
        return out[column][:, back] if back >= 0 else raw[column][first_rows + back]

    for h in range(pred_len):
        regime = _regime_at(answer, first_rows + h)
        for e in answer.equations:
            if answer.regimes and e.column == answer.target:
                t_a, t_b = answer.regimes[0].terms[0], answer.regimes[1].terms[0]
                out[e.column][:, h] = np.where(regime == 0, t_a.coef * value(e.column, h, t_a.lag),
                                               t_b.coef * value(e.column, h, t_b.lag))
            else:
                out[e.column][:, h] = sum(t.coef * value(t.column, h, t.lag) for t in e.terms)
    return out


def bayes_window_forecasts(answer: Answer, frame: SeriesFrame, prepared: PreparedData, split: str,
                           windows: np.ndarray) -> np.ndarray:
    """[n, pred_len, c_out] the Bayes forecasts of the given windows' target columns, standardised with the model's
    scaler (comparable with its forecasts)."""
    spec = prepared.spec
    first_rows = prepared.split(split).start + np.asarray(windows) + spec.seq_len
    made = bayes_forecasts(answer, frame, first_rows, spec.pred_len)
    targets = list(prepared.target_columns)
    missing = [c for c in targets if c not in made]
    if missing:
        raise DataError(f"the model forecasts column {missing[0]!r}, which the answer does not describe")
    stacked = np.stack([made[c] for c in targets], axis=-1)  # [n, pred_len, c_out]
    return prepared.scaler.transform(stacked.reshape(-1, len(targets)), targets).reshape(stacked.shape)


@dataclass(frozen=True)
class PlantedCells:
    """The encoder cells of one (window, step) forecast that the answer makes relevant."""

    positions: tuple[int, ...]  # 0 … seq_len − 1
    columns: tuple[int, ...]  # indices into prepared.columns
    coefs: tuple[float, ...]
    lags: tuple[int, ...]


def planted_cells(answer: Answer, prepared: PreparedData, split: str, window: int, step: int) -> PlantedCells | None:
    """The cells (position, input column) whose value the Bayes forecast of `step` (1-based) reads directly: lag
    ℓ of the target's equation in force at that row, at position seq_len − 1 + step − ℓ. None when one of them
    lies outside the window, is no input of the model, or a regime switch lies between the cell and the forecast."""
    spec = prepared.spec
    start = prepared.split(split).start
    row = start + window + spec.seq_len + step - 1  # the forecast row
    regime = int(_regime_at(answer, np.array([row]))[0])
    terms = answer.regimes[regime].terms if answer.regimes else \
        next(e for e in answer.equations if e.column == answer.target).terms
    columns = list(prepared.columns)
    cells = []
    for t in terms:
        position = spec.seq_len - 1 + step - t.lag
        if not 0 <= position < spec.seq_len or t.column not in columns:
            return None
        if answer.regimes and int(_regime_at(answer, np.array([row - t.lag]))[0]) != regime:
            return None
        cells.append((position, columns.index(t.column), t.coef, t.lag))
    return PlantedCells(*(tuple(x) for x in zip(*cells))) if cells else None


def receptive_radius(config) -> int:
    """How many steps either side of a cell the model's value embedding mixes into one token: 1 for the circular
    Conv1d of kernel 3 (`embedding="conv"`), 0 for the lags embedding (a Linear over each step's own values). A
    planted (column, lag) is found where an instrument points within this many steps of it."""
    return 1 if getattr(config, "embedding", "conv") == "conv" else 0


def probe_steps(answer: Answer, pred_len: int) -> tuple[int, ...]:
    """Horizon steps at which every planted lag is read from the window: 1, the middle and the last step up to the
    shortest lag."""
    shortest = min(r["lag"] for r in answer.relevant)
    last = min(pred_len, shortest)
    return tuple(sorted({1, max(1, (last + 1) // 2), last}))


def event_rows(answer: Answer) -> np.ndarray:
    """File rows of the planted spikes (regime switches are no local event: none)."""
    return np.array(sorted(e["row"] for e in answer.events if e["what"] == "spike"), dtype=np.int64)


__all__ = ["PlantedCells", "bayes_forecasts", "bayes_window_forecasts", "check_fits", "event_rows", "planted_cells",
           "probe_steps", "receptive_radius"]
