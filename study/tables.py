"""The study's joined tables: every run's per-analysis CSV, with run, seed and setting_* columns in front, appended run
by run into tables/ANALYSIS.csv (one run's table in memory at a time, so a study of hundreds of runs joins in flat
memory), and the run table runs.csv. What cannot be read is named in the returned notes, never dropped silently.
"""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from informer_lab.analysis.errors import ConfigError

from .folder import read_table, run_folder
from .plan import RunSpec


def _front(run: RunSpec) -> dict:
    return {"run": run.name, "seed": run.seed, **{f"setting_{k}": v for k, v in run.setting.items()}}


def join_tables(out: Path, runs: list[RunSpec], analyses) -> list[str]:
    """tables/<analysis>.csv for each analysis (and 'profiles' with 'roles'): the rows of every run that has it.
    Returns notes naming runs whose table is missing or damaged (those runs are left out of that table)."""
    tables = out / "tables"
    tables.mkdir(exist_ok=True)
    notes: list[str] = []
    names = [*analyses, *(["profiles"] if "roles" in analyses else [])]
    for analysis in names:
        target = tables / f"{analysis}.csv"
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        columns: list[str] | None = None
        missing, damaged = [], []
        with open(tmp, "w", newline="") as handle:
            for run in runs:
                path = run_folder(out, run.name) / "tables" / f"{analysis}.csv"
                if not path.is_file():
                    missing.append(run.name)
                    continue
                try:
                    table = read_table(path)
                except ConfigError:
                    damaged.append(run.name)
                    continue
                for i, (key, value) in enumerate(_front(run).items()):
                    table.insert(i, key, value)
                if columns is None:
                    columns = list(table.columns)
                    table.to_csv(handle, index=False)
                else:
                    table.reindex(columns=columns).to_csv(handle, index=False, header=False)
        if columns is None:
            tmp.unlink()
            if target.exists():
                target.unlink()
        else:
            os.replace(tmp, target)
        if damaged:
            notes.append(f"{analysis}: left out the damaged table of {_names(damaged)}")
        if missing and columns is not None:
            notes.append(f"{analysis}: {len(missing)} run(s) have no table yet ({_names(missing)})")
    return notes


def _names(names: list[str], shown: int = 3) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def read_joined(out: Path, analysis: str, columns: list[str] | None = None) -> pd.DataFrame | None:
    """A joined table (only `columns` when given), or None when the study has none or it cannot be read."""
    path = Path(out) / "tables" / f"{analysis}.csv"
    if not path.is_file():
        return None
    try:
        return pd.read_csv(path, usecols=columns)
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError):
        return None


__all__ = ["join_tables", "read_joined"]
