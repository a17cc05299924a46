"""Ablation page: each study runs in the background behind its Run button and draws the analysis result."""
from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd

from informer_lab.analysis.heads.ablation import head_sweep, random_masking
from informer_lab.analysis.data import load_csv
from informer_lab.analysis.heads.masking import mean_contexts
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from tests.ui.helpers import array
from tests.conftest import SAMPLE_CSV

ABLATION_PAGE = "ui/ablation/page.py"
TABS = ["Single-head sweep", "Layer masking", "Leave-one-in", "Random masking", "Pruning curve",
        "Importance vs ablation"]
SITES = ["encoder.0.0", "encoder.0.1", "decoder_self.0", "cross.0"]  # the tiny model's sites, in gate order
WINDOWS = 32


def _prepared(tiny_trained):
    checkpoint = tiny_trained[0]
    return checkpoint.model, prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))


def _expected_sweep(tiny_trained, mode="zero", seed=0):
    """The same sweep computed straight from analysis/, without the app (mean: 256 train windows, as the app)."""
    model, prepared = _prepared(tiny_trained)
    means = mean_contexts(model, prepared, "train", max_windows=256, seed=seed) if mode == "mean" else None
    return head_sweep(model, prepared, "test", mode=mode, means=means, seed=seed, max_windows=WINDOWS)


def _charts(block) -> list[dict]:
    return [json.loads(el.proto.spec) for el in block.get("plotly_chart")]


def _tab(at, title: str):
    return at.tabs[TABS.index(title)]


