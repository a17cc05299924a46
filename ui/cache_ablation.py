"""The cached layer of the Ablation page: each study runs once per key, in a background thread.

A study's key is (study, model_key, data_key, split, mode, windows, seed, params). `study_job` is an
`st.cache_resource` (like `ui.cache.sample_training`): a new key starts a `StudyJob`, a known key returns
the running or finished one, so every tab asking the same question shares one run and its result.
Results are read-only: pages slice them, never write into them.

The thread calls `analysis.ablation` / `analysis.importance` only, never Streamlit. Those functions take
no progress callback, so a job reports progress by part (a study of several calls, e.g. one random-masking
run per k, advances part by part) and by elapsed time. Masks are per-call inputs: the shared cached model
is never modified (`evaluate_masks` only sets eval mode, which it already is in).

The shaping helpers at the bottom are pure pandas (no Streamlit) and only reshape analysis output.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
import streamlit as st
import torch

from analysis.ablation import (BASELINE, head_sweep, layer_masking, leave_one_in, n_to_mask,
                               pruning_curve, random_masking, random_masking_summary)
from analysis.checkpoint import Checkpoint
from analysis.data import PreparedData
from analysis.errors import InformerLabError
from analysis.importance import head_importance, rank_correlation

log = logging.getLogger(__name__)

STUDIES = {  # key → title (tab and progress line)
    "sweep": "Single-head sweep",
    "layers": "Layer masking",
    "leave_one_in": "Leave-one-in",
    "random": "Random masking",
    "pruning": "Pruning curve",
    "importance": "Importance vs ablation",
}
NEGLIGIBLE = 0.05  # random masking: a draw is "harmless" when its ΔMSE < 5 % of the baseline MSE


@dataclass(frozen=True)
class RandomResult:
    """draws: one row per (k, repeat) — `random_masking`'s columns plus k_percent and baseline_mse.
    summary: one row per k (see `random_summary`)."""

    draws: pd.DataFrame
    summary: pd.DataFrame


@dataclass(frozen=True)
class ImportanceResult:
    """table: one row per (site, head): importance, importance_normalised, delta_mse (measured), mse.
    rho / rho_raw: Spearman ρ of ΔMSE with the normalised / raw importance."""

    table: pd.DataFrame
    method: str
    rho: float
    rho_raw: float
    windows: int
    convergence_delta: float | None


# ------------------------------------------------------------------------------------------ jobs
@dataclass(frozen=True)
class StudyView:
    """A consistent snapshot of a study job for drawing."""

    title: str
    status: str  # "running" | "done" | "failed"
    phase: str  # what the running part computes
    done: int  # parts finished
    total: int
    seconds: float
    error: str | None
    result: Any

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed")


Part = tuple[str, Callable[[], Any]]


class StudyJob:
    """Runs `parts` one after the other in a daemon thread, then `combine(their results)`.

    Every attribute the UI reads is replaced, never mutated in place; `view()` reads them under a lock.
    """

    def __init__(self, title: str, parts: Sequence[Part], combine: Callable[[list], Any]):
        self.title = title
        self._parts, self._combine, self._total = list(parts), combine, len(parts)
        self._lock = threading.Lock()
        self._done, self._phase = 0, parts[0][0]
        self.status, self.error, self.result = "running", None, None
        self.started, self.ended = time.monotonic(), None
        self.thread = threading.Thread(target=self._run, name=f"informer-ablation-{title}", daemon=True)

    def start(self) -> "StudyJob":
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            results = []
            for k, (phase, work) in enumerate(self._parts):
                with self._lock:
                    self._done, self._phase = k, phase
                results.append(work())
            result = self._combine(results)
            with self._lock:
                self.result, self._done, self.status = result, len(self._parts), "done"
        except (InformerLabError, ValueError) as err:
            with self._lock:
                self.error, self.status = str(err), "failed"
        except Exception as err:  # noqa: BLE001 — a bug, but the page must show a line, not spin forever
            log.exception("ablation study %s failed", self.title)
            with self._lock:
                self.error, self.status = f"{self.title} failed unexpectedly: {type(err).__name__}: {err}", "failed"
        finally:
            self._parts = []  # drop the closures (and the model and data they hold)
            self.ended = time.monotonic()

    def view(self) -> StudyView:
        with self._lock:
            end = self.ended if self.ended is not None else time.monotonic()
            return StudyView(self.title, self.status, self._phase, self._done, self._total, end - self.started,
                             self.error, self.result)

    def wait(self, timeout: float | None = None) -> bool:
        self.thread.join(timeout)
        return not self.thread.is_alive()


def plan(study: str, split: str, mode: str, windows: int | None, seed: int, params: tuple,
         checkpoint: Checkpoint, prepared: PreparedData, means: tuple[torch.Tensor, ...] | None,
         sweep: pd.DataFrame | None = None) -> StudyJob:
    """The (not yet started) job of one study. `params` by study:

    random: (k percents, repeats); pruning: (step percent, tolerance percent, importance);
    importance: (method,); the others: (). `sweep`: a finished single-head sweep table with the same
    key (importance reuses it instead of sweeping again).
    """
    model = checkpoint.model
    common = dict(mode=mode, means=means, seed=seed, max_windows=windows)
    on = f"{'all' if windows is None else f'the first {windows}'} {split} windows"
    n_heads = model.n_sites * model.config.n_heads
    title = STUDIES[study]

    def one(phase: str, work: Callable[[], Any]) -> StudyJob:
        return StudyJob(title, [(phase, work)], lambda results: results[0])

    if study == "sweep":
        return one(f"removing each of the {n_heads} heads alone on {on}",
                   lambda: head_sweep(model, prepared, split, **common))
    if study == "layers":
        return one(f"removing each of the {model.n_sites} sites on {on}",
                   lambda: layer_masking(model, prepared, split, **common))
    if study == "leave_one_in":
        return one(f"keeping one head per site ({n_heads} masks) on {on}",
                   lambda: leave_one_in(model, prepared, split, **common))
    if study == "random":
        ks, repeats = params
        parts = [(f"k = {k} % ({n_to_mask(k / 100, n_heads)} of {n_heads} heads), {repeats} draws on {on}",
                  lambda k=k: random_masking(model, prepared, split, fraction=k / 100, repeats=repeats, seed=seed,
                                             eval_seed=seed, mode=mode, means=means, max_windows=windows))
                 for k in ks]
        return StudyJob(title, parts, lambda tables: combine_random(ks, tables))
    if study == "pruning":
        step, tolerance, importance = params
        return one(f"pruning {step} % of the heads per step ({importance} importance, chosen on val)",
                   lambda: pruning_curve(model, prepared, step_fraction=step / 100, tolerance=tolerance / 100,
                                         importance=importance, select_split="val", report_split=split,
                                         **common))
    if study == "importance":
        (method,) = params
        parts: list[Part] = [(f"gradient importance ({method}) on {on}",
                              lambda: head_importance(model, prepared, split, method=method, **common))]
        if sweep is None:
            parts.append((f"single-head sweep on {on}", lambda: head_sweep(model, prepared, split, **common).table))
        return StudyJob(title, parts, lambda r: combine_importance(r[0], r[1] if len(r) > 1 else sweep))
    raise ValueError(f"unknown study {study!r}; expected one of {sorted(STUDIES)}")


@st.cache_resource(max_entries=64, show_spinner=False)
def study_job(study: str, model_key: str, data_key: str, split: str, mode: str, windows: int | None, seed: int,
              params: tuple, _checkpoint: Checkpoint, _prepared: PreparedData,
              _means: tuple[torch.Tensor, ...] | None, _sweep: pd.DataFrame | None = None) -> StudyJob:
    """The one job (per process) of this key, started on first request. `_means` (mean mode) is fully
    identified by (model_key, data_key, seed); `_sweep` is the sweep of the same key, or None."""
    return plan(study, split, mode, windows, seed, params, _checkpoint, _prepared, _means, _sweep).start()


# ------------------------------------------------------------------------------------------ shaping
def combine_random(ks: Sequence[int], tables: Sequence[pd.DataFrame]) -> RandomResult:
    """`random_masking` tables (one per k) → all draws (with k_percent, baseline_mse) and a summary per k."""
    parts = []
    for k, t in zip(ks, tables):
        t = t.copy()
        t.insert(0, "k_percent", k)
        t.insert(3, "baseline_mse", t["mse"] - t["delta_mse"])  # every draw is paired with the same baseline
        parts.append(t)
    draws = pd.concat(parts, ignore_index=True)
    return RandomResult(draws, random_summary(draws))


def random_summary(draws: pd.DataFrame) -> pd.DataFrame:
    """Per k: k_percent, n_masked, repeats, baseline_mse, the quantiles and mean of ΔMSE
    (`random_masking_summary`), and how many draws stay below NEGLIGIBLE × the baseline MSE."""
    rows = []
    for k, part in draws.groupby("k_percent", sort=True):
        baseline = float(part["baseline_mse"].iloc[0])
        q = random_masking_summary(part).set_index("quantile")["delta_mse"]
        below = int((part["delta_mse"] < NEGLIGIBLE * baseline).sum())
        rows.append({"k_percent": int(k), "n_masked": int(part["n_masked"].iloc[0]), "repeats": len(part),
                     "baseline_mse": baseline, "delta_mse_q05": q[0.05], "delta_mse_median": q[0.5],
                     "delta_mse_q95": q[0.95], "delta_mse_mean": q["mean"],
                     "draws_below_5pct": below, "share_below_5pct": below / len(part)})
    return pd.DataFrame(rows)


def combine_importance(importance, sweep: pd.DataFrame) -> ImportanceResult:
    table = importance.table[["site", "site_index", "kind", "layer", "head", "importance", "importance_normalised"]]
    measured = sweep[sweep["site"] != BASELINE][["site", "head", "mse", "delta_mse"]]
    both = table.merge(measured, on=["site", "head"], how="left")
    return ImportanceResult(both, importance.method,
                            rank_correlation(importance, sweep, column="importance_normalised"),
                            rank_correlation(importance, sweep), importance.windows, importance.convergence_delta)


def sweep_matrix(table: pd.DataFrame) -> pd.DataFrame:
    """ΔMSE as a (site × head) grid: rows are sites in gate order (encoder layers, decoder self, cross)."""
    heads = table[table["site"] != BASELINE]
    grid = heads.pivot_table(index=["site_index", "site"], columns="head", values="delta_mse", aggfunc="first")
    grid = grid.sort_index(level="site_index")
    grid.index = grid.index.get_level_values("site")
    grid.columns = [f"h{h}" for h in grid.columns]
    return grid


def with_relative(table: pd.DataFrame) -> pd.DataFrame:
    """A copy with delta_mse_pct: ΔMSE in % of the baseline MSE (first row's mse − delta_mse)."""
    out = table.copy()
    baseline = float(out["mse"].iloc[0] - out["delta_mse"].iloc[0])
    out.insert(out.columns.get_loc("delta_mse") + 1, "delta_mse_pct", 100 * out["delta_mse"] / baseline)
    return out


def lead(table: pd.DataFrame, *first: str) -> pd.DataFrame:
    """The same table with the columns `first` (those it has) moved to the front, for reading; values unchanged."""
    front = [c for c in first if c in table.columns]
    return table[front + [c for c in table.columns if c not in front]]


def head_options(table: pd.DataFrame) -> list[str]:
    """'site:head' labels of a sweep table's heads, the most harmful removal first."""
    heads = table[table["site"] != BASELINE].sort_values("delta_mse", ascending=False, kind="stable")
    return [f"{s}:{h}" for s, h in zip(heads["site"], heads["head"])]


def pruning_limit(curve: pd.DataFrame, tolerance_percent: float) -> float:
    """The stopping threshold: (1 + tolerance) × the baseline MSE on the selection (val) split."""
    return float((1 + tolerance_percent / 100) * curve["val_mse"].iloc[0])


def finite(x: float) -> bool:
    return x is not None and bool(np.isfinite(x))
