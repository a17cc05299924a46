"""Putting a checkpoint folder in place so that a kill at any instant leaves one at the path, old or new.

A save writes every file into a hidden sibling folder, fsyncs the files and that folder, then:

* the path does not exist yet: one rename, temp → path;
* it does, on Linux: one `renameat2(RENAME_EXCHANGE)` (through ctypes on libc) swaps the complete temp folder
  with the existing one in a single system call, so the path always holds a complete checkpoint; the
  swapped-out old copy, now under the temp name, is deleted;
* where no atomic exchange exists (another OS, a filesystem that refuses it): two renames, path → `.old-*`,
  then temp → path. A kill between them leaves no folder at the path, only complete hidden copies, which
  recovery puts back.

The parent folder is fsynced after each rename. Leftovers sit beside the path, named

    .NAME.tmp-PID-HEX    a save's temp folder (after an exchange: the swapped-out old copy)
    .NAME.old-PID-HEX    the old copy moved aside by the two-rename fallback (`.NAME.old-PID` before this format)

where PID is the saving process and HEX tells its saves apart. `recover(path)`, run by `load_checkpoint` and by
the next save to the path, looks only at stale leftovers (their process is gone, their save in this process has
ended, or they are older than STALE_SECONDS): if the path is missing, the newest complete one (its manifest
verifies) is renamed into place; then every stale leftover is deleted. A leftover of a save still running is
never touched.
"""
from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import logging
import os
import re
import secrets
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from informer_lab.analysis.checkpoints.checks import KNOWN, MANIFEST, check_manifest, check_size
from informer_lab.analysis.errors import CheckpointError

log = logging.getLogger(__name__)

STALE_SECONDS = 300.0
LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?P<kind>tmp|old)-(?P<pid>\d+)(?:-(?P<tag>[0-9a-f]+))?$")
_IN_FLIGHT: set[str] = set()  # "PID-HEX" of the saves running in this process
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


class ExchangeUnsupported(OSError):
    """The OS or the filesystem has no atomic exchange of two paths."""