def _run_until(at, done, timeout: float = 180):
    """Rerun the script (as the page's polling fragment would) until `done(at)`; fail after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        at.run()
        assert not at.exception, at.exception
        if done(at):
            return at
        assert time.monotonic() < deadline, f"the study did not finish in {timeout} s: {[s.label for s in at.status]}"
        time.sleep(0.2)


def _run_study(at, button: str, tab: str, charts: int = 1):
    at.button(key=button).click().run()
    assert not at.exception, at.exception
    return _run_until(at, lambda a: len(_tab(a, tab).get("plotly_chart")) >= charts)


def _open(open_app):
    at = open_app(ABLATION_PAGE)
    at.radio(key="abl_windows").set_value(WINDOWS).run()
    assert not at.exception, at.exception
    return at


def test_the_page_renders_every_study_waiting_for_its_run_button(open_app):
    at = open_app(ABLATION_PAGE)
    assert [t.label for t in at.tabs] == TABS
    assert at.radio(key="abl_split").value == "test" and at.radio(key="abl_mode").value == "zero"
    assert at.radio(key="abl_windows").value is None  # the whole split (1,741 windows): intervals need many
    assert not at.get("plotly_chart")  # nothing is computed before a Run button is pressed
    assert [i.value for i in at.info] == ["Press **Run** to start this study."] * len(TABS)
    assert sum("**Measured:**" in c.value for c in at.caption) == len(TABS)  # one explanation per study
    assert any("paired" in c.value and "standardised scale" in c.value for c in at.caption)


def test_single_head_sweep_draws_one_row_per_site_and_head_and_the_analysis_numbers(open_app, tiny_trained):
    at = _run_study(_open(open_app), "abl_run_sweep", "Single-head sweep", charts=3)
    tab = _tab(at, "Single-head sweep")
    table = tab.dataframe[0].value
    expected = _expected_sweep(tiny_trained).table
    assert len(table) == 1 + len(SITES) * 4
    assert list(zip(table["site"], table["head"])) == [("baseline", -1)] + [(s, h) for s in SITES for h in range(4)]
    assert (table["windows"] == WINDOWS).all()
    np.testing.assert_allclose(table["mse"], expected["mse"], rtol=1e-6)
    np.testing.assert_allclose(table["delta_mse"], expected["delta_mse"], rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(table["delta_mse_pct"], 100 * table["delta_mse"] / table["mse"].iloc[0], rtol=1e-9)

    heatmap, horizon, intervals = _charts(tab)
    cells = heatmap["data"][0]
    assert cells["type"] == "heatmap" and cells["zmid"] == 0 and cells["texttemplate"] == "%{text}"
    assert list(cells["y"]) == SITES and list(cells["x"]) == ["h0", "h1", "h2", "h3"]
    z = np.array([array(row) for row in cells["z"]]) if isinstance(cells["z"], list) else array(cells["z"])
    np.testing.assert_allclose(z.reshape(4, 4), expected["delta_mse"].to_numpy()[1:].reshape(4, 4), rtol=1e-6)
    assert cells["text"][0][0] == f"{expected['delta_mse'].iloc[1]:+.3g}"  # the value written in its cell

    # the per-horizon line follows the head chosen (the most harmful one first)
    worst = expected.iloc[1:].sort_values("delta_mse", ascending=False).iloc[0]
    assert at.selectbox(key="abl_sweep_head").value == f"{worst['site']}:{worst['head']}"
    per_step = _expected_sweep(tiny_trained).per_step
    line = horizon["data"][0]
    want = per_step[(per_step["site"] == worst["site"]) & (per_step["head"] == worst["head"])]
    np.testing.assert_allclose(array(line["x"]), np.arange(1, 13))
    np.testing.assert_allclose(array(line["y"]), want["delta_mse"], rtol=1e-6, atol=1e-12)
    at.selectbox(key="abl_sweep_head").set_value("cross.0:2").run()
    assert not at.exception
    want = per_step[(per_step["site"] == "cross.0") & (per_step["head"] == 2)]
    np.testing.assert_allclose(array(_charts(_tab(at, "Single-head sweep"))[1]["data"][0]["y"]), want["delta_mse"],
                               rtol=1e-6, atol=1e-12)

    # 32 windows hold half a span of seq_len + pred_len = 60: no interval is claimed, no head listed, and it says so
    bars = intervals["data"][0]
    ranked = expected.iloc[1:].sort_values("delta_mse", ascending=False)
    assert list(bars["x"]) == [f"{s}:{h}" for s, h in zip(ranked["site"], ranked["head"])]
    assert ranked["delta_mse_hi"].isna().all() and bars["error_y"]["visible"] is False
    assert any("No evidence either way" in c.value and "independent stretches" in c.value for c in tab.caption)
    assert [m.value for m in at.metric[2:4]] == ["n/a", "n/a"]


def test_with_enough_windows_the_sweep_bars_carry_intervals_and_the_lists_are_controlled(open_app, tiny_trained):
    from informer_lab.analysis.heads.lists import head_lists

    at = open_app(ABLATION_PAGE)  # the whole split by default
    at = _run_study(at, "abl_run_sweep", "Single-head sweep", charts=3)
    bars = _charts(_tab(at, "Single-head sweep"))[2]["data"][0]
    model, prepared = _prepared(tiny_trained)
    expected = head_sweep(model, prepared, "test", mode="zero", seed=0).table
    ranked = expected.iloc[1:].sort_values("delta_mse", ascending=False)
    assert ranked["delta_mse_hi"].notna().any()  # 1,741 windows: 29 spans of 60
    assert list(bars["x"]) == [f"{s}:{h}" for s, h in zip(ranked["site"], ranked["head"])]
    y = array(bars["y"])
    np.testing.assert_allclose(y + array(bars["error_y"]["array"]), ranked["delta_mse_hi"], rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(y - array(bars["error_y"]["arrayminus"]), ranked["delta_mse_lo"], rtol=1e-6,
                               atol=1e-12)  # NaN (no bar) where a head has no interval
    lists = head_lists(expected).table
    assert at.metric[2].value == f"{int(lists['important'].sum())} of {len(ranked)}"
    assert at.metric[3].value == f"{int(lists['removable'].sum())} of {len(ranked)}"
    assert any(c.value.startswith("Lists: important") and "BH at q = 0.05" in c.value
               for c in _tab(at, "Single-head sweep").caption)


def test_switching_zero_to_mean_ablation_changes_the_numbers(open_app, tiny_trained):
    at = _run_study(_open(open_app), "abl_run_sweep", "Single-head sweep", charts=3)
    zero = _tab(at, "Single-head sweep").dataframe[0].value
    at.radio(key="abl_mode").set_value("mean").run()
    assert not at.exception
    assert not _tab(at, "Single-head sweep").get("plotly_chart")  # zero-ablation numbers are not shown as mean
    assert "Not run for these settings yet" in _tab(at, "Single-head sweep").info[0].value
    at = _run_study(at, "abl_run_sweep", "Single-head sweep", charts=2)
    mean = _tab(at, "Single-head sweep").dataframe[0].value
    assert mean["mse"].iloc[0] == zero["mse"].iloc[0]  # same baseline: same model, windows and key samples
    assert np.abs(mean["delta_mse"] - zero["delta_mse"]).max() > 1e-4
    np.testing.assert_allclose(mean["delta_mse"], _expected_sweep(tiny_trained, "mean").table["delta_mse"],
                               rtol=1e-5, atol=1e-9)
    # back to zero: the cached result comes back at once, unchanged
    at.radio(key="abl_mode").set_value("zero").run()
    pd.testing.assert_frame_equal(_tab(at, "Single-head sweep").dataframe[0].value, zero)


def test_random_masking_draws_a_box_of_the_repeats_per_k(open_app, tiny_trained):
    at = _open(open_app)
    at.multiselect(key="abl_random_ks").set_value([10, 50])
    at.slider(key="abl_random_repeats").set_value(4)
    at = _run_study(at, "abl_run_random", "Random masking")
    tab = _tab(at, "Random masking")
    boxes = [t for t in _charts(tab)[0]["data"] if t["type"] == "box"]
    assert [b["name"] for b in boxes] == ["10 % (2 heads)", "50 % (8 heads)"]  # round(k · 16 heads)
    model, prepared = _prepared(tiny_trained)
    summary, draws = tab.dataframe[0].value, tab.dataframe[1].value
    assert len(draws) == 8 and list(summary["repeats"]) == [4, 4]
    for box, k in zip(boxes, (10, 50)):
        expected = random_masking(model, prepared, "test", fraction=k / 100, repeats=4, seed=0, eval_seed=0,
                                  max_windows=WINDOWS)
        np.testing.assert_allclose(array(box["y"]), expected["delta_mse"], rtol=1e-6, atol=1e-12)
        baseline = float((expected["mse"] - expected["delta_mse"]).iloc[0])
        below = int((expected["delta_mse"] < 0.05 * baseline).sum())
        label = f"k = {k} % ({2 if k == 10 else 8} heads)"
        assert [m.value for m in tab.metric if m.label == label] == [f"{below} of 4"]
        assert summary.loc[summary["k_percent"] == k, "draws_below_5pct"].item() == below


def test_the_other_studies_draw_charts_and_tables(open_app):
    at = _open(open_app)
    at = _run_study(at, "abl_run_layers", "Layer masking")
    layers = _tab(at, "Layer masking").dataframe[0].value
    assert list(layers["site"]) == ["baseline", *SITES] and list(layers["n_masked"]) == [0, 4, 4, 4, 4]
    bars = _charts(_tab(at, "Layer masking"))[0]["data"][0]
    np.testing.assert_allclose(array(bars["y"]), layers["delta_mse"].iloc[1:], rtol=1e-9)

    at = _run_study(at, "abl_run_loi", "Leave-one-in")
    assert len(_tab(at, "Leave-one-in").dataframe[0].value) == 17
    assert [t["name"] for t in _charts(_tab(at, "Leave-one-in"))[0]["data"]] == [f"only h{h} kept" for h in range(4)]

    at = _run_study(at, "abl_run_pruning", "Pruning curve")
    curve = _tab(at, "Pruning curve").dataframe[0].value
    assert curve["n_removed"].iloc[0] == 0 and curve["n_removed"].is_monotonic_increasing
    figure = _charts(_tab(at, "Pruning curve"))[0]
    assert figure["data"][0]["mode"] == "lines+markers"
    assert any(s.get("type") == "line" for s in figure["layout"]["shapes"])  # the tolerance line
    assert "removed so far" in figure["data"][0]["hovertemplate"]

    at = _run_study(at, "abl_run_importance", "Importance vs ablation")
    tab = _tab(at, "Importance vs ablation")
    compared = tab.dataframe[0].value
    assert len(compared) == 16 and compared["delta_mse"].notna().all()
    rho = [m.value for m in tab.metric if m.label.startswith("Spearman ρ (normalised")]
    assert len(rho) == 1 and -1 <= float(rho[0]) <= 1
    assert "ρ" in _charts(tab)[0]["layout"]["title"]["text"]
    assert not at.exception


def test_a_study_job_reports_its_parts_and_a_failure_as_its_message():
    """The background job alone (no Streamlit): progress by part, the result combined, a typed error kept."""
    import threading

    from informer_lab.analysis.errors import ConfigError
    from informer_lab.ui.ablation.jobs import StudyJob

    gate = threading.Event()
    job = StudyJob("demo", [("first", lambda: 1), ("second", lambda: gate.wait(10) and 2)], sum).start()
    deadline = time.monotonic() + 10
    while job.view().done < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    view = job.view()
    assert (view.status, view.phase, view.done, view.total) == ("running", "second", 1, 2) and not view.finished
    gate.set()
    assert job.wait(10)
    view = job.view()
    assert (view.status, view.result, view.done, view.error) == ("done", 3, 2, None) and view.finished

    def fail():
        raise ConfigError("the val split has no complete window")

    failed = StudyJob("broken", [("only", fail)], lambda r: r[0]).start()
    assert failed.wait(10)
    view = failed.view()
    assert (view.status, view.error, view.result) == ("failed", "the val split has no complete window", None)
