"""A self-test of the instruments on a file whose answer is known (analysis.planted.synth): one row per instrument, its
figure against the answer, a 95 % interval and pass / fail.

Rows, and what a failure means (`role`):

    learned               the model's test MSE over the Bayes MSE of the same windows (≤ 1.5)            the model
    ig_top                Integrated Gradients' largest |attribution| lies on a planted (column, lag) cell ± the
                          value embedding's reach (1 step for its kernel of 3)                           instrument
    ig_mass               |attribution| within that reach of the planted cells: ≥ 10× their share of cells instrument
    ig_decoy              a decoy column (the target's season, no effect on it) holds no more |attribution|
                          than its share of the cells (files made with decoys only)                      instrument
    ig_sign               the planted cell's attribution has the sign of coef·(x − baseline)             instrument
    ig_completeness       Σ attribution = f(x) − f(baseline), f from separate forward calls               instrument
    importance_agreement  gradient importance ranks heads as ablation does (no planted answer: reported)  agreement
    head_lag              a head's lag profile peaks at a planted lag (chosen and measured on other windows) the model
    head_knockout         removing that head costs more than removing the others                          the model
    topu_events           top-u queries sit on planted spikes more than chance                            the model
    rollout_mass          attention rollout's relevance within ± 1 step of the planted lags, over that of as
                          many random lags (≥ 2×; analysis.planted.selftest_anatomy)                     heuristic
    flow_mass             the same for attention flow                                                    heuristic

An instrument row that fails on a model that learned says the instrument misreads it; a "model" row that fails may
only say that this model does not work that way (it need not route a lag through one head); a "heuristic" row that
fails says that a method's assumption (rollout and flow: attention alone moves information) does not hold for this
model, and is reported beside the verdict, not in it; the agreement row sets
two instruments against each other, not against the answer (first-order gradients at gate 1 need not rank heads as
removing them does), and is reported beside the verdict. `passed` is the verdict: the model learned and every
instrument row that applies passed.

Windows. IG: `ig_windows` test windows spread over the split at the steps `known_answer.probe_steps` (every planted
lag read from the window), baseline "zeros" (each column's training mean); 95 % intervals over windows
(analysis.intervals: t intervals, windows within seq_len + pred_len of each other counted as dependent; the median
of ig_completeness by its order-statistic interval). Bayes: `known_answer.bayes_window_forecasts`, the exact
conditional mean of the process.

Pass rules. A row passes on its point estimate against its criterion (its interval is shown beside it, not used):
the self-test asks whether the instrument finds the answer on these windows, not whether a bound can be proven.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Informer

from informer_lab.analysis.instruments.attribution import baseline_input, forecast_function, input_attribution
from informer_lab.analysis.data import PreparedData, SeriesFrame
from informer_lab.analysis.intervals import mean_interval, median_interval, ratio_interval
from informer_lab.analysis.row_memory import data_span
from informer_lab.analysis.planted.known_answer import (bayes_window_forecasts, check_fits, event_rows, planted_cells, probe_steps,
                                          receptive_radius)
from informer_lab.analysis.planted.selftest_anatomy import rollout_rows
from informer_lab.analysis.planted.selftest_heads import head_at_lag, importance_agreement, knockout, not_applicable, row, topu_at_events
from informer_lab.analysis.planted.synth import Answer
from informer_lab.analysis.compare.verdict import chosen_windows, forecast_windows
from informer_lab.analysis.learning.windows import WindowDataset

LEARNED = 1.5  # the model has learned when its MSE is at most this many times the Bayes MSE
IG_TOP = 0.5
IG_MASS = 10.0  # the planted neighbourhood holds at least this many times its share of the cells
IG_SIGN = 0.8
IG_GAP = 0.25

# attribute(model, prepared, split, window, step, target_column, seed, n_steps) → [seq_len, enc_in] attributions
Attribute = Callable[..., np.ndarray]


def integrated_gradients(model, prepared, split, window, step, target_column, seed, n_steps) -> np.ndarray:
    """The lab's instrument (analysis.instruments.attribution), baseline "zeros"."""
    return input_attribution(model, prepared, split, window, step=step, target_column=target_column,
                             baseline="zeros", n_steps=n_steps, seed=seed).array


