"""Where a study stands: the driver's record of every run (status.json), its console line, and the words of
`cli.py study --status DIR` (which reads the folder, also while another process runs the study).

status.json: {state: running | stopping | stopped | finished, pid, host, started, updated, elapsed, eta_seconds,
counts: {done, training, analysing, queued, failed, stopped, missing}, total, moved_bytes, runs: [{run, seed,
setting_*, state, stage, fraction, text, error, test_mse, …}]}.
"""
from __future__ import annotations

import os
import socket
import time
from pathlib import Path

from informer_lab.analysis.errors import ConfigError

from . import folder as disk

STATES = ("done", "training", "analysing", "queued", "failed", "stopped", "missing")
WRITE_EVERY = 1.0  # seconds between writes of status.json
SAY_EVERY = 5.0  # seconds between console lines
STALE = 60.0  # a status not updated for this long, whose driver is not seen, is not running


def duration(seconds: float | None) -> str:
    if seconds is None or seconds != seconds:
        return "?"
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


class StudyStatus:
    """The driver's live record of a study, written to status.json."""

    SUMMARY = ("test_mse", "test_mae", "test_mse_original", "epochs", "seconds", "stopped", "device", "node")

    def __init__(self, out: Path, runs: dict[str, dict]):
        self.out, self.runs = Path(out), runs
        self.state = "running"
        self.started = time.time()
        self._finished_here = 0
        self._last_write = self._last_line = 0.0
        self._last_counts: dict | None = None

    @classmethod
    def start(cls, out: Path, plan_runs) -> "StudyStatus":
        runs = {r.name: {"run": r.name, "seed": r.seed, **{f"setting_{k}": v for k, v in r.setting.items()},
                         "state": "queued", "stage": "", "fraction": 0.0, "text": "", "error": ""} for r in plan_runs}
        return cls(out, runs)

    def update(self, name: str, **fields) -> None:
        row = self.runs[name]
        if fields.get("state") in ("done", "failed") and row["state"] not in ("done", "failed"):
            self._finished_here += 1
        if fields.get("state") == "failed":
            fields.setdefault("fraction", row.get("fraction", 0.0))
        if fields.get("state") in ("done", "training", "analysing"):
            fields.setdefault("error", "")
        row.update(fields)

    def begin(self) -> None:
        """The work starts now: elapsed time and the rate of the ETA count from here."""
        self.started, self._finished_here = time.time(), 0

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATES, 0)
        for row in self.runs.values():
            out[row["state"]] = out.get(row["state"], 0) + 1
        return out

    def eta(self) -> float | None:
        counts = self.counts()
        left = counts["training"] + counts["analysing"] + counts["queued"]
        if not self._finished_here or self.state != "running":
            return None
        rate = self._finished_here / max(1e-9, time.time() - self.started)
        return left / rate

    def as_dict(self, moved_bytes: int = 0) -> dict:
        now = time.time()
        return {"state": self.state, "pid": os.getpid(), "host": socket.gethostname(), "started": self.started,
                "updated": now, "elapsed": now - self.started, "eta_seconds": self.eta(), "counts": self.counts(),
                "total": len(self.runs), "moved_bytes": moved_bytes, "finished": self.state == "finished",
                "runs": list(self.runs.values())}

    def write(self, *, force: bool = False, moved_bytes: int = 0) -> None:
        now = time.monotonic()
        if force or now - self._last_write >= WRITE_EVERY:
            self._last_write = now
            disk.write_json(self.out / "status.json", self.as_dict(moved_bytes))

    def console_line(self) -> str | None:
        """A progress line every SAY_EVERY seconds, or when the counts change; None otherwise."""
        now, counts = time.monotonic(), self.counts()
        if counts == self._last_counts and now - self._last_line < SAY_EVERY:
            return None
        if now - self._last_line < 1.0:
            return None
        self._last_line, self._last_counts = now, counts
        return "  " + summary_line(counts, len(self.runs), time.time() - self.started, self.eta())


