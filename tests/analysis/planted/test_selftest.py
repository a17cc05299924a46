"""The self-test against models whose state is known: trained to ≤ 1.5× the Bayes MSE (it passes), untrained (it
fails), and with a broken instrument (Integrated Gradients with its input and baseline swapped: caught)."""
import numpy as np
import pytest
import torch
from captum.attr import IntegratedGradients

from informer_lab.analysis.instruments.attribution import forecast_function
from informer_lab.analysis.data import DataSpec, load_csv, prepare
from informer_lab.analysis.planted.selftest import LEARNED, self_test
from informer_lab.analysis.planted.synth import SynthSpec, generate
from informer_lab.analysis.learning.training import TrainSettings, config_for, train
from informer_lab.analysis.learning.windows import WindowDataset
from informer_lab.model import Informer

# One pytest-xdist worker for the module: its trained model (a minute on one core) is made once, not once per worker.
pytestmark = pytest.mark.xdist_group("selftest")

QUICK = dict(ig_windows=6, n_steps=16, profile_windows=128, sweep_windows=None)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One torch thread: small models on a shared two-core machine run several times faster so (ui/compute.py)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def planted():
    """A seasonal AR at lag 12 (4,000 hourly rows, an irrelevant column x, a decoy column with the target's own season
    and no effect on it) and a small Informer trained on it to about 1.25× its Bayes MSE (d_model 32, 4 heads, 6
    epochs at a peak rate of 1e-2: about a minute on one core)."""
    frame_df, answer = generate(SynthSpec(rows=4000, lags=(12,), coefs=(0.9,), seed=1, decoys=1))
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
    assert rows.loc["ig_decoy", "passed"], rows.loc["ig_decoy", "detail"]  # the decoy is not reported relevant
    assert "± 1 step" in rows.loc["ig_top", "detail"]  # the tolerance is stated
    # a head attends at lag 12 … (848 test rows of a season that persists for days hold about six independent
    # stretches of windows: its mass there has no honest interval, and the row says n/a rather than pass)
    assert rows.loc["head_lag", "passed"] or (rows.loc["head_lag", "passed"] is None
                                              and np.isnan(rows.loc["head_lag", "lo"]))
    assert "dominant lag 12" in rows.loc["head_lag", "detail"] or "dominant lag 11" in rows.loc["head_lag", "detail"] \
        or "dominant lag 13" in rows.loc["head_lag", "detail"]
    assert rows.loc["head_knockout", "figure"] > 0  # … and removing it costs more than removing another
    assert np.isnan(rows.loc["topu_events", "figure"])  # no spikes planted: does not apply
    for name in ("rollout_mass", "flow_mass"):  # reported whatever they show, beside the verdict
        assert rows.loc[name, "role"] == "heuristic" and np.isfinite(rows.loc[name, "figure"]), rows.loc[name]
        assert rows.loc[name, "passed"] == (rows.loc[name, "figure"] >= 2.0)
        print(name, rows.loc[name, "figure"], rows.loc[name, "lo"], rows.loc[name, "hi"], rows.loc[name, "detail"])
    for _, r in test.table.dropna(subset=["lo"]).iterrows():
        assert r.lo <= r.figure + 1e-9 and r.figure <= r.hi + 1e-9, r.check
        if r.check in ("ig_top", "ig_mass", "ig_sign", "ig_decoy"):  # shares: no bound outside [0, 1]
            assert 0.0 <= r.lo and r.hi <= 1.0, r.check


def test_the_self_test_fails_on_an_untrained_model(planted):
    frame, answer, prepared, result = planted
    torch.manual_seed(3)
    untrained = Informer(result.model.config).eval()
    test = self_test(untrained, prepared, frame, answer, **QUICK)
    rows = test.table.set_index("check")
    assert not test.passed and test.verdict().startswith("FAIL: the model has not learned")
    assert rows.loc["learned", "figure"] > 3  # an untrained model is far from Bayes
    assert not rows.loc["ig_top", "passed"]  # and its attributions do not find the planted lag
    words = dict(zip(test.table["check"], test.results()))  # but no instrument is said to fail on such a model
    assert words["learned"] == "FAIL" and words["ig_top"] == "not judged"
    assert set(words.values()) <= {"FAIL", "not judged", "n/a"} and list(words.values()).count("FAIL") == 1


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


def _scripted(prepared, answer, top_on_planted):
    """An attribution whose largest |value| lies on the planted cell (y at lag 12) for the windows `top_on_planted`
    says (by the order the self-test asks for them), and far from it (column x, first step) for the others."""
    seen: list[int] = []
    columns = list(prepared.columns)

    def attribute(model, prepared_, split, window, step, target_column, seed, n_steps):
        if window not in seen:
            seen.append(window)
        attr = np.full((prepared.spec.seq_len, prepared.enc_in), 0.01)
        if top_on_planted(seen.index(window)):
            attr[prepared.spec.seq_len - 1 + step - 12, columns.index("y")] = 1.0
        else:
            attr[0, columns.index("x")] = 1.0
        return attr

    return attribute


def test_instrument_rows_pass_on_their_point_estimate_not_on_a_bound_of_their_interval(planted, monkeypatch):
    """ig_top over 8 windows: 5 of 8 on the planted cell gives 0.625 ≥ 0.5 with a lower bound under 0.5 — it passes;
    3 of 8 gives 0.375 < 0.5 with an upper bound over 0.5 — it fails. A rule on either bound would flip one."""
    from informer_lab.analysis.planted import selftest
    from informer_lab.analysis.planted.selftest import IG_TOP, _ig_rows

    frame, answer, prepared, result = planted
    # the rule given an interval: the 8 windows taken as independent (the planted season's memory would leave none)
    monkeypatch.setattr(selftest, "data_span", lambda *args, **kwargs: 1)
    for hits, passes in ((5, True), (3, False)):
        rows, n = _ig_rows(result.model, prepared, answer, 0, 8, 4, _scripted(prepared, answer, lambda k: k < hits))
        top = next(r for r in rows if r["check"] == "ig_top")
        assert n == 8 and top["figure"] == pytest.approx(hits / 8)
        assert top["lo"] < IG_TOP < top["hi"]  # the interval straddles the criterion either way
        assert top["passed"] is passes


def test_a_decoy_that_draws_the_attribution_is_reported(planted):
    from informer_lab.analysis.planted.selftest import _ig_rows

    frame, answer, prepared, result = planted
    columns = list(prepared.columns)

    def on_the_decoy(model, prepared_, split, window, step, target_column, seed, n_steps):
        attr = np.full((prepared.spec.seq_len, prepared.enc_in), 0.01)
        attr[:, columns.index("decoy")] = 1.0  # the whole season of the decoy column
        return attr

    rows, _ = _ig_rows(result.model, prepared, answer, 0, 6, 4, on_the_decoy)
    decoy = next(r for r in rows if r["check"] == "ig_decoy")
    assert decoy["passed"] is False and decoy["figure"] > 0.9
