"""Features scored against concepts a user labels (holidays, outages, regimes), and the best single neuron beside them.

The concept file holds the data's time column and one or more label columns (categories; an empty cell: no label).
It is never an input of the model: it only names what happened when. Each label value is scored one-vs-rest:

- position level: a position reads value v when any input step it reads (sites.py's spans) is labelled v — an event
  one step long counts for every position that reads it; a position straddling a regime switch reads both values —
  and reads nothing when none of its steps is labelled; its score is z_f there;
- window level: a window reads v when any of its last `stretch` input steps is labelled v; its score is z_f's maximum
  over the positions whose span reaches into that stretch.

One-vs-rest: the positives of v read v, the negatives read labels other than v only.

AUROC = P(score of a positive > score of a negative) + ½ P(tie), from mid-ranks. Its interval (DeLong's components
summed per window: ψ_w = Σ_{positives i in w} (V_i − A)/n₊ + Σ_{negatives j in w} (V_j − A)/n₋, whose sum over windows
is the AUROC's linearisation) is the lab's window-means interval of n·ψ_w (analysis.intervals: windows overlap, labels
persist; none where too few independent stretches exist). The best feature is chosen on the same windows: its AUROC is
optimistic, more so with many features; the best neuron (either sign of one coordinate of the site) is chosen the same
way from d·2 candidates, so a feature beating it by a hair is no evidence that features are the better units.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.features.metrics import FeatureCodes
from informer_lab.analysis.features.sites import SiteActivations
from informer_lab.analysis.intervals import window_means
from informer_lab.analysis.row_memory import data_span

MAX_VALUES = 50  # distinct values a label column may hold
MAX_BYTES = 64 << 20
LEVELS = ("position", "window")
CHUNK = 256  # features ranked at once


@dataclass(frozen=True, eq=False)
class Concepts:
    """times: [T] timestamps; labels: label column → [T] object array (None: unlabelled)."""

    times: pd.DatetimeIndex
    labels: dict
    source: str = ""

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.labels)


def concepts_from_frame(frame: pd.DataFrame, time_column: str | None = None, source: str = "") -> Concepts:
    """A concept table from a frame: the time column (given, or the first whose every cell reads as a time) and every
    other column as labels. ConfigError naming the column when it cannot be one."""
    if time_column is None:
        for column in frame.columns:
            cells = frame[column].astype(str)
            if pd.api.types.is_numeric_dtype(frame[column]) or cells.str.fullmatch(r"[+-]?[\d.]+").any():
                continue  # numbers are labels (or years, which the time column of hourly data is not)
            if pd.to_datetime(cells, errors="coerce", format="mixed").notna().all():
                time_column = column
                break
    if time_column is None or time_column not in frame.columns:
        raise ConfigError(f"the concept file {source or ''} needs the data's time column (every cell a time) and "
                          f"label columns; found columns {', '.join(map(str, frame.columns))[:200]}")
    times = pd.DatetimeIndex(pd.to_datetime(frame[time_column].astype(str), errors="coerce", format="mixed"))
    if times.isna().any():
        raise ConfigError(f"the concept file's time column {time_column!r} has cells that are no time (row "
                          f"{int(np.flatnonzero(times.isna())[0]) + 2})")
    labels = {}
    for column in frame.columns:
        if column == time_column:
            continue
        cells = frame[column]
        values = np.array([None if pd.isna(v) or str(v).strip() == "" else str(v).strip() for v in cells], dtype=object)
        distinct = {v for v in values if v is not None}
        if len(distinct) > MAX_VALUES:
            raise ConfigError(f"the concept column {column!r} has {len(distinct):,} distinct values; a label column "
                              f"holds at most {MAX_VALUES} categories (an event's name, a regime)")
        if distinct:
            labels[str(column)] = values
    if not labels:
        raise ConfigError("the concept file has no label column with a value: give the time column and at least one "
                          "column of labels")
    return Concepts(times, labels, source)


def read_concepts(source, time_column: str | None = None) -> Concepts:
    """A concept file (CSV: path or bytes) read as `concepts_from_frame`."""
    try:
        if isinstance(source, (bytes, bytearray)):
            if len(source) > MAX_BYTES:
                raise ConfigError("the concept file is over 64 MiB")
            frame, name = pd.read_csv(io.BytesIO(source), dtype=str, keep_default_na=False), "(upload)"
        else:
            path = Path(source)
            if path.stat().st_size > MAX_BYTES:
                raise ConfigError(f"the concept file {path} is over 64 MiB")
            frame, name = pd.read_csv(path, dtype=str, keep_default_na=False), str(path)
    except OSError as err:
        raise ConfigError(f"cannot read the concept file {source}: {err.strerror or err}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise ConfigError(f"the concept file is not a CSV table: {str(err)[:160]}") from None
    frame = frame.replace("", np.nan)
    return concepts_from_frame(frame, time_column, name)


def split_labels(concepts: Concepts, prepared: PreparedData, split: str) -> dict:
    """label column → [N] labels at the split's rows (None where the file says nothing)."""
    times = prepared.split(split).timestamps
    where = pd.Index(concepts.times).get_indexer(times)
    if (where < 0).all():
        raise ConfigError(f"none of the concept file's {len(concepts.times):,} times is a time of the {split} split "
                          f"({times[0]} … {times[-1]}); give labels at the data's own timestamps")
    out = {}
    for column, values in concepts.labels.items():
        out[column] = np.array([values[i] if i >= 0 else None for i in where], dtype=object)
    return out


