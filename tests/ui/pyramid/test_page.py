"""Distilling pyramid page: lengths, spans, survival and norms are the pyramid report's; picking only re-slices."""
from __future__ import annotations

import numpy as np
import pytest

from informer_lab.analysis.data import load_csv
from informer_lab.analysis.attention.pyramid import pyramid_report
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from informer_lab.ui.pyramid import cache as screen_cache
from informer_lab.ui.pyramid import tables as views
from tests.ui.helpers import array, charts, figure, grid, markdown_tables
from tests.conftest import SAMPLE_CSV

PAGE = "ui/pyramid/page.py"


@pytest.fixture(scope="module")
def report_for(tiny_trained):
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    return lambda split, window, seed=0: pyramid_report(checkpoint.model, prepared, split, window, seed=seed)


def _tab(at, name: str):
    """Open a detail tab (lazy tabs: only the open one is drawn)."""
    at.session_state["py_tab"] = name
    at.run()
    assert not at.exception, at.exception
    return at


def _link(at) -> list[float]:
    """x of the band joining the chosen position to its span (cell left, cell right, span end + 1, span start)."""
    band = [t for t in figure(at, "The encoder pyramid")["data"] if t.get("fill") == "toself"]
    assert len(band) == 1
    return [float(v) for v in array(band[0]["x"])[:4]]


def test_renders_lengths_picture_survival_norms_and_rows(open_app, report_for, monkeypatch):
    calls = []
    real = screen_cache.pyramid_report
    monkeypatch.setattr(screen_cache, "pyramid_report", lambda *a, **k: calls.append(a[2:]) or real(*a, **k))
    at = open_app(PAGE)
    assert not at.exception and not at.error
    report = report_for("test", 0)
    lengths = next(t for t in markdown_tables(at) if "recorded" in t.columns)
    assert list(lengths["recorded"]) == ["48", "24"] and list(lengths["match"]) == ["✓", "✓"]
    assert any("✓ every recorded length matches the formula" in m.value for m in at.markdown)
    picture = figure(at, "The encoder pyramid")
    heatmap = next(t for t in picture["data"] if t["type"] == "heatmap" and t.get("name") == "positions")
    z, half_steps = grid(heatmap["z"], float), array(heatmap["x"])
    assert np.isfinite(z).sum() == 2 * (48 + 24)  # one cell (two half steps) per position of each layer
    for row, (level, part) in enumerate(report.norms.groupby("level"), start=1):
        L = len(part)
        for position, norm in zip(part.position, part.norm):  # centred over the 48 input steps
            centre = 48 / 2 - L / 2 + position + 0.5
            columns = np.flatnonzero(np.abs(half_steps - centre) < 0.5)
            assert len(columns) == 2 and np.allclose(z[row, columns], norm, rtol=1e-6)
    assert np.isnan(z[0]).all()  # the input window is its own grey row, not a norm
    inputs = next(t for t in picture["data"] if t.get("name") == "input")
    assert len(inputs["text"][0]) == len(half_steps) and inputs["text"][0][0] != ""  # each step's time in the hover
    # the default choice: the deepest layer, position 0, which tiles input steps 0–1
    assert _link(at) == [12.0, 13.0, 2.0, 0.0]
    drawn = [c["layout"]["title"]["text"] for c in charts(at)]
    assert not any(t.startswith(("Max-pool survival", "Feature norm", "Softmax rows")) for t in drawn), drawn  # lazy
    _tab(at, "Max-pool survival")
    survival = grid(figure(at, "Max-pool survival")["data"][0]["z"], float)
    np.testing.assert_allclose(survival[0], report.survival.survived)
    _tab(at, "Feature norms")
    norms = grid(figure(at, "Feature norm")["data"][0]["z"], float)
    np.testing.assert_allclose(norms[0], report.norms[report.norms.level == 0].norm)
    np.testing.assert_allclose(norms[1, :24], report.norms[report.norms.level == 1].norm)
    assert np.isnan(norms[1, 24:]).all()
    rows = report.attention[0]
    _tab(at, "Attention rows per encoder layer")
    np.testing.assert_allclose(grid(figure(at, "Softmax rows")["data"][0]["z"], float),
                               rows.rows[0, 0][np.argsort(rows.selected[0, 0])])
    assert len(calls) == 1


