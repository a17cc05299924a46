"""`python cli.py sparsity` and `python cli.py pyramid` on the tiny trained checkpoint, end to end."""
import pandas as pd

from tests.conftest import SAMPLE_CSV
from tests.cli.helpers import cli


def test_sparsity_writes_queries_agreement_and_heads(tiny_trained, tmp_path):
    _, _, folder = tiny_trained
    out, agreement, heads = tmp_path / "q.csv", tmp_path / "a.csv", tmp_path / "h.csv"
    run = cli("sparsity", "--checkpoint", folder, "--csv", SAMPLE_CSV, "--out", out, "--seeds", 2, "--windows", "0,1",
              "--agreement-out", agreement, "--heads-out", heads)
    assert run.returncode == 0, run.stderr
    queries = pd.read_csv(out)
    # 4 heads × 2 windows × (48 encoder layer 0 + 24 distilled layer 1 + 36 decoder self + 36 cross queries)
    assert len(queries) == 4 * 2 * (48 + 24 + 36 + 36)
    assert {"site", "window", "position", "timestamp", "sampled_mbar", "exact_m", "exact_mbar", "selected",
            "rank_sampled", "lazy_rule"} <= set(queries.columns)
    table = pd.read_csv(agreement)
    assert len(table) == 3 * 4 and (table.seeds == 2).all()  # 3 ProbSparse sites × 4 heads
    assert len(pd.read_csv(heads)) == 4 * 4
    assert "overlap@u" in run.stdout and "encoder.0.0" in run.stdout


def test_pyramid_writes_spans_with_norms(tiny_trained, tmp_path):
    _, _, folder = tiny_trained
    out = tmp_path / "p.csv"
    run = cli("pyramid", "--checkpoint", folder, "--csv", SAMPLE_CSV, "--out", out, "--window", 3)
    assert run.returncode == 0, run.stderr
    table = pd.read_csv(out)
    assert len(table) == 48 + 24
    assert {"replica", "level", "position", "span_start", "span_end", "receptive_start", "receptive_end", "wraps",
            "timestamp_start", "timestamp_end", "norm"} <= set(table.columns)
    assert "48 → 24" in run.stdout and "yes" in run.stdout


def test_bad_window_is_one_line_exit_2(tiny_trained, tmp_path, capsys):
    """The same main() as the subprocess runs above, called in-process to keep the test quick."""
    from informer_lab.cli import main

    _, _, folder = tiny_trained
    for args in (("sparsity", "--windows", "0,x"), ("sparsity", "--windows", "99999"), ("pyramid", "--window", "-4")):
        code = main([args[0], "--checkpoint", str(folder), "--csv", str(SAMPLE_CSV), "--out", str(tmp_path / "o.csv"),
                     *args[1:]])
        lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), lines
        assert "window" in lines[0]
    assert not (tmp_path / "o.csv").exists()