def _read(labels) -> frozenset:
    """The labels of some steps, unlabelled ones left out."""
    return frozenset(str(v) for v in labels if v is not None)


def position_labels(labels: np.ndarray, windows: np.ndarray, spans: np.ndarray) -> np.ndarray:
    """[S, L] the set of labels each position reads (over its span; empty: nothing labelled there)."""
    out = np.empty((len(windows), len(spans)), dtype=object)
    for i, w in enumerate(windows):
        for p, (a, b) in enumerate(spans):
            out[i, p] = _read(labels[w + a:w + b + 1]) if a >= 0 else frozenset()
    return out


def window_labels(labels: np.ndarray, windows: np.ndarray, seq_len: int, stretch: int) -> np.ndarray:
    """[S] the set of labels over each window's last `stretch` input steps."""
    out = np.empty(len(windows), dtype=object)
    for i, w in enumerate(windows):
        out[i] = _read(labels[w + seq_len - stretch:w + seq_len])
    return out


def stretch_positions(spans: np.ndarray, seq_len: int, stretch: int) -> np.ndarray:
    """[L] bool: the positions whose span reaches into the window's last `stretch` input steps."""
    return (spans[:, 1] >= seq_len - stretch) & (spans[:, 0] <= seq_len - 1) & (spans[:, 0] >= 0)


