"""`python cli.py attribute` and `python cli.py compare`, run in-process on the tiny checkpoint."""
import numpy as np
import pandas as pd
import pytest

from informer_lab.cli import main
from tests.conftest import SAMPLE_CSV


@pytest.fixture(scope="module")
def short_csv(tmp_path_factory):
    """The sample's first 1200 hours: same columns and frequency as the checkpoint, a short test split."""
    path = tmp_path_factory.mktemp("csv") / "short.csv"
    path.write_text("".join(SAMPLE_CSV.read_text().splitlines(keepends=True)[:1201]))
    return path


def test_attribute_writes_one_row_per_input_cell_and_prints_the_delta(tiny_trained, short_csv, tmp_path, capsys):
    folder = tiny_trained[2]
    out = tmp_path / "ig.csv"
    rc = main(["attribute", "--checkpoint", str(folder), "--csv", str(short_csv), "--out", str(out),
               "--window", "3", "--step", "2", "--target", "price", "--baseline", "window_mean", "--n-steps", "16"])
    printed = capsys.readouterr().out
    assert rc == 0
    assert "convergence delta" in printed and "price" in printed
    table = pd.read_csv(out)
    assert list(table.columns) == ["timestamp", "position", "feature", "attribution"]
    assert len(table) == 48 * 4 and set(table.feature) == {"temperature", "humidity", "price", "load"}
    # the printed difference f(x) − f(b) is what the written attributions add up to, within the printed gap
    difference = float(printed.split("f(x) - f(baseline) = ")[1].split(")")[0])
    gap = float(printed.split("|gap| ")[1].split(" ")[0])
    assert abs(table.attribution.sum() - difference) <= gap + 1e-5


def test_attribute_rejects_a_step_beyond_the_horizon_in_one_line(tiny_trained, short_csv, tmp_path, capsys):
    rc = main(["attribute", "--checkpoint", str(tiny_trained[2]), "--csv", str(short_csv),
               "--out", str(tmp_path / "x.csv"), "--step", "13"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "step must be in 1" in err
    assert not (tmp_path / "x.csv").exists()


def test_compare_prints_metrics_and_epsilon_and_writes_tables(tiny_trained, short_csv, tmp_path, capsys):
    out, steps = tmp_path / "metrics.csv", tmp_path / "steps.csv"
    rc = main(["compare", "--checkpoint", str(tiny_trained[2]), "--csv", str(short_csv), "--out", str(out),
               "--per-step-out", str(steps)])
    printed = capsys.readouterr().out
    assert rc == 0 and "epsilon" in printed and "seasonal_naive" in printed
    metrics = pd.read_csv(out)
    assert len(metrics) == 5 * 2 and set(metrics.scale) == {"standardised", "original"}
    per_step = pd.read_csv(steps)
    assert len(per_step) == 5 * 12
    epsilon = float(printed.split("epsilon (|Y_prob - Y_full|_F / |Y_full|_F) = ")[1].split()[0])
    assert epsilon > 0
    informer = metrics[(metrics.model == "informer") & (metrics.scale == "standardised")]
    assert np.isclose(per_step[per_step.model == "informer"].mse.mean(), informer.mse.iloc[0])


def test_compare_with_a_freshly_trained_full_attention_twin(tiny_trained, short_csv, tmp_path, capsys):
    out = tmp_path / "metrics.csv"
    rc = main(["compare", "--checkpoint", str(tiny_trained[2]), "--csv", str(short_csv), "--out", str(out),
               "--train-full-twin", "--epochs", "1", "--max-steps", "2"])
    assert rc == 0, capsys.readouterr().err
    assert "full_attention_model" in set(pd.read_csv(out).model)
