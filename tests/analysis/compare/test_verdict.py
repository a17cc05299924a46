"""The check against baselines (analysis.compare.verdict) and the attention baselines (analysis.heads.faithfulness)."""
import numpy as np
import pytest
import torch

from informer_lab.analysis.data import DataSpec, load_csv, prepare
from informer_lab.analysis.heads.faithfulness import attention_baselines
from informer_lab.analysis.row_memory import data_span
from informer_lab.analysis.planted.synth import SynthSpec, generate
from informer_lab.analysis.learning.training import config_for
from informer_lab.analysis.compare.verdict import ROWS, BaselineCheck, check_against_baselines, chosen_windows
from informer_lab.model import Informer


def constant_model(prepared, **size) -> Informer:
    """An Informer whose forecast is 0 everywhere (its projection zeroed): the train mean, standardised."""
    torch.manual_seed(0)
    model = Informer(config_for(prepared, **{**dict(d_model=8, n_heads=2, d_ff=16, e_layers=(2,), d_layers=1),
                                             **size})).eval()
    with torch.no_grad():
        model.projection.weight.zero_()
        model.projection.bias.zero_()
    return model


def test_a_model_that_forecasts_the_mean_gets_no_verdict_without_the_windows_an_interval_needs(tiny_prepared):
    check = check_against_baselines(constant_model(tiny_prepared), tiny_prepared)
    table = check.table.set_index("name")
    assert check.worse == check.not_better == () and set(check.undecided) == {"seasonal_naive", "linear"}
    for name in ("seasonal_naive", "linear"):  # ΔMSE = model − baseline
        row = table.loc[name]
        assert row.delta_mse == pytest.approx(table.loc["model", "mse"] - row.mse) and row.delta_mse > 0
    # A constant forecast's error follows the sample's slow cycle across the test split: the ΔMSE series drifts, its
    # mean has no honest interval, and no verdict is read from the point estimates: the warning says why.
    assert table.loc[["seasonal_naive", "linear"], "delta_mse_lo"].isna().all()
    assert any("drifts" in note and "no verdict" in note for note in check.notes), check.notes
    warning = check.warning()
    assert warning.startswith("This model is not measured against seasonal naive and the linear baseline (")
    assert "a verdict needs an interval" in warning and "may explain little" in warning and f"{check.windows:,} of {check.total_windows:,} test windows" in warning
    assert check.windows <= 512 and check.total_windows == 1741 and check.stride == 4


def test_a_check_that_beats_both_baselines_warns_of_nothing():
    import pandas as pd

    table = pd.DataFrame([{"name": "model", "label": "model", "mse": 0.2, "mse_lo": 0.18, "mse_hi": 0.22,
                           "delta_mse": 0.0, "delta_mse_lo": 0.0, "delta_mse_hi": 0.0}])
    check = BaselineCheck(table, 100, 100, 1, 10, "test", 0, (), (), ())
    assert check.warning() is None and "model 0.2 [0.18, 0.22]" in check.summary()


def test_long_inputs_score_a_bounded_number_of_windows_and_claim_no_interval_with_too_few():
    frame_df, _ = generate(SynthSpec(rows=12_000, lags=(24,), seed=0))
    prepared = prepare(load_csv(frame_df.to_csv(index=False).encode()), DataSpec("y", "MS", 1440, 48, 24))
    windows = chosen_windows(2377, 1440)
    assert len(windows) <= ROWS // 1440 and windows[0] == 0 and windows[-1] > 2300  # spread over the whole split
    check = check_against_baselines(constant_model(prepared), prepared)
    assert check.windows <= ROWS // 1440 and check.stride > 1
    assert check.span == data_span(prepared, "test", check.stride) >= int(np.ceil((1440 + 24) / check.stride))
    assert np.isnan(check.table["delta_mse_lo"]).all() and "no interval" in " ".join(check.notes)
    assert "not measured against seasonal naive" in check.warning() and not check.worse  # no verdict from points


