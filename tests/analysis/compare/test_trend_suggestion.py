"""RevIN is suggested for a model that reads a trending split at the train split's scale, and only for such a model:
one with RevIN, or whose lags embedding standardises each window itself, already reads each window at its level."""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from informer_lab.analysis.compare.verdict import trend_suggestion
from informer_lab.analysis.data import DataSpec, load_csv, prepare


@pytest.mark.parametrize("revin, scaling, suggested", [(False, "none", True), (True, "none", False),
                                                       (False, "std", False), (False, "mean", False)])
def test_revin_is_suggested_only_to_a_model_that_reads_windows_at_the_train_scale(revin, scaling, suggested):
    t = np.arange(1200.0)
    hours = pd.date_range("2021-01-01", periods=len(t), freq="h")
    table = pd.DataFrame({"date": hours.strftime("%Y-%m-%d %H:%M:%S"), "y": 50 + t / 10 + np.sin(t / 4)})
    prepared = prepare(load_csv(table.to_csv(index=False).encode()), DataSpec("y", "S", 48, 24, 12))
    model = SimpleNamespace(config=SimpleNamespace(revin=revin, instance_scaling=scaling))
    text = trend_suggestion(model, prepared, "test")
    assert (text is not None) == suggested
    if suggested:
        assert "leaves the train range" in text and "--revin" in text
