"""`python cli.py circuits` on the tiny trained checkpoint: the three CSVs with their columns, one-line errors."""
import pandas as pd
import pytest

from tests.conftest import SAMPLE_CSV


def test_circuits_writes_composition_atp_and_path(tiny_trained, tmp_path, capsys):
    from informer_lab.cli import main

    _, _, folder = tiny_trained
    out = tmp_path / "circuits"
    code = main(["circuits", "--checkpoint", str(folder), "--csv", str(SAMPLE_CSV), "--pairs", "12", "--path-pairs",
                 "4", "--sender", "decoder_self.0:1", "--receivers", "cross.0:0:q,cross.0:1:q", "--draws", "50",
                 "--out", str(out), "--no-baseline-check"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    composition = pd.read_csv(out / "composition.csv")
    assert {"sender", "receiver", "kind", "score", "random_mean", "random_q95"} <= set(composition.columns)
    assert set(composition["kind"]) == {"Q", "K", "V"}
    atp = pd.read_csv(out / "atp.csv")
    assert {"pair", "site", "head", "atp", "exact"} <= set(atp.columns) and atp["pair"].nunique() == 12
    path = pd.read_csv(out / "path.csv")
    assert {"sender", "receiver", "step", "delta", "low", "high"} <= set(path.columns)
    assert set(path["receiver"]) == {"cross.0:0.q", "cross.0:1.q"} and len(path) == 2 * 12
    assert "Spearman ρ" in printed.out


@pytest.mark.parametrize("bad, word", [(["--sender", "cross.9:0"], "cross.9"), (["--pairs", "0"], "--pairs"),
                                       (["--sender", "encoder.0.0:1", "--receivers", "cross.0:0:x"], "x"),
                                       (["--sender", "decoder_self.0:1", "--receivers", "cross.0:1:k,encoder.0.0:2:q"],
                                        "no path from decoder_self.0:1 reaches cross.0:1.k"),
                                       (["--receivers", "encoder.0.0:0:q"], "no head reaches every receiver")])
def test_bad_arguments_are_one_line_exit_2(tiny_trained, tmp_path, capsys, bad, word):
    from informer_lab.cli import main

    _, _, folder = tiny_trained
    code = main(["circuits", "--checkpoint", str(folder), "--csv", str(SAMPLE_CSV), "--out", str(tmp_path / "o"),
                 "--no-baseline-check", *bad])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and word in lines[0], lines
    assert not (tmp_path / "o" / "composition.csv").exists()
