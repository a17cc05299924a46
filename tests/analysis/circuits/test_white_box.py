"""Relevance mass and rank accuracy against their definitions: the rank accuracy's expectation over random tie
breaks against an enumeration of every tie break, the mass against a direct sum, and chance level on random maps."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from informer_lab.analysis.circuits.white_box import WHITE_BOX_METRICS, mass_accuracy, rank_accuracy, white_box


def rank_by_every_tie_break(scores, truth) -> float:
    """The mean over every order of the cells consistent with the scores (descending) of |top K ∩ T| / K."""
    s, t = np.asarray(scores, float).ravel(), np.asarray(truth, bool).ravel()
    K = int(t.sum())
    orders = [p for p in itertools.permutations(range(len(s))) if all(s[a] >= s[b] for a, b in zip(p, p[1:]))]
    return float(np.mean([t[list(p[:K])].sum() / K for p in orders]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=7), st.data())
def test_rank_accuracy_is_the_mean_over_every_tie_break(values, data):
    truth = data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)).filter(any))
    assert rank_accuracy(values, truth) == pytest.approx(rank_by_every_tie_break(values, truth), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=2, max_size=30), st.data())
def test_mass_accuracy_is_the_true_cells_share_of_the_positive_relevance(values, data):
    truth = np.array(data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)).filter(any)))
    r = np.clip(values, 0, None)
    expected = r[truth].sum() / r.sum() if r.sum() > 0 else 0.0
    assert mass_accuracy(values, truth) == pytest.approx(expected, abs=1e-12)
    assert 0.0 <= mass_accuracy(values, truth) <= 1.0


def test_a_perfect_map_scores_one_and_random_maps_score_the_share_of_true_cells():
    rng = np.random.default_rng(0)
    truth = np.zeros((96, 4), dtype=bool)
    truth[[10, 11, 12, 60], 1] = True  # 4 of 384 cells
    assert mass_accuracy(truth.astype(float), truth) == 1.0 and rank_accuracy(truth.astype(float), truth) == 1.0
    share = truth.mean()
    draws = np.array([[mass_accuracy(m, truth), rank_accuracy(m, truth)] for m in rng.random((2000, 96, 4))])
    assert draws[:, 0].mean() == pytest.approx(share, rel=0.05)
    assert draws[:, 1].mean() == pytest.approx(share, abs=4 * draws[:, 1].std() / np.sqrt(len(draws)))
    assert rank_accuracy(np.ones_like(truth, float), truth) == pytest.approx(share)  # one tie: chance exactly
    figures = white_box(rng.random(truth.shape), truth)
    assert set(figures) == set(WHITE_BOX_METRICS)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="no cell"):
        rank_accuracy([1.0, 2.0], [False, False])
    with pytest.raises(ValueError, match="differ in size"):
        mass_accuracy([1.0, 2.0], [True])
    with pytest.raises(ValueError, match="finite"):
        mass_accuracy([np.nan, 1.0], [True, False])


def test_a_map_whose_spread_is_float_rounding_ranks_at_chance():
    truth = np.zeros(50, dtype=bool)
    truth[:5] = True
    rounding = 3.0 + 1e-9 * np.arange(50)[::-1]  # the true cells a hair higher: rounding, not a ranking
    assert rank_accuracy(rounding, truth) == pytest.approx(truth.mean())
