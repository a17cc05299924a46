"""`ablate` and `importance` end to end on the tiny checkpoint: real subprocesses, real CSVs out."""

import pandas as pd
import pytest

from informer_lab.analysis.learning.windows import limit_windows
from informer_lab.analysis.learning.training import evaluate
from tests.cli.helpers import cli
from tests.conftest import SAMPLE_CSV

WINDOWS = 48




def test_single_head_sweep_writes_baseline_and_one_row_per_head(tiny_trained, tiny_prepared, tmp_path):
    checkpoint, _, folder = tiny_trained
    out = tmp_path / "sweep.csv"
    run = cli("ablate", "--checkpoint", folder, "--csv", SAMPLE_CSV, "--out", out, "--max-windows", WINDOWS)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("single (zero) on test: baseline mse") and str(out) in run.stdout
    table = pd.read_csv(out)
    assert {"site", "layer", "head", "mse", "mae", "delta_mse", "delta_mae"} <= set(table.columns)
    assert len(table) == 1 + 4 * 4
    assert table.site.iloc[0] == "baseline" and table["head"].iloc[0] == -1 and table.delta_mse.iloc[0] == 0
    assert set(table.site.iloc[1:]) == {"encoder.0.0", "encoder.0.1", "decoder_self.0", "cross.0"}
    plain = evaluate(checkpoint.model, limit_windows(tiny_prepared, "test", WINDOWS), "test")
    assert table.mse.iloc[0] == pytest.approx(plain.mse, rel=1e-6)
    assert (table.mse - table.delta_mse).round(9).nunique() == 1


def test_other_studies_and_importance(tiny_trained, tmp_path):
    _, _, folder = tiny_trained
    base = ("--checkpoint", folder, "--csv", SAMPLE_CSV, "--max-windows", 32)
    rand = cli("ablate", *base, "--out", tmp_path / "r.csv", "--study", "random", "--fraction", 0.25, "--repeats", 3,
               "--seed", 4)
    assert rand.returncode == 0, rand.stderr
    table = pd.read_csv(tmp_path / "r.csv")
    assert len(table) == 3 and (table.n_masked == 4).all()
    layers = cli("ablate", *base, "--out", tmp_path / "l.csv", "--study", "layers", "--mode", "mean")
    assert layers.returncode == 0, layers.stderr
    assert len(pd.read_csv(tmp_path / "l.csv")) == 1 + 4
    prune = cli("ablate", *base, "--out", tmp_path / "p.csv", "--study", "prune", "--step-fraction", 0.25)
    assert prune.returncode == 0, prune.stderr
    curve = pd.read_csv(tmp_path / "p.csv")
    assert curve.n_removed.iloc[0] == 0 and curve.n_removed.is_monotonic_increasing
    imp = cli("importance", *base, "--out", tmp_path / "i.csv")
    assert imp.returncode == 0, imp.stderr
    assert "spearman rank correlation" in imp.stdout
    rho = float(imp.stdout.split("delta_mse: ")[1].split()[0])
    assert -1 <= rho <= 1
    scores = pd.read_csv(tmp_path / "i.csv")
    assert len(scores) == 16 and {"importance", "importance_normalised", "delta_mse"} <= set(scores.columns)


def test_errors_are_one_line_exit_2(tmp_path):
    run = cli("ablate", "--checkpoint", tmp_path / "nothing", "--csv", SAMPLE_CSV, "--out", tmp_path / "x.csv")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "nothing" in lines[0]
    bad = cli("ablate", "--checkpoint", tmp_path, "--csv", SAMPLE_CSV, "--out", tmp_path / "x.csv", "--fraction", 2)
    assert bad.returncode == 2 and "--fraction" in bad.stderr and "in [0, 1]" in bad.stderr
