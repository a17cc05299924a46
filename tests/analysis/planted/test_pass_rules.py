"""Self-test rows pass on their point estimate, not on a bound of their interval (analysis/planted/selftest.py,
"Pass rules"): for the "learned" row and the rollout and flow rows, scripted readings whose interval straddles the
criterion — a point estimate that passes with a bound that fails, and one that fails with a bound that passes — flip
the verdict under a rule on either bound. (The IG rows: test_selftest.py.)"""
from __future__ import annotations

import numpy as np
import pytest

from informer_lab.analysis.anatomy.rollout import Relevance
from informer_lab.analysis.data import DataSpec, load_csv, prepare
from informer_lab.analysis.planted import selftest, selftest_anatomy
from informer_lab.analysis.planted.known_answer import planted_cells
from informer_lab.analysis.planted.synth import SynthSpec, generate


@pytest.fixture(scope="module")
def planted():
    frame_df, answer = generate(SynthSpec(rows=20000, lags=(12,), coefs=(0.9,), seed=1))
    frame = load_csv(frame_df.to_csv(index=False).encode())
    return frame, answer, prepare(frame, DataSpec("y", "S", 48, 24, 12))


@pytest.mark.parametrize("mean_ratio, passes", [(1.62, False), (1.38, True)])
def test_learned_passes_on_the_ratio_itself(planted, monkeypatch, mean_ratio, passes):
    """Per window the Bayes forecast's squared error is 1 and the model's is 1 too, but in one window of 40 (at
    random) it is large enough that the mean ratio is `mean_ratio`: the ratio's interval holds 1.5 both times."""
    frame, answer, prepared = planted
    rng = np.random.default_rng(0)

    def forecasts(model, prepared, split, windows, seed=0):
        n = len(windows)
        spread = np.ones(n)
        spread[rng.choice(n, size=n // 40, replace=False)] = 1 + (mean_ratio - 1) * n / (n // 40)
        return np.sqrt(spread)[:, None, None] * np.ones((1, 12, 1)), np.zeros((n, 12, 1))

    monkeypatch.setattr(selftest, "forecast_windows", forecasts)
    monkeypatch.setattr(selftest, "bayes_window_forecasts",
                        lambda answer, frame, prepared, split, windows: np.ones((len(windows), 12, 1)))
    row = selftest._learned(None, prepared, frame, answer, 0)
    assert row["figure"] == pytest.approx(mean_ratio, rel=1e-9)
    assert row["lo"] < selftest.LEARNED < row["hi"]
    assert row["passed"] is passes


@pytest.mark.parametrize("hits, share, passes", [(4, 0.2, True), (3, 0.15, False)])
def test_rollout_and_flow_rows_pass_on_the_ratio_itself(planted, monkeypatch, hits, share, passes):
    """Of 8 windows, the first `hits` move `share` of an even spread onto the planted lag: the ratio to random lags
    is 2.44 (passes) or 1.75 (fails), each interval holding 2."""
    frame, answer, prepared = planted
    L, radius = prepared.spec.seq_len, 1
    seen = []

    def relevance(graph, steps):
        w = seen[-1]
        rows = np.full((len(steps), L), 1.0 / L)
        if len(seen) <= hits:
            for t, h in enumerate(steps):
                rows[t] *= 1 - share
                rows[t, planted_cells(answer, prepared, "test", w, h).positions[0]] += share
        return Relevance(np.asarray(steps), rows, np.zeros(len(steps)), np.zeros(len(steps)), np.zeros(len(steps)),
                         None)

    monkeypatch.setattr(selftest_anatomy, "record_pieces", lambda model, batch, seed: batch)
    monkeypatch.setattr(selftest_anatomy, "window_batch", lambda prepared, split, ws: seen.append(ws[0]) or ws[0])
    monkeypatch.setattr(selftest_anatomy, "window_graph", lambda model, pieces, b: pieces)
    monkeypatch.setattr(selftest_anatomy, "flow_edges", lambda graph: 0)
    monkeypatch.setattr(selftest_anatomy, "receptive_radius", lambda config: radius)
    monkeypatch.setattr(selftest_anatomy, "rollout", relevance)
    monkeypatch.setattr(selftest_anatomy, "flow", lambda graph, steps: (relevance(graph, steps), None))
    rows = selftest_anatomy.rollout_rows(type("M", (), {"config": None})(), prepared, answer, seed=0, windows=8)
    for row in rows:
        assert row["lo"] < selftest_anatomy.RATIO < row["hi"], row
        assert row["passed"] is passes, row
