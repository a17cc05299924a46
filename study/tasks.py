"""What one Ray task does: train one run (or find it trained), or analyse its checkpoint into tidy tables.

Plain functions (runner.py wraps them in `ray.remote`), so they also run in-process and in tests. Each writes only
inside its run's folder, every file atomically, and skips what is already there: a re-run does no work twice and
a killed study resumes where it stopped. A task receives the run's settings (a dict), the CSV's bytes (a Ray object
reference on the driver's side) and the reading options; it returns small summaries and file paths.
"""
from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path
from typing import Callable

import pandas as pd
import torch

from analysis.ablation import head_sweep
from analysis.agreement import topu_agreement
from analysis.checkpoint import load_checkpoint
from analysis.comparison import headline_errors
from analysis.data import ReadOptions, load_csv
from analysis.head_roles import head_profiles
from analysis.importance import head_importance
from analysis.training import TrainProgress
from analysis.workflow import prepare_for_checkpoint, train_on_frame

from .plan import RunSpec

Report = Callable[[str, str, float, str], None]  # (run, stage, fraction, text)


def write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str))
    os.replace(tmp, path)


def write_csv(path: Path, table: pd.DataFrame) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    table.to_csv(tmp, index=False)
    os.replace(tmp, path)


def read_json(path: Path) -> dict | None:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def _frame(data: bytes, name: str, options: dict):
    buffer = io.BytesIO(data)
    buffer.name = name
    return load_csv(buffer, ReadOptions(**options))


def _threads(threads: int | None) -> None:
    if threads:
        torch.set_num_threads(threads)


def train_run(run: dict, data: bytes, csv_name: str, options: dict, folder: str, report: Report | None = None,
              threads: int | None = 1) -> dict:
    """Train the run into `folder`/checkpoint unless done.json says it is trained; returns its train summary."""
    _threads(threads)
    spec = RunSpec.from_dict(run)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    done = read_json(folder / "train.json")
    if done is not None and (folder / "checkpoint" / "manifest.json").is_file():
        return {**done, "skipped": True}
    write_json(folder / "params.json", run)
    started = time.perf_counter()

    def progress(p: TrainProgress) -> None:
        if report is not None:
            done_steps = (p.epoch - 1) * p.steps + p.step
            where = (f"step {p.step}/{p.steps}, loss {p.train_loss:.4f}" if p.stage == "train" else
                     f"{'validating' if p.stage == 'validate' else 'test'}: {p.windows_done}/{p.windows_total} windows")
            report(spec.name, "train", done_steps / max(1, p.epochs * p.steps), f"epoch {p.epoch}/{p.epochs}, {where}")

    _, result = train_on_frame(_frame(data, csv_name, options), spec.spec, spec.size, spec.train,
                               out=folder / "checkpoint", progress=progress)
    summary = {"run": spec.name, "seed": spec.seed, **{f"setting_{k}": v for k, v in spec.setting.items()},
               **{f"test_{k}": v for k, v in result.test.as_dict().items()}, "epochs": len(result.history),
               "stopped": result.stopped, "seconds": time.perf_counter() - started, "device": result.device}
    write_json(folder / "train.json", summary)
    return {**summary, "skipped": False}


def _profiles_long(profiles) -> pd.DataFrame:
    """The lag profiles as a long table: site, head, lag, mass (only lags with mass)."""
    rows = []
    sites = list(profiles.table["site"].unique())
    for s, site in enumerate(sites):
        for h in range(profiles.mass.shape[1]):
            m = profiles.mass[s, h]
            keep = m > 0
            rows.append(pd.DataFrame({"site": site, "head": h, "lag": profiles.lags[keep], "mass": m[keep]}))
    return pd.concat(rows, ignore_index=True)


def analyse_run(run: dict, data: bytes, csv_name: str, options: dict, folder: str, analyses: list[str],
                max_windows: int, split: str, report: Report | None = None, threads: int | None = 1) -> dict:
    """Every analysis of the run not already in `folder`/tables: each a tidy CSV. Returns {analysis: path}."""
    _threads(threads)
    spec = RunSpec.from_dict(run)
    folder = Path(folder)
    tables = folder / "tables"
    tables.mkdir(exist_ok=True)
    wanted = [a for a in analyses if not (tables / f"{a}.csv").is_file()]
    out = {a: str(tables / f"{a}.csv") for a in analyses}
    if not wanted:
        return out
    checkpoint = load_checkpoint(folder / "checkpoint")
    prepared = prepare_for_checkpoint(checkpoint, _frame(data, csv_name, options))
    model, seed, windows = checkpoint.model, spec.seed, max_windows or None
    for k, name in enumerate(wanted):
        if report is not None:
            report(spec.name, "analyse", k / len(wanted), f"{name} ({k + 1} of {len(wanted)})")
        if name == "errors":
            table = headline_errors(model, prepared, split=split, seed=seed)
        elif name == "sweep":
            table = head_sweep(model, prepared, split, seed=seed, max_windows=windows).table
        elif name == "importance":
            table = head_importance(model, prepared, split, seed=seed, max_windows=windows).table
        elif name == "agreement":
            table = topu_agreement(model, prepared, split, max_windows=windows or 10**9, seed=seed)
        elif name == "roles":
            profiles = head_profiles(model, prepared, "val", max_windows=windows or 10**9, seed=seed)
            write_csv(tables / "profiles.csv", _profiles_long(profiles))
            table = profiles.table.assign(seasonal_lags=";".join(map(str, profiles.seasonal_lags)))
        else:
            raise ValueError(f"unknown analysis {name!r}")
        write_csv(tables / f"{name}.csv", table)
    return out


__all__ = ["analyse_run", "read_json", "train_run", "write_csv", "write_json"]
