"""`python cli.py report`: a model on a CSV and a whole study, each to one self-contained HTML file, end to end;
a bad path or a wrong combination of options is one line on stderr and exit code 2."""
from __future__ import annotations

import hashlib

import pytest

from informer_lab.analysis.reports.report import study_report
from tests.analysis.reports.test_report import check_self_contained, make_study
from tests.cli.helpers import cli
from tests.conftest import SAMPLE_CSV


def test_report_of_a_checkpoint_on_a_csv(tiny_trained, tmp_path):
    _, _, folder = tiny_trained
    out = tmp_path / "reports" / "model.html"
    run = cli("report", "--checkpoint", folder, "--csv", SAMPLE_CSV, "--out", out, "--seed", 2, "--max-windows", 130)
    assert run.returncode == 0, run.stderr
    assert f"report written to {out}" in run.stdout and "7 figures" in run.stdout
    text = out.read_text(encoding="utf-8")
    rest = check_self_contained(text, figures=7)
    assert hashlib.sha256(SAMPLE_CSV.read_bytes()).hexdigest() in rest  # the data's fingerprint
    assert (folder / "manifest.json").is_file() and "weights.safetensors" in rest  # the manifest's digests
    assert "<dt>key samples</dt><dd>2</dd>" in rest and "<dt>windows scored</dt><dd>130</dd>" in rest
    for section in ("Has the model learned?", "Errors", "Single-head ablation", "Sparsity", "Distilling pyramid",
                    "Anatomy of the forecast", "Circuits", "Features", "Provenance"):
        assert f"<h2>{section}</h2>" in rest
    assert "Warning: This model is not measured against seasonal naive" in rest  # too few windows for a verdict


def test_report_of_a_study_folder(tmp_path):
    study = tmp_path / "study"
    plan = make_study(study)
    out = tmp_path / "study.html"
    run = cli("report", "--study", study, "--out", out)
    assert run.returncode == 0, run.stderr
    figures = study_report(study).figure_count
    assert figures >= 4 and f"{figures} figures" in run.stdout
    rest = check_self_contained(out.read_text(encoding="utf-8"), figures=figures)
    assert all(f"<td>{r.name}</td>" in rest for r in plan.runs()) and plan.fingerprint in rest
    for section in ("Runs", "Findings across seeds", "Removable heads", "Head roles"):
        assert f"<h2>{section}</h2>" in rest


@pytest.mark.parametrize("args, words", [
    (["--study", "{tmp}/nowhere"], "not a study folder"),
    (["--checkpoint", "{tmp}/nowhere", "--csv", str(SAMPLE_CSV)], "does not exist"),
    (["--checkpoint", "{ckpt}"], "needs --csv"),
    (["--checkpoint", "{ckpt}", "--csv", "{tmp}/missing.csv"], "missing.csv"),
    (["--study", "{tmp}", "--checkpoint", "{ckpt}"], "either"),
    ([], "either"),
])
def test_a_bad_path_or_combination_is_one_line_exit_2(tiny_trained, tmp_path, capsys, args, words):
    """The same main() as the subprocess runs above, called in-process to keep the test quick."""
    from informer_lab.cli import main

    _, _, folder = tiny_trained
    out = tmp_path / "r.html"
    code = main(["report", *(a.format(tmp=tmp_path, ckpt=folder) for a in args), "--out", str(out)])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), lines
    assert words in lines[0]
    assert not out.exists()