def test_choosing_a_position_a_layer_and_a_head_reslices(open_app, report_for, monkeypatch):
    calls = []
    real = screen_cache.pyramid_report
    monkeypatch.setattr(screen_cache, "pyramid_report", lambda *a, **k: calls.append(a[2:]) or real(*a, **k))
    at = open_app(PAGE)
    at.slider(key="py_position_0:1").set_value(5).run()
    assert not at.exception
    assert _link(at) == [17.0, 18.0, 12.0, 10.0]  # position 5 of layer 1 tiles input steps 10–11
    assert any("position 5** tiles input steps 10–11" in m.value for m in at.markdown)
    at.selectbox(key="py_row").set_value("0:0").run()
    assert not at.exception
    assert _link(at) == [0.0, 1.0, 1.0, 0.0]
    _tab(at, "Attention rows per encoder layer")
    at.selectbox(key="py_site").set_value("encoder.0.1").run()
    at.selectbox(key="py_head").set_value(3).run()
    assert not at.exception
    rows = report_for("test", 0).attention[1]
    np.testing.assert_allclose(grid(figure(at, "Softmax rows")["data"][0]["z"], float),
                               rows.rows[0, 3][np.argsort(rows.selected[0, 3])])
    assert len(calls) == 1


def test_the_window_changes_the_recorded_data(open_app, report_for):
    at = _tab(open_app(PAGE), "Feature norms")
    before = grid(figure(at, "Feature norm")["data"][0]["z"], float)
    at.slider(key="py_window_test").set_value(9).run()
    assert not at.exception
    after = grid(figure(at, "Feature norm")["data"][0]["z"], float)
    np.testing.assert_allclose(after[0], report_for("test", 9).norms.query("level == 0").norm)
    assert not np.allclose(after[0], before[0])


def test_pyramid_pick_reads_a_clicked_cell():
    """A cell's customdata is (replica, layer, position); the input row's is its step, the joined output's four
    values, a gap's NaN: none of those is a cell."""
    click = {"selection": {"points": [{"curve_number": 1, "point_index": [2, 35], "customdata": [0, 1, 5]}]}}
    assert views.pyramid_pick(click) == (0, 1, 5)
    for other in (3, [0, 4, 7, None], [None, None, None], [0, "x", 1]):
        assert views.pyramid_pick({"selection": {"points": [{"customdata": other}]}}) is None


def test_every_cell_of_the_picture_carries_its_own_replica_layer_and_position(open_app, report_for):
    """The picture's grid: wherever a cell is drawn, its hover/click data names that very cell (on both half steps it
    covers), and its colour is that position's output norm."""
    at = open_app(PAGE)
    picture = figure(at, "The encoder pyramid")
    cells_trace = next(t for t in picture["data"] if t.get("name") == "positions")
    z, where = grid(cells_trace["z"], float), grid(cells_trace["customdata"], float)
    norms = report_for("test", 0).norms
    drawn = np.argwhere(np.isfinite(z))
    assert len(drawn) == 2 * len(norms)  # every position, two half steps each
    for row, column in drawn:
        replica, level, position = where[row, column]
        want = norms[(norms.replica == replica) & (norms.level == level) & (norms.position == position)].norm
        assert len(want) == 1 and np.isclose(z[row, column], want.iloc[0], rtol=1e-5)


def test_side_by_side_lengths_of_another_window_shape_are_marked(open_app, with_second):
    at = open_app(PAGE)
    at.selectbox(key="second_model").set_value(with_second).run()
    assert not at.exception, at.exception
    lengths = next(t for t in markdown_tables(at) if "differs" in t.columns)
    assert list(lengths["recorded_length · sample"]) == ["48", "24"]  # tiny model: seq_len 48, two layers
    assert list(lengths["recorded_length · other"]) == ["36", "18"]  # the second: seq_len 36
    assert (lengths["differs"] == "True").all()
    assert any("not the same input steps" in i.value for i in at.info)


def test_side_by_side_survival_of_the_same_weights_differs_nowhere(open_app, runs_dir, report_for):
    import shutil
    shutil.copytree(runs_dir / "sample", runs_dir / "copy")
    at = open_app(PAGE)
    at.selectbox(key="second_model").set_value("copy").run()
    assert not at.exception, at.exception
    lengths = next(t for t in markdown_tables(at) if "differs" in t.columns)
    assert (lengths["differs"] == "False").all()
    z = grid(figure(at, "Max-pool survival, copy − sample")["data"][0]["z"], float)
    assert np.nanmax(np.abs(z)) == 0 and np.isfinite(z).sum() == len(report_for("test", 0).survival)


def test_pool_winners_show_their_mean_per_step_and_every_position_on_request(open_app, report_for):
    at = open_app(PAGE)
    kept = report_for("test", 0).kept
    mean = next(t for t in markdown_tables(at) if "from 2i" in t.columns)
    assert len(mean) == kept["step"].nunique()
    for column, raw in (("from 2i−1", "offset_minus1"), ("from 2i", "offset_0"), ("from 2i+1", "offset_plus1")):
        assert [float(v) for v in mean[column]] == pytest.approx(
            list(kept.groupby("step")[raw].mean()), abs=5e-4)
    assert not any("from 2i" in d.value.columns for d in at.dataframe)  # the long table waits for its expander
    at.session_state["py_kept_open"] = True
    at.run()
    assert not at.exception, at.exception
    every = next(d.value for d in at.dataframe if "from 2i" in d.value.columns)
    assert len(every) == len(kept)
