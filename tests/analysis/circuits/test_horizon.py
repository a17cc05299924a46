"""Degradation per horizon step against a linear model whose answer is exact, and its summary over models."""
import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from informer_lab.analysis.circuits.horizon import TABLE_COLUMNS, horizon_degradation, horizon_table, window_relevance
from tests.analysis.circuits.test_benchmark import Linear


def test_removing_every_cell_the_forecast_reads_degrades_each_step_by_its_whole_squared_value():
    L, C, P = 24, 4, 6
    model = Linear(L, C, P)  # step h reads 1–2 cells; 8 cells over the horizon, fewer than the 19 removed (20 %)
    rng = np.random.default_rng(5)
    x = rng.uniform(0.5, 1.5, size=(L, C)).astype(np.float32)
    truth = model(torch.as_tensor(x)[None])[0].double().numpy()  # the model is the process: its error is 0
    oracle = np.stack([np.abs(model.W.numpy()[h - 1] * x) for h in range(1, P + 1)])  # every step probed
    out, control = horizon_degradation(model, x, truth, {"oracle": oracle, "anti": -oracle}, share=0.2, draws=6,
                                       rng=rng)
    assert set(out) == {"oracle", "anti"} and all(v.shape == (P,) for v in out.values()) and control.shape == (P,)
    np.testing.assert_allclose(out["oracle"], truth ** 2, rtol=1e-5)  # the forecast drops to 0 at every step
    np.testing.assert_allclose(out["anti"], 0.0, atol=1e-9)  # only cells no step reads are removed
    assert np.all(control >= 0) and np.all(control <= truth ** 2 + 1e-6)


def test_steps_the_map_does_not_cover_show_the_gap():
    L, C, P = 24, 4, 6
    model = Linear(L, C, P)
    x = np.ones((L, C), dtype=np.float32)
    truth = model(torch.as_tensor(x)[None])[0].double().numpy()
    near = np.zeros((1, L, C))
    near[0, L - 6, C - 1] = 1.0  # the one target cell step 1 reads (lag 6): steps 2 … 6 read others
    out, _ = horizon_degradation(model, x, truth, {"near": near}, share=1 / (L * C), draws=1,
                              rng=np.random.default_rng(0))
    assert out["near"][0] == pytest.approx(0.9 ** 2, rel=1e-5)  # the forecast loses 0.9 · 1 at step 1 alone
    np.testing.assert_allclose(out["near"][1:], 0.0, atol=1e-9)


def test_window_relevance_is_the_mean_of_the_scaled_maps():
    a = np.array([[0.0, 2.0], [4.0, 4.0]])
    b = np.array([[1.0, 1.0], [1.0, 3.0]])
    np.testing.assert_allclose(window_relevance(np.stack([a, b])), (a / 4 + (b - 1) / 2) / 2)


def test_the_table_pairs_each_model_with_its_random_cells_and_drops_models_that_did_not_learn():
    rng = np.random.default_rng(1)
    rows = []
    for seed in range(5):
        for step in (1, 2):
            mine, rand = rng.normal(1.0, 0.3), rng.normal(0.5, 0.3)
            rows += [{"kind": "k", "seed": seed, "instrument": "ig", "step": step, "value": mine, "windows": 4},
                     {"kind": "k", "seed": seed, "instrument": "random", "step": step, "value": rand, "windows": 4}]
    curves = pd.DataFrame(rows)
    learned = {("k", s) for s in range(4)}  # seed 4 did not learn
    table = horizon_table(curves, learned)
    assert list(table.columns) == list(TABLE_COLUMNS) and set(table["instrument"]) == {"ig"}
    for step in (1, 2):
        part = curves[(curves["step"] == step) & (curves["seed"] < 4)].pivot(index="seed", columns="instrument",
                                                                            values="value")
        diff = part["ig"] - part["random"]
        low, high = stats.t.interval(0.95, 3, loc=diff.mean(), scale=stats.sem(diff))
        row = table[table["step"] == step].iloc[0]
        assert row["models"] == 4 and row["excess"] == pytest.approx(diff.mean())
        assert (row["low"], row["high"]) == pytest.approx((low, high))
        assert row["value"] == pytest.approx(part["ig"].mean()) and row["random"] == pytest.approx(part["random"].mean())
    few = horizon_table(curves, {("k", 0), ("k", 1)})
    assert few["models"].eq(2).all() and few["low"].isna().all() and not math.isnan(few["excess"].iloc[0])
