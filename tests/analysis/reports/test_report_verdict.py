"""The report's first section says whether the model learned; a study's findings carry the same warning."""
import pandas as pd

from informer_lab.analysis.reports.report import checkpoint_report, render_html
from informer_lab.analysis.reports.verdict import study_warning
from informer_lab.study.findings import _against_seasonal_naive


def test_a_checkpoint_report_opens_with_the_model_against_the_baselines(tiny_trained, sample_frame):
    report = checkpoint_report(tiny_trained[0], sample_frame, max_windows=64)
    first = report.sections[0]
    assert first.title == "Has the model learned?"
    # 64 windows of the tiny model's slowly varying errors give its differences no interval: no verdict, and said
    assert first.text.startswith("Warning: This model is not measured against seasonal naive")
    assert set(first.tables[0][1]["name"]) == {"model", "seasonal_naive", "linear"}
    assert report.provenance["evaluation"]["windows scored"] == 64  # still read from the errors section
    assert "a verdict needs an interval" in render_html(report)


def test_study_findings_count_runs_no_better_than_seasonal_naive_and_warn():
    rows = []
    for run, (delta, lo, hi) in enumerate([(-0.3, -0.4, -0.2), (0.1, 0.05, 0.2), (0.01, -0.02, 0.04)]):
        rows += [{"run": run, "model": "informer", "mse": 0.5, "delta_mse": 0.0, "delta_mse_lo": 0.0,
                  "delta_mse_hi": 0.0},
                 {"run": run, "model": "seasonal_naive", "mse": 0.5 + delta, "delta_mse": delta, "delta_mse_lo": lo,
                  "delta_mse_hi": hi}]  # delta: seasonal naive − the model (the errors table's sign)
    summary = _against_seasonal_naive(pd.DataFrame(rows))
    # run 0: naive worse by 0.3 → the model is worse; run 1: the model better; run 2: the interval holds 0
    assert summary["worse_than_seasonal_naive"] == 1 and summary["not_better_than_seasonal_naive"] == 2
    assert summary["warning"].startswith("in 2 of 3 runs the model is no better than seasonal naive (1 worse")
    text = study_warning({"settings": {"all": {"model_vs_baselines": summary}}})
    assert text.startswith("Warning: all: in 2 of 3 runs") and "may explain little" in text
    assert study_warning({"settings": {"all": {"model_vs_baselines": {"runs": 3}}}}) == ""
    rows[-1].update(delta_mse=0.5, delta_mse_lo=float("nan"), delta_mse_hi=float("nan"))  # no interval: no verdict
    summary = _against_seasonal_naive(pd.DataFrame(rows))
    assert summary["not_better_than_seasonal_naive"] == 1 and summary["runs_without_interval"] == 1
    assert "1 run had too few windows for a verdict" in summary["warning"]
