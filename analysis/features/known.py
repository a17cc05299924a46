"""Features validated on a known answer: a model trained on a generated series whose hidden regimes (or spikes) are
kept as its answer, a dictionary of one site, and the planted concept scored against its features (DESIGN §8:
validated evidence; seeds.py for the matching).

A model that did not learn is reported and not scored: what its residual stream holds says nothing about what an
Informer represents. On a generated series (its frame and answer given) the rule is the Known answers screen's: the
test MSE at most 1.5× the Bayes forecast's on the same windows (analysis.planted.selftest.learned) — on a linear
planted process the linear baseline is near the Bayes forecast, so "better than the linear baseline" would refuse a
model that forecasts as well as possible. Without an answer, the lab's verdict: better than seasonal naive and the
linear baseline on the test split (analysis.compare.verdict). Recovery: the best feature's AUROC for the concept's values at either level reaches `target`
(0.9); the best single neuron of the site stands beside it. Stability: dictionaries of several SAE seeds on the same
activations, matched (seeds.stability), against shuffled dictionaries.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from informer_lab.model import Informer

from informer_lab.analysis.compare.verdict import check_against_baselines
from informer_lab.analysis.data import PreparedData, SeriesFrame
from informer_lab.analysis.features.concepts import Concepts, score_concepts
from informer_lab.analysis.features.metrics import evaluate
from informer_lab.analysis.features.sae import SAESettings, train_sae
from informer_lab.analysis.features.seeds import Stability, recovery, stability
from informer_lab.analysis.features.sites import DEFAULT_SITE, collect
from informer_lab.analysis.planted.selftest import LEARNED, learned

TARGET = 0.9


@dataclass(frozen=True)
class Recovery:
    """One model seed: learned (its verdict against the baselines; `warning` says why not), and where it learned the
    best feature's AUROC for `concept` (value, level, feature, auroc with its interval), the best neuron's, and the
    dictionary's FVU / L0 / dead fraction."""

    seed: int
    learned: bool
    warning: str
    mse_ratio: float = float("nan")  # test MSE over the Bayes forecast's (a generated series), else NaN
    value: str = ""
    level: str = ""
    feature: int = -1
    auroc: float = float("nan")
    auroc_low: float = float("nan")
    auroc_high: float = float("nan")
    neuron: str = ""
    neuron_auroc: float = float("nan")
    fvu: float = float("nan")
    l0: float = float("nan")
    dead_fraction: float = float("nan")

    @property
    def recovered(self) -> bool:
        return self.learned and self.auroc >= TARGET


def planted_recovery(model: Informer, prepared: PreparedData, concepts: Concepts, concept: str, *, seed: int = 0,
                     site: str = DEFAULT_SITE, settings: SAESettings = SAESettings(), train_windows: int = 1024,
                     test_windows: int = 256, frame: SeriesFrame | None = None, answer=None,
                     values: tuple[str, ...] | None = None) -> Recovery:
    """Score one model's dictionary of `site` against the planted `concept` (module docstring); frame and answer:
    the generated series and its answer (the Bayes rule for "learned"); values: the concept's values that count
    (default all: a regime's A and B; a spike's up and down, not its no)."""
    ratio = float("nan")
    if frame is not None and answer is not None:
        check = learned(model, prepared, frame, answer, seed)
        ratio = check["figure"]
        if not check["passed"]:
            return Recovery(int(seed), False, f"test MSE {ratio:.2f}× the Bayes forecast's (over "
                                              f"{LEARNED:g}×): {check['detail']}", ratio)
    else:
        verdict = check_against_baselines(model, prepared, seed=seed)
        if verdict.not_better or verdict.undecided:  # not shown to beat them: without an interval, no claim either
            return Recovery(int(seed), False, verdict.warning() or "not better than the baselines")
    train = collect(model, prepared, "train", site, windows=train_windows, seed=seed)
    sae = train_sae(train.values, replace(settings, seed=int(seed))).sae
    evaluation = evaluate(model, prepared, sae, site, windows=test_windows, seed=seed)
    scores = score_concepts(concepts, prepared, evaluation.activations, evaluation.codes)
    best = recovery(scores.table, concept)
    if values is not None:
        best = best[best.value.isin([str(v) for v in values])].reset_index(drop=True)
    m = evaluation.metrics
    if best.empty:
        return Recovery(int(seed), True, f"no value of {concept!r} could be scored on these windows (none or every "
                                         "item reads it)", ratio, fvu=m.fvu, l0=m.l0, dead_fraction=m.dead_fraction)
    top = best.loc[best.auroc.idxmax()]
    return Recovery(int(seed), True, "", ratio, str(top.value), str(top.level), int(top.feature), float(top.auroc),
                    float(top.auroc_low), float(top.auroc_high), str(top.neuron), float(top.neuron_auroc), m.fvu, m.l0,
                    m.dead_fraction)


def dictionary_stability(model: Informer, prepared: PreparedData, *, site: str = DEFAULT_SITE,
                         settings: SAESettings = SAESettings(), seeds=(0, 1, 2), train_windows: int = 1024,
                         key_seed: int = 0) -> Stability:
    """Dictionaries of SAE seeds `seeds` on the same activations of `site`, matched against each other and against
    shuffled dictionaries."""
    train = collect(model, prepared, "train", site, windows=train_windows, seed=key_seed)
    return stability([train_sae(train.values, replace(settings, seed=int(s))).sae.W_dec for s in seeds],
                     seed=key_seed)


def recovery_table(rows) -> pd.DataFrame:
    """One row per seed: seed, learned, recovered, value, level, feature, auroc (+ interval), neuron, neuron_auroc,
    fvu, l0, dead_fraction, warning."""
    out = pd.DataFrame([{**r.__dict__, "recovered": r.recovered} for r in rows])
    first = ["seed", "learned", "recovered"]
    return out[first + [c for c in out.columns if c not in first]]


__all__ = ["Recovery", "TARGET", "dictionary_stability", "planted_recovery", "recovery_table"]
