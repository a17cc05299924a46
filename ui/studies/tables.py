"""Shaping for the Studies screen: study folders, the live runs table, findings in rows, the role × seed matrix.
Pure (no Streamlit), reading only the files a study writes (study.json, status.json, tables/*.csv, findings.json)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from informer_lab.study.plan import StudyPlan, read_plan
from informer_lab.ui.tables import clicked_customdata
from informer_lab.analysis.jsonfile import read_or_none

RUN_COLUMNS = {"run": "run", "seed": "seed", "state": "state", "stage": "stage", "fraction": "progress",
               "text": "now", "test_mse": "test MSE", "test_mae": "test MAE", "epochs": "epochs", "seconds": "seconds",
               "error": "error"}
PAGE_ROWS = 50  # runs per page of the run table


@dataclass(frozen=True)
class StudyFolder:
    name: str
    path: Path
    plan: StudyPlan


def study_folders(root: Path) -> list[StudyFolder]:
    """The study folders under `root` (those with a readable study.json), newest first."""
    try:
        folders = sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: -p.stat().st_mtime)
    except OSError:  # missing, a file, a loop, unreadable: no studies
        return []
    out = []
    for folder in folders:
        try:
            plan = read_plan(folder)
        except (ValueError, KeyError, TypeError):
            plan = None
        if plan is not None:
            out.append(StudyFolder(folder.name, folder, plan))
    return out


def status(folder: Path) -> dict:
    return read_or_none(folder / "status.json") or {}


def runs_table(folder: Path, plan: StudyPlan) -> pd.DataFrame:
    """One row per run of the plan: its settings, its state (queued until the study writes its status), progress,
    test error."""
    live = {r["run"]: r for r in status(folder).get("runs", []) if isinstance(r, dict) and "run" in r}
    rows = []
    for run in plan.runs():
        row = {"run": run.name, "seed": run.seed, **{f"setting_{k}": v for k, v in run.setting.items()},
               "state": "queued", "stage": "", "fraction": 0.0, "text": "", "error": ""}
        row.update({k: v for k, v in live.get(run.name, {}).items() if k in RUN_COLUMNS})
        rows.append(row)
    table = pd.DataFrame(rows)
    keep = [c for c in RUN_COLUMNS if c in table.columns] + [c for c in table.columns if c.startswith("setting_")]
    return table[keep].rename(columns=RUN_COLUMNS)


def finished(folder: Path) -> bool:
    return bool(status(folder).get("finished"))


def settings_of(table: pd.DataFrame) -> list[str]:
    """The setting labels of a run table ('factor=3, dropout=0.1'), in plan order; ['all'] without a grid."""
    return list(dict.fromkeys(setting_labels(table))) or ["all"]


def setting_labels(table: pd.DataFrame) -> list[str]:
    keys = [c for c in table.columns if c.startswith("setting_")]
    if not keys:
        return ["all"] * len(table)
    return [", ".join(f"{k[len('setting_'):]}={v}" for k, v in zip(keys, row)) for row in table[keys].itertuples(
        index=False)]


def filter_runs(table: pd.DataFrame, settings: list[str] | None, states: list[str] | None) -> pd.DataFrame:
    """The runs of the chosen settings and states (all when a choice is empty)."""
    keep = pd.Series(True, index=table.index)
    if settings:
        keep &= pd.Series(setting_labels(table), index=table.index).isin(settings)
    if states:
        keep &= table["state"].isin(states)
    return table[keep]


def page_of(table: pd.DataFrame, page: int, rows: int = PAGE_ROWS) -> tuple[pd.DataFrame, int]:
    """(rows of page `page`, 1-based, clamped; the number of pages)."""
    pages = max(1, -(-len(table) // rows))
    page = min(max(1, int(page)), pages)
    return table.iloc[(page - 1) * rows: page * rows], pages


def progress_words(live: dict, total: int) -> dict:
    """What the live panel shows: counts, elapsed, ETA and whether a driver works on the study now."""
    from informer_lab.study.status import STATES, duration, running

    counts = dict.fromkeys(STATES, 0)
    for row in live.get("runs", []):
        if isinstance(row, dict):
            counts[str(row.get("state"))] = counts.get(str(row.get("state")), 0) + 1
    counts["queued"] += max(0, total - sum(counts.values()))
    alive = running(live)
    state = live.get("state", "not started")
    if state in ("running", "stopping") and not alive:
        state = "not running (re-run its command to resume)"
    return {"counts": counts, "state": state, "running": alive, "elapsed": duration(live.get("elapsed")),
            "eta": duration(live.get("eta_seconds")) if alive and live.get("eta_seconds") is not None else "–"}


def findings_rows(findings: dict) -> pd.DataFrame:
    """One row per setting: test MSE over seeds (mean, std, t interval), removable heads (Benjamini–Hochberg across
    each run's heads, the raw count, by point estimates; blank where no run had an interval), heads whose role holds
    in every seed, rank stability of matched heads' importance."""
    rows = []
    for setting, entry in findings.get("settings", {}).items():
        mse, removable = entry.get("test_mse", {}), entry.get("removable", {})
        sweep, grad = entry.get("sweep_rank_stability", {}), entry.get("importance_rank_stability", {})
        rows.append({"setting": setting, "seeds": mse.get("seeds"), "test MSE (mean)": mse.get("mse_mean"),
                     "sd over seeds": mse.get("mse_std"), "95% lo (seeds)": mse.get("mse_seeds_lo"),
                     "95% hi (seeds)": mse.get("mse_seeds_hi"), "interval": mse.get("interval", ""),
                     "removable (BH)": removable.get("with_interval_mean"), "removable, raw": removable.get("raw_mean"),
                     "removable, by point": removable.get("by_point_mean"), "heads": removable.get("heads"),
                     "runs with an interval": (f"{removable.get('runs_with_interval')} of {removable.get('runs')}"
                                               if removable.get("runs") else None),
                     "stable role": entry.get("heads_with_a_stable_role"),
                     "ΔMSE rank ρ": sweep.get("rho"), "ρ lo": sweep.get("rho_lo"), "ρ hi": sweep.get("rho_hi"),
                     "gradient rank ρ": grad.get("rho")})
    return pd.DataFrame(rows)


ANATOMY_FINDINGS = {
    "lens": ("Forecast lens across seeds", "Each lens and layer's test MSE (the horizon's mean, standardised): mean, "
             "standard deviation and t interval over seeds. The decoder's last layer and the encoder's deepest depth "
             "are the forecast itself."),
    "shares": ("Direct shares across seeds", "Per column, the mean |direct share| (data units) of each seed's k-th "
               "largest decoder head over the horizon, over seeds (ranks need no matching of heads between seeds), "
               "and where each seed's largest head sits."),
    "composition": ("Composition across seeds", "Per sender → receiver pair of heads matched across seeds by their lag "
                    "profiles (as head roles are), the composition score over seeds (mean, t interval) beside the "
                    "random matrices' 95 % quantile, and in how many seeds the score lies above it."),
}


def anatomy_findings(folder: Path, name: str) -> pd.DataFrame:
    """tables/findings_<name>.csv ('lens' or 'shares'), or an empty table when the study has none."""
    path = folder / "tables" / f"findings_{name}.csv"
    if not path.is_file():
        return pd.DataFrame()
    try:
        return pd.read_csv(path)
    except (OSError, ValueError, pd.errors.ParserError):
        return pd.DataFrame()


def role_matrix(folder: Path, setting: str | None = None) -> pd.DataFrame:
    path = folder / "tables" / "findings_roles.csv"
    if not path.is_file():
        return pd.DataFrame()
    table = pd.read_csv(path)
    return table if setting is None else table[table["setting"] == setting].reset_index(drop=True)


def role_grid(matrix: pd.DataFrame) -> tuple[np.ndarray, list[str], list[str], list[str], np.ndarray]:
    """(role codes [heads, seeds], row labels, seed labels, role names, head index per cell [heads, seeds])."""
    seeds = [c for c in matrix.columns if c.startswith("seed ")]
    roles = sorted({r for c in seeds for r in matrix[c].dropna()})
    codes = np.array([[roles.index(r) if isinstance(r, str) else np.nan for r in matrix[c]] for c in seeds]).T
    labels = [f"{s} · h{h}" for s, h in zip(matrix["site"], matrix["ref_head"])]
    heads = np.array([list(map(int, str(h).split(";"))) for h in matrix["heads"]])
    return codes, labels, seeds, roles, heads


def role_pick(selection) -> tuple[int, int] | None:
    """(matrix row, seed column) of the first clicked cell of the role grid."""
    for data in clicked_customdata(selection):
        if len(data) >= 2:
            return int(data[0]), int(data[1])
    return None


def matched_head_effects(folder: Path, matrix: pd.DataFrame, metric: str = "delta_mse") -> pd.DataFrame:
    """Per matched head (rows of the role matrix of one setting): the single-head ΔMSE over seeds (each seed's own
    head index), its mean, spread and t interval over seeds, and in how many seeds removing it hurt."""
    from informer_lab.analysis.intervals import across_seeds

    path = folder / "tables" / "sweep.csv"
    if matrix.empty or not path.is_file():
        return pd.DataFrame()
    sweep = pd.read_csv(path)
    seeds = [c for c in matrix.columns if c.startswith("seed ")]
    rows = []
    for i, row in matrix.iterrows():
        for seed_label, head in zip(seeds, map(int, str(row["heads"]).split(";"))):
            seed = int(seed_label.split()[1])
            hit = sweep[(sweep["seed"] == seed) & (sweep["site"] == row["site"]) & (sweep["head"] == head)]
            if len(hit):
                rows.append({"head": f"{row['site']} · h{row['ref_head']}", "seed": seed,
                             metric: float(hit[metric].iloc[0])})
    if not rows:
        return pd.DataFrame()
    return across_seeds(pd.DataFrame(rows), ["head"], metric).sort_values(f"{metric}_mean", ascending=False)
