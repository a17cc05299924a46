"""Pure shaping helpers of the Data & model screen (no Streamlit)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.learning.training import TrainProgress
from informer_lab.ui.data_model.tables import check_run_name, downsample_minmax, loss_curves, parse_e_layers
from informer_lab.ui.tables import progress_fraction


def test_loss_curves_recover_each_step_loss_from_running_means():
    losses = {1: [4.0, 2.0, 3.0], 2: [1.0, 0.5, 0.6]}
    reports = []
    for epoch, values in losses.items():
        for step in range(1, 4):
            reports.append(TrainProgress(epoch, 2, step, 3, float(np.mean(values[:step]))))
        reports.append(TrainProgress(epoch, 2, 3, 3, float(np.mean(values)), val_loss=epoch * 0.1))
    steps, epochs = loss_curves(reports)
    np.testing.assert_allclose(steps["loss"], [4, 2, 3, 1, 0.5, 0.6])
    assert list(steps["global_step"]) == [1, 2, 3, 4, 5, 6]
    assert list(epochs["global_step"]) == [3, 6] and list(epochs["val_loss"]) == [0.1, 0.2]
    assert progress_fraction(reports[4]) == pytest.approx(4 / 6)


def test_a_stopped_epoch_puts_its_validation_point_at_its_last_step():
    reports = [TrainProgress(1, 2, 1, 10, 2.0), TrainProgress(1, 2, 2, 10, 1.5),
               TrainProgress(1, 2, 10, 10, 1.5, val_loss=1.2)]
    steps, epochs = loss_curves(reports)
    assert list(epochs["global_step"]) == [2]


def test_downsampling_keeps_every_extreme_and_caps_the_points():
    index = pd.date_range("2024-01-01", periods=20_000, freq="h")
    rng = np.random.default_rng(0)
    values = pd.DataFrame({"a": rng.normal(size=20_000), "b": np.arange(20_000.0)}, index=index)
    values.iloc[12_345, 0] = 99.0
    long, bucket = downsample_minmax(values, 5000)
    assert bucket > 1
    for column in ("a", "b"):
        part = long[long.column == column]
        assert len(part) <= 5000
        assert part["value"].max() == values[column].max() and part["value"].min() == values[column].min()
        assert part["timestamp"].is_monotonic_increasing
    small, one = downsample_minmax(values.iloc[:100], 5000)
    assert one == 1 and len(small) == 200


def test_parse_e_layers_and_run_names():
    assert parse_e_layers("2") == (2,) and parse_e_layers("3, 2, 1") == (3, 2, 1)
    for bad in ("", "2,x", "0"):
        with pytest.raises(ConfigError):
            parse_e_layers(bad)
    assert check_run_name(" my-run_1.2 ") == "my-run_1.2"
    for bad in ("../x", ".hidden", "a/b", ""):
        with pytest.raises(ConfigError):
            check_run_name(bad)
