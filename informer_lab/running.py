"""Running labs: one record per served lab, readable by its owner only, and stopping a lab's whole process tree.

A record is `lab-<port>.json` in this user's state folder (`INFORMER_LAB_RUNTIME_DIR` overrides it): the port, the
server's process id and its start time (so a reused process id is never taken for the lab), the folder it was
started from, its home, its URL and when it started. The folder is 0700 and each file 0600, as Jupyter keeps its
runtime files. A record whose process has gone is dropped when read.

A record is read as data from outside (a file can be edited, copied or damaged): it is trusted, listed and acted
on only when every field has its type and range (a pid from 2 up: 0, 1 and negative pids are never signalled, as
`kill(0)` reaches one's own group, `kill(-1)` every process of the user and pid 1 is init), and the process it
names is alive, is this user's, started when the record says, and is a lab server: its command line runs the
lab's server app on the record's port (`launch.server_command`) and, on Linux, it listens on that port. Anything
else is reported in one line (`Survey.skipped`) and never signalled; a record that is damaged or names a process
that is not a lab server is removed (its lab has gone), one whose server is still starting is kept.

Stopping collects the server's descendants first (a study's local Ray, its workers: they would be re-parented once
the server exits), sends each SIGTERM, waits, and sends SIGKILL to whatever is left.
"""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import platformdirs

from .home import APP_NAME
from .source import SERVER_APP

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
    if type(pid) is not int or not 1 < pid <= MAX_PID:
        return False  # kill(0) and kill(-1) would answer for a group or for every process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process: not ours to report or stop
    state = _stat_fields(pid)
    if state is not None and state[0] in ("Z", "X"):
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


MAX_PID = 1 << 22  # Linux's pid_max ceiling; macOS and the BSDs stay below it
RECORD_BYTES = 64 * 1024
TEXTS = ("folder", "home", "url", "host")


class RecordError(ValueError):
    """A record that is not a lab's: damaged, or naming a process that is not this user's lab server."""


def _whole(value, low: int, high: int, name: str) -> int:
    if type(value) is not int or not low <= value <= high:  # not a bool, not 8.0, not "8"
        raise RecordError(f"its {name} is {str(value)[:30]!r}, not a whole number from {low:,} to {high:,}")
    return value


def check_record(data: dict) -> Lab:
    """The Lab of a record's fields, each of its type and range; RecordError naming the field otherwise."""
    known = {f.name for f in fields(Lab)}
    missing = sorted(known - set(data) - {"proc_start", "host"})
    if missing or set(data) - known:
        raise RecordError(f"its fields are not a lab's ({', '.join(missing or sorted(set(data) - known))[:60]})")
    _whole(data["port"], 1, 65535, "port")
    _whole(data["pid"], 2, MAX_PID, "pid")  # 0, 1 and negative pids reach groups, init or every process
    if data.get("proc_start") is not None:
        _whole(data["proc_start"], 0, 1 << 62, "start time")
    started = data["started"]
    if type(started) not in (int, float) or not math.isfinite(started):
        raise RecordError(f"its start is {str(started)[:30]!r}, not a time")
    for name in TEXTS:
        if name in data and (not isinstance(data[name], str) or len(data[name]) > 4096):
            raise RecordError(f"its {name} is not a text")
    return Lab(**data)


def _read(path: Path) -> Lab:
    from informer_lab.analysis.jsonfile import JsonError, read

    if hasattr(os, "getuid") and path.lstat().st_uid != os.getuid():
        raise RecordError("it belongs to another user")
    try:
        return check_record(read(path, max_bytes=RECORD_BYTES, max_depth=2))
    except JsonError as err:
        raise RecordError(str(err)) from None


