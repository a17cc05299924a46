"""The check against baselines (analysis.compare.verdict) and the attention baselines (analysis.heads.faithfulness)."""
import numpy as np
import pytest
import torch

from analysis.data import DataSpec, load_csv, prepare
from analysis.heads.faithfulness import attention_baselines
from analysis.planted.synth import SynthSpec, generate
from analysis.learning.training import config_for
from analysis.compare.verdict import ROWS, BaselineCheck, check_against_baselines, chosen_windows
from model import Informer


def constant_model(prepared, **size) -> Informer:
    """An Informer whose forecast is 0 everywhere (its projection zeroed): the train mean, standardised."""
    torch.manual_seed(0)
    model = Informer(config_for(prepared, **{**dict(d_model=8, n_heads=2, d_ff=16, e_layers=(2,), d_layers=1),
                                             **size})).eval()
    with torch.no_grad():
        model.projection.weight.zero_()
        model.projection.bias.zero_()
    return model


def test_a_model_that_forecasts_the_mean_is_worse_than_the_baselines_and_says_so(tiny_prepared):
    check = check_against_baselines(constant_model(tiny_prepared), tiny_prepared)
    table = check.table.set_index("name")
    assert set(check.worse) == {"seasonal_naive", "linear"} == set(check.not_better)
    for name in ("seasonal_naive", "linear"):  # ΔMSE = model − baseline, its paired interval around it
        row = table.loc[name]
        assert row.delta_mse == pytest.approx(table.loc["model", "mse"] - row.mse)
        assert 0 < row.delta_mse_lo <= row.delta_mse <= row.delta_mse_hi
    warning = check.warning()
    assert warning.startswith("This model is worse than seasonal naive (ΔMSE +") and "linear baseline" in warning
    assert "may explain little" in warning and f"{check.windows:,} of {check.total_windows:,} test windows" in warning
    assert check.windows <= 512 and check.total_windows == 1741 and check.stride == 4


def test_a_check_that_beats_both_baselines_warns_of_nothing():
    import pandas as pd

    table = pd.DataFrame([{"name": "model", "label": "model", "mse": 0.2, "mse_lo": 0.18, "mse_hi": 0.22,
                           "delta_mse": 0.0, "delta_mse_lo": 0.0, "delta_mse_hi": 0.0}])
    check = BaselineCheck(table, 100, 100, 1, 10, "test", 0, (), (), ())
    assert check.warning() is None and "model 0.2 [0.18, 0.22]" in check.summary()


def test_long_inputs_score_a_bounded_number_of_windows_and_claim_no_interval_without_two_blocks():
    frame_df, _ = generate(SynthSpec(rows=12_000, lags=(24,), seed=0))
    prepared = prepare(load_csv(frame_df.to_csv(index=False).encode()), DataSpec("y", "MS", 1440, 48, 24))
    windows = chosen_windows(2377, 1440)
    assert len(windows) <= ROWS // 1440 and windows[0] == 0 and windows[-1] > 2300  # spread over the whole split
    check = check_against_baselines(constant_model(prepared), prepared)
    assert check.windows <= ROWS // 1440 and check.stride > 1
    assert check.block == int(np.ceil((1440 + 24) / check.stride))
    assert np.isnan(check.table["delta_mse_lo"]).all() and "no interval" in " ".join(check.notes)
    assert "worse than seasonal naive" in check.warning()  # read from the point estimates


def test_uniform_rows_on_an_already_uniform_head_change_nothing_and_full_attention_has_no_floor(tiny_prepared):
    model = constant_model(tiny_prepared, encoder_attention="full", decoder_attention="full")
    with torch.no_grad():
        torch.manual_seed(1)
        model.projection.weight.normal_()  # a forecast that reads the decoder output
        layer = model.attention_layer(model.sites[0])
        layer.query_projection.weight[:4].zero_()  # head 0 of encoder.0.0: D = 4, its queries 0 → uniform rows
        layer.query_projection.bias[:4].zero_()
    result = attention_baselines(model, tiny_prepared, max_windows=24, draws=3, key_seeds=1)
    table = result.table.set_index("label")
    assert table.loc["encoder.0.0:0", "uniform_change"] < 1e-12  # already uniform: nothing changes
    assert table.loc["encoder.0.0:1", "uniform_change"] > 1e-8
    assert result.floor == 0 and "no ProbSparse site" in " ".join(result.notes)
    assert (result.table["permuted_spread_lo"] <= result.table["permuted_spread_hi"]).all()
    for column in ("uniform_change", "permuted_change", "delta_mse_uniform"):
        assert (result.table[f"{column}_lo"] <= result.table[column] + 1e-12).all()
    assert len(result.table) == model.n_sites * model.config.n_heads


def test_prob_sparse_heads_are_read_against_the_key_sample_floor(tiny_trained, tiny_prepared):
    checkpoint = tiny_trained[0]
    result = attention_baselines(checkpoint.model, tiny_prepared, max_windows=32, draws=2, key_seeds=2)
    assert result.floor > 0 and result.floor_hi >= result.floor
    for r in result.table.itertuples():
        beyond = r.uniform_change_lo > r.floor_hi and r.permuted_change_lo > r.floor_hi
        assert r.reading.startswith("its weights matter") == beyond
