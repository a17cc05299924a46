"""Data & model page: parse results, typed errors from uploads, loading checkpoints, background training."""
from __future__ import annotations

import shutil
import time

import numpy as np
import pandas as pd
import pytest

from tests.ui.helpers import DATA_PAGE, MASK_PAGE, csv_bytes, errors, metric, sidebar_text, table, table_with

from informer_lab.ui import state


def _upload_csv(at, name: str, data: bytes):
    at.radio(key="data_source").set_value("Upload a CSV").run()
    at.file_uploader(key="csv_upload").set_value((name, data, "text/csv")).run()
    assert not at.exception, at.exception
    return at


def test_sample_data_and_active_model_are_shown(open_app, tiny_trained):
    at = open_app()
    assert metric(at, "Rows") == "8,760" and metric(at, "Step") == "hourly"
    assert metric(at, "Datetime column") == "date" and metric(at, "Numeric columns") == "4"
    assert "`sample` (runs/)" in sidebar_text(at) and "Device:" in sidebar_text(at)
    assert "seq 48 · label 24 · pred 12" in sidebar_text(at)
    assert at.number_input(key=state.SEED_KEY).value == 0
    metrics = table_with(at, "scale")
    test = tiny_trained[1].test
    # each column in its own units (their scales differ: a mean over them would mislead)
    assert list(metrics["scale"]) == ["standardised (train-split scaler)"] + [f"original units: {c}"
                                                                              for c in test.columns]
    np.testing.assert_allclose(metrics["MSE"], [test.mse, *test.mse_by_column], rtol=1e-9)
    np.testing.assert_allclose(metrics["MAE"], [test.mae, *test.mae_by_column], rtol=1e-9)


def test_the_column_summary_is_drawn_only_while_its_expander_is_open(open_app):
    at = open_app()
    assert not any("std" in d.value.columns for d in at.dataframe)  # closed: no table (no data grid to load)
    at.session_state["summary_open"] = True  # what opening the expander sets
    at.run()
    summary = table_with(at, "std")
    assert list(summary["column"]) == ["temperature", "humidity", "price", "load"]
    assert list(summary["count"]) == [8760] * 4


def test_bad_csv_upload_shows_the_data_error_and_keeps_the_old_data(open_app):
    bad = b"date,temperature,load\n2024-01-01 00:00,1.0,10\n2024-01-01 01:00,2.0,abc\n2024-01-01 02:00,3.0,12\n"
    at = _upload_csv(open_app(), "bad.csv", bad)
    assert "bad.csv: column 'load': 1 cell not a number ('abc' at row 2 (line 3 of the file))" in errors(at)[0]
    assert metric(at, "Rows") == "8,760"  # the sample stays active
    at = _upload_csv(open_app(), "gaps.csv", b"date,load\n2024-01-01 00:00,1\n2024-01-01 01:00,2\n"
                                              b"2024-01-01 03:00,3\n2024-01-01 04:00,4\n")
    assert any("irregular spacing: '2024-01-01 03:00' at row 3" in e for e in errors(at)), errors(at)


def test_good_upload_becomes_the_active_data_and_a_mismatch_is_explained(open_app):
    stamps = pd.date_range("2024-03-01", periods=300, freq="h")
    frame = pd.DataFrame({"date": stamps.strftime("%Y-%m-%d %H:%M:%S"), "site": "a",
                          "load": np.sin(np.arange(300) / 5.0)})
    at = _upload_csv(open_app(), "small.csv", csv_bytes(frame))
    assert not errors(at)
    assert metric(at, "Rows") == "300" and metric(at, "Numeric columns") == "1"
    assert any("**Left out of the model** (no numbers): site (text, e\\.g\\. 'a')" in m.value for m in at.markdown)
    assert "active data: small.csv" in sidebar_text(at)
    at.radio(key="data_source").set_value("Bundled sample").run()
    assert "active data: sample.csv" in sidebar_text(at) and metric(at, "Rows") == "8,760"
    _upload_csv(at, "small.csv", csv_bytes(frame))  # the same file again makes it active again
    assert "active data: small.csv" in sidebar_text(at) and metric(at, "Rows") == "300"
    at.switch_page(MASK_PAGE).run()
    assert not at.exception
    assert any("does not fit the active model" in e and "the model needs temperature, humidity, price, load" in e
               for e in errors(at)), errors(at)


