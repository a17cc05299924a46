"""The report's first word on a model: has it learned anything? (analysis.compare.verdict; for a study, its findings.)"""
from __future__ import annotations

from informer_lab.analysis.reports.figures import interval_bars
from informer_lab.analysis.reports.html import ReportSection


def verdict_section(model, prepared, seed: int) -> ReportSection:
    """The model's test MSE beside seasonal naive and the linear baseline, with the warning when it is not better."""
    from informer_lab.analysis.compare.verdict import check_against_baselines

    check = check_against_baselines(model, prepared, seed=seed)
    t = check.table
    figure = interval_bars(t["label"], t["mse"], t["mse_lo"], t["mse_hi"],
                           title="test MSE (standardised): the model and two baselines, 95 % intervals", y_title="MSE")
    warning = check.warning()
    text = ((f"Warning: {warning}\n\n" if warning else "The model is better than both baselines. ")
            + f"{check.summary()}. ΔMSE is the model's MSE minus the baseline's on the same windows (paired). "
            + " ".join(check.notes))
    return ReportSection("Has the model learned?", text, [figure], [("model against baselines", t)])


def study_warning(findings: dict) -> str:
    """The findings' warnings (runs whose model is not better than seasonal naive), as one paragraph or ''."""
    lines = [f"{setting}: {entry['model_vs_baselines']['warning']}"
             for setting, entry in findings.get("settings", {}).items()
             if entry.get("model_vs_baselines", {}).get("warning")]
    return ("Warning: " + " ".join(lines) + "\n\n") if lines else ""


__all__ = ["study_warning", "verdict_section"]
