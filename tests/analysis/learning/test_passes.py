"""Forecast passes side by side in threads: the same numbers as one pass after another."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from informer_lab.analysis.compare.baselines import fit_linear_baseline
from informer_lab.analysis.compare.comparison import compare_forecasts
from informer_lab.analysis.learning.passes import Pass, run_passes, window_range
from informer_lab.analysis.learning.training import predict
from informer_lab.analysis.learning.windows import WindowDataset, limit_windows


def test_a_window_range_holds_exactly_those_windows(tiny_prepared):
    full = WindowDataset(tiny_prepared, "test")
    cut = WindowDataset(window_range(tiny_prepared, "test", 70, 133), "test")
    assert len(cut) == 63
    for i in (0, 31, 62):
        for a, b in zip(cut[i], full[70 + i]):
            assert torch.equal(a, b)
    assert cut.window_timestamps(5).equals(full.window_timestamps(75))


@pytest.mark.parametrize("workers", [2, 3])
def test_threads_give_the_forecasts_of_one_pass_after_another(tiny_trained, tiny_prepared, workers):
    """The key-sampled pass keeps its batches' order (the same draws), the full-attention pass is shared out in runs
    of whole batches; both equal `predict` bit for bit, and the extra work's result comes back."""
    model = tiny_trained[0].model
    data = limit_windows(tiny_prepared, "test", 300)  # 300 windows: batches of 32 with a short last one
    seen = []
    made, truth, extra = run_passes([Pass("prob", model), Pass("full", model, "full")], data, "test", seed=3,
                                    batch_size=32, workers=workers, extra={"answer": lambda: 42},
                                    progress=lambda done, total: seen.append((done, total)))
    for name, attention in (("prob", None), ("full", "full")):
        want, y = predict(model, data, "test", batch_size=32, seed=3, attention=attention)
        np.testing.assert_array_equal(made[name], want)
        np.testing.assert_array_equal(truth, y)
    assert extra == {"answer": 42}
    assert seen[-1] == (600, 600) and all(a <= b for (a, _), (b, _) in zip(seen, seen[1:]))


def test_a_comparison_on_two_threads_equals_the_one_on_one(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    data = limit_windows(tiny_prepared, "test", 200)
    one = compare_forecasts(model, data, seed=1)
    two = compare_forecasts(model, data, seed=1, workers=2)
    assert one.models == two.models
    for name in one.models:
        np.testing.assert_array_equal(one.forecasts[name], two.forecasts[name])
    assert one.epsilon == two.epsilon
    fitted = fit_linear_baseline(tiny_prepared)  # the train split is the same whatever the test windows scored
    given = compare_forecasts(model, data, seed=1, linear=fitted)
    np.testing.assert_array_equal(given.forecasts["linear"], one.forecasts["linear"])
    with pytest.raises(ValueError, match="kernel 25"):
        compare_forecasts(model, data, seed=1, linear=fitted, kernel=5)
