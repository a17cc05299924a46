"""A study of 200 runs (4 settings × 50 seeds) on the local Ray: every run on the driver's disk, the tables joined
run by run, findings over 50 seeds per setting with intervals that respect the metric's range, --status in words."""
from __future__ import annotations

import json

import pandas as pd

from informer_lab.study.status import describe


def test_two_hundred_runs_finish_join_and_find(study_200):
    _, out, plan = study_200
    runs = plan.runs()
    assert len(runs) == 200
    status = json.loads((out / "status.json").read_text())
    assert status["state"] == "finished" and status["counts"]["done"] == 200 and len(status["runs"]) == 200
    assert sum(1 for f in (out / "runs").iterdir() if (f / "train.json").is_file()) == 200
    for name, per_run in (("errors", None), ("sweep", 7), ("roles", 6)):
        table = pd.read_csv(out / "tables" / f"{name}.csv")
        assert table["run"].nunique() == 200 and set(table["setting_factor"]) == {3, 5}
        if per_run:
            assert len(table) == 200 * per_run  # sweep: the baseline and 6 heads; roles: 6 heads
    findings = json.loads((out / "findings.json").read_text())
    assert len(findings["settings"]) == 4
    for entry in findings["settings"].values():
        mse = entry["test_mse"]
        assert mse["seeds"] == 50 and 0 <= mse["mse_seeds_lo"] <= mse["mse_mean"] <= mse["mse_seeds_hi"]
        assert entry["sweep_rank_stability"]["pairs"] == 50 * 49 // 2
    roles = pd.read_csv(out / "tables" / "findings_roles.csv")
    assert roles.groupby("setting").size().to_dict() == dict.fromkeys(findings["settings"], 6)
    assert sum(c.startswith("seed ") for c in roles.columns) == 50
    lines = describe(out)
    assert lines[0].endswith("finished") and "runs 200/200 done" in lines[1]
