"""The benchmark's metrics (analysis.circuits.benchmark), pure functions of an attribution map and a true mask, or of a
forecast function and a window; what they are scored against (the true cells of a window, the windows); and the rows,
tables and report page they end in.

Against the true cells: analysis.circuits.white_box (AUP, AUR, AUPRC, relevance mass and rank accuracy).

Removal (DeYoung et al. 2020, ERASER, as ΔMSE for a forecast). For one window and horizon step h, the top `share`
of the (position, column) cells by the instrument's score are removed (set to `fill`, 0: each column's training
mean after standardising), comprehensiveness, or only they are kept, the rest removed, sufficiency; the figure is
the squared error of the step-h forecast after the edit minus before it. Each against the same number of random cells
(`draws` seeded draws, their mean), paired: excess = instrument − random. Ties at the cut are broken at random
(seeded), so a map that ties whole steps (a time-only instrument spread over the columns) takes random columns there.
"""
from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from informer_lab.analysis.circuits.cumulative import CUMULATIVE_METRICS
from informer_lab.analysis.circuits.horizon import HORIZON_METRICS
from informer_lab.analysis.circuits.white_box import (ROUNDING, WHITE_BOX_METRICS, aup, auprc, aur, mass_accuracy,
                                                      pr_curve, rank_accuracy, scaled, white_box)

INPUT_INSTRUMENTS = ("integrated_gradients", "occlusion", "blank_out", "rollout", "flow", "attention", "random")
HEAD_INSTRUMENTS = ("ablation", "gradient_importance", "direct_share", "faithfulness", "atp")
REMOVAL_METRICS = ("comprehensiveness", "comprehensiveness_excess", "sufficiency", "sufficiency_excess")
INPUT_METRICS = WHITE_BOX_METRICS + REMOVAL_METRICS + CUMULATIVE_METRICS + HORIZON_METRICS
HEAD_METRICS = ("top1", "rank")
COLUMNS = ("kind", "seed", "instrument", "metric", "value", "low", "high", "windows", "note")
TIME_ONLY = ("blank_out", "rollout", "flow", "attention")
SHARE = 0.2
DRAWS = 4


def top_cells(scores, count: int, rng: np.random.Generator) -> np.ndarray:
    """A boolean mask (the shape of `scores`) of the `count` highest scores, ties broken at random."""
    s = np.asarray(scores, dtype=np.float64)
    flat = s.reshape(-1)
    if not 0 <= count <= flat.size:
        raise ValueError(f"count must be in 0 … {flat.size}, got {count}")
    order = np.lexsort((rng.random(flat.size), -flat))  # by score, descending; ties in random order
    mask = np.zeros(flat.size, dtype=bool)
    mask[order[:count]] = True
    return mask.reshape(s.shape)


def random_cells(shape, count: int, rng: np.random.Generator) -> np.ndarray:
    """A boolean mask of `count` cells drawn without replacement."""
    size = int(np.prod(shape))
    mask = np.zeros(size, dtype=bool)
    mask[rng.choice(size, size=count, replace=False)] = True
    return mask.reshape(shape)


# forecast(x [N, seq_len, enc_in]) → [N, pred_len]: the forecast column's values at every horizon step
Forecast = Callable[[torch.Tensor], torch.Tensor]


