"""The study driver: Ray in-process (sized to the machine) or a cluster by address, every run trained and analysed
as Ray tasks, progress reported as it goes, failures kept to their run, per-run tables joined at the end.

What crosses the wire: to a task, its run's settings (a small dict), one object reference to the CSV's bytes (put
in Ray's object store once, fetched once per worker node) and the reading options; back, a summary dict and file
paths. Checkpoints and tables are written by the tasks into the study folder, which on a cluster must be a path
every node sees (a shared file system); locally it is just a folder.
"""
from __future__ import annotations

import logging
import os
import time
import traceback
from dataclasses import asdict
from pathlib import Path
from typing import Callable

import pandas as pd

from analysis.errors import ConfigError, InformerLabError

from . import ray_session, tasks
from .findings import summarise
from .plan import RunSpec, StudyPlan, read_plan
from .tasks import read_json, write_csv, write_json

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[1]
EXCLUDES = ["runs/", "studies/", ".git/", "test-artifacts/", "*.safetensors", "*.pth", "__pycache__/"]

Echo = Callable[[str], None]


def _ray(address: str | None, num_cpus: int | None, dashboard: bool = False):
    """Ray, started in this process on loopback (or joined at `address`); True when this call started it."""
    import ray

    if ray.is_initialized():
        return ray, False
    if address:
        # a cluster's workers import this project from a copy of it (the runtime environment's working_dir)
        return ray_session.join(address, runtime_env={"working_dir": str(ROOT), "excludes": EXCLUDES}), True
    return ray_session.start_local(num_cpus, env_vars={"PYTHONPATH": str(ROOT)}, dashboard=dashboard), True


def _progress_actor(ray):
    @ray.remote(num_cpus=0)
    class Progress:
        def __init__(self):
            self.state: dict = {}

        def report(self, run: str, stage: str, fraction: float, text: str) -> None:
            self.state[run] = {"stage": stage, "fraction": round(float(fraction), 4), "text": text}

        def snapshot(self) -> dict:
            return dict(self.state)

    return Progress.remote()


def _error_text(err: BaseException) -> str:
    cause = getattr(err, "cause", None) or err
    if isinstance(cause, InformerLabError) or isinstance(cause, (ValueError, ConfigError)):
        return f"{type(cause).__name__}: {cause}"
    lines = traceback.format_exception_only(type(cause), cause)
    return lines[-1].strip()[:300]


def check_folder(plan: StudyPlan, out: Path) -> None:
    """A study folder holds one study: refuse one made from another CSV or other base settings."""
    existing = read_plan(out)
    if existing is None:
        return
    same = (existing.fingerprint, existing.spec, existing.size, existing.options) == \
        (plan.fingerprint, plan.spec, plan.size, plan.options)
    if not same:
        raise ConfigError(f"{out} holds another study (another CSV or other base settings); choose another --out, "
                          "or the same CSV and settings to resume it")


