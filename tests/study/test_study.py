"""Studies on a local Ray: every run trained and analysed as Ray tasks whose results come home and are written by the
driver into tidy tables with run / seed / setting columns; a re-run does no work twice and redoes what is damaged,
naming it; a run that cannot train fails once with its own error and the others finish; damaged folders and bad
arguments end in one line, never a traceback."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from informer_lab.analysis.data import DataSpec, ReadOptions
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.learning.training import TrainSettings
from informer_lab.analysis.learning.workflow import ModelSize
from informer_lab.study.plan import StudyPlan, fingerprint, format_seeds, parse_grid, parse_seeds, read_plan
from informer_lab.study.runner import run_study
from informer_lab.study.status import describe
from tests.conftest import SAMPLE_CSV, TINY_SIZE, TINY_SPEC

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def plan(**changes) -> StudyPlan:
    data = SAMPLE_CSV.read_bytes()
    base = dict(csv=str(SAMPLE_CSV), fingerprint=fingerprint(data), options=ReadOptions(), spec=DataSpec(**TINY_SPEC),
                size=ModelSize(**TINY_SIZE), train=TrainSettings(epochs=1, batch_size=16, learning_rate=1e-3,
                                                                 max_steps_per_epoch=4),
                seeds=(0, 1), analyses=("errors", "sweep", "roles", "composition"), max_windows=130)
    return StudyPlan(**{**base, **changes})


def test_seeds_and_grid_are_parsed_and_named():
    assert parse_seeds("0-3") == (0, 1, 2, 3) and parse_seeds("0,3,9") == (0, 3, 9) and parse_seeds("2-4,8") == (2, 3,
                                                                                                                 4, 8)
    assert format_seeds((0, 1, 2, 5, 7, 8)) == "0-2,5,7-8" and parse_seeds(format_seeds((4, 1, 2))) == (1, 2, 4)
    grid = parse_grid(["attention=prob,full", "factor=3,5"])
    assert grid == {"attention": ("prob", "full"), "factor": (3, 5)}
    runs = plan(grid=grid).runs()
    assert len(runs) == 8 and runs[0].name == "seed0-attention=prob-factor=3"
    assert runs[-1].size.encoder_attention == "full" and runs[-1].size.factor == 5 and runs[-1].train.seed == 1
    for bad in ("3-1", "a", "1,1"):
        with pytest.raises(ConfigError):
            parse_seeds(bad)
    with pytest.raises(ConfigError, match="cannot vary 'colour'"):
        parse_grid(["colour=red"])
    switched = plan(grid=parse_grid(["revin=off,on"])).runs()  # reversible instance normalisation, a switch
    assert [r.name for r in switched] == ["seed0-revin=off", "seed1-revin=off", "seed0-revin=on", "seed1-revin=on"]
    assert [r.size.revin for r in switched] == [False, False, True, True]
    with pytest.raises(ConfigError, match="revin takes on/off values"):
        parse_grid(["revin=maybe"])
    auto = ModelSize(**{**TINY_SIZE, "embedding": "auto"})  # the default: RevIN wherever lags does not fit
    with pytest.raises(ConfigError, match="revin=off would not be off"):
        plan(size=auto, grid=parse_grid(["revin=off,on"])).runs()
    assert len(plan(size=auto, grid=parse_grid(["revin=off,on", "embedding=conv"])).runs()) == 4


def test_a_plan_written_before_the_weight_average_still_trains_its_last_weights():
    """A stored plan without `average` (its earlier runs kept the last step's weights) resumes as it began; a new
    plan round-trips the lab's default average."""
    stored = plan().to_dict()
    assert StudyPlan.from_dict(stored).train.average == TrainSettings().average > 0
    del stored["train"]["average"]
    old = StudyPlan.from_dict(stored)
    assert old.train.average == 0.0 and all(run.train.average == 0.0 for run in old.runs())


def test_a_plans_choice_of_unit_roots_round_trips_and_an_older_plan_keeps_every_level():
    stored = StudyPlan.from_dict(plan().to_dict()).to_dict()
    stored["size"]["unit_roots"] = "withhold"
    assert all(run.size.unit_roots == "withhold" for run in StudyPlan.from_dict(stored).runs())
    del stored["size"]["unit_roots"]
    assert StudyPlan.from_dict(stored).size.unit_roots == ModelSize().unit_roots == "keep"


def test_a_huge_seed_range_is_refused_from_its_count_at_once():
    import tracemalloc

    tracemalloc.start()
    with pytest.raises(ConfigError, match="at most"):
        parse_seeds("0-99999999")
    with pytest.raises(ConfigError, match="at most"):
        plan(seeds=tuple(range(100)), grid=parse_grid(["factor=" + ",".join(map(str, range(1, 60)))])).runs()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 10 << 20  # no list of a hundred million seeds was built (it would hold ~4 GB)


def test_a_study_brings_every_result_home_resumes_and_isolates_a_failure(tmp_path, monkeypatch):
    """d_model 18 with 4 heads cannot be built: that run fails once with its own error, the others finish."""
    from informer_lab.study import runner

    out = tmp_path / "study"
    lines: list[str] = []
    grid = {"d_model": (16, 18)}
    seen, summarise = [], runner.summarise

    def watched(folder):  # what a screen polling status.json sees while the findings are computed
        seen.append(json.loads((folder / "status.json").read_text())["state"])
        return summarise(folder)

    monkeypatch.setattr(runner, "summarise", watched)
    run_study(plan(grid=grid), out, SAMPLE_CSV.read_bytes(), num_cpus=2, echo=lines.append)
    assert seen and seen[0] != "finished"  # "finished" is written once findings.json is there to read
    status = json.loads((out / "status.json").read_text())
    states = {r["run"]: r for r in status["runs"]}
    assert status["state"] == "finished" and status["counts"]["done"] == 2 and status["counts"]["failed"] == 2
    assert states["seed0-d_model=16"]["state"] == "done" and states["seed1-d_model=18"]["state"] == "failed"
    assert "n_heads" in states["seed1-d_model=18"]["error"] or "divis" in states["seed1-d_model=18"]["error"]
    assert any("✗ seed0-d_model=18" in line for line in lines)
    for seed in (0, 1):
        folder = out / "runs" / f"seed{seed}-d_model=16"
        assert (folder / "checkpoint" / "manifest.json").is_file() and (folder / "train.json").is_file()
        assert "epoch 1/1" in (folder / "log.txt").read_text()
        assert {p.name for p in (folder / "tables").iterdir()} == {"errors.csv", "sweep.csv", "roles.csv",
                                                                   "profiles.csv", "composition.csv"}
    assert status["moved_bytes"] > 2 * (out / "runs" / "seed0-d_model=16" / "checkpoint" /
                                        "weights.safetensors").stat().st_size

    weights = out / "runs" / "seed0-d_model=16" / "checkpoint" / "weights.safetensors"
    trained_at = weights.stat().st_mtime_ns
    damaged = out / "runs" / "seed1-d_model=16" / "tables" / "sweep.csv"
    damaged.write_bytes(bytes(range(256)) * 4)  # random bytes where a table was
    lines.clear()
    findings = run_study(plan(grid=grid), out, SAMPLE_CSV.read_bytes(), num_cpus=2, echo=lines.append)
    assert weights.stat().st_mtime_ns == trained_at  # found done: not trained again
    assert any("redoing seed1-d_model=16" in line and "sweep.csv" in line for line in lines)
    start = next(line for line in lines if line.startswith("study "))
    assert "(1 already done)" in start
    sweep = pd.read_csv(out / "tables" / "sweep.csv")
    assert list(sweep.columns[:3]) == ["run", "seed", "setting_d_model"] and set(sweep["seed"]) == {0, 1}
    assert {"delta_mse_lo", "delta_mse_hi"} <= set(sweep.columns)
    assert len(sweep) == 2 * 17  # the baseline and 16 heads per run that trained
    composition = pd.read_csv(out / "tables" / "findings_composition.csv")  # heads matched as roles match them
    assert (composition["matched_by"] == "lag profiles (role matrix)").all() and (composition["seeds"] == 2).all()
    roles = pd.read_csv(out / "tables" / "findings_roles.csv")
    assert {"seed 0", "seed 1", "in_every_seed"} <= set(roles.columns) and len(roles) == 16
    setting = findings["settings"]["d_model=16"]
    assert setting["test_mse"]["seeds"] == 2 and setting["removable"]["heads"] == 16
    assert "too few" in setting["test_mse"]["interval"]  # two seeds give no interval
    assert setting["test_mse"]["mse_seeds_lo"] != setting["test_mse"]["mse_seeds_lo"]  # NaN
    assert any("study" in line for line in describe(out))
    status_file = out / "status.json"
    whole = status_file.read_bytes()
    status_file.write_bytes(whole[: len(whole) // 2])  # cut short: not "not started · 0 done"
    damaged = describe(out)
    assert "status unknown" in damaged[0] and "status.json cannot be read" in damaged[0]
    assert damaged[1].startswith("2 of 4 runs have their results on disk")
    status_file.unlink()  # missing while runs are on disk: not "not started, 0 of 4 done" either
    missing = describe(out)
    assert "status.json is missing" in missing[0] and missing[1].startswith("2 of 4 runs have their results on disk")
    status_file.write_bytes(whole)

    with pytest.raises(ConfigError, match="holds another study"):
        run_study(plan(grid=grid, size=ModelSize(**{**TINY_SIZE, "n_heads": 2})), out, SAMPLE_CSV.read_bytes(),
                  num_cpus=2)
    with pytest.raises(ConfigError, match="--add-seeds"):
        run_study(plan(grid=grid, seeds=(0,)), out, SAMPLE_CSV.read_bytes(), num_cpus=2)
    assert read_plan(out).seeds == (0, 1)  # the refused re-run did not rewrite the plan


@pytest.mark.parametrize("content", ["[1, 2]", "[]", "{not json", "{\"csv\": 3}"])
def test_a_damaged_study_json_is_named_in_one_line(tmp_path, content):
    out = tmp_path / "study"
    out.mkdir()
    (out / "study.json").write_text(content)
    with pytest.raises(ConfigError, match="study.json is damaged"):
        run_study(plan(), out, SAMPLE_CSV.read_bytes(), num_cpus=1)


def test_out_naming_a_file_is_refused(tmp_path):
    target = tmp_path / "a-file"
    target.write_text("mine")
    with pytest.raises(ConfigError, match="is a file"):
        run_study(plan(), target, SAMPLE_CSV.read_bytes(), num_cpus=1)
    assert target.read_text() == "mine"


def test_the_dashboard_without_its_packages_is_one_line_naming_the_install(monkeypatch):
    import importlib.util

    from informer_lab.study.ray_session import check_dashboard

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "aiohttp" else real(name, *a))
    with pytest.raises(ConfigError, match=r"ray\[default\]") as caught:
        check_dashboard()
    assert "aiohttp" in str(caught.value) and "\n" not in str(caught.value)


def test_a_grid_compares_keeping_and_withholding_unit_root_levels():
    runs = plan(grid=parse_grid(["unit_roots=keep,withhold"])).runs()
    assert sorted(run.size.unit_roots for run in runs) == ["keep", "keep", "withhold", "withhold"]  # 2 seeds each
    with pytest.raises(ConfigError, match="--grid unit_roots takes keep, withhold"):
        parse_grid(["unit_roots=difference"])
