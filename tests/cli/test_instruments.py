"""`python cli.py qk-map`, `counterfactual` and `patch` on the tiny trained checkpoint, end to end."""
import numpy as np
import pandas as pd

from tests.cli.helpers import cli
from tests.conftest import SAMPLE_CSV


def test_qk_map_writes_one_row_per_query_and_key(tiny_trained, tmp_path):
    _, _, folder = tiny_trained
    out = tmp_path / "map.csv"
    run = cli("qk-map", "--checkpoint", folder, "--csv", SAMPLE_CSV, "--site", "encoder.0.1", "--head", 2,
              "--windows", 10, "--seed", 1, "--out", out)
    assert run.returncode == 0, run.stderr
    table = pd.read_csv(out)
    assert list(table.columns) == ["kind", "x", "y", "window", "position", "step", "timestamp", "selected", "mbar"]
    assert len(table) == 10 * (24 + 24) and set(table.kind) == {"query", "key"}
    assert table.selected.dtype == bool and table[table.kind == "query"].selected.sum() == 10 * 20
    assert "encoder.0.1:2" in run.stdout and "PCA explains" in run.stdout


def test_counterfactual_writes_forecast_and_selection(tiny_trained, tmp_path):
    _, _, folder = tiny_trained
    run = cli("counterfactual", "--checkpoint", folder, "--csv", SAMPLE_CSV, "--window", 30,
              "--edit", "shift:t=10,size=2", "--out", tmp_path / "cf")
    assert run.returncode == 0, run.stderr
    forecast = pd.read_csv(tmp_path / "cf" / "forecast.csv")
    assert {"step", "timestamp", "column", "truth", "original", "edited", "difference"} <= set(forecast.columns)
    assert len(forecast) == 12 * 4
    np.testing.assert_allclose(forecast.difference, forecast.edited - forecast.original, atol=1e-9)
    selection = pd.read_csv(tmp_path / "cf" / "selection.csv")
    assert {"site", "head", "jaccard", "entered", "left"} <= set(selection.columns)
    assert len(selection) == 4 * 4 and selection[selection.attention == "prob"].jaccard.between(0, 1).all()
    assert (tmp_path / "cf" / "scores.csv").exists() and "largest forecast change" in run.stdout


def test_patch_writes_the_share_restored_per_site_head_and_step(tiny_trained, tmp_path):
    _, _, folder = tiny_trained
    out = tmp_path / "patch.csv"
    run = cli("patch", "--checkpoint", folder, "--csv", SAMPLE_CSV, "--clean", 30, "--corrupt", 400, "--out", out)
    assert run.returncode == 0, run.stderr
    table = pd.read_csv(out)
    assert {"site", "head", "step", "restored"} <= set(table.columns)
    assert len(table) == (4 * 4 + 1) * 12 and set(table.step) == set(range(1, 13))
    assert "every head at once" in run.stdout and "residual paths" in run.stdout


def test_bad_edit_site_and_same_window_are_one_line_exit_2(tiny_trained, tmp_path, capsys):
    from informer_lab.cli import main

    _, _, folder = tiny_trained
    common = ["--checkpoint", str(folder), "--csv", str(SAMPLE_CSV)]
    cases = [
        (["counterfactual", *common, "--window", "3", "--edit", "spike:t=40,siz=3", "--out", str(tmp_path / "o")],
         "not 'siz'"),
        (["qk-map", *common, "--site", "encoder.7", "--head", "0", "--out", str(tmp_path / "o.csv")],
         "no attention site 'encoder.7'"),
        (["patch", *common, "--clean", "3", "--corrupt", "3", "--out", str(tmp_path / "o.csv")], "same window"),
    ]
    for args, message in cases:
        code = main(args)
        lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "o").exists()
