"""`python cli.py lens` on the tiny trained checkpoint: both CSVs, parts that sum to the forecast, one-line errors."""
import numpy as np
import pandas as pd

from tests.conftest import SAMPLE_CSV


def test_lens_writes_the_lens_table_and_the_direct_shares(tiny_trained, tmp_path, capsys):
    from informer_lab.cli import main

    _, _, folder = tiny_trained
    out, heads = tmp_path / "lens.csv", tmp_path / "heads.csv"
    code = main(["lens", "--checkpoint", str(folder), "--csv", str(SAMPLE_CSV), "--windows", "12", "--fit-windows", "8",
                 "--seed", "1", "--out", str(out), "--heads", str(heads), "--no-baseline-check"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    table = pd.read_csv(out)
    assert {"lens", "layer", "step", "mse", "mse_low", "mse_high", "mse_to_final", "mse_to_final_low",
            "mse_to_final_high", "windows", "reason"} <= set(table.columns)
    assert set(table.lens) == {"decoder", "encoder", "encoder_tuned"} and len(table) == 4 * 12
    shares = pd.read_csv(heads)
    assert list(shares.columns) == ["window", "step", "column", "part", "value"]
    assert shares.window.nunique() == 12 and len(shares) == 12 * 12 * 4 * (8 + 2)
    wide = shares.pivot_table(index=["window", "step", "column"], columns="part", values="value")
    np.testing.assert_allclose(wide.drop(columns="forecast").sum(axis=1), wide["forecast"], rtol=1e-9,
                               atol=1e-5 * wide["forecast"].abs().max())
    assert "encoder_tuned 0" in printed.out and "largest direct shares" in printed.out


def test_bad_windows_is_one_line_exit_2(tiny_trained, tmp_path, capsys):
    from informer_lab.cli import main

    _, _, folder = tiny_trained
    for bad in ("0", "many"):
        code = main(["lens", "--checkpoint", str(folder), "--csv", str(SAMPLE_CSV), "--windows", bad,
                     "--out", str(tmp_path / "o.csv")])
        lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "--windows" in lines[0], lines
    assert not (tmp_path / "o.csv").exists()
