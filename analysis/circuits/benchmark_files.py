"""What an instrument benchmark writes into its folder, whole or not at all:

    scores.csv       every score (analysis.circuits.scores.COLUMNS): per kind, seed, instrument and metric
    instruments.csv  one verdict per instrument and metric (analysis.planted.evidence.VERDICT_COLUMNS): its kind of
                     evidence, its mean score over the models that learned with a 95 % interval over models, the
                     random control's, and the verdict in words
    models.csv       kind, seed, mse, bayes_mse, learned: every model trained (one that did not learn is not scored)
    horizon.csv      each input instrument's degradation per horizon step over the models that learned, beside the
                     random cells' and the paired excess with its interval (analysis.circuits.horizon)
    agreement.csv    Kendall's τ across the input instruments between each perturbation metric and each metric
                     against the true cells (analysis.circuits.agreement)
    report.html      the offline page: a table per metric, the notes, every score
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import torch

from informer_lab.analysis.circuits.agreement import metric_agreement
from informer_lab.analysis.circuits.benchmark import BenchmarkResult
from informer_lab.analysis.circuits.horizon import horizon_table
from informer_lab.analysis.circuits.scores import report
from informer_lab.analysis.planted.evidence import instrument_verdicts, learned_models


def benchmark_report(result: BenchmarkResult, horizon: pd.DataFrame | None = None):
    """The offline HTML report: a table per metric, instruments × kinds, mean over seeds (scores.report), and the
    degradation per horizon step (`horizon`: horizon_table over the models that learned, computed if not given)."""
    from informer_lab.analysis.circuits import benchmark, horizon as horizon_module
    from informer_lab.analysis.reports.html import ReportSection

    if horizon is None:
        horizon = horizon_table(result.curves, learned_models(result.scores))
    provenance = {**result.settings.describe(), "wall time": f"{result.seconds:.0f} s",
                  "torch threads": torch.get_num_threads()}
    curve = ReportSection("Degradation per horizon step", horizon_module.__doc__.strip(),
                          tables=(("degradation per step, over the models that learned", horizon),))
    return report(result.scores, result.notes, provenance, benchmark.__doc__.split("\n\n", 1)[1].strip(), (curve,))


def write_benchmark(result: BenchmarkResult, folder: str | Path) -> dict[str, Path]:
    """Write the folder's six files (a temporary folder renamed into place: a kill leaves the old folder or the new
    one). → their paths by name."""
    from informer_lab.analysis.outputs import write_folder
    from informer_lab.analysis.reports.html import render_html

    verdicts, _, _ = instrument_verdicts(result.scores)
    learned = learned_models(result.scores)
    horizon = horizon_table(result.curves, learned)
    files = {"scores.csv": result.scores.to_csv(index=False).encode("utf-8"),
             "instruments.csv": verdicts.to_csv(index=False).encode("utf-8"),
             "models.csv": result.models.to_csv(index=False).encode("utf-8"),
             "horizon.csv": horizon.to_csv(index=False).encode("utf-8"),
             "agreement.csv": metric_agreement(result.scores, learned).to_csv(index=False).encode("utf-8"),
             "report.html": render_html(benchmark_report(result, horizon)).encode("utf-8")}
    folder = write_folder(Path(folder), files, "--out")
    return {name: folder / name for name in files}


__all__ = ["benchmark_report", "write_benchmark"]
