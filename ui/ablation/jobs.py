"""The Ablation studies screen's background jobs: each study runs once per key, in a thread.

A study's key is (study, model_key, data_key, split, mode, windows, seed, params). `study_job` is an
`st.cache_resource` (one per key and process): a new key starts a `StudyJob`, a known key returns
the running or finished one, so every tab asking the same question shares one run and its result.
Results are read-only: pages slice them, never write into them.

The thread calls `analysis.heads.ablation` / `analysis.heads.importance` only, never Streamlit. Those functions take
no progress callback, so a job reports progress by part (a study of several calls, e.g. one random-masking
run per k, advances part by part) and by elapsed time. Masks are per-call inputs: the shared cached model
is never modified (`evaluate_masks` only sets eval mode, which it already is in).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pandas as pd
import streamlit as st
import torch

from informer_lab.analysis.heads.ablation import head_sweep, layer_masking, leave_one_in, n_to_mask, pruning_curve, random_masking
from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.heads.importance import head_importance
from informer_lab.ui.ablation.tables import STUDIES, combine_importance, combine_random
from informer_lab.ui.compute import one_thread
from informer_lab.ui.jobs import BackgroundJob


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


class StudyJob(BackgroundJob):
    """Runs `parts` one after the other in a daemon thread, then `combine(their results)`."""

    def __init__(self, title: str, parts: Sequence[Part], combine: Callable[[list], Any]):
        super().__init__(f"ablation-{title}")
        self.title = self.what = title
        self._parts, self._combine, self._total = list(parts), combine, len(parts)
        self._done, self._phase = 0, parts[0][0]
        self.result = None

    def work(self) -> None:
        results = []
        for k, (phase, work) in enumerate(self._parts):
            with self._lock:
                self._done, self._phase = k, phase
            with one_thread():  # ui/compute.py: no barrier waiting on a descheduled second thread
                results.append(work())
        result = self._combine(results)
        with self._lock:
            self.result, self._done, self.status = result, len(self._parts), "done"

    def release(self) -> None:
        self._parts = []  # drop the closures (and the model and data they hold)

    def view(self) -> StudyView:
        with self._lock:
            return StudyView(self.title, self.status, self._phase, self._done, self._total, self.seconds,
                             self.error, self.result)


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