def removal_scores(forecast: Forecast, x: np.ndarray, truth: np.ndarray, steps: Sequence[int],
                   maps: Mapping[str, np.ndarray], *, share: float = SHARE, draws: int = DRAWS, fill: float = 0.0,
                   rng: np.random.Generator, chunk: int = 128) -> dict[str, dict[str, float]]:
    """Comprehensiveness and sufficiency of every map for one window (module docstring).

    x: [seq_len, enc_in] the window (standardised); truth: [pred_len] the forecast column's true values; steps:
    horizon steps (1-based); maps: name → [len(steps), seq_len, enc_in] scores per step. → name →
    {comprehensiveness, comprehensiveness_random, comprehensiveness_excess, sufficiency, sufficiency_random,
    sufficiency_excess}, each the mean over `steps` of the step's ΔSE (squared error after the edit − before),
    excess = the map's − random's."""
    x = np.asarray(x, dtype=np.float32)
    L, C = x.shape
    count = int(round(share * L * C))
    if not 1 <= count <= L * C:
        raise ValueError(f"share {share} of {L * C} cells selects no cell")
    names = list(maps)
    for name in names:
        if np.shape(maps[name]) != (len(steps), L, C):
            raise ValueError(f"map {name!r} has shape {np.shape(maps[name])}, expected {(len(steps), L, C)}")
    edits, index = [x], {}  # row 0: the window unchanged

    def add(key, keep_mask: np.ndarray, keep: bool):
        edited = x.copy()
        edited[~keep_mask if keep else keep_mask] = fill
        index[key] = len(edits)
        edits.append(edited)

    for t in range(len(steps)):
        for d in range(draws):
            chosen = random_cells((L, C), count, rng)
            add(("random", "comprehensiveness", t, d), chosen, keep=False)
            add(("random", "sufficiency", t, d), chosen, keep=True)
        for name in names:
            chosen = top_cells(scaled(maps[name][t]).reshape(L, C), count, rng)
            add((name, "comprehensiveness", t), chosen, keep=False)
            add((name, "sufficiency", t), chosen, keep=True)
    batch = torch.as_tensor(np.stack(edits))
    with torch.no_grad():
        out = torch.cat([forecast(batch[i:i + chunk]).detach().double().cpu()
                         for i in range(0, len(batch), chunk)]).numpy()  # [rows, pred_len]
    truth = np.asarray(truth, dtype=np.float64)
    error = (out - truth[None, :]) ** 2
    result = {}
    for name in names:
        figures = {}
        for kind in ("comprehensiveness", "sufficiency"):
            own = np.mean([error[index[(name, kind, t)], h - 1] - error[0, h - 1] for t, h in enumerate(steps)])
            rand = np.mean([np.mean([error[index[("random", kind, t, d)], h - 1] for d in range(draws)])
                            - error[0, h - 1] for t, h in enumerate(steps)])
            figures[kind] = float(own)
            figures[f"{kind}_random"] = float(rand)
            figures[f"{kind}_excess"] = float(own - rand)
        result[name] = figures
    return result