def run_study(plan: StudyPlan, out: str | Path, data: bytes, *, address: str | None = None,
              num_cpus: int | None = None, echo: Echo | None = None, poll: float = 1.0) -> dict:
    """Train and analyse every run of `plan` into `out`, skipping what is done. Returns the findings summary."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    check_folder(plan, out)
    write_json(out / "study.json", plan.to_dict())
    runs = plan.runs()
    say = echo or (lambda text: None)
    status = {r.name: {"run": r.name, "seed": r.seed, **{f"setting_{k}": v for k, v in r.setting.items()},
                       "state": "queued", "stage": "", "fraction": 0.0, "text": "", "error": ""} for r in runs}
    ray, started = _ray(address, num_cpus)
    try:
        progress = _progress_actor(ray)

        def report(run: str, stage: str, fraction: float, text: str) -> None:
            progress.report.remote(run, stage, fraction, text)

        data_ref = ray.put(data)
        options = asdict(plan.options)
        train_remote = ray.remote(num_cpus=1, max_retries=0)(tasks.train_run)
        analyse_remote = ray.remote(num_cpus=1, max_retries=0)(tasks.analyse_run)
        name = Path(plan.csv).name
        pending: dict = {}

        def analyse(run: RunSpec) -> None:
            ref = analyse_remote.remote(run.to_dict(), data_ref, name, options, str(out / "runs" / run.name),
                                        list(plan.analyses), plan.max_windows, plan.split, report)
            pending[ref] = ("analyse", run)
            status[run.name]["state"] = "analysing"

        for run in runs:
            folder = out / "runs" / run.name
            trained = (folder / "train.json").is_file() and (folder / "checkpoint" / "manifest.json").is_file()
            if trained:
                status[run.name].update(read_json(folder / "train.json") or {})
                if all((folder / "tables" / f"{a}.csv").is_file() for a in plan.analyses):
                    status[run.name].update(state="done", fraction=1.0)
                    continue
                analyse(run)
            else:
                ref = train_remote.remote(run.to_dict(), data_ref, name, options, str(folder), report)
                pending[ref] = ("train", run)
                status[run.name]["state"] = "training"
        skipped = sum(s["state"] == "done" for s in status.values())
        say(f"study {out}: {len(runs)} runs ({skipped} already done), Ray with "
            f"{int(ray.cluster_resources().get('CPU', 0))} CPUs")
        last_line = 0.0
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=poll)
            for ref in ready:
                stage, run = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except Exception as err:  # noqa: BLE001 — a failed run is reported and the others go on
                    status[run.name].update(state="failed", error=_error_text(err))
                    say(f"✗ {run.name}: {stage} failed: {status[run.name]['error']}")
                    continue
                if stage == "train":
                    status[run.name].update({k: v for k, v in result.items() if k != "skipped"})
                    say(f"✓ {run.name} trained: test mse {result.get('test_mse', float('nan')):.4f}"
                        f"{' (found done)' if result.get('skipped') else ''}")
                    analyse(run)
                else:
                    status[run.name].update(state="done", fraction=1.0, text="")
                    say(f"✓ {run.name} analysed")
            live = ray.get(progress.snapshot.remote())
            for run_name, state in live.items():
                if status[run_name]["state"] in ("training", "analysing"):
                    status[run_name].update(stage=state["stage"], fraction=state["fraction"], text=state["text"])
            write_json(out / "status.json", {"updated": time.time(), "runs": list(status.values())})
            if time.monotonic() - last_line > 5 and pending:
                last_line = time.monotonic()
                say("  " + " | ".join(f"{s['run']} {s['stage'] or s['state']} {s['fraction']:.0%}"
                                      for s in status.values() if s["state"] in ("training", "analysing")))
    finally:
        if started:
            ray.shutdown()
    write_json(out / "status.json", {"updated": time.time(), "runs": list(status.values()), "finished": True})
    write_csv(out / "runs.csv", pd.DataFrame(list(status.values())))
    join_tables(out, runs, plan.analyses)
    findings = summarise(out)
    failed = [s for s in status.values() if s["state"] == "failed"]
    say(f"study {out}: {len(runs) - len(failed)} of {len(runs)} runs done" +
        (f"; failed: {', '.join(s['run'] for s in failed)}" if failed else ""))
    return findings


def join_tables(out: Path, runs: list[RunSpec], analyses) -> None:
    """out/tables/<analysis>.csv: every finished run's rows, with run, seed and setting_* columns first."""
    (out / "tables").mkdir(exist_ok=True)
    for analysis in [*analyses, "profiles"]:
        parts = []
        for run in runs:
            path = out / "runs" / run.name / "tables" / f"{analysis}.csv"
            if path.is_file():
                table = pd.read_csv(path)
                front = {"run": run.name, "seed": run.seed, **{f"setting_{k}": v for k, v in run.setting.items()}}
                for i, (key, value) in enumerate(front.items()):
                    table.insert(i, key, value)
                parts.append(table)
        if parts:
            write_csv(out / "tables" / f"{analysis}.csv", pd.concat(parts, ignore_index=True))


def read_status(out: str | Path) -> dict:
    """The live status of a study folder (status.json), or {} when it has none."""
    return read_json(Path(out) / "status.json") or {}


__all__ = ["check_folder", "join_tables", "read_status", "run_study"]
