"""The Known answers screen's third part: every instrument scored against planted answers, as `informer-lab benchmark`
wrote it (scores.csv in a folder of the lab home's instrument_benchmarks/). Reading only: a benchmark trains nine
models and takes tens of minutes, so it runs from the command line."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from informer_lab.home import benchmarks_dir
from informer_lab.source import command
from informer_lab.ui import widgets

ORDER = ("aup", "aur", "auprc", "comprehensiveness_excess", "sufficiency_excess", "top1", "rank", "planted_lag_mass",
         "mse_over_bayes")


def benchmark_folders(root: Path) -> list[Path]:
    try:
        return sorted((p for p in root.iterdir() if (p / "scores.csv").is_file()), key=lambda p: p.stat().st_mtime,
                      reverse=True)
    except OSError:  # missing, a file, a loop, unreadable: none
        return []


def summary_table(scores: pd.DataFrame, kind: str) -> pd.DataFrame:
    """Instrument × metric of one kind: the mean over seeds, and the seeds' range."""
    part = scores[scores["kind"] == kind]
    grouped = part.groupby(["instrument", "metric"], sort=False)["value"]
    cells = (grouped.mean().map(lambda v: f"{v:.3g}") + grouped.agg(lambda v: f" [{v.min():.3g}, {v.max():.3g}]"
                                                                     if len(v) > 1 else ""))
    table = cells.unstack("metric")
    columns = [m for m in ORDER if m in table.columns] + [m for m in table.columns if m not in ORDER]
    return table[columns].fillna("").reset_index()


def draw() -> None:
    root = benchmarks_dir()
    folders = benchmark_folders(root)
    if not folders:
        example = command(f"benchmark --out {root / 'mine'}")
        st.info(f"No benchmark in `{root}` yet. `{example}` trains models on "
                "planted series (seasonal AR, a driver beside irrelevant columns, spikes; three seeds each) and "
                "scores every instrument against the planted answer; about 30 minutes on two cores, `--quick` a "
                "minute.", icon=":material/info:")
        return
    c = st.columns([2, 1])
    folder = c[0].selectbox("Benchmark", folders, format_func=lambda p: p.name, key="ka_bench_folder")
    try:
        scores = pd.read_csv(folder / "scores.csv")
        kinds = list(dict.fromkeys(scores["kind"]))
    except (OSError, ValueError, KeyError, pd.errors.ParserError) as err:
        st.error(f"{folder / 'scores.csv'} cannot be read: {err}")
        return
    kind = c[1].selectbox("Planted kind", kinds, key="ka_bench_kind")
    widgets.table(summary_table(scores, kind), f"benchmark-{folder.name}-{kind}", "ka_bench_table")
    st.caption(f"{scores['seed'].nunique()} seed(s): mean over seeds and, in brackets, the seeds' range. AUP, AUR, "
               "AUPRC: the instrument's cells against the planted (column, lag) cells ± the embedding's reach; "
               "comprehensiveness / sufficiency (excess over as many random cells): ΔMSE when the top 20 % of cells "
               "are removed / kept; top1 and rank: whether a head-level instrument ranks first the head whose lag "
               "profile peaks at the planted lag. The full table with intervals: scores.csv; the page: report.html.")
    widgets.lazy_csv_download(lambda: scores, f"benchmark-{folder.name}-scores", "ka_bench_csv",
                              "Download scores.csv")
