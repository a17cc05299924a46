"""Runs screen: every run's row and curves, a broken folder named with its reason, a click that makes a run the
active model, and its check against the baselines on data it can read."""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

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


def _broken_runs(runs_dir) -> dict[str, str]:
    """Run folders damaged as people and tools damage them, each with the words its reason must hold."""
    def copy(name: str, file: str, text: str) -> None:
        shutil.copytree(runs_dir / "sample", runs_dir / name)
        (runs_dir / name / file).write_text(text)

    config = json.loads((runs_dir / "sample" / "config.json").read_text())
    copy("nested", "metrics.json", "[" * 100_000 + "]" * 100_000)
    copy("spec-list", "schema.json", json.dumps({**json.loads((runs_dir / "sample" / "schema.json").read_text()),
                                                  "spec": [1, 2]}))
    copy("revin-text", "config.json", json.dumps({**config, "revin": "false"}))
    copy("history-object", "metrics.json", json.dumps({"history": {"epoch": 1}}))
    copy("heads-float", "config.json", json.dumps({**config, "n_heads": 4.0}))
    return {"nested": "nested too deeply", "spec-list": "spec is an array", "revin-text": "revin is a text ('false')",
            "history-object": "history is an object", "heads-float": "n_heads is a number"}


def test_damaged_runs_are_listed_with_their_reasons_and_never_take_the_page_down(open_app, runs_dir):
    broken = _broken_runs(runs_dir)
    records = {r.name: r for r in read_runs(runs_dir)}
    for name, words in broken.items():
        assert words in (records[name].problem or ""), (name, records[name].problem)
    table = runs_table(list(records.values())).set_index("run")
    assert not table.loc["revin-text", "RevIN"]  # read by type: the text "false" is not RevIN on
    at = open_app(PAGE)
    shown = [d.value for d in at.dataframe if "test MSE" in d.value.columns][0].set_index("run")
    assert set(broken) | {"sample"} <= set(shown.index)
    assert all(words in shown.loc[name, "problem"] for name, words in broken.items())
    assert at.selectbox(key="runs_chosen").options == ["sample"]
    said = " ".join(w.value for w in at.warning)
    assert "5 run folders cannot be read" in said and "`revin-text`: config.json: revin is a text" in said


def _unusable_homes(tmp_path):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    afile = tmp_path / "afile"
    afile.write_text("x")
    homes = {"loop": (loop, "loops through symbolic links"), "file": (afile, "a part of its path is a file"),
             "device": (Path("/dev/null"), "a part of its path is a file")}
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        (locked / "runs").mkdir(parents=True)
        locked.chmod(0o000)
        homes["unreadable"] = (locked, "permission denied")
    return homes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/dev/null and symbolic links as on Linux")
def test_a_home_that_loops_is_a_file_or_a_device_gets_one_line_naming_it(open_app, monkeypatch, tmp_path):
    from informer_lab.cli import main

    monkeypatch.delenv("INFORMER_LAB_RUNS")
    for name, (home, words) in _unusable_homes(tmp_path).items():
        monkeypatch.setenv("INFORMER_LAB_HOME", str(home))
        at = open_app()  # the first page draws, the sidebar names the folder
        assert any(words in w.value and "INFORMER_LAB_HOME" in w.value for w in at.sidebar.warning), name
        at.switch_page(PAGE).run()
        assert not at.exception and any(str(home) in e.value and words in e.value for e in at.error), name
        code = main(["evaluate", "--checkpoint", "myrun", "--csv", str(tmp_path / "x.csv")])
        assert code == 2
    if (tmp_path / "locked").exists():
        (tmp_path / "locked").chmod(0o700)
    read_only = tmp_path / "ro" if os.geteuid() != 0 else Path("/sys/kernel")  # root writes anywhere but /sys
    if os.geteuid() != 0:
        read_only.mkdir()
        read_only.chmod(0o555)
    monkeypatch.setenv("INFORMER_LAB_HOME", str(read_only))
    at = open_app()  # a read-only home: the pages draw, the sidebar says new runs cannot be saved there
    assert any("cannot be created" in w.value and str(read_only) in w.value for w in at.sidebar.warning)


def test_a_checkpoint_name_with_an_unusable_home_is_one_line_naming_the_folder(tmp_path, monkeypatch, capsys):
    from informer_lab.cli import main

    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    monkeypatch.setenv("INFORMER_LAB_HOME", str(loop))
    monkeypatch.delenv("INFORMER_LAB_RUNS", raising=False)
    assert main(["evaluate", "--checkpoint", "myrun", "--csv", str(tmp_path / "x.csv")]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and str(loop / "runs") in lines[0] and "loops" in lines[0] and "INFORMER_LAB_HOME" in \
        lines[0], lines