def test_checkpoint_upload_is_validated_and_becomes_active(open_app, tiny_trained):
    folder = tiny_trained[2]
    files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    at = open_app()
    tampered = dict(files, **{"metrics.json": files["metrics.json"] + b" "})
    at.file_uploader(key="checkpoint_upload").set_value(
        [(n, b, "application/octet-stream") for n, b in tampered.items()]).run()
    assert not at.exception
    assert any("metrics.json does not match its SHA-256" in e for e in errors(at)), errors(at)
    assert "`sample` (runs/)" in sidebar_text(at)
    at.file_uploader(key="checkpoint_upload").set_value(
        [(n, b, "application/octet-stream") for n, b in files.items()]).run()
    assert not at.exception and not errors(at)
    assert "(uploaded)" in sidebar_text(at) and "`upload-" in sidebar_text(at)
    at.button(key="use_folder").click().run()  # back to runs/sample; the upload can be picked again
    assert "`sample` (runs/)" in sidebar_text(at)
    at.button(key="use_upload").click().run()
    assert not at.exception and "(uploaded)" in sidebar_text(at)


def test_a_run_folder_can_be_chosen(open_app, runs_dir):
    shutil.copytree(runs_dir / "sample", runs_dir / "other")
    at = open_app()
    at.selectbox(key="run_folder::sample").set_value("other").run()
    at.button(key="use_folder").click().run()
    assert not at.exception
    assert "`other` (runs/)" in sidebar_text(at)
    assert at.selectbox(key="run_folder::other").value == "other"  # the picker follows the active model


@pytest.mark.parametrize("changes, message", [
    ({"train_d_model": 30}, "d_model=30 is not divisible by n_heads=4"),
    ({"train_seq": 24, "train_label": 30}, "label_len (30) cannot exceed seq_len (24)"),
    ({"train_e_layers": "2,x"}, "encoder layers must be whole numbers"),
    ({"train_name": "../escape"}, "run name '../escape' must start with a letter or digit"),
    ({"train_seq": 4096, "train_label": 48, "train_pred": 2048}, "the train split has no complete window"),
])
def test_bad_training_settings_are_refused_with_a_message(open_app, changes, message):
    at = open_app()
    for key, value in changes.items():
        widget = at.text_input(key=key) if isinstance(value, str) else at.number_input(key=key)
        widget.set_value(value)
    _submit(at)
    assert not at.exception
    assert any(message in e for e in errors(at) + [w.value for w in at.warning]), errors(at)
    assert state.JOB_KEY not in at.session_state  # nothing was started


def test_the_lags_embedding_where_its_lag_does_not_fit_is_refused_with_the_reason(open_app):
    at = open_app()
    at.selectbox(key="train_embedding").set_value("lags")
    at.number_input(key="train_pred").set_value(49)  # a lag of 48 hours would be more than half of seq_len 96
    _submit(at)
    assert not at.exception
    assert any("pred_len 49 is at most half of seq_len 96" in e for e in errors(at)), errors(at)
    assert state.JOB_KEY not in at.session_state


def _submit(at):
    buttons = [b for b in at.button if b.label == "Train"]
    assert buttons, [b.label for b in at.button]
    buttons[0].click().run()


def _train_to_the_end(at, name: str):
    """Name the run, press Train and wait for the background job to finish; returns the job (status "done")."""
    at.text_input(key="train_name").set_value(name)
    _submit(at)
    assert not at.exception and not errors(at)
    job = at.session_state[state.JOB_KEY]
    assert job.wait(timeout=180) and job.status == "done", job.error
    return job


