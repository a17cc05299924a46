"""Positions and the pyramid of models from elsewhere: Time-Series-Library's distilling conv pads 2 (96 → 49),
Hugging Face's lags embedding spends the window's first max(lags) steps on lags and decodes the forecast steps
only. Lengths are checked against torch's own conv and pool, receptive fields against set propagation."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from informer_lab.analysis.data import DataSpec, prepare
from informer_lab.analysis.attention.positions import distilled_length, distilled_spans, site_positions
from informer_lab.analysis.attention.pyramid import pyramid_report, receptive_fields
from informer_lab.analysis.attention.recording import record_forward, window_batch
from informer_lab.analysis.learning.training import config_for
from informer_lab.model import Informer, InformerConfig


@pytest.mark.parametrize("padding", [1, 2])
@pytest.mark.parametrize("length", [1, 2, 3, 7, 25, 48, 49, 96])
def test_the_length_formula_is_torchs_conv_and_pool(length, padding):
    conv = nn.Conv1d(1, 1, kernel_size=3, padding=padding, padding_mode="circular")
    pool = nn.MaxPool1d(kernel_size=3, stride=2, padding=1)
    if length < padding:  # torch refuses circular padding wider than the input
        return
    assert pool(conv(torch.zeros(1, 1, length))).shape[-1] == distilled_length(length, padding)


def test_tsl_lengths_by_hand():
    assert [distilled_length(n, 2) for n in (96, 49, 26)] == [49, 26, 14]
    assert [distilled_length(n, 1) for n in (96, 48, 24)] == [48, 24, 12]


def brute_receptive_sets(length, levels, padding):
    """Sets of input steps through the circular conv (output j reads j − p .. j − p + 2 mod n) and the pool over
    the n + 2p − 2 conv outputs (2i − 1 .. 2i + 1, clipped)."""
    sets = [[{i} for i in range(length)]]
    for _ in range(levels - 1):
        below = sets[-1]
        n = len(below)
        conv = [below[(j - padding) % n] | below[(j - padding + 1) % n] | below[(j - padding + 2) % n]
                for j in range(n + 2 * padding - 2)]
        sets.append([set().union(*(conv[p] for p in range(2 * i - 1, 2 * i + 2) if 0 <= p < len(conv)))
                     for i in range(distilled_length(n, padding))])
    return sets


@pytest.mark.parametrize("length", [48, 51, 25, 12, 7])
def test_receptive_fields_with_padding_2_against_set_propagation(length):
    levels = 4
    for (start, end, wraps), sets in zip(receptive_fields(length, levels, 2), brute_receptive_sets(length, levels, 2)):
        assert len(start) == len(sets)
        for a, b, w, s in zip(start, end, wraps, sets):
            interval = set(range(a, b + 1))
            if w:
                assert interval < s or interval == s == set(range(length))
            else:
                assert s == interval


@pytest.mark.parametrize("length", [48, 96, 51, 7])
def test_padding_2_spans_cover_the_input_in_order(length):
    expected = length
    for level in range(4):
        spans = distilled_spans(length, level, padding=2)
        assert len(spans) == expected
        expected = distilled_length(expected, 2)
        assert spans[0, 0] == 0 and spans[-1, 1] == length - 1
        assert (spans[:, 0] <= spans[:, 1]).all() and (np.diff(spans[:, 0]) >= 0).all()
        covered = set().union(*(range(a, b + 1) for a, b in spans))
        assert covered == set(range(length))  # no step is lost, even if the ends share one


@pytest.fixture(scope="module")
def tsl_like(sample_frame):
    prepared = prepare(sample_frame, DataSpec(target="load", seq_len=48, label_len=24, pred_len=12))
    torch.manual_seed(0)
    config = config_for(prepared, d_model=16, n_heads=2, e_layers=(3,), d_ff=16, dropout=0.0).replace(
        distil_padding=2, mix=True, mix_sites="all", cross_attention="prob")
    model = Informer(config).eval()
    return model, prepared, pyramid_report(model, prepared, "test", 3, seed=0)


def test_a_tsl_pyramid_records_the_lengths_the_formula_gives(tsl_like):
    model, _, report = tsl_like
    assert report.lengths_match
    assert list(report.lengths.sort_values("level")["recorded_length"]) == [48, 25, 14]
    enc = [s for s in model.sites if s.kind == "encoder"]
    assert [len(site_positions(model.config, s).query_start) for s in enc] == [48, 25, 14]


def test_a_tsl_pyramid_counts_each_pool_window_once(tsl_like):
    """Every pool window has one winner per channel: the wins per channel of a step sum to its output length,
    also where the padding-2 conv's two extra outputs wrap round onto the first and last input."""
    _, _, report = tsl_like
    for step, part in report.survival.groupby("step"):
        out_length = len(report.kept[report.kept["step"] == step])
        assert part["mean_wins"].sum() == pytest.approx(out_length)
        assert ((part["survived"] >= 0) & (part["survived"] <= 1)).all()


