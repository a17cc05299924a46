"""Where results go: checks on an output path made before any work, and writes that never destroy what was there.

- A target is checked first (`check_file_target`, `check_folder_target`): a name too long for its file system, a
  folder where a file is meant (or a file where a folder is), a read-only file system or a folder one cannot write
  into, a non-empty folder that is not a checkpoint where a checkpoint goes, a block device or a socket: each is an
  `OutputError` (one line) before a single step of work.
- A regular file (or a new name) is written atomically: a temporary file beside it, then a rename; on any failure
  (a full disk) the temporary file is removed and the old file is still there, whole.
- A character device (/dev/null, /dev/stdout, a terminal) or a named pipe, given directly or through a symlink, is
  written through, never replaced by a regular file; a pipe with no reader is refused rather than waited on.

- A folder of several files (`write_folder`) is written whole into a hidden sibling and renamed into place in one
  step (analysis.checkpoints.store's exchange): a kill leaves the old folder or the new one, never files of two
  runs side by side; what a killed write left behind is removed by the next write to that folder.

OSError texts become one line naming the path and the reason (`describe_os_error`).
"""
from __future__ import annotations

import errno
import fcntl
import os
import stat
import tempfile
from pathlib import Path

from informer_lab.analysis.errors import InformerLabError

REASONS = {errno.EROFS: "the file system is read-only", errno.ENOSPC: "no space left on the device",
           errno.EDQUOT: "the disk quota is used up", errno.ENAMETOOLONG: "the name is too long for the file system",
           errno.EACCES: "permission denied", errno.EPERM: "permission denied",
           errno.ENOTDIR: "a part of the path is a file, not a folder", errno.EISDIR: "it is a folder",
           errno.ENXIO: "nothing reads from it (a named pipe needs its reader started first)",
           errno.EEXIST: "it exists", errno.ENOENT: "a folder on the way does not exist", errno.EFBIG: "too large"}


class OutputError(InformerLabError):
    """An output path that cannot take the results; nothing was written or replaced."""


def _shown(path) -> str:
    text = str(path)
    return repr(text) if len(text) <= 100 else f"'…{text[-90:]}'"


def describe_os_error(err: OSError, path=None, doing: str = "write") -> str:
    """'cannot write 'out/x.csv': the file system is read-only' (one line, whatever the error)."""
    target = path if path is not None else (err.filename or "")
    reason = REASONS.get(err.errno or -1) or (err.strerror or str(err) or type(err).__name__).strip()
    what = _shown(target) if str(target) else "the output (the file system did not say which file)"
    return f"cannot {doing} {what}: {reason}"