# --------------------------------------------------------------------------------------------
# What is scored against: the true cells, the windows, the forecast a removal reads
# --------------------------------------------------------------------------------------------
def scored_windows(prepared, answer, steps, count: int) -> tuple[np.ndarray, int]:
    """(up to `count` test windows spread evenly whose every probe step reads every planted cell, the span of the
    intervals: `data_span` of their closest spacing)."""
    from informer_lab.analysis.row_memory import data_span
    from informer_lab.analysis.learning.windows import WindowDataset
    from informer_lab.analysis.planted.known_answer import planted_cells

    spec = prepared.spec
    total = len(WindowDataset(prepared, "test"))
    usable = [w for w in range(total) if all(planted_cells(answer, prepared, "test", w, h) is not None for h in steps)]
    if not usable:
        raise ValueError("no test window reads every planted (column, lag): the lags exceed seq_len")
    stride = max(1, len(usable) // count)
    chosen = np.asarray(usable[::stride][:count], dtype=np.int64)
    gaps = np.diff(chosen)
    return chosen, data_span(prepared, "test", int(gaps.min()) if len(gaps) else spec.seq_len + spec.pred_len)


def true_mask(answer, prepared, window: int, step: int, radius: int) -> np.ndarray:
    """[seq_len, enc_in] the planted cells of (window, step) ± radius steps in time (module docstring)."""
    from informer_lab.analysis.planted.known_answer import planted_cells

    cells = planted_cells(answer, prepared, "test", int(window), int(step))
    mask = np.zeros((prepared.spec.seq_len, prepared.enc_in), dtype=bool)
    for p, c in zip(cells.positions, cells.columns):
        mask[max(0, p - radius):p + radius + 1, c] = True
    return mask


def window_forecaster(model, mark_enc: torch.Tensor, mark_dec: torch.Tensor, column_index: int, seed: int):
    """x [N, seq_len, enc_in] → [N, pred_len] the target column's forecast, the decoder's known tail rebuilt from x
    (as Integrated Gradients does), one key sample (`seed`) per call; the forecast on the CPU."""
    from informer_lab.model import Batch, key_generator

    from informer_lab.analysis.learning.windows import decoder_values

    c = model.config
    device = next(model.parameters()).device

    def forecast(x: torch.Tensor) -> torch.Tensor:
        x = x.to(device=device, dtype=torch.float32)
        N = x.shape[0]
        batch = Batch(x, mark_enc.to(device).expand(N, -1, -1), decoder_values(x, c.label_len, c.pred_len),
                      mark_dec.to(device).expand(N, -1, -1))
        with torch.no_grad():
            return model(batch, generator=key_generator(seed))[:, :, column_index].cpu()

    return forecast



def spread(time_scores: np.ndarray, columns: int) -> np.ndarray:
    """[T, L] → [T, L, C]: a time-only map spread over the columns, every column of a step at the step's score."""
    return np.repeat(np.asarray(time_scores, dtype=np.float64)[:, :, None], columns, axis=2)


# --------------------------------------------------------------------------------------------
# Rows and tables
# --------------------------------------------------------------------------------------------
def learned_row(model, prepared, frame, answer, kind: str, seed: int, seconds: float) -> dict:
    """{"row": the model's test MSE over the Bayes MSE of the same windows (the self-test's `learned` row) as a scores
    row, "model": its mse, bayes_mse and learned}."""
    from informer_lab.analysis.planted.selftest import LEARNED, _learned

    row = _learned(model, prepared, frame, answer, seed)
    return {"row": {"kind": kind, "seed": seed, "instrument": "model", "metric": "mse_over_bayes",
                    "value": row["figure"], "low": row["lo"], "high": row["hi"], "windows": 0,
                    "note": f"{row['detail']}; learned (≤ {LEARNED:g}): {bool(row['passed'])}; trained in "
                            f"{seconds:.0f} s"},
            "model": {"mse": row["model_mse"], "bayes_mse": row["bayes_mse"], "learned": bool(row["passed"])}}


def interval_row(kind, seed, instrument: str, metric: str, values, span: int, note: str = "") -> dict:
    """One scores row: the mean of per-window values with the lab's interval (window_means), why none in the note."""
    from informer_lab.analysis.intervals import window_means

    values = np.asarray(values, dtype=np.float64)
    if not len(values):
        return {"kind": kind, "seed": seed, "instrument": instrument, "metric": metric, "value": math.nan,
                "low": math.nan, "high": math.nan, "windows": 0, "note": note or "no window"}
    m = window_means(values, span=span)
    reason = m.reasons()[0]
    return {"kind": kind, "seed": seed, "instrument": instrument, "metric": metric, "value": float(m.estimate),
            "low": float(m.lo), "high": float(m.hi), "windows": len(values),
            "note": "; ".join(n for n in (note, reason) if n)}


def rank_of(scores: np.ndarray, index: int) -> float:
    """1-based rank of scores[index] from the largest, tied scores at their mean rank."""
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    s = scores[index]
    return float(1 + np.sum(scores > s) + (np.sum(scores == s) - 1) / 2)


def head_rows(kind, seed, instrument: str, scores: np.ndarray | None, planted: int | None, note: str) -> list[dict]:
    """The rows top1 and rank of a head instrument's scores (one per head) for the planted head's index (None: no
    planted head or no scores, both NaN; −1: the instrument does not score it, top1 0 and no rank)."""
    base = {"kind": kind, "seed": seed, "instrument": instrument, "low": math.nan, "high": math.nan, "windows": 0}
    if scores is None or planted is None:
        return [{**base, "metric": m, "value": math.nan, "note": note} for m in HEAD_METRICS]
    if planted < 0:  # the instrument does not score that head (direct shares: decoder heads only)
        return [{**base, "metric": "top1", "value": 0.0, "note": note},
                {**base, "metric": "rank", "value": math.nan, "note": note}]
    rank = rank_of(scores, planted)
    return [{**base, "metric": "top1", "value": float(rank == 1.0), "note": note},
            {**base, "metric": "rank", "value": rank, "note": note}]


def random_head_rows(kind, seed, heads: int) -> list[dict]:
    """The head instruments' control: a ranking of the `heads` heads drawn at random ranks the planted head first with
    probability 1/heads and at (heads + 1)/2 on average (exact expectations, no draw)."""
    base = {"kind": kind, "seed": seed, "instrument": "random", "low": math.nan, "high": math.nan, "windows": 0,
            "note": f"a uniformly random ranking of {heads} heads (expectation)"}
    return [{**base, "metric": "top1", "value": 1.0 / heads}, {**base, "metric": "rank", "value": (heads + 1) / 2}]


def summary_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds per (metric, instrument, kind): metric, instrument, kind, value, seeds (finite values)."""
    finite = scores[np.isfinite(scores["value"].astype(float))]
    grouped = finite.groupby(["metric", "instrument", "kind"], sort=False)["value"]
    out = grouped.agg(value="mean", seeds="count").reset_index()
    return out


def metric_tables(scores: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per metric: instruments × kinds, the mean over seeds (instruments in the benchmark's order)."""
    summary = summary_table(scores)
    order = ["model", *INPUT_INSTRUMENTS, "lag_profile", *HEAD_INSTRUMENTS]
    tables = {}
    for metric, part in summary.groupby("metric", sort=False):
        wide = part.pivot(index="instrument", columns="kind", values="value")
        wide = wide.reindex([i for i in order if i in wide.index] + [i for i in wide.index if i not in order])
        kinds = [k for k in scores["kind"].drop_duplicates() if k in wide.columns]
        tables[metric] = wide[kinds].reset_index()
    return tables


METRIC_TEXT = {
    "mse_over_bayes": "the model's test MSE over the Bayes MSE of the same windows (≤ 1.5: learned)",
    "aup": "area under precision(τ) against the true cells, scores scaled to [0, 1] (higher: better; it depends on "
           "how the scores spread: compare with the random row, whose uniform scores give about the share of true "
           "cells)",
    "aur": "area under recall(τ) (higher: better; uniform random scores give about 0.5, a map that puts most cells "
           "near 0 less: compare within a column)",
    "auprc": "average precision Σ (R_n − R_{n−1}) P_n (chance: the share of true cells)",
    "mass_accuracy": "relevance mass accuracy: the share of the map's relevance that falls on the true cells (chance: "
                     "the share of true cells)",
    "rank_accuracy": "relevance rank accuracy: the share of the true cells among the map's |T| highest cells (chance: "
                     "the share of true cells)",
    "comprehensiveness": "ΔMSE of the probed steps when the instrument's top cells are set to the training mean "
                         "(higher: better)",
    "comprehensiveness_excess": "comprehensiveness minus that of as many random cells, paired per window (> 0: "
                                "better than random)",
    "sufficiency": "ΔMSE when only the top cells are kept, the rest at the training mean (lower: better)",
    "sufficiency_excess": "sufficiency minus that of as many random cells kept (< 0: better than random)",
    "cpd": "cumulative prediction difference: the cells removed 5 % at a time, most relevant first, the forecast's "
           "change at each step added up (TIMING; higher: better)",
    "cpd_excess": "CPD minus that of random orders, paired per window (> 0: better than random)",
    "cpp": "cumulative prediction preservation: as CPD, least relevant first (lower: better)",
    "cpp_excess": "CPP minus that of random orders (< 0: better than random)",
    "degradation": "the rise of the forecast's squared error, mean over every horizon step, when the top cells of "
                   "the map (its mean over the probed steps) are set to the training mean (higher: better; per step "
                   "in horizon.csv)",
    "degradation_excess": "degradation minus that of as many random cells, paired per window (> 0: better than "
                          "random)",
    "planted_lag_mass": "the chosen head's attention mass within a layer step of the planted lag, on held-out windows",
    "planted_head_found": "1 when the head chosen by its lag profile peaks at a planted lag with mass above uniform "
                          "(its interval; none without one)",
    "top1": "1 when the instrument ranks the planted head first",
    "rank": "the rank it gives the planted head (1 = first)",
}


def report(scores: pd.DataFrame, notes, provenance: dict, about: str, extra: tuple = ()):
    """The offline HTML page (analysis.reports.html): what was scored, a table per metric (instruments × kinds, the
    mean over seeds), the `extra` sections (ReportSection), the notes, every score."""
    from informer_lab.analysis.reports.html import Report, ReportSection

    seeds = ", ".join(map(str, sorted(scores["seed"].unique())))
    sections = [ReportSection("What was scored", about)]
    sections += [ReportSection(metric, METRIC_TEXT.get(metric, ""), tables=((f"{metric}: mean over seeds {seeds}",
                                                                              table),))
                 for metric, table in metric_tables(scores).items()]
    sections += list(extra)
    sections.append(ReportSection("Notes", "\n\n".join(notes) or "none"))
    sections.append(ReportSection("Every score", "Per kind, seed, instrument and metric, with the 95 % interval over "
                                  "windows where there is one.", tables=(("scores", scores),)))
    return Report("Instrument benchmark against planted answers", tuple(sections), provenance)


__all__ = ["COLUMNS", "DRAWS", "Forecast", "HEAD_INSTRUMENTS", "HEAD_METRICS", "INPUT_INSTRUMENTS", "INPUT_METRICS",
           "CUMULATIVE_METRICS", "METRIC_TEXT", "REMOVAL_METRICS", "ROUNDING", "WHITE_BOX_METRICS", "mass_accuracy", "rank_accuracy", "SHARE", "TIME_ONLY", "aup", "auprc", "aur", "head_rows", "interval_row",
           "learned_row", "metric_tables", "pr_curve", "random_cells", "random_head_rows", "rank_of", "removal_scores", "report", "scaled",
           "scored_windows", "spread", "summary_table", "top_cells", "true_mask", "white_box", "window_forecaster"]
