"""A 2-seed study of a tiny model on a local Ray: every run trained and analysed as Ray tasks into tidy tables with
run / seed / setting columns; a re-run does no work twice; a failed run is reported and the others finish."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from analysis.data import DataSpec, ReadOptions
from analysis.errors import ConfigError
from analysis.training import TrainSettings
from analysis.workflow import ModelSize
from study.plan import StudyPlan, fingerprint, parse_grid, parse_seeds
from study.runner import run_study
from tests.conftest import SAMPLE_CSV, TINY_SIZE, TINY_SPEC

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def plan(**changes) -> StudyPlan:
    data = SAMPLE_CSV.read_bytes()
    base = dict(csv=str(SAMPLE_CSV), fingerprint=fingerprint(data), options=ReadOptions(), spec=DataSpec(**TINY_SPEC),
                size=ModelSize(**TINY_SIZE), train=TrainSettings(epochs=1, batch_size=16, learning_rate=1e-3,
                                                                 max_steps_per_epoch=4),
                seeds=(0, 1), analyses=("errors", "sweep", "roles"), max_windows=130)
    return StudyPlan(**{**base, **changes})


def test_seeds_and_grid_are_parsed_and_named():
    assert parse_seeds("0-3") == (0, 1, 2, 3) and parse_seeds("0,3,9") == (0, 3, 9) and parse_seeds("2-4,8") == (2, 3,
                                                                                                                 4, 8)
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


def test_a_two_seed_study_on_local_ray_resumes_and_isolates_a_failure(tmp_path):
    out = tmp_path / "study"
    (out / "runs").mkdir(parents=True)
    (out / "runs" / "seed1").write_text("not a folder")  # this run cannot write its checkpoint: it fails
    lines: list[str] = []
    run_study(plan(), out, SAMPLE_CSV.read_bytes(), num_cpus=2, echo=lines.append)
    status = {r["run"]: r for r in json.loads((out / "status.json").read_text())["runs"]}
    assert status["seed0"]["state"] == "done" and status["seed1"]["state"] == "failed"
    assert "FileExistsError" in status["seed1"]["error"] or "exists" in status["seed1"]["error"]
    assert any("✗ seed1" in line for line in lines)

    (out / "runs" / "seed1").unlink()
    weights = out / "runs" / "seed0" / "checkpoint" / "weights.safetensors"
    trained_at = weights.stat().st_mtime_ns
    lines.clear()
    findings = run_study(plan(), out, SAMPLE_CSV.read_bytes(), num_cpus=2, echo=lines.append)
    assert weights.stat().st_mtime_ns == trained_at  # seed0 was found done: not trained again
    assert "1 already done" in lines[0]
    sweep = pd.read_csv(out / "tables" / "sweep.csv")
    assert list(sweep.columns[:2]) == ["run", "seed"] and set(sweep["seed"]) == {0, 1}
    assert {"delta_mse_lo", "delta_mse_hi"} <= set(sweep.columns)
    assert len(sweep) == 2 * 17  # the baseline and 16 heads per run
    roles = pd.read_csv(out / "tables" / "findings_roles.csv")
    assert {"seed 0", "seed 1", "in_every_seed"} <= set(roles.columns) and len(roles) == 16
    setting = findings["settings"]["all"]
    assert setting["test_mse"]["seeds"] == 2 and setting["removable"]["heads"] == 16
    assert setting["removable"]["with_interval_mean"] <= setting["removable"]["by_point_mean"]

    with pytest.raises(ConfigError, match="holds another study"):
        run_study(plan(size=ModelSize(**{**TINY_SIZE, "d_model": 32})), out, SAMPLE_CSV.read_bytes(), num_cpus=2)
