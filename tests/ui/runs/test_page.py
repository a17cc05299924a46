"""Runs screen: every run's row and curves, a broken folder named with its reason, a click that makes a run the
active model, and its check against the baselines on data it can read."""
from __future__ import annotations

import json
import shutil

import pytest

from informer_lab.analysis.learning.runs import curves, read_runs, runs_table
from tests.ui.helpers import sidebar_text

PAGE = "ui/runs/page.py"


def test_read_runs_tables_and_curves(runs_dir, tmp_path):
    shutil.copytree(runs_dir / "sample", tmp_path / "r" / "b")
    shutil.copytree(runs_dir / "sample", tmp_path / "r" / "broken")
    (tmp_path / "r" / "broken" / "metrics.json").write_text("[1, 2]")
    (tmp_path / "r" / "no-config").mkdir()
    (tmp_path / "r" / "no-config" / "manifest.json").write_text("{}")
    (tmp_path / "r" / "not-a-run").mkdir()
    records = read_runs(tmp_path / "r")
    assert sorted(r.name for r in records) == ["b", "broken", "no-config"]
    problems = {r.name: r.problem for r in records}
    assert "metrics.json must hold a JSON object" in problems["broken"]
    assert problems["no-config"] == "config.json is missing" and problems["b"] is None
    table = runs_table(records).set_index("run")
    metrics = json.loads((runs_dir / "sample" / "metrics.json").read_text())
    assert table.loc["b", "test MSE"] == pytest.approx(metrics["test"]["mse"])
    assert table.loc["b", "epochs"] == len(metrics["history"]) == 2
    assert table.loc["b", "best val loss"] == pytest.approx(min(h["val_loss"] for h in metrics["history"]))
    long = curves(records)
    assert set(long["split"]) == {"train", "val"} and len(long) == 2 * len(metrics["history"])


def test_runs_page_lists_draws_and_activates(open_app, with_second, runs_dir):
    at = open_app(PAGE)
    table = [d.value for d in at.dataframe if "test MSE" in d.value.columns][0]
    assert set(table["run"]) == {"sample", "other"}
    chart = at.get("plotly_chart")[0].proto.spec
    assert '"sample · val"' in chart and '"other · train"' in chart
    at.selectbox(key="runs_chosen").select("other").run()
    assert not at.exception
    at.button(key="runs_activate").click().run()
    assert not at.exception
    assert "`other`" in sidebar_text(at)
    assert any("is the active model" in c.value for c in at.caption)


def test_runs_page_checks_a_run_against_the_baselines(open_app):
    from informer_lab.ui import model_check

    model_check._JOBS.clear()
    at = open_app(PAGE)
    at.toggle(key="runs_check_sample").set_value(True).run()
    assert not at.exception
    jobs = list(model_check._JOBS._values.values())
    assert len(jobs) == 1 and jobs[0].wait(120) and jobs[0].status == "done", jobs[0].error
    at.run()  # the verdict, drawn once the check is known
    text = " ".join(c.value for c in at.caption) + " ".join(w.value for w in at.warning)
    assert f"model {jobs[0].result.table['mse'].iloc[0]:.3g}" in text and "seasonal naive" in text


def test_runs_page_without_runs_says_how_to_make_one(open_app, runs_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("INFORMER_LAB_RUNS", str(tmp_path / "empty"))
    monkeypatch.setattr("informer_lab.ui.settings.SAMPLE_CHECKPOINT", tmp_path / "none")
    at = open_app(PAGE)
    assert any("No runs in" in i.value for i in at.info)
