"""The study driver: a local Ray of its own (or a cluster by address), every run trained and analysed as a Ray task,
its results brought home through Ray and written by the driver, progress and control as it goes.

- **Results come home.** A task gets the run's settings, one object reference to the data's bytes (put in Ray's
  object store once, fetched once per node) and, for a run trained earlier, its checkpoint's files; it returns the
  checkpoint's files, summary, log and tables (study/tasks.py). The driver writes them into the study folder
  atomically (study/folder.py). A run is done only when its files are on the driver's disk and check.
- **Faults.** A task lost to a dead worker or node runs again elsewhere (Ray's retries for system failures,
  `max_retries`); the driver's writes are idempotent. A task that fails for a reason of its own (a setting that
  cannot train, bad data) fails once with its error (`retry_exceptions=False`). A killed driver resumes: what is on
  its disk and checks is never redone; anything damaged is named and redone.
- **Scale.** At most a window of tasks is in flight (twice the cluster's CPUs), so the driver's memory holds a few
  results at a time and a stop request is honoured between tasks; tables are joined run by run (study/tables.py).
- **Progress and control.** status.json (counts, elapsed, ETA, every run's state, the driver's pid) at most once
  a second; a line on the console every few seconds; `NAME/stop` (cli.py study --stop, the Studies screen) stops
  submitting; the running tasks finish and are written; a stopped study resumes like a killed one.
"""
from __future__ import annotations

import logging
from dataclasses import asdict
from pathlib import Path
from typing import Callable

import pandas as pd

from informer_lab.analysis.errors import ConfigError, InformerLabError
from informer_lab.hugepages import worker_setting
from informer_lab.source import CHECKOUT, IMPORT_ROOT, PACKAGE

from . import folder as disk
from . import ray_session, tasks
from .findings import summarise
from .plan import StudyPlan, read_plan
from .status import StudyStatus
from .tables import join_tables

log = logging.getLogger(__name__)
EXCLUDES = ["runs/", "studies/", ".git/", "test-artifacts/", "*.safetensors", "*.pth", "__pycache__/"]
MAX_RETRIES = 3  # a task lost to a dead worker or node runs again up to this many times

Echo = Callable[[str], None]


def _ray(address: str | None, num_cpus: int | None, dashboard: bool = False):
    """Ray, started in this process on loopback (or joined at `address`); True when this call started it."""
    import ray

    if ray.is_initialized():
        return ray, False
    if address:
        # a cluster's workers import the lab from a copy of it: the checkout (its working_dir), or the installed
        # package (py_modules)
        code = {"working_dir": str(CHECKOUT), "excludes": EXCLUDES} if CHECKOUT else {"py_modules": [str(PACKAGE)]}
        return ray_session.join(address, runtime_env={**code, "env_vars": worker_setting()}), True
    return ray_session.start_local(num_cpus, env_vars={"PYTHONPATH": str(IMPORT_ROOT), **worker_setting()},
                                   dashboard=dashboard), True


