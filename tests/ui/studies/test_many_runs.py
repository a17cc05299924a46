"""The Studies screen at 200 runs: the run table a page at a time and filterable by setting and state, findings per
setting, the role × seed matrix of one setting with its 50 seeds; and a Stop button while a driver runs a study."""
from __future__ import annotations

import json
import os
import time

import pytest

PAGE = "ui/studies/page.py"


def _runs_table(at):
    return [d.value for d in at.dataframe if "state" in d.value.columns and "run" in d.value.columns][0]


def test_two_hundred_runs_page_and_filter(open_app, study_200, monkeypatch):
    root, out, plan = study_200
    monkeypatch.setenv("INFORMER_LAB_STUDIES", str(root))
    at = open_app(PAGE)
    runs = _runs_table(at)
    assert len(runs) == 50 and list(runs["run"])[:2] == [r.name for r in plan.runs()[:2]]
    assert at.number_input(key="st_runs_page").max == 4
    at.number_input(key="st_runs_page").set_value(4).run()
    assert not at.exception
    assert list(_runs_table(at)["run"]) == [r.name for r in plan.runs()[150:]]
    setting = at.multiselect(key="st_runs_settings").options[1]
    at.multiselect(key="st_runs_settings").set_value([setting]).run()
    shown = _runs_table(at)
    assert len(shown) == 50 and (shown["state"] == "done").all()
    at.multiselect(key="st_runs_states").set_value(["failed"]).run()
    assert len(_runs_table(at)) == 0
    findings = [d.value for d in at.dataframe if "removable (BH)" in d.value.columns][0]
    assert len(findings) == 4 and (findings["seeds"] == 50).all() and (findings["95% lo (seeds)"] >= 0).all()
    roles = [d.value for d in at.dataframe if "in_every_seed" in d.value.columns][0]
    assert sum(c.startswith("seed ") for c in roles.columns) == 50 and len(roles) == 6
    chart = [c for c in at.get("plotly_chart") if "Role of each matched head" in c.proto.spec][0]
    assert '"showlegend":true' in chart.proto.spec.replace(" ", "") or "legend" in chart.proto.spec


def test_a_running_study_can_be_stopped_from_the_screen(open_app, study_200, monkeypatch, tmp_path):
    _, out, _ = study_200
    root = tmp_path / "studies"
    live = root / "live"
    live.mkdir(parents=True)
    (live / "study.json").write_text((out / "study.json").read_text())
    status = json.loads((out / "status.json").read_text())
    status.update(state="running", finished=False, pid=os.getpid(), updated=time.time(), eta_seconds=42.0)
    for row in status["runs"][100:]:
        row["state"] = "queued"
    (live / "status.json").write_text(json.dumps(status))
    monkeypatch.setenv("INFORMER_LAB_STUDIES", str(root))
    at = open_app(PAGE)
    assert any(m.label == "ETA" and m.value == "42s" for m in at.metric)
    assert any(m.label == "done" and m.value == "100 / 200" for m in at.metric)
    at.button(key="st_stop").click().run()
    assert not at.exception
    assert (live / "stop").is_file()
