"""`synth`, `selftest`, `faithfulness`, train's schedule options and the model check after every analysis, end to end."""
import json

import pandas as pd

from tests.cli.helpers import cli
from tests.conftest import SAMPLE_CSV


def test_synth_writes_the_series_and_its_answer(tmp_path):
    out = tmp_path / "driver.csv"
    run = cli("synth", "--kind", "driver", "--rows", 2000, "--lags", 24, "--driver-lag", 5, "--irrelevant", 2,
              "--freq", "15min", "--seed", 4, "--out", out)
    assert run.returncode == 0, run.stderr
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["date", "driver", "x1", "x2", "y"] and len(frame) == 2000
    assert frame["date"][1] == "2024-01-01 00:15:00"
    answer = json.loads((tmp_path / "driver.answer.json").read_text())
    assert {(r["column"], r["lag"]) for r in answer["relevant"]} == {("y", 24), ("driver", 5)}
    assert len(answer["bayes_mse"]["y"]) == 168 and "y@24, driver@5" in run.stdout and "Bayes MSE" in run.stdout
    again = cli("synth", "--kind", "driver", "--rows", 2000, "--lags", 24, "--driver-lag", 5, "--irrelevant", 2,
                "--freq", "15min", "--seed", 4, "--out", tmp_path / "again.csv")
    assert (tmp_path / "again.csv").read_bytes() == out.read_bytes()  # same arguments, same file


def test_synth_refusals_are_one_line(tmp_path, capsys):
    from informer_lab.cli import main

    for args, word in ((["--coefs", "0.8,0.5", "--lags", "24,168"], "stationary"), (["--freq", "fortnight"], "--freq"),
                       (["--out", "-"], "answer")):
        code = main(["synth", *args, *(["--out", str(tmp_path / "s.csv")] if "--out" not in args else [])])
        lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and word in lines[0], lines
    assert not (tmp_path / "s.csv").exists()


def test_train_records_its_schedule_and_the_selftest_and_checks_run_on_it(tmp_path):
    data = tmp_path / "planted.csv"
    assert cli("synth", "--rows", 1500, "--lags", 12, "--out", data).returncode == 0
    model = tmp_path / "run"
    run = cli("train", "--csv", data, "--target", "y", "--features", "MS", "--seq-len", 48, "--label-len", 24,
              "--pred-len", 12, "--d-model", 16, "--n-heads", 2, "--d-ff", 32, "--epochs", 2, "--max-steps", 3,
              "--schedule", "paper", "--learning-rate", 1e-3, "--minutes", 5, "--out", model)
    assert run.returncode == 0, run.stderr
    assert "halved after every epoch" in run.stdout
    training = json.loads((model / "metrics.json").read_text())["training"]
    assert training["schedule"] == "paper" and training["learning_rate"] == 1e-3 and training["max_minutes"] == 5
    assert training["steps"] == 6

    table = tmp_path / "selftest.csv"
    run = cli("selftest", "--checkpoint", model, "--csv", data, "--ig-windows", 2, "--out", table, timeout=600)
    assert run.returncode == 0, run.stderr
    rows = pd.read_csv(table)
    assert list(rows["check"])[:2] == ["learned", "ig_top"] and len(rows) == 11  # rollout_mass, flow_mass last
    lines = run.stdout.splitlines()
    assert any(line.startswith("FAIL: the model has not learned") for line in lines)
    assert lines[-2].startswith("Test MSE (standardised): model") and lines[-1].startswith("warning: This model is")

    assert cli("selftest", "--checkpoint", model, "--csv", SAMPLE_CSV, "--out", table).returncode == 2  # no answer


def test_faithfulness_and_the_model_check_after_an_analysis(tiny_trained, tmp_path):
    _, _, folder = tiny_trained
    out = tmp_path / "faith.csv"
    run = cli("faithfulness", "--checkpoint", folder, "--csv", SAMPLE_CSV, "--max-windows", 16, "--draws", 2,
              "--key-seeds", 1, "--out", out)
    assert run.returncode == 0, run.stderr
    table = pd.read_csv(out)
    assert len(table) == 16 and {"uniform_change", "permuted_change", "floor", "reading"} <= set(table.columns)
    assert "key-sample floor" in run.stdout
    lines = run.stdout.splitlines()
    assert lines[-1].startswith("evidence: Uniform and permuted attention rows — causal evidence")  # the instrument's
    assert lines[-2].startswith("warning: This model is not measured against seasonal naive")  # after the model's check
    quiet = cli("faithfulness", "--checkpoint", folder, "--csv", SAMPLE_CSV, "--max-windows", 8, "--draws", 1,
                "--key-seeds", 1, "--no-baseline-check", "--out", "-")
    assert quiet.returncode == 0 and "Test MSE" not in quiet.stdout + quiet.stderr
    assert len(pd.read_csv(pd.io.common.StringIO(quiet.stdout))) == 16  # stdout: the CSV alone