# --------------------------------------------------------------------------------------------
# The steps (module functions, so that tests can make each one fail in turn)
# --------------------------------------------------------------------------------------------
def _write_file(path: Path, data: bytes) -> None:
    """Write and fsync one file."""
    with open(path, "xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_dir(path: Path) -> None:
    """Make a folder's entries (new files, renames) durable. A no-op where folders cannot be opened (Windows)."""
    if os.name != "posix":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@functools.cache
def _renameat2():
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # no libc symbol (glibc < 2.28, other libcs)
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def _exchange(a: Path, b: Path) -> None:
    """Swap two existing paths atomically; ExchangeUnsupported where that cannot be done."""
    function = _renameat2()
    if function is None:
        raise ExchangeUnsupported(errno.ENOSYS, "renameat2 is not available")
    if function(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV):
            raise ExchangeUnsupported(code, os.strerror(code), str(a), None, str(b))
        raise OSError(code, os.strerror(code), str(a), None, str(b))


def _rename(a: Path, b: Path) -> None:
    os.rename(a, b)  # not os.replace: never over an existing non-empty folder


def _rmtree(path: Path) -> None:
    shutil.rmtree(path)


# --------------------------------------------------------------------------------------------
# Leftovers
# --------------------------------------------------------------------------------------------
def _alive(pid: int) -> bool:
    if os.name != "posix":
        return True  # no safe probe (os.kill would terminate it): rely on age
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stale(path: Path, match: re.Match) -> bool:
    pid, tag = int(match["pid"]), match["tag"]
    if pid == os.getpid():
        running = tag is not None and f"{pid}-{tag}" in _IN_FLIGHT
    else:
        running = _alive(pid)
    if not running:
        return True
    try:
        st = path.lstat()
    except OSError:
        return False
    return time.time() - max(st.st_mtime, st.st_ctime) > STALE_SECONDS


def leftovers(folder: Path) -> list[tuple[Path, str, bool]]:
    """(path, "tmp" | "old", stale) of each leftover of earlier saves to `folder`."""
    found = []
    try:
        entries = list(folder.parent.iterdir())
    except OSError:
        return found
    for entry in entries:
        match = LEFTOVER.match(entry.name)
        if match and match["name"] == folder.name:
            found.append((entry, match["kind"], _stale(entry, match)))
    return found


def _complete(path: Path) -> int | None:
    """The manifest's mtime (ns) when `path` holds a checkpoint whose manifest verifies, else None."""
    try:
        files = {}
        for name in KNOWN:
            if (path / name).is_file():
                check_size(name, (path / name).stat().st_size)
                files[name] = (path / name).read_bytes()
        check_manifest(files)
        return (path / MANIFEST).stat().st_mtime_ns
    except (OSError, CheckpointError):
        return None


def recover(folder: Path) -> bool:
    """Repair what interrupted saves left beside `folder`; True when a leftover was moved into place.

    Only stale leftovers are used or deleted. OSErrors (a read-only parent) are logged and left alone."""
    found = [(path, kind) for path, kind, stale in leftovers(folder) if stale]
    restored = False
    if found and not os.path.lexists(folder):
        ranked = sorted(((mtime, kind == "tmp", path) for path, kind in found
                         if (mtime := _complete(path)) is not None), reverse=True)
        for _, _, path in ranked:
            try:
                _rename(path, folder)
            except OSError:
                if os.path.lexists(folder):  # another process restored it first
                    break
                continue
            _fsync_dir(folder.parent)
            log.warning("recovered checkpoint %s from the interrupted save's copy %s", folder, path.name)
            restored = True
            break
    in_place = os.path.lexists(folder)
    for path, _ in found:  # with the folder in place every stale copy is spare; without, keep complete ones
        if path.exists() and (in_place or _complete(path) is None):
            try:
                _rmtree(path)
                log.info("removed %s, left by an interrupted save", path)
            except OSError as err:
                log.warning("could not remove %s: %s", path, err)
    return restored


def wait_for(folder: Path, seconds: float = 5.0) -> None:
    """When `folder` is missing while a live save holds its only copies (the two-rename fallback, between its
    renames), wait up to `seconds` for that save to finish, recovering if it dies."""
    deadline = time.monotonic() + seconds
    while not os.path.lexists(folder) and time.monotonic() < deadline:
        if not any(not stale for _, _, stale in leftovers(folder)):
            return
        time.sleep(0.05)
        recover(folder)


# --------------------------------------------------------------------------------------------
# The save
# --------------------------------------------------------------------------------------------
def _check_replaceable(folder: Path, holds=KNOWN, what: str = "a checkpoint", error=CheckpointError) -> None:
    if not os.path.lexists(folder):
        return
    if not folder.is_dir():
        raise error(f"{folder} exists and is not a folder; refusing to replace it with {what}")
    other = sorted(p.name for p in folder.iterdir() if p.name not in holds or not p.is_file())
    if other:
        raise error(f"{folder} exists and is not {what} folder (it holds {', '.join(other[:3])}); refusing to "
                    "replace it: choose a new or empty folder")


def write_folder(folder: str | Path, files: Mapping[str, bytes], *, holds=KNOWN, what: str = "a checkpoint",
                 error=CheckpointError) -> Path:
    """Write `files` (name → bytes; the manifest last) as the folder `folder`, atomically as described above.
    holds, what, error: the names a folder it replaces may hold (a checkpoint's by default; a command's output
    folder gives its own), in words, and the error that refuses any other.

    A failure (an Exception) removes the temp folder; a kill leaves it for `recover`."""
    folder = Path(folder)
    if folder.is_symlink():
        folder = Path(os.path.realpath(folder))
    folder.parent.mkdir(parents=True, exist_ok=True)
    recover(folder)
    _check_replaceable(folder, holds, what, error)
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    tmp = folder.with_name(f".{folder.name}.tmp-{token}")
    _IN_FLIGHT.add(token)
    try:
        os.mkdir(tmp)
        for name in sorted(files, key=lambda n: n == MANIFEST):
            _write_file(tmp / name, files[name])
        _fsync_dir(tmp)
        _put_in_place(tmp, folder, token)
    except Exception:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        _IN_FLIGHT.discard(token)
    return folder


def _put_in_place(tmp: Path, folder: Path, token: str) -> None:
    if not os.path.lexists(folder):
        try:
            _rename(tmp, folder)
        except OSError as err:
            if err.errno not in (errno.EEXIST, errno.ENOTEMPTY) or not os.path.lexists(folder):
                raise
        else:
            _fsync_dir(folder.parent)
            return
        # a save that started after ours put a folder there meanwhile: exchange with it below
    try:
        _exchange(tmp, folder)
    except ExchangeUnsupported:
        old = folder.with_name(f".{folder.name}.old-{token}")
        _rename(folder, old)
        try:
            _rename(tmp, folder)
        except Exception:  # put the old one back (a kill here is left to `recover`)
            with contextlib.suppress(OSError):
                _rename(old, folder)
            raise
        _fsync_dir(folder.parent)
        _discard(old)
        return
    _fsync_dir(folder.parent)
    _discard(tmp)  # the old checkpoint, swapped out


def _discard(path: Path) -> None:
    """Delete the replaced copy; failing to is not a failed save (the next `recover` retries)."""
    try:
        _rmtree(path)
    except OSError as err:
        log.warning("could not remove the replaced checkpoint %s: %s", path, err)


__all__ = ["ExchangeUnsupported", "LEFTOVER", "STALE_SECONDS", "leftovers", "recover", "wait_for", "write_folder"]
