"""Attribution page: Integrated Gradients runs on submit; what it shows is input_attribution's result."""
from __future__ import annotations

import numpy as np
import pandas as pd

from informer_lab.analysis.instruments.attribution import input_attribution
from informer_lab.ui.compute import one_thread
from informer_lab.analysis.data import load_csv
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from tests.ui.helpers import charts, grid, metric
from tests.conftest import SAMPLE_CSV

PAGE = "ui/attribution/page.py"


def _expected(tiny_trained, **kwargs):
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    with one_thread():  # as the page computes it (ui/compute.py): the same reduction order, the same last digits
        return input_attribution(checkpoint.model, prepared, **kwargs)


def float32_close(shown, expected, scale=None) -> None:
    """Attributions are float32 sums: computed twice (the page's thread, this test's) their last digits may differ
    with the reduction order (3.9e-6 relative seen on another CPU). Tolerances follow float32: relative 1e-4 of each
    value, absolute 1e-5 of the array's largest magnitude."""
    expected = np.asarray(expected, dtype=np.float64)
    scale = float(np.abs(expected).max()) if scale is None else scale
    np.testing.assert_allclose(np.asarray(shown, dtype=np.float64), expected, rtol=1e-4, atol=1e-5 * scale)


def shown_close(text: str, expected: float, scale: float) -> None:
    """A metric shown to 3 significant digits against a float32 value: its rounding (5e-3 relative) and float32's."""
    assert abs(number(text) - expected) <= 5e-3 * abs(expected) + 1e-5 * scale, (text, expected)


def number(text: str) -> float:
    """A metric's shown value as a number ('+1.23e-05', '0.42%', '0.1234')."""
    return float(text.strip().rstrip("%")) / (100 if text.strip().endswith("%") else 1)


def _heatmap(at) -> dict:
    found = [f for f in charts(at) if f["layout"]["title"]["text"].startswith("Attribution to f(x)")]
    assert len(found) == 1
    return found[0]


def _run(at):
    [button] = [b for b in at.button if b.label == "Run"]
    button.click().run()
    assert not at.exception, at.exception
    return at


def test_nothing_runs_until_run_is_pressed(open_app):
    at = open_app(PAGE)
    assert not at.exception
    assert not charts(at)
    assert any("press **Run**" in i.value for i in at.info)


def test_running_shows_the_attribution_and_its_checks(open_app, tiny_trained):
    at = open_app(PAGE)
    at.slider(key="at_window_test").set_value(3)
    at.number_input(key="at_step").set_value(5)
    at.number_input(key="at_n_steps").set_value(16)
    _run(at)
    expected = _expected(tiny_trained, split="test", window=3, step=5, target_column="load", n_steps=16, seed=0)
    scale = float(np.abs(expected.array).max())
    shown_close(metric(at, "Convergence delta"), expected.convergence_delta, scale)
    assert abs(number(metric(at, "Completeness gap")) - expected.relative_gap) <= 1e-4 + 5e-3 * expected.relative_gap
    assert metric(at, "Selection changed") == f"{expected.path_selection_changes} of 16"
    assert abs(number(metric(at, "f(x)")) - expected.forecast) <= 1e-4
    figure = _heatmap(at)
    float32_close(grid(figure["data"][0]["z"], float), expected.array.T)
    assert list(figure["data"][0]["y"]) == ["temperature", "humidity", "price", "load"]
    assert figure["data"][0]["zmid"] == 0
    stamps = pd.DatetimeIndex(figure["data"][0]["x"])
    assert stamps[0] == expected.values.timestamp.iloc[0] and len(stamps) == 48
    heading = [s.value for s in at.subheader][0]
    target_time = expected.values.timestamp.iloc[-1] + pd.Timedelta(hours=5)
    assert heading.startswith(f"load at {target_time} (step 5 of window 3, test)")
    totals = next(d.value for d in at.dataframe if "Σ attribution" in d.value.columns)
    float32_close(totals["Σ attribution"].sum(), expected.array.sum(), scale)
    # the gap is explained in words when it is large, and named small otherwise
    explained = any("selection" in w.value and "jumps" in w.value for w in at.warning)
    assert explained == (expected.relative_gap > 0.01)
    # the form holds other values now: the result stays until Run is pressed again
    at.number_input(key="at_step").set_value(7).run()
    shown_close(metric(at, "Convergence delta"), expected.convergence_delta, scale)


def test_full_attention_and_baseline_choices_reach_the_analysis(open_app, tiny_trained):
    at = open_app(PAGE)
    at.number_input(key="at_n_steps").set_value(8)
    at.radio(key="at_baseline").set_value("window_mean")
    at.radio(key="at_attention").set_value("full")
    _run(at)
    expected = _expected(tiny_trained, split="test", window=0, step=1, target_column="load", n_steps=8,
                         baseline="window_mean", attention="full", seed=0)
    assert metric(at, "Selection changed") == "0 of 8"  # no top-u selection under full attention
    shown_close(metric(at, "Convergence delta"), expected.convergence_delta, float(np.abs(expected.array).max()))
    float32_close(grid(_heatmap(at)["data"][0]["z"], float), expected.array.T)
