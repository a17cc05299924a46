"""`python cli.py rollout` on the tiny trained checkpoint: relevance that sums to 1 per (window, method, distil,
target step), the validation table, one-line errors."""
import numpy as np
import pandas as pd
import pytest

from tests.conftest import SAMPLE_CSV


def test_rollout_writes_relevance_and_validation(tiny_trained, tmp_path, capsys):
    from informer_lab.cli import main

    _, _, folder = tiny_trained
    out = tmp_path / "rel.csv"
    code = main(["rollout", "--checkpoint", str(folder), "--csv", str(SAMPLE_CSV), "--windows", "24", "--distil",
                 "all", "--method", "both", "--step", "2", "--out", str(out), "--no-baseline-check"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    table = pd.read_csv(out)
    assert {"window", "method", "distil", "target_step", "source", "lag", "relevance"} <= set(table.columns)
    assert set(table["method"]) == {"rollout", "flow"} and set(table["distil"]) == {"routed", "structural",
                                                                                    "jacobian"}
    assert set(table["target_step"]) == {2} and table["window"].nunique() == 24
    sums = table.groupby(["window", "method", "distil", "target_step"])["relevance"].sum()
    np.testing.assert_allclose(sums, 1.0, atol=1e-9)
    inputs = table[table["source"] == "input"]
    assert inputs["lag"].min() == 1 and inputs["lag"].max() == 48 and (table["relevance"] >= 0).all()
    assert table.loc[table["source"] == "label", "lag"].isna().all()
    validation = pd.read_csv(tmp_path / "rel.validation.csv")
    assert {"method", "distil", "against", "rho", "rho_low", "rho_high"} <= set(validation.columns)
    assert set(validation["against"]) == {"blank_out", "integrated_gradients"} and len(validation) == 2 * 2 * 3
    shown = validation.dropna(subset=["rho"])
    assert ((shown["rho"] >= -1) & (shown["rho"] <= 1)).all()
    assert "most relevant" in printed.out and "validation written to" in printed.out


@pytest.mark.parametrize("bad, option", [(["--alpha", "1.5"], "--alpha"), (["--windows", "0"], "--windows"),
                                         (["--head", "9"], "--head"), (["--distil", "max"], "--distil")])
def test_bad_arguments_are_one_line_exit_2(tiny_trained, tmp_path, capsys, bad, option):
    from informer_lab.cli import main

    _, _, folder = tiny_trained
    code = main(["rollout", "--checkpoint", str(folder), "--csv", str(SAMPLE_CSV), "--out", str(tmp_path / "o.csv"),
                 "--no-baseline-check", *bad])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and option in lines[0], lines
    assert not (tmp_path / "o.csv").exists()