def _tiny_form(at, *, epochs: int | None, max_steps: int) -> None:
    """The training form set for the tiny model (seq 48 / label 24 / pred 12, d_model 16, batch 16)."""
    for key, value in {"train_seq": 48, "train_label": 24, "train_pred": 12, "train_d_model": 16, "train_d_ff": 32,
                       "train_epochs": epochs, "train_max_steps": max_steps, "train_batch": 16}.items():
        at.number_input(key=key).set_value(value)


def test_training_runs_in_the_background_and_becomes_the_active_model(open_app, runs_dir):
    at = open_app()
    _tiny_form(at, epochs=1, max_steps=2)
    at.text_input(key="train_name").set_value("mini")
    _submit(at)
    assert not at.exception and not errors(at)
    job = at.session_state[state.JOB_KEY]
    assert job.name == "mini" and job.out == runs_dir / "mini"
    assert job.wait(timeout=180), "training did not finish"
    assert job.status == "done", job.error
    at.run()
    assert not at.exception
    assert "`mini` (runs/)" in sidebar_text(at)
    assert (runs_dir / "mini" / "manifest.json").is_file()
    import json  # the form's default embedding (auto) on hourly data at pred_len 12: a day back fits in half of 48
    config = json.loads((runs_dir / "mini" / "config.json").read_text())
    assert (config["embedding"], config["lags"], config["revin"]) == ("lags", [0, 24], False)
    assert "embedding: lags (0, 24): each step with its value 24 steps back; the encoder reads the last 24 of 48 " \
           "rows" in sidebar_text(at)
    assert any("It is now the active model" in s.value for s in at.success)
    steps = [r for r in job.view().reports if r.stage == "train" and r.val_loss is None]
    assert [r.step for r in steps] == [1, 2]
    assert job.view().reports[-1].stage == "test"  # the test pass reports its windows too
    # the new model's windows drive the other pages
    at.switch_page(MASK_PAGE).run()
    assert not at.exception and len(table(at)) == 12
    at.switch_page(DATA_PAGE).run()
    assert not at.exception


def test_an_empty_epochs_field_plans_the_auto_count(open_app, runs_dir):
    """The form's epochs start empty (auto): two steps an epoch plan the six epochs that the step target caps at."""
    from informer_lab.analysis.learning.settings import AUTO_EPOCHS, TrainSettings
    at = open_app()
    assert at.number_input(key="train_epochs").value is None
    _tiny_form(at, epochs=None, max_steps=2)
    job = _train_to_the_end(at, "auto-epochs")
    planned = {r.epochs for r in job.view().reports}
    assert planned == {TrainSettings().planned_epochs(2)} == {AUTO_EPOCHS[1]}


def test_the_forms_weight_average_and_unit_roots_reach_the_checkpoint(open_app, runs_dir):
    """δ = 0 keeps the last step's weights; withhold takes the level of the sample's drifting temperature (a unit
    root in its training split), and the model's card names it."""
    import json
    from informer_lab.analysis.learning.settings import ModelSize, TrainSettings
    at = open_app()
    assert at.number_input(key="train_average").value == TrainSettings().average
    assert at.selectbox(key="train_unit_roots").value == ModelSize().unit_roots == "keep"
    _tiny_form(at, epochs=1, max_steps=2)
    at.radio(key="train_features").set_value("MS")
    at.number_input(key="train_average").set_value(0.0)
    at.selectbox(key="train_unit_roots").set_value("withhold")
    _train_to_the_end(at, "levels-withheld")
    at.run()
    assert not at.exception
    folder = runs_dir / "levels-withheld"
    config, metrics = (json.loads((folder / f).read_text()) for f in ("config.json", "metrics.json"))
    from informer_lab.analysis.learning.workflow import read_schema
    columns = read_schema(folder).columns
    assert metrics["training"]["average"] == 0.0
    assert [columns[i] for i in config["level_free"]] == ["temperature"]
    assert "levels withheld (a unit root in the training split): temperature" in sidebar_text(at)