def summary_line(counts: dict, total: int, elapsed: float | None, eta: float | None) -> str:
    running = counts.get("training", 0) + counts.get("analysing", 0)
    parts = [f"runs {counts.get('done', 0)}/{total} done", f"{running} running", f"{counts.get('failed', 0)} failed",
             f"{counts.get('queued', 0)} queued"]
    for extra in ("stopped", "missing"):
        if counts.get(extra):
            parts.append(f"{counts[extra]} {extra}")
    parts.append(f"elapsed {duration(elapsed)}")
    if eta is not None:
        parts.append(f"ETA {duration(eta)}")
    return " · ".join(parts)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running(status: dict) -> bool:
    """Is a driver working on this study now? (Its pid on this host, or a fresh status from another host.)"""
    if status.get("state") not in ("running", "stopping"):
        return False
    age = time.time() - float(status.get("updated", 0) or 0)
    if status.get("host") == socket.gethostname() and isinstance(status.get("pid"), int):
        return _alive(status["pid"]) and age < 3600
    return age < STALE


def _done_on_disk(out: Path, plan) -> int:
    return sum(bool(state.trained and set(plan.analyses) <= set(state.done_analyses))
               for state in (disk.inspect_run(out, run.name, plan.analyses) for run in plan.runs()))


def _without_status(out: Path, plan, done: int | None = None) -> list[str]:
    """Where a study stands when its status.json cannot be read or is missing: the runs whose results are on disk."""
    runs = plan.runs()
    done = _done_on_disk(out, plan) if done is None else done
    why = "cannot be read (damaged or cut short)" if (out / "status.json").exists() else "is missing"
    return [f"study {out}: status unknown — status.json {why}; counted from the run folders instead",
            f"{done} of {len(runs)} runs have their results on disk; re-run the study's command to go on (it does "
            "nothing twice and writes status.json anew)"]


def describe(out: str | Path) -> list[str]:
    """`cli.py study --status DIR`: where the study stands, in lines."""
    from .plan import read_plan

    out = Path(out)
    plan = read_plan(out)
    if plan is None:
        raise ConfigError(f"{out} holds no study (no study.json)")
    status = disk.read_json_object(out / "status.json")
    if status is None and (out / "status.json").exists():  # damaged: say so, and count what the run folders hold
        return _without_status(out, plan)
    if status is None and (done := _done_on_disk(out, plan)):  # missing, yet runs are on disk: not "not started"
        return _without_status(out, plan, done)
    status = status or {}
    runs = [r for r in status.get("runs", []) if isinstance(r, dict)]
    total = len(plan.runs())
    counts = dict.fromkeys(STATES, 0)
    for r in runs:
        counts[str(r.get("state"))] = counts.get(str(r.get("state")), 0) + 1
    counts["queued"] += max(0, total - len(runs))
    live = running(status)
    state = status.get("state", "not started")
    if state in ("running", "stopping") and not live:
        state = f"not running (last update {duration(time.time() - float(status.get('updated', 0) or 0))} ago; " \
                "re-run the same command to resume)"
    lines = [f"study {out}: {state}",
             summary_line(counts, total, status.get("elapsed"), status.get("eta_seconds") if live else None)]
    if status.get("moved_bytes"):
        lines.append(f"results brought home through Ray: {status['moved_bytes'] / 2**20:.1f} MiB")
    for r in [r for r in runs if r.get("state") in ("failed", "missing")][:10]:
        lines.append(f"  ✗ {r.get('run')}: {str(r.get('error', ''))[:200]}")
    active = [r for r in runs if r.get("state") in ("training", "analysing")]
    for r in active[:10]:
        lines.append(f"  … {r.get('run')}: {r.get('state')} {float(r.get('fraction') or 0):.0%} {r.get('text', '')}")
    if disk.stop_requested(out):
        lines.append("a stop is requested: the study stops between tasks")
    return lines


__all__ = ["STATES", "StudyStatus", "describe", "duration", "running", "summary_line"]