def _progress_actor(ray):
    """A small actor the tasks report progress to, pinned to the driver's node (a worker node may die)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    @ray.remote(num_cpus=0)
    class Progress:
        def __init__(self):
            self.state: dict = {}

        def report(self, run: str, stage: str, fraction: float, text: str, node: str = "") -> None:
            self.state[run] = {"stage": stage, "fraction": round(float(fraction), 4), "text": text, "node": node}

        def snapshot(self) -> dict:
            out, self.state = self.state, {}
            return out

    here = ray.get_runtime_context().get_node_id()
    return Progress.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote()


def _error_text(err: BaseException) -> str:
    cause = getattr(err, "cause", None) or err
    if isinstance(cause, (InformerLabError, ValueError)):
        return f"{type(cause).__name__}: {str(cause)[:300]}"
    text = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {(text[-1] if text else '')[:300]}"


def check_folder(plan: StudyPlan, out: Path) -> None:
    """A study folder holds one study: refuse one made from another data file, other base settings or other seeds
    and grid (naming the way out), so that a re-run never drops runs from the tables while their folders stay."""
    existing = read_plan(out)
    if existing is None:
        return
    same = (existing.fingerprint, existing.spec, existing.size, existing.options) == \
        (plan.fingerprint, plan.spec, plan.size, plan.options)
    if not same:
        raise ConfigError(f"{out} holds another study (another data file or other base settings); choose another "
                          "--out, or the same data and settings to resume it")
    from .plan import format_seeds

    if existing.grid != plan.grid:
        raise ConfigError(f"{out} holds a study with another --grid; choose another --out, or the same grid to "
                          "resume it")
    if not set(existing.seeds) <= set(plan.seeds):
        raise ConfigError(f"{out} holds the seeds {format_seeds(existing.seeds)}; --seeds "
                          f"{format_seeds(plan.seeds)} would leave some out: resume with its seeds, add seeds with "
                          "--add-seeds, or choose another --out")


def run_study(plan: StudyPlan, out: str | Path, data: bytes, *, address: str | None = None,
              num_cpus: int | None = None, echo: Echo | None = None, poll: float = 0.5, dashboard: bool = False,
              window: int | None = None) -> dict:
    """Train and analyse every run of `plan` into `out`, skipping what is done. Returns the findings summary."""
    out = disk.prepare_out(Path(out))
    check_folder(plan, out)
    disk.write_json(out / "study.json", plan.to_dict())
    disk.clear_stop(out)
    say = echo or (lambda text: None)
    runs = plan.runs()
    analyses = list(plan.analyses)
    status = StudyStatus.start(out, runs)
    todo: list[tuple[str, object, tuple]] = []  # (kind, run, analyses wanted)
    for run in runs:
        found = disk.inspect_run(out, run.name, analyses)
        for what in found.damaged:
            say(f"redoing {run.name}: {what} is damaged")
        if found.trained:
            status.update(run.name, **{k: v for k, v in found.summary.items() if k in StudyStatus.SUMMARY})
            missing = tuple(a for a in analyses if a not in found.done_analyses)
            if missing:
                todo.append(("analyse", run, missing))
                status.update(run.name, state="queued", stage="analyse")
            else:
                status.update(run.name, state="done", fraction=1.0)
        else:
            todo.append(("train", run, tuple(analyses)))
    already = sum(s["state"] == "done" for s in status.runs.values())
    ray, started = _ray(address, num_cpus, dashboard)
    stopped = False
    moved = 0
    try:
        progress = _progress_actor(ray)

        def report(run: str, stage: str, fraction: float, text: str, node: str = "") -> None:
            progress.report.remote(run, stage, fraction, text, node)

        data_ref = ray.put(data)
        options = asdict(plan.options)
        train_remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(tasks.train_run)
        analyse_remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(tasks.analyse_run)
        name = Path(plan.csv).name
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        window = window or max(2, 2 * cpus)
        pending: dict = {}
        status.begin()
        say(f"study {out}: {len(runs)} runs ({already} already done), Ray with {cpus} CPUs"
            + (f" on the cluster at {address}" if address else ""))

        def submit(kind: str, run, wanted: tuple) -> None:
            if kind == "train":
                disk.clear_for_training(out, run.name)
                ref = train_remote.remote(run.to_dict(), data_ref, name, options, list(wanted), plan.max_windows,
                                          plan.split, report, fingerprint=plan.fingerprint)
            else:
                files = disk.checkpoint_files_of(out, run.name)
                ref = analyse_remote.remote(run.to_dict(), files, data_ref, name, options, list(wanted),
                                            plan.max_windows, plan.split, report, fingerprint=plan.fingerprint)
            pending[ref] = (kind, run)
            status.update(run.name, state="queued", stage=kind, fraction=0.0, text="waiting for a CPU")

        while todo or pending:
            if not stopped and disk.stop_requested(out):
                stopped = True
                say(f"stop requested: {len(pending)} running task(s) finish, {len(todo)} not started")
                status.state = "stopping"
            while todo and not stopped and len(pending) < window:
                kind, run, wanted = todo.pop(0)
                try:
                    submit(kind, run, wanted)
                except (InformerLabError, OSError) as err:
                    status.update(run.name, state="failed", error=_error_text(err))
                    say(f"✗ {run.name}: {status.runs[run.name]['error']}")
            if not pending:
                break
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=poll)
            for ref in ready:
                kind, run = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except Exception as err:  # noqa: BLE001 — a failed run is reported and the others go on
                    status.update(run.name, state="failed", error=_error_text(err))
                    say(f"✗ {run.name}: {'training' if kind == 'train' else 'analysis'} failed: "
                        f"{status.runs[run.name]['error']}")
                    continue
                moved += tasks.result_bytes(result)
                _bring_home(out, kind, run, result, status, say)
            try:
                live = ray.get(progress.snapshot.remote(), timeout=10)
            except Exception:  # noqa: BLE001  progress is a courtesy: its loss never stops the study
                live = {}
            in_flight = {run.name for _, run in pending.values()}
            for run_name, state in live.items():  # a submitted task is running once it reports
                if run_name in in_flight:
                    status.update(run_name, state="training" if state["stage"] == "train" else "analysing",
                                  stage=state["stage"], fraction=state["fraction"], text=state["text"],
                                  node=state.get("node", ""))
            status.write(moved_bytes=moved)
            line = status.console_line()
            if line:
                say(line)
    except KeyboardInterrupt:
        status.state = "stopped"
        status.write(force=True, moved_bytes=moved)
        raise
    finally:
        if started:
            ray.shutdown()
    return _finish(plan, out, runs, status, stopped, moved, say)


def _bring_home(out: Path, kind: str, run, result: dict, status: StudyStatus, say: Echo) -> None:
    """Write a task's results into the study folder and mark the run by what now sits on the driver's disk."""
    try:
        if kind == "train":
            disk.write_trained(out, run.name, result["files"], result["summary"], result["params"], result["log"])
            status.update(run.name, **{k: v for k, v in result["summary"].items() if k in StudyStatus.SUMMARY})
        else:
            disk.append_log(out, run.name, result["log"])
        disk.write_tables(out, run.name, result["tables"])
    except (OSError, InformerLabError) as err:
        status.update(run.name, state="failed", error=f"writing its results: {_error_text(err)}")
        say(f"✗ {run.name}: {status.runs[run.name]['error']}")
        return
    if result.get("analysis_error"):
        status.update(run.name, state="failed", error=f"analysis: {result['analysis_error']}")
        say(f"✗ {run.name}: trained (test mse {result['summary'].get('test_mse', float('nan')):.4f}) but its "
            f"analysis failed: {result['analysis_error']}")
        return
    status.update(run.name, state="done", fraction=1.0, text="", stage="", node=result.get("node", ""))
    if kind == "train":
        say(f"✓ {run.name} trained and analysed on {result['summary'].get('host', '?')} (node "
            f"{str(result.get('node', '?'))[:8]}): test mse "
            f"{result['summary'].get('test_mse', float('nan')):.4f}")
    else:
        say(f"✓ {run.name} analysed")


def _finish(plan: StudyPlan, out: Path, runs, status: StudyStatus, stopped: bool, moved: int, say: Echo) -> dict:
    """From the driver's disk: which runs are done (checked again), the joined tables, the findings."""
    analyses = list(plan.analyses)
    for run in runs:
        found = disk.inspect_run(out, run.name, analyses)
        complete = found.trained and set(found.done_analyses) == set(analyses)
        current = status.runs[run.name]["state"]
        if complete:
            status.update(run.name, state="done", fraction=1.0)
        elif current == "done" or current in ("training", "analysing", "queued"):
            status.update(run.name, state="stopped" if stopped else "missing",
                          error="" if stopped else "its files are not complete on the driver's disk")
    disk.write_bytes(out / "runs.csv", disk.csv_bytes(pd.DataFrame(list(status.runs.values()))))
    notes = join_tables(out, runs, plan.analyses)
    for note in notes:
        say(f"note: {note}")
    findings = summarise(out)
    # Finished only once the findings are on disk: a screen that sees "finished" stops polling and reads them.
    status.state = "stopped" if stopped else "finished"
    status.write(force=True, moved_bytes=moved)
    counts = status.counts()
    failed = [s["run"] for s in status.runs.values() if s["state"] in ("failed", "missing")]
    say(f"study {out}: {counts['done']} of {len(runs)} runs done on this disk"
        + (f"; stopped with {counts.get('stopped', 0)} not done (re-run to resume)" if stopped else "")
        + (f"; failed: {', '.join(failed[:5])}{' …' if len(failed) > 5 else ''}" if failed else ""))
    disk.clear_stop(out)
    return findings


def read_status(out: str | Path) -> dict:
    """The live status of a study folder (status.json), or {} when it has none or it is damaged."""
    return disk.read_json_object(Path(out) / "status.json") or {}


__all__ = ["MAX_RETRIES", "check_folder", "read_status", "run_study"]