def _command_line(pid: int) -> list[str] | None:
    """The process's arguments (/proc on Linux, `ps` elsewhere), or None when it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        return [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
    except OSError:
        pass
    if sys.platform.startswith("linux") or sys.platform == "win32":
        return None
    try:
        out = subprocess.run(["ps", "-p", str(pid), "-o", "command="], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.split() if out.returncode == 0 and out.stdout.strip() else None


def _owner(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def _listening(pid: int, port: int) -> bool | None:
    """Whether `pid` holds a listening TCP socket on `port` (Linux: /proc/net/tcp and tcp6 against the process's
    open sockets); None where that cannot be read."""
    inodes = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/net/{table}").read_text().splitlines()[1:]
        except OSError:
            return None
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(cols[9])
    try:
        links = {os.readlink(entry) for entry in Path(f"/proc/{pid}/fd").iterdir()}
    except OSError:
        return None
    return any(f"socket:[{inode}]" in links for inode in inodes)


def why_not_a_lab(lab: Lab) -> str | None:
    """None when `lab`'s process is alive, this user's, started when the record says and a lab server on its port;
    else why not, in words."""
    if not is_alive(lab.pid):
        return "its process has gone"
    owner = _owner(lab.pid)
    if hasattr(os, "getuid") and owner is not None and owner != os.getuid():
        return f"pid {lab.pid} is another user's"
    if sys.platform.startswith("linux"):
        if lab.proc_start is None or process_start(lab.pid) != lab.proc_start:
            return f"pid {lab.pid} started at another time than the lab (a reused process id)"
    argv = _command_line(lab.pid)
    if argv is None:
        return f"pid {lab.pid}'s command line cannot be read"
    is_server = ("streamlit" in argv and "run" in argv and f"--server.port={lab.port}" in argv
                 and any(Path(a).name == SERVER_APP.name and Path(a).parent.name == SERVER_APP.parent.name
                         for a in argv))
    if not is_server:
        return f"pid {lab.pid} is not a lab server ({' '.join(argv)[:60]!r})"
    if _listening(lab.pid, lab.port) is False:
        return f"pid {lab.pid} does not listen on port {lab.port} (yet)"
    return None


@dataclass(frozen=True)
class Survey:
    """The labs whose records can be trusted, and a line for each record that cannot (never signalled)."""

    labs: list[Lab] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def survey() -> Survey:
    """Every record of this user's state folder checked (module docstring): the labs running, by port, and why each
    other record was skipped. Records of labs that have gone, damaged ones and ones naming a process that is no lab
    server are removed; a lab server not listening yet keeps its record."""
    labs, skipped = [], []
    for path in sorted(runtime_dir().glob("lab-*.json")):
        try:
            lab = _read(path)
        except (RecordError, OSError) as err:
            skipped.append(f"{path.name}: skipped and removed, {str(err)[:120]}; nothing was signalled")
            path.unlink(missing_ok=True)
            continue
        why = why_not_a_lab(lab)
        if why is None:
            labs.append(lab)
        elif why == "its process has gone":
            path.unlink(missing_ok=True)  # the lab stopped without removing its record (killed): nothing to say
        else:
            keep = "does not listen" in why
            skipped.append(f"{path.name}: skipped{'' if keep else ' and removed'}, {why}; nothing was signalled")
            if not keep:
                path.unlink(missing_ok=True)
    return Survey(sorted(labs, key=lambda lab: lab.port), skipped)


def running() -> list[Lab]:
    """This user's labs whose server still runs, by port (`survey`)."""
    return survey().labs


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
        if type(pid) is not int or pid <= 1:
            continue  # 0: our own group; -1: every process of ours; 1: init
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def stop_tree(pid: int, grace_s: float = STOP_GRACE_S) -> list[int]:
    """Stop `pid` and everything below it: SIGTERM, then SIGKILL after `grace_s`. Returns what survived (empty when
    all of the tree has gone)."""
    if type(pid) is not int or pid <= 1:
        raise ValueError(f"pid {pid!r} names no single process; nothing was signalled")
    tree = [pid, *descendants(pid)]
    if hasattr(os, "killpg"):
        try:
            if os.getpgid(pid) == pid:  # the server leads its own group (started in a new session)
                os.killpg(pid, signal.SIGTERM)
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
    """Stop a lab whose record `survey` trusted, checked once more just before (its pid may have gone and been
    reused since); a process that is no longer the lab is left alone."""
    survivors = stop_tree(lab.pid) if why_not_a_lab(lab) is None else []
    forget(lab.port)
    return survivors


__all__ = ["Lab", "RUNTIME_ENV", "RecordError", "Survey", "check_record", "descendants", "forget", "is_alive",
           "process_start", "running", "runtime_dir", "stop", "stop_tree", "survey", "why_not_a_lab", "write"]