def test_uniform_rows_on_an_already_uniform_head_change_nothing_and_full_attention_has_no_floor(tiny_prepared):
    model = constant_model(tiny_prepared, encoder_attention="full", decoder_attention="full")
    with torch.no_grad():
        torch.manual_seed(1)
        model.projection.weight.normal_()  # a forecast that reads the decoder output
        layer = model.attention_layer(model.sites[0])
        layer.query_projection.weight[:4].zero_()  # head 0 of encoder.0.0: D = 4, its queries 0 → uniform rows
        layer.query_projection.bias[:4].zero_()
    result = attention_baselines(model, tiny_prepared, max_windows=128, draws=3, key_seeds=1)
    table = result.table.set_index("label")
    assert table.loc["encoder.0.0:0", "uniform_change"] < 1e-12  # already uniform: nothing changes
    assert table.loc["encoder.0.0:1", "uniform_change"] > 1e-8
    assert result.floor == 0 and "no ProbSparse site" in " ".join(result.notes)
    assert (result.table["permuted_spread_lo"] <= result.table["permuted_spread_hi"]).all()
    for column in ("uniform_change", "permuted_change", "delta_mse_uniform"):
        lo = result.table[f"{column}_lo"]
        assert lo.notna().any() and ((lo <= result.table[column] + 1e-12) | lo.isna()).all()
    assert len(result.table) == model.n_sites * model.config.n_heads
    assert not table.loc["encoder.0.0:0", "uniform_beyond"]  # no change is no finding


def test_prob_sparse_heads_are_read_against_the_key_sample_floor(tiny_trained, tiny_prepared):
    """Each head's change against the floor window by window, one-sided, with Benjamini–Hochberg across every head and
    both baselines: the reading follows the adjusted decisions; a head without an interval is not read at all."""
    from scipy.stats import false_discovery_control

    checkpoint = tiny_trained[0]
    result = attention_baselines(checkpoint.model, tiny_prepared, max_windows=128, draws=2, key_seeds=2)
    t = result.table
    assert result.floor > 0 and result.floor_hi >= result.floor
    p = np.concatenate([t["uniform_beyond_p"], t["permuted_beyond_p"]])
    tested = np.isfinite(p)
    assert tested.sum() >= len(p) // 2  # the rest: the sample's weekly cycle leaves too few independent weeks
    adjusted = np.concatenate([t["uniform_beyond_p_bh"], t["permuted_beyond_p_bh"]])
    np.testing.assert_allclose(adjusted[tested], false_discovery_control(p[tested]), rtol=1e-12)
    assert np.isnan(adjusted[~tested]).all()
    for r in t.itertuples():
        assert r.uniform_beyond == (r.uniform_beyond_p_bh <= 0.05)
        assert r.reading.startswith("its weights matter") == (r.uniform_beyond and r.permuted_beyond)
    untested = t[t["uniform_beyond_p"].isna()]
    assert not untested["uniform_beyond"].any() and untested["reading"].str.startswith("no interval").all()