def _name_limits(folder: Path) -> tuple[int, int]:
    try:
        return os.pathconf(folder, "PC_NAME_MAX"), os.pathconf(folder, "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):
        return 255, 4096


def _existing_ancestor(path: Path) -> Path:
    for parent in [path, *path.parents]:
        if os.path.lexists(parent):
            return parent
    return Path(".")


def _check_creatable(path: Path, option: str) -> None:
    """A new path: its name fits the file system, and its nearest existing folder takes new entries."""
    ancestor = _existing_ancestor(path.parent if str(path.parent) else Path("."))
    if not ancestor.is_dir():
        raise OutputError(f"{option} {_shown(path)}: {_shown(ancestor)} is a file, not a folder")
    name_max, path_max = _name_limits(ancestor)
    for part in path.parts:
        if len(os.fsencode(part)) > name_max:
            raise OutputError(f"{option} {_shown(path)}: a name is {len(os.fsencode(part))} bytes, and this file "
                              f"system allows {name_max}; choose a shorter name")
    if len(os.fsencode(str(path.absolute()))) > path_max:
        raise OutputError(f"{option} {_shown(path)}: the path is longer than the {path_max} bytes allowed")
    _check_writable(ancestor, path, option)


def _check_writable(folder: Path, path: Path, option: str) -> None:
    """A folder takes new entries: a probe file is made and removed there (permission bits say nothing for root,
    and a read-only mount or a pseudo file system refuses only when tried)."""
    try:
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    if read_only:
        raise OutputError(f"{option} {_shown(path)}: the file system is read-only; choose a folder you can write to")
    try:
        fd, probe = tempfile.mkstemp(prefix=".informer-lab-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise OutputError(f"{option} {_shown(path)}: {describe_os_error(err, folder)}; choose a folder you can "
                          "write to") from None


def check_file_target(path: str | os.PathLike, option: str = "--out") -> str:
    """How a file output will be written: 'through' (a device or pipe), or 'replace' (a regular file or a new
    name). OutputError for what cannot take a file (see the module docstring)."""
    path = Path(path)
    if not os.path.lexists(path):
        _check_creatable(path, option)
        return "replace"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:  # a dangling symlink: the file it names will be created
        _check_creatable(Path(os.path.realpath(path)), option)
        return "replace"
    except OSError as err:
        raise OutputError(f"{option} {describe_os_error(err, path, 'use')}") from None
    if stat.S_ISDIR(mode):
        raise OutputError(f"{option} {_shown(path)} is a folder; give a file name (e.g. {_shown(path / 'out.csv')})")
    if stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
        raise OutputError(f"{option} {_shown(path)} is a {'block device' if stat.S_ISBLK(mode) else 'socket'}; "
                          "refusing to write into it")
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        if not os.access(path, os.W_OK):
            raise OutputError(f"{option} {_shown(path)}: permission denied")
        return "through"
    real = Path(os.path.realpath(path))
    _check_writable(real.parent, path, option)
    return "replace"


def check_folder_target(path: str | os.PathLike, option: str = "--out", *, checkpoint: bool = False,
                        holds: tuple[str, ...] | None = None) -> None:
    """OutputError unless `path` can be (or already is) a folder we may write into; for a checkpoint, a folder
    that exists must be empty or a checkpoint (it is replaced); with `holds`, the names of the files the command
    writes, it must hold none but those (it is replaced whole, `write_folder`)."""
    if str(path) == "-":
        raise OutputError(f"{option} - writes to standard output, but this command writes a folder; give a folder")
    path = Path(path)
    if not os.path.lexists(path):
        _check_creatable(path, option)
        return
    try:
        mode = os.stat(path).st_mode
    except OSError as err:
        raise OutputError(f"{option} {describe_os_error(err, path, 'use')}") from None
    if not stat.S_ISDIR(mode):
        what = "a file" if stat.S_ISREG(mode) else "a device or pipe"
        raise OutputError(f"{option} {_shown(path)} is {what}, not a folder; give a folder name")
    if checkpoint or holds is not None:
        try:
            if holds is None:
                from informer_lab.analysis.checkpoints.checks import KNOWN as holds  # a checkpoint's (imports torch)
            other = sorted(p.name for p in path.iterdir() if p.name not in holds or not p.is_file())
        except OSError as err:
            raise OutputError(f"{option} {describe_os_error(err, path, 'read')}") from None
        if other:
            what = "a checkpoint" if checkpoint else "an earlier output of this command"
            raise OutputError(f"{option} {_shown(path)} is a folder that is not {what} (it holds "
                              f"{', '.join(repr(n[:40]) for n in other[:3])}); give a new or empty folder, or "
                              f"{what} to replace")
    real = Path(os.path.realpath(path))
    _check_writable(real, path, option)
    if checkpoint or holds is not None:  # saved beside the folder first, then swapped in
        _check_writable(real.parent, path, option)


def write_bytes(path: str | os.PathLike, data: bytes, option: str = "--out") -> str:
    """Write `data` to `path` as `check_file_target` says; 'written' or 'written through'. OutputError naming the
    path and the reason on any failure (nothing replaced)."""
    path = Path(path)
    how = check_file_target(path, option)
    if how == "through":
        _write_through(path, data)
        return "written through"
    real = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name[:200]}.", suffix=".tmp", dir=real.parent)
    except OSError as err:
        raise OutputError(describe_os_error(err, path)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, real)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(describe_os_error(err, path) + "; nothing was replaced") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return "written"


def _write_through(path: Path, data: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # a pipe without a reader fails now instead of hanging
    except OSError as err:
        raise OutputError(describe_os_error(err, path)) from None
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError as err:
        raise OutputError(describe_os_error(err, path)) from None
    finally:
        os.close(fd)


__all__ = ["OutputError", "check_file_target", "check_folder_target", "describe_os_error", "write_bytes",
           "write_folder"]


def write_folder(path: str | os.PathLike, files: dict[str, bytes], option: str = "--out") -> Path:
    """The folder `path` holding exactly `files` (name → bytes), put in place whole (module docstring). A folder
    there already may hold only files of these names (an earlier output of the same command); OutputError
    otherwise, naming the option."""
    from informer_lab.analysis.checkpoints.store import write_folder as put_in_place

    try:
        return put_in_place(path, files, holds=tuple(files), what=f"an output folder of {option}", error=OutputError)
    except OSError as err:
        raise OutputError(describe_os_error(err, path)) from None