def test_a_tsl_pyramid_kept_offsets_match_a_hand_pool(tsl_like):
    model, prepared, report = tsl_like
    records = record_forward(model, window_batch(prepared, "test", [3]), 0, "encoder.0.layer0.out")
    distil = model.encoder.replicas[0].distils[0]
    with torch.no_grad():
        y = distil.activation(distil.norm(distil.conv(records["encoder.0.layer0.out"].transpose(1, 2))))[0]
    assert y.shape[-1] == 48 + 2
    kept = report.kept[report.kept["step"] == 0].sort_values("position")
    for i in (0, 7, len(kept) - 1):
        window = [p for p in (2 * i - 1, 2 * i, 2 * i + 1) if 0 <= p < y.shape[-1]]
        best = torch.stack([y[:, p] for p in window]).argmax(0)  # [C]
        share = [(np.array(window)[best.numpy()] - 2 * i == o).mean() for o in (-1, 0, 1)]
        np.testing.assert_allclose(kept.iloc[i][["offset_minus1", "offset_0", "offset_plus1"]].to_numpy(float), share)
    assert kept.iloc[0]["centre"] == -1  # conv output 0 is centred on the wrapped last input


def test_lags_models_place_the_encoder_after_the_lag_history_and_decode_the_forecast_only():
    c = InformerConfig(enc_in=2, dec_in=2, c_out=2, seq_len=24, label_len=8, pred_len=6, n_marks=4, d_model=8,
                       n_heads=2, d_ff=8, dropout=0.0, embedding="lags", lags=(1, 4), e_layers=(2,))
    model = Informer(c)
    enc0, enc1 = (site_positions(c, s) for s in model.sites if s.kind == "encoder")
    assert list(enc0.query_start) == list(range(4, 24))  # the last enc_len = 20 steps of the window
    assert enc1.query_start[0] == 4 and len(enc1.query_start) == 10
    dec = site_positions(c, next(s for s in model.sites if s.kind == "decoder_self"))
    assert list(dec.query_start) == list(range(24, 30)) and set(dec.segment) == {"future"}
    assert list(dec.query_layer) == list(dec.key_layer) == list(range(6))  # its own 6 positions, not dec_len's 14
    cross = site_positions(c, next(s for s in model.sites if s.kind == "cross"))
    assert list(cross.key_start) == list(enc1.query_start)
    # the recorded lengths are the ones placed
    batch = window_batch(prepare_tiny_lags(), "test", [0])
    records = record_forward(model.eval(), batch, 0, "*.scores")
    assert records["encoder.0.0.scores"].shape[-1] == 20 and records["decoder_self.0.scores"].shape[-1] == 6


def prepare_tiny_lags():
    import pandas as pd
    from informer_lab.analysis.data import SeriesFrame
    stamps = pd.date_range("2024-01-01", periods=400, freq="h")
    rng = np.random.default_rng(0)
    values = pd.DataFrame({"a": rng.normal(size=400), "b": rng.normal(size=400)}, index=stamps)
    frame = SeriesFrame(values=values, timestamps=stamps, freq="h", name="tiny", datetime_column="date")
    return prepare(frame, DataSpec(target="b", seq_len=24, label_len=8, pred_len=6))
