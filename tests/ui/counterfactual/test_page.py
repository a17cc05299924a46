"""Counterfactual editor page: a preset's numbers are the analysis' for the same edit; a null edit changes
nothing; a hand edit in the data editor is the edit applied."""
from __future__ import annotations

import numpy as np

from informer_lab.analysis.instruments.counterfactual import counterfactual
from informer_lab.analysis.data import load_csv
from informer_lab.analysis.instruments.window_edits import Edit, window_frame
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from tests.conftest import SAMPLE_CSV
from tests.ui.helpers import array, charts, metric

PAGE = "ui/counterfactual/page.py"


def _prepared(tiny_trained):
    checkpoint = tiny_trained[0]
    return checkpoint, prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))


def _table(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_no_edit_changes_nothing(open_app):
    at = open_app(PAGE)
    assert metric(at, "Input cells changed") == "0"
    assert metric(at, "Max |forecast change|") == "0"
    assert metric(at, "Heads whose top-u moved").startswith("0 of")
    assert any("changes no input cell" in i.value for i in at.info)


def test_a_spike_preset_is_the_analysis_counterfactual(open_app, tiny_trained):
    at = open_app(PAGE)
    at.slider(key="cf_window_test").set_value(20).run()
    at.selectbox(key="cf_kind").set_value("spike").run()
    at.number_input(key="cf_t").set_value(40).run()
    at.number_input(key="cf_size").set_value(4.0).run()
    assert not at.exception, at.exception
    checkpoint, prepared = _prepared(tiny_trained)
    want = counterfactual(checkpoint.model, prepared, "test", 20, "spike:t=40,size=4.0", seed=0)
    assert any("`spike:t=40,size=4,column=load`" in c.value for c in at.caption)  # the target: default column
    forecast = _table(at, "difference")
    load = want.forecast[want.forecast.column == "load"]
    np.testing.assert_allclose(forecast["edited"], load["edited"], rtol=1e-5)
    np.testing.assert_allclose(forecast["difference"], load["difference"], rtol=1e-4, atol=1e-6)
    selection = _table(at, "n_entered")
    prob = want.selection[want.selection.attention == "prob"]
    assert sorted(selection["jaccard"].round(6)) == sorted(prob["jaccard"].round(6))
    # the edited input: one cell of the target column moved by 4 training stds
    window = next(f for f in charts(at) if f["layout"]["title"]["text"].startswith("load: window 20"))
    original, edited = array(window["data"][0]["y"]), array(window["data"][1]["y"])
    moved = np.flatnonzero(~np.isclose(original, edited))
    assert list(moved) == [40]
    std = prepared.scaler.std[list(prepared.columns).index("load")]
    np.testing.assert_allclose(edited[40] - original[40], 4.0 * std, rtol=1e-5)


def test_a_bad_edit_is_a_message_not_a_traceback(open_app):
    at = open_app(PAGE)
    at.selectbox(key="cf_kind").set_value("scale").run()
    at.selectbox(key="cf_kind").set_value("paste").run()
    at.number_input(key="cf_length").set_value(48).run()
    at.number_input(key="cf_t").set_value(47).run()  # 47 + 48 rows run past the window
    assert not at.exception, at.exception
    assert at.error and "edit cannot be applied" in at.error[0].value


def test_a_hand_edit_is_applied_as_the_table_edit(open_app, tiny_trained):
    at = open_app(PAGE)
    at.selectbox(key="cf_kind").set_value("table").run()
    checkpoint, prepared = _prepared(tiny_trained)
    frame = window_frame(prepared, "test", 0)
    edited = frame.copy()
    edited.loc[30, "price"] = edited.loc[30, "price"] + 25.0
    at.session_state["cf_table_test_0"] = {"edited_rows": {30: {"price": float(edited.loc[30, "price"])}},
                                           "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception, at.exception
    want = counterfactual(checkpoint.model, prepared, "test", 0, Edit("table", table=edited), seed=0)
    assert metric(at, "Input cells changed") == "1"
    np.testing.assert_allclose(_table(at, "difference")["difference"],
                               want.forecast[want.forecast.column == "load"]["difference"], rtol=1e-4, atol=1e-6)
