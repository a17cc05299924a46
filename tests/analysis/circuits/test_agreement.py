"""Kendall's τ between perturbation and planted-answer metrics across instruments, on scores whose answer is known:
a perturbation metric that orders the instruments as the planted one does gets τ = 1 (sufficiency's sign turned), the
reverse order −1, and a model that did not learn is left out."""
import itertools

import numpy as np
import pandas as pd
import pytest

from informer_lab.analysis.circuits.agreement import metric_agreement
from informer_lab.analysis.circuits.scores import INPUT_INSTRUMENTS


def brute_tau(a, b) -> float:
    """Kendall's τ-a by enumeration of the pairs (no ties)."""
    pairs = list(itertools.combinations(range(len(a)), 2))
    return sum(np.sign(a[i] - a[j]) * np.sign(b[i] - b[j]) for i, j in pairs) / len(pairs)


def scores_for(quality: np.ndarray, *, kind="seasonal_ar", seed=0, mse_over_bayes=1.1, noise=None) -> list[dict]:
    rows = [{"kind": kind, "seed": seed, "instrument": "model", "metric": "mse_over_bayes", "value": mse_over_bayes}]
    rng = np.random.default_rng(seed)
    for q, instrument in zip(quality, INPUT_INSTRUMENTS):
        jitter = 0.0 if noise is None else noise * rng.standard_normal()
        rows += [{"kind": kind, "seed": seed, "instrument": instrument, "metric": "auprc", "value": q},
                 {"kind": kind, "seed": seed, "instrument": instrument, "metric": "comprehensiveness_excess",
                  "value": 2 * q + jitter},
                 {"kind": kind, "seed": seed, "instrument": instrument, "metric": "sufficiency_excess",
                  "value": 1 - q + jitter}]  # lower is better: the same order as auprc
    return rows


def test_tau_is_one_where_the_metrics_order_the_instruments_alike_and_leaves_out_models_that_did_not_learn():
    quality = np.linspace(0.1, 0.9, len(INPUT_INSTRUMENTS))
    rows = scores_for(quality) + scores_for(quality[::-1], seed=1, mse_over_bayes=3.0)  # did not learn: reversed
    scores = pd.DataFrame(rows)
    learned = {("seasonal_ar", 0)}
    table = metric_agreement(scores, learned).set_index(["perturbation_metric", "planted_metric"])
    assert table.loc[("comprehensiveness_excess", "auprc"), "tau"] == pytest.approx(1.0)
    assert table.loc[("sufficiency_excess", "auprc"), "tau"] == pytest.approx(1.0)
    assert table.loc[("comprehensiveness_excess", "auprc"), "instruments"] == len(INPUT_INSTRUMENTS)
    assert table.loc[("comprehensiveness_excess", "auprc"), "p_value"] < 0.001  # 7 in order: p = 2/7!
    reversed_ = metric_agreement(scores, {("seasonal_ar", 1)}).set_index(["perturbation_metric", "planted_metric"])
    assert reversed_.loc[("comprehensiveness_excess", "auprc"), "tau"] == pytest.approx(1.0)  # its own order


def test_tau_equals_a_pairwise_enumeration_on_noisy_scores():
    quality = np.random.default_rng(3).random(len(INPUT_INSTRUMENTS))
    scores = pd.DataFrame(scores_for(quality, noise=0.3))
    table = metric_agreement(scores, {("seasonal_ar", 0)}).set_index(["perturbation_metric", "planted_metric"])
    comp = scores[scores.metric == "comprehensiveness_excess"].set_index("instrument")["value"]
    auprc = scores[scores.metric == "auprc"].set_index("instrument")["value"]
    assert table.loc[("comprehensiveness_excess", "auprc"), "tau"] == pytest.approx(
        brute_tau(comp.to_numpy(), auprc[comp.index].to_numpy()))
    suff = scores[scores.metric == "sufficiency_excess"].set_index("instrument")["value"]
    assert table.loc[("sufficiency_excess", "auprc"), "tau"] == pytest.approx(
        brute_tau(-suff.to_numpy(), auprc[suff.index].to_numpy()))
