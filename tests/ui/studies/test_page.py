"""Studies screen: a finished study's runs, findings and role matrix; a click on a role cell opens that head of that
run (its checkpoint and the study's data) on the Sparsity explorer."""
from __future__ import annotations

import pytest

from informer_lab.analysis.data import DataSpec, ReadOptions
from informer_lab.analysis.learning.training import TrainSettings
from informer_lab.analysis.learning.workflow import ModelSize
from informer_lab.study.plan import StudyPlan, fingerprint
from informer_lab.study.runner import run_study
from tests.conftest import SAMPLE_CSV, TINY_SIZE, TINY_SPEC
from tests.ui.helpers import sidebar_text

PAGE = "ui/studies/page.py"


@pytest.fixture(scope="module")
def study_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("studies")
    plan = StudyPlan(str(SAMPLE_CSV), fingerprint(SAMPLE_CSV.read_bytes()), ReadOptions(), DataSpec(**TINY_SPEC),
                     ModelSize(**TINY_SIZE), TrainSettings(epochs=1, batch_size=16, learning_rate=1e-3,
                                                           max_steps_per_epoch=4),
                     seeds=(0, 1), analyses=("errors", "sweep", "roles"), max_windows=130)
    run_study(plan, root / "tiny", SAMPLE_CSV.read_bytes(), num_cpus=2)
    return root


def test_a_finished_study_shows_runs_findings_and_roles_and_opens_a_head(open_app, study_root, monkeypatch):
    monkeypatch.setenv("INFORMER_LAB_STUDIES", str(study_root))
    at = open_app(PAGE)
    runs = [d.value for d in at.dataframe if "state" in d.value.columns][0]
    assert list(runs["run"]) == ["seed0", "seed1"] and (runs["state"] == "done").all()
    findings = [d.value for d in at.dataframe if "removable (BH)" in d.value.columns][0]
    assert findings["seeds"].iloc[0] == 2 and findings["heads"].iloc[0] == 16
    roles = [d.value for d in at.dataframe if "in_every_seed" in d.value.columns][0]
    assert len(roles) == 16 and {"seed 0", "seed 1"} <= set(roles.columns)
    assert any(b.label == "Download the whole study as a report (HTML)" for b in at.get("download_button"))
    # click the cell of the third matched head in seed 1: that run's own head index
    row, col = 2, 1
    head = int(str(roles.loc[row, "heads"]).split(";")[col])
    at.selectbox(key="st_pick_row").set_value(row)
    at.selectbox(key="st_pick_seed").set_value(col)
    at.button(key="st_open_head").click().run()
    assert not at.exception, at.exception
    assert "`tiny/seed1` (runs/)" in sidebar_text(at)
    assert at.selectbox(key="sp_site").value == roles.loc[row, "site"]
    assert at.selectbox(key="sp_head").value == head
    assert "active data: sample.csv" in sidebar_text(at)


def test_no_study_yet_says_how_to_start_one(open_app, tmp_path, monkeypatch):
    monkeypatch.setenv("INFORMER_LAB_STUDIES", str(tmp_path / "none"))
    at = open_app(PAGE)
    assert not at.exception
    assert any("No study in" in i.value for i in at.info)
    assert any(b.label.startswith("Start the study on") for b in at.button)
