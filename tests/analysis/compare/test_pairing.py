"""Two models side by side: windows matched by the CSV row their forecast starts at, forecasts moved between
scalers without changing a value in original units, and the selection overlap counted as sets are."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from informer_lab.analysis.compare.comparison import error_table
from informer_lab.analysis.data import DataSpec, Scaler, prepare
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.compare.pairing import (aligned_forecasts, common_windows, forecast_misfit, matching_window, rescale,
                              selection_overlap, side_by_side)
from informer_lab.analysis.learning.windows import WindowDataset


@pytest.fixture(scope="module")
def pair(sample_frame):
    a = prepare(sample_frame, DataSpec(target="load", seq_len=48, label_len=24, pred_len=12))
    b = prepare(sample_frame, DataSpec(target="load", seq_len=36, label_len=12, pred_len=12))
    return a, b


def _other_scaler(prepared, shift: float = 3.0, factor: float = 2.5):
    s = prepared.scaler
    return dataclasses.replace(prepared, scaler=Scaler(s.mean + shift, s.std * factor, s.columns))


@pytest.mark.parametrize("split", ["train", "val", "test"])
def test_matched_windows_start_their_forecast_at_the_same_timestamp(pair, split):
    a, b = pair
    wa, wb = WindowDataset(a, split), WindowDataset(b, split)
    matched = 0
    for i in [0, 1, 7, len(wa) // 2, len(wa) - 1]:
        j = matching_window(a, b, split, i)
        if j is None:  # only on train, where B's windows start 12 rows earlier than A's first forecast
            assert split == "train"
            continue
        matched += 1
        assert wa.window_timestamps(i)[0] == wb.window_timestamps(j)[0]
        if split != "train":
            assert j == i  # val and test start seq_len rows early: the same index for any seq_len
    assert matched >= 4
    ia, ib = common_windows(a, b, split)
    assert all(wa.window_timestamps(x)[0] == wb.window_timestamps(y)[0] for x, y in zip(ia[::97], ib[::97]))


def test_train_windows_shift_by_the_difference_of_seq_len(pair):
    a, b = pair
    assert matching_window(a, b, "train", 0) == 48 - 36
    assert matching_window(b, a, "train", 0) is None  # A's first forecast starts 12 rows later than B's


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.floats(-1e3, 1e3), min_size=4, max_size=4), shift=st.floats(-50, 50),
       factor=st.floats(0.1, 10))
def test_rescaling_keeps_every_value_in_original_units(pair, values, shift, factor):
    a = pair[0]
    b = _other_scaler(a, shift, factor)
    x = np.array(values, dtype=np.float64)[None, None, :]  # [1, 1, c_out]: the 4 target columns of 'M'
    moved = rescale(x, b, a)
    np.testing.assert_allclose(a.scaler.inverse_transform(moved, a.target_columns),
                               b.scaler.inverse_transform(x, b.target_columns), rtol=1e-9, atol=1e-6)


def test_aligned_forecasts_score_as_the_second_model_scores_itself_in_original_units(sample_frame, pair):
    """The paired table's original-unit MSE of the second model equals the MSE of its forecasts, un-scaled with
    its own scaler, against the CSV's values at its own windows' timestamps: moving it onto the first's windows
    and scaler changes no error."""
    a, b = pair
    b = _other_scaler(b)  # the second model's scaler differs from the first's
    rng = np.random.default_rng(0)
    windows_b = WindowDataset(b, "test")
    own = rng.normal(size=(len(windows_b), 12, 4))
    columns = list(b.target_columns)
    truth = np.stack([sample_frame.values.loc[windows_b.window_timestamps(j), columns].to_numpy()
                      for j in range(len(windows_b))])
    want = np.mean((b.scaler.inverse_transform(own, b.target_columns) - truth) ** 2)

    moved = aligned_forecasts(own, a, b, "test")
    n_a = len(WindowDataset(a, "test"))
    truth_a = np.stack([WindowDataset(a, "test")[i][-1].numpy() for i in range(n_a)]).astype(np.float64)
    table = error_table({"first": np.zeros_like(truth_a), "second": moved}, truth_a, a)
    got = table[(table["model"] == "second") & (table["scale"] == "original")]["mse"].item()
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_forecasts_of_another_horizon_or_other_columns_are_refused_by_name(sample_frame, pair):
    a = pair[0]
    longer = prepare(sample_frame, DataSpec(target="load", seq_len=48, label_len=24, pred_len=24))
    single = prepare(sample_frame, DataSpec(target="load", features="MS", seq_len=48, label_len=24, pred_len=12))
    assert "pred_len 12 and 24" in forecast_misfit(a, longer)
    assert "different columns" in forecast_misfit(a, single)
    with pytest.raises(ConfigError, match="horizons"):
        aligned_forecasts(np.zeros((5, 24, 4)), a, longer, "test")
    assert forecast_misfit(a, pair[1]) is None


def _queries(selected: dict[tuple[str, int], set[int]], m: dict[tuple[str, int], list[float]]) -> pd.DataFrame:
    stamps = pd.date_range("2024-01-01", periods=8, freq="h")
    return pd.DataFrame([{"site": s, "head": h, "timestamp": stamps[p], "selected": p in chosen,
                          "exact_m": m[(s, h)][p]} for (s, h), chosen in selected.items() for p in range(8)])


def test_selection_overlap_counts_the_sets_and_ranks():
    m = list(np.linspace(0, 1, 8))
    a = _queries({("enc", 0): {0, 1, 2}, ("enc", 1): set()}, {("enc", 0): m, ("enc", 1): m})
    b = _queries({("enc", 0): {2, 3}, ("enc", 1): set()}, {("enc", 0): m[::-1], ("enc", 1): m})
    table = selection_overlap(a, b).set_index("head")
    row = table.loc[0]
    assert (row["selected_a"], row["selected_b"], row["both"], row["only_a"], row["only_b"]) == (3, 2, 1, 2, 1)
    assert row["jaccard"] == pytest.approx(1 / 4) and row["spearman"] == pytest.approx(-1)
    assert np.isnan(table.loc[1, "jaccard"]) and table.loc[1, "spearman"] == pytest.approx(1)
    same = selection_overlap(a, a)
    assert (same.loc[same["head"] == 0, "jaccard"] == 1).all() and (same[["only_a", "only_b"]] == 0).all().all()


def test_selection_overlap_matches_queries_by_timestamp_not_position():
    m = list(np.linspace(0, 1, 8))
    a = _queries({("enc", 0): {5, 6}}, {("enc", 0): m})
    b = a.iloc[3:].reset_index(drop=True)  # B reads 5 of A's 8 steps: the same rows, other positions
    row = selection_overlap(a, b).iloc[0]
    assert row["queries"] == 5 and row["both"] == 2 and row["jaccard"] == 1


def test_side_by_side_marks_keys_only_one_model_has_and_unequal_values():
    a = pd.DataFrame({"level": [0, 1, 2], "length": [48, 24, 12]})
    b = pd.DataFrame({"level": [0, 1], "length": [48, 25]})
    table = side_by_side(a, b, ["level"], ["length"]).set_index("level")
    assert list(table["differs"]) == [False, True, True]
    assert np.isnan(table.loc[2, "length_b"])


@pytest.mark.parametrize("split", ["train", "test"])
def test_the_second_models_first_windows_needed_cover_every_match(pair, split):
    """Forecasting only the windows needed (the first N of the first model) gives the same alignment as all."""
    from informer_lab.analysis.compare.pairing import windows_needed
    from informer_lab.analysis.learning.windows import limit_windows
    a, b = pair
    first = limit_windows(a, split, 300)
    needed = windows_needed(first, b, split)
    cut = limit_windows(b, split, needed)
    assert len(WindowDataset(cut, split)) == needed < len(WindowDataset(b, split))
    forecasts = np.random.default_rng(1).normal(size=(len(WindowDataset(b, split)), 12, 4))
    whole = aligned_forecasts(forecasts, first, b, split)
    np.testing.assert_array_equal(aligned_forecasts(forecasts[:needed], first, cut, split), whole)
    ia, ib = common_windows(first, cut, split)
    assert len(ia) == len(common_windows(first, b, split)[0]) and ib.max() == needed - 1