def test_stop_keeps_the_best_weights_saves_and_adopts_the_run(open_app, runs_dir):
    at = open_app()
    _tiny_form(at, epochs=3, max_steps=0)
    at.text_input(key="train_name").set_value("stopped-run")
    _submit(at)
    job = at.session_state[state.JOB_KEY]
    deadline = time.monotonic() + 120
    while not job.view().reports and time.monotonic() < deadline:
        time.sleep(0.1)
    assert job.view().reports, "no training step reported"
    at.run()
    assert not at.exception
    at.button(key="stop_training").click().run()
    assert job.wait(timeout=180) and job.status == "stopped", job.error
    view = job.view()
    ends = [r for r in view.reports if r.val_loss is not None]
    assert len(ends) == 1 and ends[0].epoch == 1  # the stopped epoch was still validated
    assert view.summary["stopped"] == "user" and view.summary["epochs"] == 1
    at.run()
    assert not at.exception
    assert "`stopped-run` (runs/)" in sidebar_text(at)
    assert any("stopped by you (best weights kept)" in p.text for p in at.get("progress"))
    assert (runs_dir / "stopped-run" / "manifest.json").is_file()


def test_the_form_trains_any_attention_kind_with_its_parameters(open_app, runs_dir):
    """every kind and its parameters in the app, as `cli.py train --attention KIND --attention-option`."""
    import json
    at = open_app()
    assert set(at.selectbox(key="train_attention").options) >= {"prob (ProbSparse)", "full", "logsparse", "lsh",
                                                                   "window", "adaptive"}
    _tiny_form(at, epochs=1, max_steps=2)
    at.selectbox(key="train_attention").set_value("window")
    at.selectbox(key="train_cross").set_value("lsh")
    at.text_input(key="train_attention_options").set_value("window=4, globals=0,-1 cross.buckets=2")
    _train_to_the_end(at, "windowed")
    config = json.loads((runs_dir / "windowed" / "config.json").read_text())
    assert config["encoder_attention"] == config["decoder_attention"] == "window"
    assert config["cross_attention"] == "lsh"
    options = config["attention_options"]
    assert options["encoder"] == options["decoder_self"] == {"window": 4, "globals": [0, -1]}
    assert options["cross"] == {"buckets": 2}


@pytest.mark.parametrize("kind, text, message", [
    ("window", "span=3", "no site's attention (full, window) takes 'span'"),
    ("window", "window=-2", "window"),
    ("prob", "window", "takes [SITE.]NAME=VALUE"),
    ("lsh", "middle.buckets=2", "the site type is one of encoder, decoder_self, cross"),
])
def test_a_wrong_attention_parameter_is_named_and_nothing_starts(open_app, kind, text, message):
    at = open_app()
    at.selectbox(key="train_attention").set_value(kind)
    at.text_input(key="train_attention_options").set_value(text)
    _submit(at)
    assert not at.exception
    assert any(message in e for e in errors(at)), errors(at)
    assert state.JOB_KEY not in at.session_state


def test_a_trending_upload_hears_of_revin_and_the_form_trains_with_it(open_app, runs_dir):
    import json
    t = np.arange(1200.0)
    hours = pd.date_range("2021-01-01", periods=len(t), freq="h")
    trend = pd.DataFrame({"date": hours.strftime("%Y-%m-%d %H:%M:%S"), "price": 50 + t / 10 + np.sin(t / 4)})
    at = _upload_csv(open_app(), "price.csv", csv_bytes(trend))
    hint = [c.value for c in at.caption if "RevIN reads each window at its own level" in c.value]
    assert hint and "price: the test split's target leaves the train range: 100% of its rows above" in hint[0]
    _tiny_form(at, epochs=1, max_steps=2)
    at.checkbox(key="train_revin").check()
    _train_to_the_end(at, "levelled")
    assert json.loads((runs_dir / "levelled" / "config.json").read_text())["revin"] is True
    at.run()
    assert "RevIN (each window at its own level)" in sidebar_text(at)
    at = _upload_csv(open_app(), "flat.csv", csv_bytes(trend.assign(price=np.sin(t / 4))))
    assert not [c for c in at.caption if "RevIN reads" in c.value]  # a stationary series: no hint
