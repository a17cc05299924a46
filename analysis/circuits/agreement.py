"""Do the perturbation metrics rank the instruments as the planted answers do? Kendall's τ across the input
instruments between each perturbation metric (comprehensiveness, sufficiency, CPD, CPP and the degradation over the
horizon, each beyond random) and each metric against the true cells, on the instruments' means over the models that
learned.

Sufficiency and CPP are better when lower, so their sign is turned before ranking: τ > 0 always means the two metrics agree on
which instruments are better. τ comes with scipy's exact two-sided p-value (no ties: exact permutation
distribution) and the number of instruments it ranks: with seven instruments only |τ| ≥ 0.71 reaches p < 0.05, so
a small τ is "no evidence of agreement", not evidence of disagreement. (Perturbation and ground-truth metrics often
disagree: Baer et al. 2025.)"""
from __future__ import annotations

import math

import pandas as pd

from informer_lab.analysis.circuits.horizon import HORIZON_METRICS
from informer_lab.analysis.circuits.scores import CUMULATIVE_METRICS, INPUT_INSTRUMENTS, REMOVAL_METRICS, WHITE_BOX_METRICS

AGREEMENT_COLUMNS = ("perturbation_metric", "planted_metric", "tau", "p_value", "instruments")
PERTURBATION = tuple(m for m in REMOVAL_METRICS + CUMULATIVE_METRICS + HORIZON_METRICS if m.endswith("_excess"))
LOWER_IS_BETTER = frozenset({"sufficiency", "sufficiency_excess", "cpp", "cpp_excess"})


def instrument_means(scores: pd.DataFrame, learned: set[tuple[str, int]]) -> pd.DataFrame:
    """instruments × metrics: each input instrument's mean over the models that learned (NaN where unscored)."""
    keep = [(k, int(s)) in learned for k, s in zip(scores["kind"], scores["seed"])]
    part = scores[pd.Series(keep, index=scores.index) & scores["instrument"].isin(INPUT_INSTRUMENTS)]
    return part.groupby(["instrument", "metric"])["value"].mean().unstack("metric")


def metric_agreement(scores: pd.DataFrame, learned: set[tuple[str, int]]) -> pd.DataFrame:
    """One row per (perturbation metric, planted metric): AGREEMENT_COLUMNS."""
    from scipy.stats import kendalltau

    means = instrument_means(scores, learned)
    rows = []
    for perturbation in PERTURBATION:
        for planted in WHITE_BOX_METRICS:
            if perturbation not in means or planted not in means:
                continue
            both = means[[perturbation, planted]].dropna()
            sign = -1.0 if perturbation in LOWER_IS_BETTER else 1.0
            if len(both) >= 3:
                tau, p = kendalltau(sign * both[perturbation], both[planted])
            else:
                tau, p = math.nan, math.nan
            rows.append({"perturbation_metric": perturbation, "planted_metric": planted, "tau": float(tau),
                         "p_value": float(p), "instruments": len(both)})
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))


__all__ = ["AGREEMENT_COLUMNS", "PERTURBATION", "instrument_means", "metric_agreement"]
