"""`benchmark` end to end: the quick run writes scores.csv and report.html; bad arguments are one line."""
import pandas as pd

from tests.cli.helpers import cli


def test_a_quick_benchmark_writes_its_scores_and_report(tmp_path):
    out = tmp_path / "bench"
    run = cli("benchmark", "--out", out, "--quick", timeout=600)
    assert run.returncode == 0, run.stderr
    scores = pd.read_csv(out / "scores.csv")
    assert {"kind", "seed", "instrument", "metric", "value", "low", "high"} <= set(scores.columns)
    assert set(scores["kind"]) == {"seasonal_ar"} and set(scores["seed"]) == {0}
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert "seasonal_ar (mean over 1 seed):" in run.stdout and "integrated_gradients" in run.stdout
    assert "written" in run.stdout.splitlines()[-1]


def test_bad_arguments_are_one_line_with_exit_code_2(tmp_path, capsys):
    from informer_lab.cli import main

    for args, word in ((["--kinds", "seasonal_ar,bogus"], "--kinds"), (["--seeds", "2-1"], "--seeds"),
                       (["--processes", "0"], "--processes"),
                       (["--out", str(tmp_path / "file.txt")], "not a folder")):
        (tmp_path / "file.txt").write_text("x")
        argv = ["benchmark", *args, *(["--out", str(tmp_path / "b")] if "--out" not in args else [])]
        code = main(argv)
        lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and word in lines[0], lines
    assert not (tmp_path / "b").exists()
