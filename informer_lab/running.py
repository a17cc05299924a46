"""Running labs: one record per served lab, readable by its owner only, and stopping a lab's whole process tree.

A record is `lab-<port>.json` in this user's state folder (`INFORMER_LAB_RUNTIME_DIR` overrides it): the port, the
server's process id and its start time (so a reused process id is never taken for the lab), the folder it was
started from, its home, its URL and when it started. The folder is 0700 and each file 0600, as Jupyter keeps its
runtime files. A record whose process has gone is dropped when read.

Stopping collects the server's descendants first (a study's local Ray, its workers: they would be re-parented once
the server exits), sends each SIGTERM, waits, and sends SIGKILL to whatever is left.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import platformdirs

from .home import APP_NAME

RUNTIME_ENV = "INFORMER_LAB_RUNTIME_DIR"
STOP_GRACE_S = 10.0


@dataclass(frozen=True)
class Lab:
    port: int
    pid: int  # the server process (a child of the launcher, leader of its own process group)
    started: float  # time.time() at start
    folder: str  # the working folder it was started from
    home: str  # where its runs live
    url: str
    proc_start: int | None = None  # the kernel's start time of `pid` (Linux), guarding against a reused pid
    host: str = "127.0.0.1"  # the address it is bound to


def runtime_dir() -> Path:
    configured = os.environ.get(RUNTIME_ENV, "").strip()
    path = Path(configured).expanduser() if configured else platformdirs.user_state_path(APP_NAME, appauthor=False)
    path = path / "running"
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def _record_path(port: int) -> Path:
    return runtime_dir() / f"lab-{port}.json"


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat after the command name (field 3, the state, first), or None off Linux or once it has gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def process_start(pid: int) -> int | None:
    """The kernel's start time of a process in clock ticks (field 22 of /proc/PID/stat), or None off Linux."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields else None


def is_alive(pid: int, proc_start: int | None = None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process: not ours to report or stop
    fields = _stat_fields(pid)
    if fields is not None and fields[0] in ("Z", "X"):
        return False  # exited, not yet reaped by its parent
    return proc_start is None or process_start(pid) == proc_start


def write(lab: Lab) -> Path:
    """The record, written atomically with mode 0600."""
    path = _record_path(lab.port)
    fd, tmp = tempfile.mkstemp(prefix=".lab-", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(asdict(lab), out)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def forget(port: int) -> None:
    _record_path(port).unlink(missing_ok=True)


def _read(path: Path) -> Lab | None:
    try:
        if hasattr(os, "getuid") and path.stat().st_uid != os.getuid():
            return None
        return Lab(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def running() -> list[Lab]:
    """This user's labs whose server still runs, by port; records of stopped ones are removed."""
    labs = []
    for path in sorted(runtime_dir().glob("lab-*.json")):
        lab = _read(path)
        if lab is not None and is_alive(lab.pid, lab.proc_start):
            labs.append(lab)
        else:
            path.unlink(missing_ok=True)
    return sorted(labs, key=lambda lab: lab.port)


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux: read from /proc), deepest last; [] where /proc is not there."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*") if sys.platform.startswith("linux") else ():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, frontier = [], [pid]
    while frontier:
        below = [child for p in frontier for child in children.get(p, ())]
        found.extend(below)
        frontier = below
    return found


def _signal(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def stop_tree(pid: int, grace_s: float = STOP_GRACE_S) -> list[int]:
    """Stop `pid` and everything below it: SIGTERM, then SIGKILL after `grace_s`. Returns what survived (empty when
    all of the tree has gone)."""
    tree = [pid, *descendants(pid)]
    if hasattr(os, "killpg"):
        try:
            os.killpg(pid, signal.SIGTERM)  # the server leads its own group (started in a new session)
        except OSError:
            pass
    _signal(tree, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        tree = sorted(set(tree) | set(descendants(pid)) if is_alive(pid) else set(tree))
        if not any(is_alive(p) for p in tree):
            return []
        time.sleep(0.1)
    _signal(tree, getattr(signal, "SIGKILL", signal.SIGTERM))  # Windows has no SIGKILL; SIGTERM terminates there
    time.sleep(0.2)
    return [p for p in tree if is_alive(p)]


def stop(lab: Lab) -> list[int]:
    survivors = stop_tree(lab.pid) if is_alive(lab.pid, lab.proc_start) else []
    forget(lab.port)
    return survivors


__all__ = ["Lab", "RUNTIME_ENV", "descendants", "forget", "is_alive", "process_start", "running", "runtime_dir",
           "stop", "stop_tree", "write"]
