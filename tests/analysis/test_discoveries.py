"""Benjamini–Hochberg against the step-up procedure written out, and its control of false discoveries."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from informer_lab.analysis.discoveries import adjusted_p_values, benjamini_hochberg


def step_up(p: np.ndarray, q: float) -> np.ndarray:
    """The definition: reject the k smallest p-values, k the largest i with p_(i) ≤ i·q/m."""
    m = len(p)
    order = np.argsort(p, kind="stable")
    passing = [i for i in range(1, m + 1) if p[order[i - 1]] <= i * q / m]
    rejected = np.zeros(m, dtype=bool)
    if passing:
        rejected[order[:max(passing)]] = True
    return rejected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40), st.sampled_from([0.01, 0.05, 0.1, 0.2]))
def test_bh_rejects_exactly_what_the_step_up_procedure_rejects(values, q):
    p = np.array(values)
    assert (benjamini_hochberg(p, q) == step_up(p, q)).all()


def test_untested_heads_are_not_in_the_family_and_never_rejected():
    p = np.array([0.001, np.nan, 0.02, 0.04, np.nan])
    rejected = benjamini_hochberg(p, 0.05)
    assert not rejected[1] and not rejected[4]
    assert (rejected[[0, 2, 3]] == step_up(p[[0, 2, 3]], 0.05)).all()  # the family is the three tested
    assert np.isnan(adjusted_p_values(p)[[1, 4]]).all()


def test_under_the_complete_null_bh_keeps_the_chance_of_any_false_head_near_q():
    rng = np.random.default_rng(0)
    models = 4000
    any_false = sum(benjamini_hochberg(rng.uniform(size=16), 0.05).any() for _ in range(models)) / models
    raw = sum((rng.uniform(size=16) < 0.05).any() for _ in range(models)) / models
    assert any_false <= 0.06 and raw > 0.5  # raw: at least one false head in over half of the models
