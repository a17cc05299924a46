"""The headless CLI: real runs end to end, and one-line errors with exit code 2 and no traceback."""

import pandas as pd
import pytest

from tests.cli.helpers import cli
from tests.conftest import SAMPLE_CSV




def test_train_evaluate_forecast_end_to_end(tmp_path):
    out = tmp_path / "ck"
    run = cli("train", "--csv", SAMPLE_CSV, "--target", "load", "--seq-len", 48, "--label-len", 24, "--pred-len",
              12, "--epochs", 1, "--max-steps", 10, "--d-model", 16, "--n-heads", 2, "--d-ff", 16, "--out", out)
    assert run.returncode == 0, run.stderr
    assert "test mse" in run.stdout and (out / "weights.safetensors").is_file()
    assert "epoch 1/1" in run.stderr  # the console progress bar
    ev = cli("evaluate", "--checkpoint", out, "--csv", SAMPLE_CSV)
    assert ev.returncode == 0, ev.stderr
    assert ev.stdout.startswith("test mse ")
    fc = cli("forecast", "--checkpoint", out, "--csv", SAMPLE_CSV, "--out", tmp_path / "f.csv")
    assert fc.returncode == 0, fc.stderr
    table = pd.read_csv(tmp_path / "f.csv")
    assert list(table.columns) == ["date", "temperature", "humidity", "price", "load"] and len(table) == 12


@pytest.mark.parametrize("args,message", [
    (("train", "--csv", "missing.csv", "--target", "load", "--out", "x"), "missing.csv"),
    (("train", "--csv", SAMPLE_CSV, "--target", "nope", "--out", "x"), "nope"),
    (("evaluate", "--checkpoint", "no_such_folder", "--csv", SAMPLE_CSV), "no_such_folder"),
    (("import", "--official", "no.pth", "--csv", SAMPLE_CSV, "--target", "load", "--out", "x"), "no.pth"),
    (("train", "--csv", SAMPLE_CSV, "--target", "load", "--seq-len", 10, "--label-len", 20, "--out", "x"),
     "label_len"),
])
def test_errors_are_one_line_exit_2_without_traceback(args, message, tmp_path):
    run = cli(*args)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_bad_csv_error_names_the_row(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("date,a,b\n2024-01-01 00:00,1,2\n2024-01-01 01:00,x,3\n2024-01-01 02:00,1,4\n")
    run = cli("train", "--csv", bad, "--target", "b", "--out", tmp_path / "o")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "'a'" in run.stderr and "'x'" in run.stderr


def test_import_an_official_checkpoint_then_evaluate_and_forecast(tmp_path):
    """An official-layout checkpoint.pth (4 columns, hourly timeF) becomes a checkpoint folder that works."""
    import torch

    from analysis.checkpoints.folder import load_checkpoint
    from tests.analysis.checkpoints.official_reference import make_official_state_dict

    pth = tmp_path / "checkpoint.pth"
    torch.save(make_official_state_dict(4, 4, 4, 16, 2, 32, 2, 1, 4, seed=0), pth)
    out = tmp_path / "imported"
    run = cli("import", "--official", pth, "--csv", SAMPLE_CSV, "--target", "load", "--seq-len", 48,
              "--label-len", 24, "--pred-len", 12, "--n-heads", 2, "--out", out)
    assert run.returncode == 0, run.stderr
    config = load_checkpoint(out).config
    assert (config.mean_divisor, config.decoder_lazy, config.mix, config.sample_block) == ("L_K", "cumsum", True, 1)
    assert cli("evaluate", "--checkpoint", out, "--csv", SAMPLE_CSV).returncode == 0
    mismatch = cli("import", "--official", pth, "--csv", SAMPLE_CSV, "--target", "load", "--features", "S",
                   "--seq-len", 48, "--label-len", 24, "--pred-len", 12, "--out", tmp_path / "bad")
    assert mismatch.returncode == 2 and "expects 4 inputs" in mismatch.stderr
