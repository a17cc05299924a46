"""Sparsity explorer: every number drawn is the sparsity report's; choosing a head or site only re-slices it."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from informer_lab.analysis.data import load_csv
from informer_lab.analysis.attention.sparsity import sparsity_report
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from informer_lab.ui.sparsity import cache as screen_cache
from informer_lab.ui.sparsity import tables as views
from tests.ui.helpers import array, charts, figure, grid, markdown_tables
from tests.conftest import SAMPLE_CSV

PAGE = "ui/sparsity/page.py"


@pytest.fixture(scope="module")
def reports(tiny_trained):
    """report(split, window, seed=0, seeds=10), straight from analysis/ (memoised)."""
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    memo = {}

    def report(split, window, seed=0, seeds=10):
        key = (split, window, seed, seeds)
        if key not in memo:
            memo[key] = sparsity_report(checkpoint.model, prepared, split, [window], seed=seed, seeds=seeds)
        return memo[key]

    return report


def _rows_z(at) -> np.ndarray:
    return grid(figure(at, "Softmax rows")["data"][0]["z"]).astype(float)


def _marks(at) -> pd.DatetimeIndex:
    series = figure(at, "load with the queries")
    marks = [t for t in series["data"] if t["name"].startswith("selected queries")]
    return pd.DatetimeIndex(marks[0]["x"]) if marks else pd.DatetimeIndex([])


def _texts(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def _tab(at, name: str):
    """Open a detail tab (lazy tabs: only the open one is drawn)."""
    at.session_state["sp_tab"] = name
    at.run()
    assert not at.exception, at.exception
    return at


def _counting(monkeypatch, name: str = "record_window"):
    """Calls of the cache's `name` (record_window: forward passes of the window; site_agreement: seed sweeps)."""
    calls = []
    real = getattr(screen_cache, name)

    def counted(*args, **kwargs):
        calls.append((args[2:], kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(screen_cache, name, counted)
    return calls


def test_renders_every_view_of_the_report(open_app, reports, monkeypatch):
    calls = _counting(monkeypatch)
    sweeps = _counting(monkeypatch, "site_agreement")
    at = open_app(PAGE)
    assert not at.exception and not at.error
    assert len(calls) == 1 and not sweeps  # one recording; no seed sweep until the agreement is shown
    report = reports("test", 0)
    # the grid: one invisible, clickable marker per (site, head), carrying (site index, head)
    heads = figure(at, "Mean row entropy")
    overlay = heads["data"][1]
    assert overlay["type"] == "scatter" and overlay["marker"]["opacity"] < 0.05
    cells = {tuple(int(v) for v in c) for c in grid(overlay["customdata"])}
    assert cells == {(s, h) for s in range(4) for h in range(4)}
    assert heads["layout"]["hoverdistance"] == -1
    z = grid(heads["data"][0]["z"]).astype(float)
    heads = report.heads
    cell = heads[(heads["site"] == "encoder.0.1") & (heads["head"] == 2)]
    np.testing.assert_allclose(z[1, 2], (cell["mean_entropy"] / cell["uniform_entropy"]).item())
    # sampled M̄ per query and head, the chosen site being the first encoder layer
    scores = figure(at, "sampled M̄ per query")
    expected = report.queries[report.queries.site == "encoder.0.0"].sort_values(["head", "position"])
    np.testing.assert_allclose(grid(scores["data"][0]["z"]).astype(float),
                               expected.sampled_mbar.to_numpy().reshape(4, 48))
    # the marked timestamps are head 0's selected queries
    chosen = expected[(expected["head"] == 0) & expected.selected]
    assert list(_marks(at)) == list(pd.DatetimeIndex(chosen.timestamp))
    assert len(charts(at)) == 3  # grid, scores, series: the other tabs are not drawn until opened
    # head 0's rows: only the u selected queries, in time order; lazy rows named with their rule
    _tab(at, "Attention rows")
    rows = report.site_rows("encoder.0.0")
    order = np.argsort(rows.selected[0, 0])
    np.testing.assert_allclose(_rows_z(at), rows.rows[0, 0][order])
    assert "Lazy queries: 28 of 48, not drawn below (no softmax row)." in _texts(at)
    assert "**mean(V)**" in _texts(at)
    # agreement (mean ± sd over 10 seeds, with the chance level)
    _tab(at, "Exact vs sampled")
    agreement = next(d.value for d in at.dataframe if "overlap@u" in d.value.columns)
    site = report.agreement[report.agreement.site == "encoder.0.0"]
    np.testing.assert_allclose(agreement["overlap@u"], site.overlap_at_u_mean)
    np.testing.assert_allclose(agreement["overlap@u sd"], site.overlap_at_u_std)
    np.testing.assert_allclose(agreement["Spearman ρ"], site.spearman_mean)
    np.testing.assert_allclose(agreement["chance (u / L_Q)"], 20 / 48)
    assert set(agreement["seeds"]) == {10}
    scatter = figure(at, "Head 0: sampled M̄ vs exact")
    assert sum(len(array(t["x"])) for t in scatter["data"]) == 48
    # the per-head summary
    _tab(at, "Every head")
    summary = next(d.value for d in at.dataframe if "dominant lag" in d.value.columns)
    assert len(summary) == 16
    assert len(calls) == 1  # tabs re-slice the one recording
    assert [args[2] for args, _ in sweeps] == ["encoder.0.0"]  # the seeds swept for the site shown only


def test_changing_the_head_only_reslices(open_app, reports, monkeypatch):
    calls = _counting(monkeypatch)
    at = _tab(open_app(PAGE), "Attention rows")
    before, grid_before = _rows_z(at), figure(at, "Mean row entropy")
    at.selectbox(key="sp_head").set_value(2).run()
    assert not at.exception
    rows = reports("test", 0).site_rows("encoder.0.0")
    after = _rows_z(at)
    np.testing.assert_allclose(after, rows.rows[0, 2][np.argsort(rows.selected[0, 2])])
    assert not np.allclose(after, before)
    assert "encoder.0.0:2" in [h.value for h in at.header]
    # the grid's spec is unchanged, so the browser does not redraw it (the heading names the chosen head)
    assert figure(at, "Mean row entropy") == grid_before
    assert len(calls) == 1  # one recording; the head switch re-sliced it


def test_the_selected_queries_table_lists_the_chosen_heads_selection(open_app, reports):
    at = open_app(PAGE)
    queries = reports("test", 0).queries
    for head in (0, 3):
        if head:
            at.selectbox(key="sp_head").set_value(head).run()
            assert not at.exception
        chosen = queries[(queries.site == "encoder.0.0") & (queries["head"] == head) & queries.selected]
        chosen = chosen.sort_values("position")
        tables = markdown_tables(at)  # one markdown block: a click redraws it cheaply (ui.widgets.small_table)
        assert len(tables) == 1
        shown = tables[0]
        assert list(shown.columns) == ["position", "timestamp", "sampled M̄", "exact-M rank"]
        assert [int(p) for p in shown["position"]] == list(chosen.position)
        assert list(shown["sampled M̄"]) == [f"{v:.3f}" for v in chosen.sampled_mbar]
        assert list(shown["timestamp"]) == [f"{t:%m-%d %H:%M}" for t in pd.DatetimeIndex(chosen.timestamp)]
        assert list(shown["exact-M rank"]) == [str(int(r)) for r in chosen.rank_exact]  # ranks, not 27.0000


def test_sites_show_their_own_lazy_rule(open_app):
    at = _tab(open_app(PAGE), "Attention rows")
    at.selectbox(key="sp_site").set_value("decoder_self.0").run()
    assert not at.exception
    assert "**running mean(V)**" in _texts(at)
    _tab(at, "Exact vs sampled")
    assert any(r.label == "Compare the sampled M̄ with" and len(r.options) == 3 for r in at.radio)
    at.selectbox(key="sp_site").set_value("cross.0").run()
    assert not at.exception
    assert any("nothing to compare" in i.value for i in at.info)
    _tab(at, "Attention rows")
    assert "**No lazy queries**" in _texts(at)
    assert _rows_z(at).shape == (36, 24)  # full attention: a row for every decoder query


def test_changing_the_window_moves_the_marked_timestamps(open_app, reports):
    at = open_app(PAGE)
    first = _marks(at)
    at.slider(key="sp_window_test").set_value(5).run()
    assert not at.exception
    moved = _marks(at)
    queries = reports("test", 5).queries
    chosen = queries[(queries.site == "encoder.0.0") & (queries["head"] == 0) & queries.selected]
    assert list(moved) == list(pd.DatetimeIndex(chosen.sort_values("position").timestamp))
    assert list(moved) != list(first)
    series = figure(at, "load with the queries")
    assert pd.Timestamp(series["data"][0]["x"][0]) == pd.Timestamp(queries.timestamp.min())


def test_the_seed_and_the_seed_count_reach_the_report(open_app, reports):
    at = _tab(open_app(PAGE), "Exact vs sampled")
    at.number_input(key="sp_seeds").set_value(3).run()
    at.number_input(key="analysis_seed").set_value(4).run()
    assert not at.exception
    report = reports("test", 0, seed=4, seeds=3)
    agreement = next(d.value for d in at.dataframe if "overlap@u" in d.value.columns)
    site = report.agreement[report.agreement.site == "encoder.0.0"]
    np.testing.assert_allclose(agreement["overlap@u"], site.overlap_at_u_mean)
    assert set(agreement["seeds"]) == {3}
    _tab(at, "Attention rows")
    rows = report.site_rows("encoder.0.0")
    np.testing.assert_allclose(_rows_z(at), rows.rows[0, 0][np.argsort(rows.selected[0, 0])])
    assert any("seeds 4–6" in c.value for c in at.caption)


def test_grid_pick_reads_the_clicked_cell():
    """What st.plotly_chart returns for a click on the overlay (the callback sets site and head from it).

    Recorded from Chromium: a typed customdata row arrives as {"0": site, "1": head}."""
    click = {"selection": {"points": [{"curve_number": 1, "point_number": 10, "point_index": 10, "x": 2, "y": 2,
                                       "customdata": {"0": 2, "1": 2}, "text": "decoder_self.0 · …"}],
                           "point_indices": [10], "box": [], "lasso": []}}
    assert views.grid_pick(click) == (2, 2)
    listed = {"selection": {"points": [{"customdata": [1, 3]}], "point_indices": [7], "box": [], "lasso": []}}
    assert views.grid_pick(listed) == (1, 3)
    assert views.grid_pick({"selection": {"points": [], "point_indices": [], "box": [], "lasso": []}}) is None
    assert views.grid_pick(None) is None


def test_side_by_side_compares_the_two_selections_on_the_same_rows(open_app, reports, tiny_second, with_second):
    from informer_lab.analysis.compare.pairing import selection_overlap
    at = open_app(PAGE)
    at.selectbox(key="second_model").set_value(with_second).run()
    at.slider(key="sp_window_test").set_value(4).run()
    _tab(at, "Side by side with other")
    assert not at.exception, at.exception
    checkpoint = tiny_second[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    other = sparsity_report(checkpoint.model, prepared, "test", [4], seed=0, seeds=1)  # same index on test
    want = selection_overlap(reports("test", 4).queries, other.queries)
    table = next(d.value for d in at.dataframe if "jaccard" in d.value.columns)
    got = table.set_index(["site", "head"]).sort_index()
    want = want.set_index(["site", "head"]).sort_index()
    np.testing.assert_allclose(got["jaccard"].to_numpy(float), want["jaccard"].to_numpy(float))
    assert list(got["only sample"]) == list(want["only_a"]) and list(got["only other"]) == list(want["only_b"])
    # the chosen head (the first site, head 0): both models' selected queries drawn at their timestamps
    by_name = {t["name"]: t for t in figure(at, "encoder.0.0:0: exact M")["data"]}
    theirs = other.queries[(other.queries.site == "encoder.0.0") & (other.queries["head"] == 0)]
    assert list(pd.DatetimeIndex(by_name["selected · other"]["x"])) == \
        list(pd.DatetimeIndex(theirs[theirs.selected]["timestamp"]))
    row = want.loc[("encoder.0.0", 0)]
    assert len(by_name["selected by both"]["x"]) == row["both"]


def test_the_grid_coloured_by_agreement_sweeps_every_sampled_site(open_app, reports, monkeypatch):
    sweeps = _counting(monkeypatch, "site_agreement")
    at = open_app(PAGE)
    assert not sweeps
    at.selectbox(key="sp_stat").set_value("overlap_at_u_mean").run()
    assert not at.exception, at.exception
    report = reports("test", 0)
    z = grid(figure(at, "Top-u overlap")["data"][0]["z"]).astype(float)
    agreement = report.agreement.set_index(["site", "head"])["overlap_at_u_mean"]
    for row, site in enumerate(["encoder.0.0", "encoder.0.1", "decoder_self.0"]):
        np.testing.assert_allclose(z[row], [agreement[(site, h)] for h in range(4)])
    assert np.isnan(z[3]).all()  # cross.0: full attention, nothing sampled
    assert sorted(args[2] for args, _ in sweeps) == ["decoder_self.0", "encoder.0.0", "encoder.0.1"]
