"""A study's driver killed mid-study, then stopped on request, then resumed: no run trained twice, no
table half-written, `--status` says where it stands at each step, and the last run ends with every run done.
The driver runs as `python cli.py study` in a process group of the test's own; only those processes are killed."""
from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd

from informer_lab.study.folder import request_stop

from tests.conftest import SAMPLE_CSV
from tests.sockets import kill_tree

ROOT = Path(__file__).resolve().parents[2]
# Six: at most two done before the kill; after the stop the driver finishes the run it saw end, the one it submitted in
# its place at once and the one still in flight (two tasks in flight), so one run is left unstarted at least.
SEEDS = [str(s) for s in range(6)]


def _command(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "cli.py", "study", "--csv", str(SAMPLE_CSV), "--target", "load", "--features", "S",
            "--seq-len", "48", "--label-len", "24", "--pred-len", "12", "--d-model", "16", "--n-heads", "2",
            "--d-ff", "16", "--epochs", "1", "--max-steps", "12", "--analyses", "errors,sweep", "--max-windows",
            "32", "--cpus", "1", "--out", str(out), *extra]


def _status(out: Path) -> dict:
    try:
        return json.loads((out / "status.json").read_text())
    except (OSError, ValueError):
        return {}


def _trained(out: Path) -> dict[str, int]:
    """run → mtime of its weights, for the runs whose train.json is on disk."""
    return {f.name: (f / "checkpoint" / "weights.safetensors").stat().st_mtime_ns for f in (out / "runs").iterdir()
            if (f / "train.json").is_file()}


@contextlib.contextmanager
def _driver(command: list[str]):
    """(process, its output lines so far, read as they come): a study driver in a session of its own, ended with the
    processes it started when the block ends, also when the test fails."""
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    lines: list[str] = []

    def read() -> None:  # each line as it comes (the driver flushes every line)
        for line in process.stdout:
            lines.append(line)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        yield process, lines
    finally:
        if process.poll() is None:
            kill_tree(process.pid)
            process.wait(timeout=30)
        reader.join(timeout=30)


def _wait_for_line(lines: list[str], start: str, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not any(line.lstrip().startswith(start) for line in lines):
        assert time.monotonic() < deadline, "".join(lines)[-2000:]
        time.sleep(0.02)


def _status_lines(out: Path) -> str:
    return subprocess.run([sys.executable, "cli.py", "study", "--status", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60).stdout


def test_killed_then_stopped_then_resumed_with_nothing_trained_twice(tmp_path):
    out = tmp_path / "study"
    with _driver(_command(out, "--seeds", f"0-{len(SEEDS) - 1}")) as (driver, lines):
        _wait_for_line(lines, "✓ ")  # killed as soon as it says a run is done: one run done, or two
        kill_tree(driver.pid)  # the driver and the Ray it started
        driver.wait(timeout=30)
    assert "not running" in _status_lines(out)  # its status says running, but its driver is gone
    before = _trained(out)
    assert before and len(before) < len(SEEDS)
    for table in (out / "runs").glob("*/tables/*.csv"):  # what is at a final name is whole
        assert len(pd.read_csv(table)) > 0

    # resume (the study's own seeds: --seeds left out), and ask it to stop as soon as it says one more run is done
    with _driver(_command(out)) as (resumed, lines):
        _wait_for_line(lines, "✓ ")
        # at once: status.json lags up to a second, in which a fast machine finished every run; a `cli.py study
        # --stop` process starting on a busy machine let every run finish first
        request_stop(out)
        stop = subprocess.run([sys.executable, "cli.py", "study", "--stop", str(out)], cwd=ROOT, capture_output=True,
                              text=True, timeout=60)  # the command writes the same request again
        assert stop.returncode == 0 and "stop requested" in stop.stdout
        resumed.wait(timeout=600)
    text = "".join(lines)
    assert resumed.returncode == 0, text[-2000:]
    assert f"({len(before)} already done)" in text and "stop requested" in text
    middle = _trained(out)
    assert all(middle[name] == mtime for name, mtime in before.items())  # nothing trained twice
    assert len(middle) < len(SEEDS)  # one CPU, two tasks in flight: the stop left runs unstarted
    assert _status(out)["state"] == "stopped" and "stopped" in _status_lines(out)

    with _driver(_command(out)) as (final, lines):
        final.wait(timeout=600)
    assert final.returncode == 0, "".join(lines)[-2000:]
    after = _trained(out)
    assert sorted(after) == [f"seed{s}" for s in SEEDS]
    assert all(after[name] == mtime for name, mtime in middle.items())
    assert _status(out)["counts"]["done"] == len(SEEDS) and "finished" in _status_lines(out)
    sweep = pd.read_csv(out / "tables" / "sweep.csv")
    assert sorted(sweep["seed"].unique()) == list(range(len(SEEDS)))
