"""The encoder pyramid: lengths by the formula, spans that tile, receptive fields, what max-pooling keeps."""
import math

import numpy as np
import pytest
import torch

from informer_lab.analysis.data import DataSpec, prepare
from informer_lab.analysis.attention.pyramid import pyramid_report, receptive_fields, spans_with_norms
from informer_lab.analysis.attention.recording import record_forward, window_batch
from informer_lab.analysis.learning.training import config_for
from informer_lab.model import Informer

WINDOW = 3
# Lengths by hand: replica r reads seq_len // 2**r steps; each distilling step maps L → ⌊(L − 1)/2⌋ + 1.
EXPECTED = {48: {0: [48, 24, 12], 1: [24, 12], 2: [12]},
            51: {0: [51, 26, 13], 1: [25, 13], 2: [12]}}


@pytest.fixture(scope="module", params=[48, 51])
def stack(request, sample_frame):
    """An untrained InformerStack (e_layers 3, 2, 1) in eval mode, its data, and its pyramid report."""
    prepared = prepare(sample_frame, DataSpec(target="load", seq_len=request.param, label_len=24, pred_len=12))
    torch.manual_seed(0)
    model = Informer(config_for(prepared, d_model=16, n_heads=2, e_layers=(3, 2, 1), d_ff=16, dropout=0.0)).eval()
    return model, prepared, pyramid_report(model, prepared, "test", WINDOW, seed=0)


