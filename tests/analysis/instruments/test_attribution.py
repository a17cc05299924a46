"""Integrated Gradients over the encoder window: completeness where the model is smooth, jumps where
ProbSparse's top-u selection switches, zero attribution where input equals baseline, a model left untouched."""
from dataclasses import replace

import numpy as np
import pytest
import torch

from informer_lab.analysis.instruments.attribution import baseline_input, input_attribution
from informer_lab.analysis.data import prepare
from informer_lab.analysis.learning.training import config_for, predict
from informer_lab.model import Informer, active_count

TINY = dict(d_model=16, n_heads=4, d_ff=32, dropout=0.0)


@pytest.fixture(scope="module")
def short_prepared(sample_frame, tiny_spec):
    """The sample's first 1200 hours, cut like the tiny model's data: a test split of ~230 windows."""
    n = 1200
    frame = replace(sample_frame, timestamps=sample_frame.timestamps[:n], values=sample_frame.values.iloc[:n])
    return prepare(frame, tiny_spec)


def smooth_model(prepared, *, distil: bool) -> Informer:
    """Random weights with factor 12: u = L at every ProbSparse site, so no selection can switch."""
    torch.manual_seed(0)
    model = Informer(config_for(prepared, factor=12, distil=distil, **TINY)).eval()
    c = model.config
    lengths = [c.seq_len, c.dec_len] + ([c.seq_len // 2] if distil else [])
    assert all(active_count(c.factor, L) == L for L in lengths)  # the premise of "cannot jump"
    return model


def test_completeness_is_float_exact_when_the_model_is_smooth(short_prepared):
    # No distilling (no max-pool kinks) and u = L: f is smooth along the path, so Gauss–Legendre with 32
    # points integrates the gradient to float32 round-off and the attributions add up to f(x) − f(b).
    model = smooth_model(short_prepared, distil=False)
    a = input_attribution(model, short_prepared, "test", 7, step=5, target_column="load", n_steps=32)
    assert abs(a.difference) > 1e-2  # a non-trivial difference to explain
    assert a.completeness_gap < 1e-5 and a.relative_gap < 1e-4
    assert abs(float(a.array.sum()) - a.difference) == pytest.approx(a.completeness_gap)
    assert abs(a.convergence_delta) == pytest.approx(a.completeness_gap, abs=1e-6)  # captum agrees
    assert a.path_selection_changes == 0
    # f(x) is the forecast the evaluation path makes for that window (same seed, same first key sample)
    preds, _ = predict(model, short_prepared, "test", seed=0)
    assert a.forecast == pytest.approx(float(preds[7, 4, -1]), abs=1e-5)


def test_distilling_kinks_leave_only_a_small_quadrature_error(short_prepared):
    # Max-pool and ELU make f continuous but not smooth: no jump, only quadrature error (measured ~1e-4
    # relative; it shrinks with n_steps, though not monotonically).
    model = smooth_model(short_prepared, distil=True)
    a = input_attribution(model, short_prepared, "test", 3, step=5, target_column="load", n_steps=32)
    assert a.path_selection_changes == 0
    assert a.relative_gap < 5e-3


def test_probsparse_selection_jumps_leave_a_gap_far_above_round_off(short_prepared):
    # The same smooth architecture (no distilling) with factor 2: u = 8 of 48 queries, so the top-u set
    # switches along the path. f jumps there and the gradient never sees it: the gap is 1e-3 … 1e-1 of
    # f(x) − f(b) on these windows (measured), against ~1e-6 for the same shape with u = L. Jumps of either
    # sign can cancel on one window, so we ask it of the largest of four.
    torch.manual_seed(0)
    model = Informer(config_for(short_prepared, factor=2, distil=False, **TINY)).eval()
    assert active_count(2, 48) < 48
    runs = [input_attribution(model, short_prepared, "test", w, step=5, target_column="load", n_steps=32)
            for w in (0, 3, 6, 9)]
    assert all(a.path_selection_changes > 0 for a in runs)
    assert max(a.relative_gap for a in runs) > 1e-3
    assert all(abs(a.convergence_delta) == pytest.approx(a.completeness_gap, abs=1e-5) for a in runs)
    # the same weights with full attention everywhere: no selection, no jump, no gap
    full = input_attribution(model, short_prepared, "test", 3, step=5, target_column="load", n_steps=32,
                             attention="full")
    assert full.path_selection_changes == 0 and full.completeness_gap < 1e-5


def test_the_trained_model_reports_its_jumps(tiny_trained, short_prepared):
    model = tiny_trained[0].model
    a = input_attribution(model, short_prepared, "test", 0, step=12, target_column="load", n_steps=32)
    assert a.path_selection_changes > 0
    assert abs(a.convergence_delta) == pytest.approx(a.completeness_gap, abs=1e-5)  # captum and us agree


def test_the_same_call_gives_the_same_attributions(tiny_trained, short_prepared):
    model = tiny_trained[0].model
    one = input_attribution(model, short_prepared, "test", 2, step=3, target_column="price", n_steps=16)
    two = input_attribution(model, short_prepared, "test", 2, step=3, target_column="price", n_steps=16,
                            internal_batch_size=5)  # other internal batches, same key sample
    np.testing.assert_allclose(one.array, two.array, rtol=0, atol=1e-6)
    assert one.forecast == two.forecast


def test_a_feature_equal_to_its_baseline_gets_no_attribution(tiny_trained, short_prepared):
    model = tiny_trained[0].model
    values = short_prepared.test.values.copy()
    values[:, 0] = 0.0  # temperature at its training mean everywhere: equal to the zeros baseline
    values[:, 1] = 0.7  # humidity constant: equal to its window mean
    prepared = replace(short_prepared, test=replace(short_prepared.test, values=values))
    zeros = input_attribution(model, prepared, "test", 4, step=2, target_column="load", baseline="zeros",
                              n_steps=16)
    assert np.all(zeros.array[:, 0] == 0.0)
    assert np.abs(zeros.array[:, 1:]).max() > 1e-4
    mean = input_attribution(model, prepared, "test", 4, step=2, target_column="load", baseline="window_mean",
                             n_steps=16)
    assert np.all(mean.array[:, :2] == 0.0)  # both columns are constant over the window
    assert np.abs(mean.array[:, 2:]).max() > 1e-4


def test_baselines_and_the_long_table(tiny_trained, short_prepared):
    model = tiny_trained[0].model
    a = input_attribution(model, short_prepared, "test", 9, step=1, target_column="humidity",
                          baseline="window_mean", n_steps=8)
    window = short_prepared.test.values[9:9 + 48]
    np.testing.assert_allclose(a.baseline, np.tile(window.mean(axis=0), (48, 1)), rtol=1e-6)
    assert np.array_equal(baseline_input(window, "zeros"), np.zeros_like(window))
    t = a.values
    assert list(t.columns) == ["timestamp", "position", "feature", "attribution"] and len(t) == 48 * 4
    assert list(t["feature"][:4]) == ["temperature", "humidity", "price", "load"]
    assert t["timestamp"].iloc[0] == short_prepared.test.timestamps[9]
    assert t["timestamp"].iloc[-1] == short_prepared.test.timestamps[9 + 47]
    pivot = t.pivot(index="position", columns="feature", values="attribution")[list(short_prepared.columns)]
    np.testing.assert_array_equal(pivot.to_numpy(), a.array)


def test_the_model_is_left_untouched(tiny_trained, short_prepared):
    model = tiny_trained[0].model
    before = {k: v.clone() for k, v in model.state_dict().items()}
    flags = [p.requires_grad for p in model.parameters()]
    grads = [None if p.grad is None else p.grad.clone() for p in model.parameters()]  # left by training
    input_attribution(model, short_prepared, "test", 1, step=4, target_column="load", n_steps=8)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert [p.requires_grad for p in model.parameters()] == flags
    assert all((g is None and p.grad is None) or torch.equal(g, p.grad) for g, p in zip(grads, model.parameters()))
    assert not model.training
    assert all(not m._forward_hooks and not m._forward_pre_hooks and not m._backward_hooks for m in model.modules())


def test_bad_arguments_are_named(tiny_trained, short_prepared):
    model = tiny_trained[0].model
    call = lambda **kw: input_attribution(model, short_prepared, "test", **{"window": 0, "step": 1,  # noqa: E731
                                                                            "target_column": "load", **kw})
    with pytest.raises(ValueError, match="step must be in 1"):
        call(step=13)
    with pytest.raises(ValueError, match="outside the test split"):
        call(window=10**6)
    with pytest.raises(ValueError, match="not a forecast column"):
        call(target_column="nope")
    with pytest.raises(ValueError, match="baseline must be one of"):
        call(baseline="noise")
    model.train()
    try:
        with pytest.raises(ValueError, match="train mode"):
            call()
    finally:
        model.eval()
