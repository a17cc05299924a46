"""The self-test against models whose state is known: trained to ≤ 1.5× the Bayes MSE (it passes), untrained (it
fails), and with a broken instrument (Integrated Gradients with its input and baseline swapped: caught)."""
import numpy as np
import pytest
import torch
from captum.attr import IntegratedGradients

from analysis.instruments.attribution import forecast_function
from analysis.data import DataSpec, load_csv, prepare
from analysis.planted.selftest import LEARNED, self_test
from analysis.planted.synth import SynthSpec, generate
from analysis.learning.training import TrainSettings, config_for, train
from analysis.learning.windows import WindowDataset
from model import Informer

QUICK = dict(ig_windows=6, n_steps=16, profile_windows=32, sweep_windows=128)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One torch thread: small models on a shared two-core machine run several times faster so (ui/compute.py)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def planted():
    """A seasonal AR at lag 12 (4,000 hourly rows, an irrelevant column x) and a small Informer trained on it to
    about 1.25× its Bayes MSE (d_model 32, 4 heads, 6 epochs at a peak rate of 1e-2: about a minute on one core)."""
    frame_df, answer = generate(SynthSpec(rows=4000, lags=(12,), coefs=(0.9,), seed=1))
    frame = load_csv(frame_df.to_csv(index=False).encode())
    prepared = prepare(frame, DataSpec("y", "MS", 48, 24, 12))
    config = config_for(prepared, d_model=32, n_heads=4, d_ff=64, e_layers=(2,), d_layers=1, dropout=0.05)
    result = train(prepared, config, TrainSettings(epochs=6, learning_rate=1e-2, seed=0))
    return frame, answer, prepared, result


def test_the_self_test_passes_on_a_model_that_learned(planted):
    frame, answer, prepared, result = planted
    test = self_test(result.model, prepared, frame, answer, **QUICK)
    rows = test.table.set_index("check")
    assert rows.loc["learned", "figure"] <= LEARNED, rows.loc["learned", "detail"]
    assert test.passed, (test.verdict(), test.table[["check", "figure", "lo", "hi", "passed"]])
    assert rows.loc["ig_top", "figure"] >= 0.5 and rows.loc["ig_sign", "figure"] >= 0.8
    assert rows.loc["head_lag", "passed"]  # a head attends at lag 12 …
    assert "dominant lag 12" in rows.loc["head_lag", "detail"] or "dominant lag 11" in rows.loc["head_lag", "detail"] \
        or "dominant lag 13" in rows.loc["head_lag", "detail"]
    assert rows.loc["head_knockout", "figure"] > 0  # … and removing it costs more than removing another
    assert np.isnan(rows.loc["topu_events", "figure"])  # no spikes planted: does not apply
    for _, r in test.table.dropna(subset=["lo"]).iterrows():
        assert r.lo <= r.figure + 1e-9 and r.figure <= r.hi + 1e-9, r.check


def test_the_self_test_fails_on_an_untrained_model(planted):
    frame, answer, prepared, result = planted
    torch.manual_seed(3)
    untrained = Informer(result.model.config).eval()
    test = self_test(untrained, prepared, frame, answer, **QUICK)
    rows = test.table.set_index("check")
    assert not test.passed and test.verdict().startswith("FAIL: the model has not learned")
    assert rows.loc["learned", "figure"] > 3  # an untrained model is far from Bayes
    assert not rows.loc["ig_top", "passed"]  # and its attributions do not find the planted lag


def test_the_self_test_catches_integrated_gradients_with_input_and_baseline_swapped(planted):
    frame, answer, prepared, result = planted

    def swapped(model, prepared, split, window, step, target_column, seed, n_steps):
        x_enc, mark_enc, _, mark_dec, _ = WindowDataset(prepared, split)[window]
        f = forecast_function(model, mark_enc, mark_dec, step=step,
                              column_index=list(prepared.target_columns).index(target_column), seed=seed)
        x = x_enc[None]
        broken = IntegratedGradients(f).attribute(torch.zeros_like(x), baselines=x, n_steps=n_steps,
                                                  method="gausslegendre")  # the bug: input and baseline swapped
        return broken[0].detach().double().numpy()

    test = self_test(result.model, prepared, frame, answer, attribute=swapped, **QUICK)
    rows = test.table.set_index("check")
    assert test.table.loc[test.table["check"] == "learned", "passed"].item()  # the model is fine …
    assert not test.passed and "instrument" in test.verdict()  # … the instrument is not
    assert not rows.loc["ig_sign", "passed"] and not rows.loc["ig_completeness", "passed"]