def test_lengths_follow_the_formula(stack):
    model, _, report = stack
    seq_len = model.config.seq_len
    assert report.lengths_match
    for r, lengths in EXPECTED[seq_len].items():
        rows = report.lengths[report.lengths.replica == r].sort_values("level")
        assert list(rows.analytic_length) == lengths
        assert list(rows.recorded_length) == lengths
        assert (rows.input_length == seq_len // 2 ** r).all()
    assert report.encoder_output_length == (sum(v[-1] for v in EXPECTED[seq_len].values()),) * 2


def test_spans_tile_each_replica_input(stack):
    model, _, report = stack
    for (r, level), group in report.spans.groupby(["replica", "level"]):
        L_r = model.config.seq_len // 2 ** r
        group = group.sort_values("position")
        assert len(group) == EXPECTED[model.config.seq_len][r][level]
        steps = np.concatenate([np.arange(a, b + 1) for a, b in zip(group.span_start, group.span_end)])
        assert list(steps) == list(range(L_r))  # union = every input step, no overlap, in order
        assert (group.span_start == group.position * 2 ** level).all()


def test_span_timestamps_are_the_replica_input_steps(stack):
    model, prepared, report = stack
    stamps, seq_len = prepared.test.timestamps, model.config.seq_len
    for (r, level), group in report.spans.groupby(["replica", "level"]):
        offset = WINDOW + seq_len - seq_len // 2 ** r
        assert list(group.timestamp_start) == list(stamps[offset + group.span_start.to_numpy()])
        assert list(group.timestamp_end) == list(stamps[offset + group.span_end.to_numpy()])
    top = report.spans[(report.spans.replica == 0) & (report.spans.level == 0)]
    assert list(top.timestamp_start) == list(stamps[WINDOW:WINDOW + seq_len])


def brute_receptive_sets(length, levels):
    """Sets of input steps through the real circular conv (±1 mod L) and the clipped k=3 s=2 pool."""
    sets = [[{i} for i in range(length)]]
    for _ in range(levels - 1):
        below = sets[-1]
        n = len(below)
        conv = [below[(p - 1) % n] | below[p] | below[(p + 1) % n] for p in range(n)]
        sets.append([set().union(*(conv[p] for p in range(2 * i - 1, 2 * i + 2) if 0 <= p < n))
                     for i in range((n - 1) // 2 + 1)])
    return sets


@pytest.mark.parametrize("length", [48, 51, 25, 12, 7])
def test_receptive_fields_against_set_propagation(length):
    levels = 4
    for (start, end, wraps), sets in zip(receptive_fields(length, levels), brute_receptive_sets(length, levels)):
        for a, b, w, s in zip(start, end, wraps, sets):
            interval = set(range(a, b + 1))
            if w:  # circular padding reached round: the clipped interval is part of the truth, plus far steps
                assert interval < s or interval == s == set(range(length))
            else:
                assert s == interval


def test_receptive_field_examples_by_hand():
    (s0, e0, w0), (s1, e1, w1) = receptive_fields(8, 2)
    # level 1, position 1: pool inputs 1, 2, 3; conv reach 0 .. 4
    assert (s1[1], e1[1], w1[1]) == (0, 4, False)
    # position 0: pool inputs 0, 1; conv reach −1 .. 2 → clipped 0 .. 2, wraps round to step 7
    assert (s1[0], e1[0], w1[0]) == (0, 2, True)


def test_kept_offsets_against_brute_force_max_pool(stack):
    """Recompute each distilling step's pre-pool activations and take the argmax of 2i−1, 2i, 2i+1 by hand."""
    model, prepared, report = stack
    records = record_forward(model, window_batch(prepared, "test", [WINDOW]), 0, "encoder.0.layer0.out")
    distil = model.encoder.replicas[0].distils[0]
    with torch.no_grad():
        y = distil.activation(distil.norm(distil.conv(records["encoder.0.layer0.out"].transpose(1, 2))))[0]
    C, L = y.shape
    kept = report.kept[(report.kept.replica == 0) & (report.kept.step == 0)].sort_values("position")
    counts = np.zeros((len(kept), 3))
    wins = np.zeros((C, L))
    for c in range(C):
        for i in range(len(kept)):
            window = [p for p in (2 * i - 1, 2 * i, 2 * i + 1) if 0 <= p < L]
            best = max(window, key=lambda p: float(y[c, p]))
            counts[i, best - 2 * i + 1] += 1
            wins[c, best] += 1
    assert np.allclose(kept[["offset_minus1", "offset_0", "offset_plus1"]].to_numpy(), counts / C)
    survival = report.survival[(report.survival.replica == 0) & (report.survival.step == 0)].sort_values(
        "input_position")
    assert np.allclose(survival.survived, (wins > 0).mean(axis=0))
    assert np.allclose(survival.mean_wins, wins.mean(axis=0))


def test_kept_fractions_sum_to_one(stack):
    _, _, report = stack
    fractions = report.kept[["offset_minus1", "offset_0", "offset_plus1"]].to_numpy()
    assert np.allclose(fractions.sum(axis=1), 1.0)
    assert (report.kept[report.kept.position == 0].offset_minus1 == 0).all()  # 2i − 1 = −1 is padding
    assert set(report.kept.replica) == {0, 1}  # replica 2 has one layer: nothing to distil
    assert report.survival.mean_wins.between(0, 2).all()


def test_norms_have_the_layer_lengths_and_values(stack):
    model, prepared, report = stack
    for _, row in report.lengths.iterrows():
        n = report.norms[(report.norms.replica == row.replica) & (report.norms.level == row.level)]
        assert len(n) == row.recorded_length == row.analytic_length
    records = record_forward(model, window_batch(prepared, "test", [WINDOW]), 0, "encoder.1.layer1.out")
    out = records["encoder.1.layer1.out"][0]
    n = report.norms[(report.norms.replica == 1) & (report.norms.level == 1)].sort_values("position")
    for p in (0, len(n) - 1):
        assert n.norm.iloc[p] == pytest.approx(math.sqrt(sum(float(v) ** 2 for v in out[p])), rel=1e-6)
    joined = spans_with_norms(report)
    assert len(joined) == len(report.spans) and joined.norm.notna().all()


def test_attention_rows_of_every_encoder_layer(stack):
    model, _, report = stack
    assert [a.site for a in report.attention] == [s.name for s in model.sites if s.kind == "encoder"]
    for a in report.attention:
        assert np.allclose(a.rows.sum(-1), 1.0, atol=1e-5)
        r, level = a.replica, a.level
        assert a.rows.shape[-1] == EXPECTED[model.config.seq_len][r][level] == len(a.query_steps)


def test_without_distilling_every_level_keeps_the_length(sample_frame):
    prepared = prepare(sample_frame, DataSpec(target="load", seq_len=48, label_len=24, pred_len=12))
    torch.manual_seed(0)
    model = Informer(config_for(prepared, d_model=16, n_heads=2, e_layers=(2,), d_ff=16, dropout=0.0,
                                distil=False)).eval()
    report = pyramid_report(model, prepared, "test", 0)
    assert report.lengths_match and list(report.lengths.recorded_length) == [48, 48]
    assert report.kept.empty and (report.spans.span_start == report.spans.span_end).all()


def test_training_mode_and_bad_window_are_refused(stack):
    model, prepared, _ = stack
    with pytest.raises(ValueError, match="outside"):
        pyramid_report(model, prepared, "test", -1)
    with pytest.raises(ValueError, match="eval mode"):
        pyramid_report(Informer(model.config), prepared, "test", 0)
