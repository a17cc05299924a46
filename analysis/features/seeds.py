"""Dictionaries of several seeds matched feature to feature, their stability against shuffled dictionaries, and the
planted concepts of a generated series (DESIGN §9; O'Neill et al. 2024; SAELens `synthetic/evals.py`).

Matching: the decoder directions of two dictionaries (unit columns [d, m]) paired one to one so that the sum of their
cosines is largest (Hungarian: scipy's linear_sum_assignment). A feature found in one seed only is a finding of that
seed; the mean matched cosine over every pair of seeds is the dictionaries' stability, with a jackknife interval over
seeds (analysis.intervals.pairwise_mean_interval). The control: the same matching against shuffled dictionaries, each
column's coordinates permuted at random (seeded) — same entries, no shared direction — the cosine that matching alone
finds among m random-ish directions in d dimensions (high when m ≫ d: the Hungarian always finds something).

Planted concepts: a series generated with `informer-lab synth --kind regime` keeps its answer, the regime in force at
every row (A or B); `--kind spikes`, the rows of its spikes. `answer_concepts` turns that into a concept table at the
file's timestamps, scored like any user's concepts (concepts.py). Matching imports no torch (a study's findings use it).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.intervals import Interval, pairwise_mean_interval

MATCHED = 0.7  # a matched pair with a cosine above this counts as the same feature


def unit_columns(W) -> np.ndarray:
    W = np.asarray(W.detach().cpu().numpy() if hasattr(W, "detach") else W, dtype=np.float64)
    return W / np.maximum(np.linalg.norm(W, axis=0, keepdims=True), 1e-12)


@dataclass(frozen=True)
class Matching:
    """pairs: [m, 2] (feature of A, its match in B); cosine: [m] their decoder cosines."""

    pairs: np.ndarray
    cosine: np.ndarray

    @property
    def mean(self) -> float:
        return float(self.cosine.mean())

    @property
    def matched_share(self) -> float:
        return float((self.cosine > MATCHED).mean())


def match(W_a, W_b) -> Matching:
    """The one-to-one pairing of A's and B's decoder columns [d, m] with the largest total cosine."""
    A, B = unit_columns(W_a), unit_columns(W_b)
    if A.shape != B.shape:
        raise ConfigError(f"dictionaries of shapes {A.shape} and {B.shape} cannot be matched one to one")
    cosine = A.T @ B  # [m, m]
    rows, cols = linear_sum_assignment(-cosine)
    return Matching(np.stack([rows, cols], axis=1), cosine[rows, cols])


def shuffled(W, seed: int) -> np.ndarray:
    """Each column's coordinates permuted at random: [d, m]."""
    rng = np.random.default_rng(seed)
    W = unit_columns(W)
    return np.stack([W[rng.permutation(W.shape[0]), j] for j in range(W.shape[1])], axis=1)


@dataclass(frozen=True)
class Stability:
    """mean matched cosine between every pair of seeds [S, S] (diagonal 1), the same against shuffled dictionaries,
    the means over pairs with intervals over seeds, and the share of features matched above MATCHED."""

    cosine: np.ndarray
    control: np.ndarray
    stability: Interval
    shuffled: Interval
    matched_share: float
    shuffled_share: float

    @property
    def above_control(self) -> bool:
        """Stability above the shuffled control: with intervals, the two do not overlap; else the point estimates."""
        if np.isfinite(self.stability.lo) and np.isfinite(self.shuffled.hi):
            return self.stability.lo > self.shuffled.hi
        return self.stability.estimate > self.shuffled.estimate


def stability(dictionaries, seed: int = 0) -> Stability:
    """Every pair of dictionaries (decoder weights [d, m] each) matched, and each against the other's shuffle."""
    S = len(dictionaries)
    if S < 2:
        raise ConfigError("stability needs dictionaries of at least two seeds")
    cosine, control = np.eye(S), np.eye(S)
    shares, control_shares = [], []
    for i in range(S):
        for j in range(i + 1, S):
            real = match(dictionaries[i], dictionaries[j])
            fake = match(dictionaries[i], shuffled(dictionaries[j], seed + 1000 * i + j))
            cosine[i, j] = cosine[j, i] = real.mean
            control[i, j] = control[j, i] = fake.mean
            shares.append(real.matched_share)
            control_shares.append(fake.matched_share)
    return Stability(cosine, control, pairwise_mean_interval(cosine), pairwise_mean_interval(control),
                     float(np.mean(shares)), float(np.mean(control_shares)))


def answer_concepts(times, answer):
    """The planted concepts of a generated file (analysis.planted.synth.Answer) at its rows' timestamps `times`:
    'regime' (A / B at every row) for --kind regime; 'spike' (up or down at a spike's row by its sign, no elsewhere)
    for --kind spikes."""
    from informer_lab.analysis.features.concepts import Concepts  # torch, which the study's findings do without

    times = pd.DatetimeIndex(times)
    n = len(times)
    labels = {}
    if answer.regime_of_row:
        firsts = np.array([r for r, _ in answer.regime_of_row])
        regimes = np.array([g for _, g in answer.regime_of_row])
        at = regimes[np.searchsorted(firsts, np.arange(n), side="right") - 1]
        labels["regime"] = np.array(["AB"[g] for g in at], dtype=object)
    spikes = [(int(e["row"]), float(e.get("size", 0.0))) for e in answer.events if e.get("what") == "spike"]
    if spikes:  # by sign: a ReLU feature reads one direction, and a spike up is not a spike down
        marks = np.full(n, "no", dtype=object)
        for row, size in spikes:
            if row < n:
                marks[row] = "up" if size > 0 else "down"
        labels["spike"] = marks
    if not labels:
        raise ConfigError(f"a {answer.kind!r} series plants no concept; generate one with --kind regime or spikes")
    return Concepts(times, labels, "planted")


def recovery(table: pd.DataFrame, concept: str) -> pd.DataFrame:
    """Per label value of `concept`: the best feature's AUROC at either level (concept_scores.table rows), the level
    it was reached at, and the best neuron's there."""
    part = table[table.concept == concept]
    if part.empty:
        raise ConfigError(f"no scores for the concept {concept!r}")
    part = part.dropna(subset=["auroc"])  # a value no scored item (or every one) reads has no AUROC
    if part.empty:
        return pd.DataFrame(columns=["value", "level", "feature", "auroc", "auroc_low", "auroc_high", "neuron",
                                     "neuron_auroc"])
    best = part.loc[part.groupby("value").auroc.idxmax()]
    return best[["value", "level", "feature", "auroc", "auroc_low", "auroc_high", "neuron", "neuron_auroc"]] \
        .reset_index(drop=True)


__all__ = ["MATCHED", "Matching", "Stability", "answer_concepts", "match", "recovery", "shuffled", "stability",
           "unit_columns"]