def test_the_verdicts_intervals_are_those_of_the_difference_taken_window_by_window():
    """Model and baseline are paired: the ΔMSE interval is the interval of (model − baseline) per window over the same
    windows, recomputed here from forecasts made apart. Taken apart (each MSE's own uncertainty, or the baseline on
    other windows), it is another, wider interval. (A stationary seasonal AR, so that every difference has one.)"""
    from informer_lab.analysis.compare.verdict import baseline_forecasts, forecast_windows
    from informer_lab.analysis.intervals import window_means
    from informer_lab.analysis.learning.windows import WindowDataset

    frame_df, _ = generate(SynthSpec(rows=8000, lags=(24,), coefs=(0.5,), seed=3))
    prepared = prepare(load_csv(frame_df.to_csv(index=False).encode()), DataSpec("y", "MS", 48, 24, 12))
    model = constant_model(prepared)
    with torch.no_grad():
        torch.manual_seed(1)
        model.projection.weight.normal_(0, 0.1)  # a forecast that reads the decoder, not a constant
    check = check_against_baselines(model, prepared, seed=5)
    windows = chosen_windows(len(WindowDataset(prepared, "test")), prepared.spec.seq_len)
    preds, truth = forecast_windows(model, prepared, "test", windows, seed=5)
    others, _ = baseline_forecasts(prepared, "test", windows)
    span = data_span(prepared, "test", check.stride)  # the overlap and the rows' memory
    ours = ((preds - truth) ** 2).mean(axis=(1, 2))
    table = check.table.set_index("name")
    for name, forecast in others.items():
        theirs = ((forecast - truth) ** 2).mean(axis=(1, 2))
        paired = window_means(ours - theirs, span=span)
        assert np.isfinite(paired.lo)
        assert table.loc[name, "delta_mse_lo"] == pytest.approx(float(paired.lo), rel=1e-6)  # float32 forecasts
        assert table.loc[name, "delta_mse_hi"] == pytest.approx(float(paired.hi), rel=1e-6)
        apart = window_means(np.stack([ours, theirs], axis=1), span=span)
        unpaired_half = float(np.hypot(*(apart.hi - apart.estimate)))
        assert float(paired.hi - paired.estimate) < unpaired_half
        shifted = window_means(ours - np.roll(theirs, len(theirs) // 2), span=span)  # the baseline on other windows
        assert float(shifted.hi - shifted.lo) > float(paired.hi - paired.lo)  # same mean, the pairing lost


def test_an_estimate_that_favours_the_model_is_never_called_no_better():
    """The interval holds 0 but the estimate favours the model: "not shown to beat", not "no better than"."""
    import pandas as pd

    table = pd.DataFrame([
        {"name": "model", "label": "model", "mse": 0.30, "mse_lo": 0.25, "mse_hi": 0.35, "delta_mse": 0.0,
         "delta_mse_lo": 0.0, "delta_mse_hi": 0.0},
        {"name": "seasonal_naive", "label": "seasonal naive", "mse": 0.31, "mse_lo": 0.26, "mse_hi": 0.36,
         "delta_mse": -0.01, "delta_mse_lo": -0.04, "delta_mse_hi": 0.02},
        {"name": "linear", "label": "the linear baseline", "mse": 0.29, "mse_lo": 0.24, "mse_hi": 0.34,
         "delta_mse": 0.01, "delta_mse_lo": -0.02, "delta_mse_hi": 0.04}])
    check = BaselineCheck(table, 100, 400, 4, 30, "test", 0, (), ("seasonal_naive", "linear"), ())
    warning = check.warning()
    assert "not shown to beat seasonal naive (ΔMSE -0.01" in warning
    assert "no better than the linear baseline (ΔMSE +0.01" in warning
    assert "no better than seasonal naive" not in warning


def test_the_summary_gives_each_figure_an_interval_or_says_it_has_none_and_cuts_an_mse_at_zero():
    import pandas as pd

    rows = [("model", "model", 0.9, 0.0, 2.1, 0.0, 0.0, 0.0),
            ("seasonal_naive", "seasonal naive", 1.0, np.nan, np.nan, -0.1, np.nan, np.nan),
            ("linear", "the linear baseline", 0.8, 0.5, 1.1, 0.1, -0.05, 0.25)]
    table = pd.DataFrame(rows, columns=["name", "label", "mse", "mse_lo", "mse_hi", "delta_mse", "delta_mse_lo",
                                        "delta_mse_hi"])
    check = BaselineCheck(table, 40, 40, 1, 10, "test", 0, (), ("linear",), (), None, ("seasonal_naive",),
                          "no interval: 40 windows hold 4.0 independent stretches")
    summary = check.summary()
    assert "model 0.9 [0, 2.1]" in summary and "seasonal naive 1 (no interval)" in summary
    assert "cut at 0 (an MSE is never negative)" in summary and "no verdict against seasonal naive" in summary
    assert summary.count("no interval") == 2 and "point estimates" not in summary
    warning = check.warning()
    assert "no better than the linear baseline" in warning and "not measured against seasonal naive" in warning


def test_an_mse_interval_never_crosses_zero_and_says_where_it_was_cut():
    from informer_lab.analysis.intervals import window_means

    errors = np.r_[np.full(19, 0.01), 100.0]  # one window's error dominates: the t interval reaches below 0
    plain = window_means(errors, span=1)
    assert plain.lo < 0
    cut = window_means(errors, span=1, floor=0.0)
    assert cut.lo == 0 and cut.hi == plain.hi and cut.notes() == ["cut at 0, the figure's limit"]