def auroc(scores: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """AUROC of every column of scores [N, k] for the boolean labels [N] (mid-ranks: ties count ½)."""
    from scipy.stats import rankdata  # at use: importing scipy.stats costs ~1.5 s of CPU in every process

    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    ranks = rankdata(scores, axis=0)
    return (ranks[positive].sum(axis=0) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def auroc_interval(score: np.ndarray, positive: np.ndarray, window_of: np.ndarray, n_windows: int, span: int):
    """(AUROC, low, high, reason) of one score [N] with items grouped by window_of [N] (module docstring)."""
    from scipy.stats import rankdata

    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    ranks_all = rankdata(score)
    a = (ranks_all[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    v = np.empty(len(score))
    v[positive] = (ranks_all[positive] - rankdata(score[positive])) / n_neg  # P(neg < s_i) + ½ ties
    v[~positive] = 1 - (ranks_all[~positive] - rankdata(score[~positive])) / n_pos
    psi = np.where(positive, (v - a) / n_pos, (v - a) / n_neg)
    per_window = np.bincount(window_of, weights=psi, minlength=n_windows) * n_windows
    m = window_means(per_window[:, None], span=span)
    half = float(m.hi[0] - m.estimate[0])
    if not np.isfinite(half):
        return float(a), float("nan"), float("nan"), m.reasons()[0]
    return float(a), max(0.0, float(a) - half), min(1.0, float(a) + half), ""


@dataclass(frozen=True, eq=False)
class ConceptScores:
    """table: concept, value, level, positives, negatives, feature, auroc, auroc_low, auroc_high, reason, neuron,
    neuron_auroc (one row per label value and level; the best feature and the best neuron). features: every
    feature's AUROC, one row per (concept, value, level) of `table`, [rows, m]."""

    table: pd.DataFrame
    features: np.ndarray
    stretch: int


def _best_neuron(x: np.ndarray, positive: np.ndarray) -> tuple[str, float]:
    a = auroc(x, positive)  # [d]
    flipped = 1 - a
    d = int(np.argmax(np.maximum(a, flipped)))
    return (f"+{d}", float(a[d])) if a[d] >= flipped[d] else (f"-{d}", float(flipped[d]))


def score_concepts(concepts: Concepts, prepared: PreparedData, activations: SiteActivations, codes: FeatureCodes,
                   *, stretch: int | None = None) -> ConceptScores:
    """Every label value of every concept column, at both levels (module docstring), on the windows of
    `activations` (their codes `codes`)."""
    seq_len = prepared.spec.seq_len
    stretch = int(stretch or max(1, seq_len // 8))
    if not 1 <= stretch <= seq_len:
        raise ConfigError(f"the stretch must be 1 … seq_len ({seq_len}) steps, got {stretch}")
    windows, spans = activations.windows, activations.spans
    S, L = len(windows), len(spans)
    span = data_span(prepared, activations.split, activations.stride)
    z = codes.dense().reshape(S * L, codes.m)  # [N, m]
    x = activations.values.double().numpy().reshape(S * L, -1)  # [N, d]
    reach = stretch_positions(spans, seq_len, stretch)
    if not reach.any():
        raise ConfigError(f"no position of {activations.site} reads the window's last {stretch} steps")
    z_window = z.reshape(S, L, -1)[:, reach].max(axis=1)  # [S, m]
    x_window = activations.values.double().numpy()[:, reach]  # [S, L', d]
    x_window = np.concatenate([x_window.max(axis=1), -(-x_window).max(axis=1)], axis=1)  # max and min per neuron
    rows, scores = [], []
    for column, labels in split_labels(concepts, prepared, activations.split).items():
        by_level = {"position": (position_labels(labels, windows, spans).reshape(-1), z, x,
                                 np.repeat(np.arange(S), L)),
                    "window": (window_labels(labels, windows, seq_len, stretch), z_window, x_window, np.arange(S))}
        for level, (label, feats, neurons, window_of) in by_level.items():
            known = np.array([len(v) > 0 for v in label])
            for value in sorted(frozenset().union(*label[known])):
                positive = np.array([value in v for v in label[known]])
                n_pos, n_neg = int(positive.sum()), int((~positive).sum())
                row = {"concept": column, "value": value, "level": level, "positives": n_pos, "negatives": n_neg}
                if not n_pos or not n_neg:
                    rows.append({**row, "feature": -1, "auroc": np.nan, "auroc_low": np.nan, "auroc_high": np.nan,
                                 "reason": "every labelled item reads this value: nothing to tell apart",
                                 "neuron": "", "neuron_auroc": np.nan})
                    scores.append(np.full(codes.m, np.nan))
                    continue
                f_scores = feats[known]
                all_auroc = np.concatenate([auroc(f_scores[:, i:i + CHUNK], positive)
                                            for i in range(0, codes.m, CHUNK)])
                best = int(np.argmax(all_auroc))
                a, lo, hi, reason = auroc_interval(f_scores[:, best], positive, window_of[known], S, span)
                if level == "window":  # the neuron's max (+) or min (−) over the stretch's positions
                    d = neurons.shape[1] // 2
                    a_max, a_min = auroc(neurons[known][:, :d], positive), 1 - auroc(neurons[known][:, d:], positive)
                    j = int(np.argmax(np.maximum(a_max, a_min)))
                    neuron, n_auroc = (f"+{j}", float(a_max[j])) if a_max[j] >= a_min[j] else (f"-{j}", float(a_min[j]))
                else:
                    neuron, n_auroc = _best_neuron(neurons[known], positive)
                rows.append({**row, "feature": best, "auroc": a, "auroc_low": lo, "auroc_high": hi, "reason": reason,
                             "neuron": neuron, "neuron_auroc": n_auroc})
                scores.append(all_auroc)
    table = pd.DataFrame(rows, columns=["concept", "value", "level", "positives", "negatives", "feature", "auroc",
                                        "auroc_low", "auroc_high", "reason", "neuron", "neuron_auroc"])
    return ConceptScores(table, np.array(scores).reshape(len(rows), codes.m), stretch)


def search(scores: ConceptScores, concept: str, value: str, level: str = "position", n: int = 20) -> pd.DataFrame:
    """feature, auroc: the n features that pick out `value` of `concept` best at `level`."""
    match = np.flatnonzero((scores.table.concept == concept) & (scores.table.value == str(value))
                           & (scores.table.level == level))
    if not len(match):
        raise ConfigError(f"no scores for {concept} = {value} at the {level} level")
    a = scores.features[match[0]]
    order = np.argsort(-np.nan_to_num(a, nan=-1.0), kind="stable")[:n]
    return pd.DataFrame({"feature": order, "auroc": a[order]})


__all__ = ["CHUNK", "ConceptScores", "Concepts", "LEVELS", "MAX_VALUES", "auroc", "auroc_interval",
           "concepts_from_frame", "position_labels", "read_concepts", "score_concepts", "search", "split_labels",
           "stretch_positions", "window_labels"]