@dataclass(frozen=True, eq=False)
class SelfTest:
    """table: check, instrument, figure, lo, hi, criterion, passed (None: does not apply), role, detail."""

    table: pd.DataFrame
    kind: str
    learned: bool
    instruments_pass: bool
    notes: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return self.learned and self.instruments_pass

    def results(self) -> list[str]:
        """Each row's word: pass, FAIL, n/a (the row does not apply), or, on a model that has not learned, "not
        judged" for every row but `learned` (its figures are kept; a miss there says nothing of the instrument)."""
        words = []
        for check, passed in zip(self.table["check"], self.table["passed"]):
            if passed is None or (isinstance(passed, float) and passed != passed):
                words.append("n/a")
            elif check != "learned" and not self.learned:
                words.append("not judged")
            else:
                words.append("pass" if passed else "FAIL")
        return words

    def verdict(self) -> str:
        if not self.learned:
            return ("FAIL: the model has not learned (test MSE over 1.5× the Bayes MSE): the instruments cannot be "
                    "judged on it")
        failed = self.table[(self.table["role"] == "instrument") & (self.table["passed"] == False)]  # noqa: E712
        if len(failed):
            return f"FAIL: instrument row(s) {', '.join(failed['check'])} miss the planted answer"
        model_rows = self.table[(self.table["role"].isin(["model", "agreement", "heuristic"])) &
                                (self.table["passed"] == False)]  # noqa: E712
        tail = (f"; not shown by this model: {', '.join(model_rows['check'])} (it need not)" if len(model_rows) else "")
        return "PASS: the model learned and every instrument finds the planted answer" + tail


def _learned(model, prepared, frame, answer, seed) -> dict:
    spec = prepared.spec
    total = len(WindowDataset(prepared, "test"))
    windows = chosen_windows(total, spec.seq_len)
    stride = int(windows[1] - windows[0]) if len(windows) > 1 else 1
    first = prepared.test.start + windows + spec.seq_len
    lags = [t.lag for e in (*answer.equations, *answer.regimes) for t in e.terms]
    keep = first - max(lags) >= 0
    windows = windows[keep]
    preds, truth = forecast_windows(model, prepared, "test", windows, seed=seed)
    bayes = bayes_window_forecasts(answer, frame, prepared, "test", windows)
    values = np.stack([((preds - truth) ** 2).mean(axis=(1, 2)), ((bayes - truth) ** 2).mean(axis=(1, 2))], axis=1)
    interval = ratio_interval(values[:, 0], values[:, 1], span=data_span(prepared, "test", stride))
    est, lo, hi = interval.estimate, interval.lo, interval.hi
    model_mse, bayes_mse = values.mean(axis=0)
    theory = answer.bayes_for(prepared.target_columns, spec.pred_len)
    return {**row("learned", "test MSE vs Bayes", float(est), float(lo), float(hi), f"≤ {LEARNED:g}× the Bayes MSE",
                  bool(est <= LEARNED),
                  f"model {model_mse:.4f}, Bayes forecast {bayes_mse:.4f} on the same {len(windows)} test windows "
                  f"(theory {theory:.4f})", "learned"), "model_mse": float(model_mse), "bayes_mse": float(bayes_mse)}


def learned(model: Informer, prepared: PreparedData, frame: SeriesFrame, answer: Answer, seed: int = 0) -> dict:
    """The self-test's `learned` row: the model's test MSE over the Bayes forecast's on the same windows (figure, lo,
    hi), passed when at most LEARNED (1.5×); also what analysis.features.known reads."""
    return _learned(model, prepared, frame, answer, seed)


def _spread(windows: list[int], prepared) -> int:
    """How many of these test windows (sorted) one of them depends on (`data_span`): the closest pair decides."""
    gaps = np.diff(sorted(windows))
    spec = prepared.spec
    return data_span(prepared, "test", int(gaps.min()) if len(gaps) else spec.seq_len + spec.pred_len)


def _ig_rows(model, prepared, answer, seed, n_windows, n_steps, attribute: Attribute) -> tuple[list[dict], int]:
    spec = prepared.spec
    steps = [h for h in probe_steps(answer, spec.pred_len)]
    total = len(WindowDataset(prepared, "test"))
    candidates = np.linspace(0, total - 1, min(total, 4 * n_windows)).round().astype(int)
    usable = [w for w in dict.fromkeys(candidates.tolist())
              if all(planted_cells(answer, prepared, "test", w, h) is not None for h in steps)]
    windows = usable[:: max(1, len(usable) // n_windows)][:n_windows]
    decoys = [list(prepared.columns).index(d) for d in answer.decoys if d in prepared.columns]
    names = ("ig_top", "ig_mass", "ig_sign", "ig_completeness") + (("ig_decoy",) if decoys else ())
    if answer.target not in prepared.target_columns or not windows:
        why = (f"the model does not forecast {answer.target!r}" if answer.target not in prepared.target_columns else
               "no test window reads every planted (column, lag) (a planted column is no input of this model, or "
               "the lags exceed seq_len)")
        return [not_applicable(n, "integrated gradients", why, "instrument") for n in names], 0
    dataset = WindowDataset(prepared, "test")
    device = next(model.parameters()).device
    radius = receptive_radius(model.config)
    column_index = list(prepared.target_columns).index(answer.target)
    per = {n: [] for n in names}
    near_counts = []
    for w in windows:
        x_enc, mark_enc, _, mark_dec, _ = dataset[w]
        x = x_enc.numpy()
        base = baseline_input(x, "zeros")
        top = mass = sign = gap = decoy = 0.0
        signs = 0
        for h in steps:
            cells = planted_cells(answer, prepared, "test", w, h)
            attr = np.asarray(attribute(model, prepared, "test", w, h, answer.target, seed, n_steps), dtype=np.float64)
            magnitude = np.abs(attr)
            near = np.zeros_like(attr, dtype=bool)
            for p, c in zip(cells.positions, cells.columns):
                near[max(0, p - radius):p + radius + 1, c] = True
            near_counts.append(int(near.sum()))
            top += float(near.reshape(-1)[np.argmax(magnitude)])
            total_magnitude = max(magnitude.sum(), 1e-300)
            mass += float(magnitude[near].sum() / total_magnitude)
            decoy += float(magnitude[:, decoys].sum() / total_magnitude) if decoys else 0.0
            for p, c, coef in zip(cells.positions, cells.columns, cells.coefs):
                expected = coef * (x[p, c] - base[p, c])
                if abs(expected) > 1e-3:
                    sign += float(np.sign(attr[p, c]) == np.sign(expected))
                    signs += 1
            f = forecast_function(model, mark_enc.to(device), mark_dec.to(device), step=h, column_index=column_index,
                                  seed=seed)
            with torch.no_grad():
                fx, fb = (float(f(torch.as_tensor(v, dtype=torch.float32, device=device)[None])[0]) for v in (x, base))
            gap += abs(attr.sum() - (fx - fb)) / max(abs(fx - fb), 1e-9)
        per["ig_top"].append(top / len(steps))
        per["ig_mass"].append(mass / len(steps))
        per["ig_sign"].append(sign / signs if signs else np.nan)
        per["ig_completeness"].append(gap / len(steps))
        if decoys:
            per["ig_decoy"].append(decoy / len(steps))
    pairs = f"{len(windows)} test windows × steps {', '.join(map(str, steps))}, baseline zeros, {n_steps} IG steps"
    cells_per = spec.seq_len * prepared.enc_in
    near_share = float(np.mean(near_counts)) / cells_per
    decoy_share = len(decoys) / prepared.enc_in
    width = (f"the planted (column, lag) ± {radius} step{'s' if radius != 1 else ''}: the value embedding's kernel of "
             f"{2 * radius + 1} mixes each step with its neighbours" if radius else "the planted (column, lag) cells")
    span = _spread(windows, prepared)
    rows = []
    for name, criterion, test, detail in (
            ("ig_top", f"top cell on {'a planted cell ± ' + str(radius) if radius else 'a planted cell'} in "
                       f"≥ {IG_TOP:.0%} of (window, step) pairs", lambda e: e >= IG_TOP,
             f"{width}; chance {near_share:.3f}"),
            ("ig_mass", f"≥ {IG_MASS:g}× the share of cells they are", lambda e: e >= IG_MASS * near_share,
             f"share of |attribution| on {width}: they are {near_share:.3f} of the cells"),
            ("ig_sign", f"sign of coef·(x − baseline) in ≥ {IG_SIGN:.0%}", lambda e: e >= IG_SIGN,
             "the answer's coefficients give each planted cell's sign"),
            ("ig_completeness", f"median relative gap ≤ {IG_GAP:g}", lambda e: e <= IG_GAP,
             "|Σ attribution − (f(x) − f(baseline))| / |f(x) − f(baseline)|, f from separate forward calls"),
            ("ig_decoy", f"decoy column(s) hold no more |attribution| than their share of cells ({decoy_share:.3f})",
             lambda e: e <= decoy_share,
             f"{', '.join(answer.decoys)}: the target's season, no effect on it; share of |attribution| on every "
             "cell of the decoy column(s)")):
        if name not in per:
            continue
        values = np.asarray(per[name], dtype=np.float64)
        values = values[np.isfinite(values)]
        if not len(values):
            rows.append(not_applicable(name, "integrated gradients", "no planted cell far from its baseline",
                                       "instrument"))
            continue
        interval = median_interval(values) if name == "ig_completeness" else mean_interval(values, span=span)
        lo, hi = interval.lo, interval.hi
        if name != "ig_completeness":  # a share: its interval cut to [0, 1] (cutting never lowers coverage)
            lo, hi = min(max(lo, 0.0), 1.0), min(max(hi, 0.0), 1.0)
        rows.append(row(name, "integrated gradients", interval.estimate, lo, hi, criterion,
                        bool(test(interval.estimate)), f"{pairs}; {detail}", "instrument"))
    return rows, len(windows)


def self_test(model: Informer, prepared: PreparedData, frame: SeriesFrame, answer: Answer, *, seed: int = 0,
              ig_windows: int = 8, n_steps: int = 32, profile_windows: int = 256, sweep_windows: int | None = None,
              attribute: Attribute = integrated_gradients,
              progress: Callable[[str], None] | None = None) -> SelfTest:
    """Run every row against `answer` (the answer of `frame`, the file `prepared` was prepared from)."""
    if model.training:
        raise ValueError("the model is in training mode; the self-test needs eval mode (checkpoints load that way)")
    check_fits(answer, frame)
    say = progress or (lambda what: None)
    lags = sorted({int(r["lag"]) for r in answer.relevant if r["column"] == answer.target})
    say("the model against the Bayes forecast")
    rows = [_learned(model, prepared, frame, answer, seed)]
    say("integrated gradients")
    ig, _ = _ig_rows(model, prepared, answer, seed, ig_windows, n_steps, attribute)
    rows += ig
    say("lag profiles")
    lag_row, head = head_at_lag(model, prepared, lags, seed=seed, windows=profile_windows)
    say("head ablation")
    knock_row, sweep = knockout(model, prepared, head, seed=seed, windows=sweep_windows)
    say("gradient importance")
    rows += [importance_agreement(model, prepared, sweep, seed=seed, windows=sweep_windows), lag_row, knock_row]
    say("top-u queries at planted events")
    rows.append(topu_at_events(model, prepared, event_rows(answer), seed=seed))
    say("attention rollout and flow")
    rows += rollout_rows(model, prepared, answer, seed=seed, windows=ig_windows)
    table = pd.DataFrame(rows)
    learned = bool(table.loc[table["check"] == "learned", "passed"].iloc[0])
    instrument = table[(table["role"] == "instrument") & table["passed"].notna()]
    notes = (f"kind {answer.kind}: relevant (column, lag) "
             + ", ".join(f"{r['column']}@{r['lag']}" + (f" in regime {r['regime']}" if r["regime"] else "")
                         for r in answer.relevant),)
    return SelfTest(table, answer.kind, learned, bool(len(instrument)) and bool(instrument["passed"].all()), notes)


__all__ = ["Attribute", "IG_GAP", "IG_MASS", "IG_SIGN", "IG_TOP", "LEARNED", "SelfTest", "integrated_gradients", "learned",
           "self_test"]
