"""Where the lab keeps its state: runs (one checkpoint folder each, the sample model among them) and studies.

In order, the first that applies wins:
1. `INFORMER_LAB_RUNS` / `INFORMER_LAB_STUDIES`: that folder, for runs or studies alone;
2. `INFORMER_LAB_HOME`: its `runs/` and `studies/`;
3. a source checkout (a clone of the repository, installed editable or started with `streamlit run app.py`): the
   checkout's own `runs/` and `studies/`, as before the lab had a home, so a clone's runs stay where they were;
4. otherwise (installed with pip or pipx): the platform's per-user data folder (platformdirs), e.g.
   `~/.local/share/informer-lab` on Linux, `~/Library/Application Support/informer-lab` on macOS,
   `%LOCALAPPDATA%\\informer-lab` on Windows.

So the lab starts the same from any directory. Nothing here imports Streamlit or torch.

Whatever the folder is (a symbolic link that loops, a file, /dev/null, a folder one cannot read or write into), finding
it never fails: `folder_problem` says what is wrong with it in words and `check_folder` raises a HomeError naming the
folder and the way out, where the lab reads or writes it.
"""
from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from informer_lab.analysis.errors import InformerLabError

from .source import CHECKOUT, FILES

SAMPLE_CSV = FILES / "sample_data" / "sample.csv"
SAMPLE_CHECKPOINT = FILES / "sample_data" / "checkpoint"  # the shipped sample model (package data when installed)
APP_NAME = "informer-lab"
HOME_ENV = "INFORMER_LAB_HOME"
RUNS_ENV = "INFORMER_LAB_RUNS"
STUDIES_ENV = "INFORMER_LAB_STUDIES"


@dataclass(frozen=True)
class Home:
    path: Path
    why: str  # which rule chose it, in the words the sidebar shows


class HomeError(InformerLabError):
    """A lab home, runs or studies folder the lab cannot use; the message names it and the way out."""


def _configured(variable: str) -> Path | None:
    value = os.environ.get(variable, "").strip()
    if not value:
        return None
    path = Path(value).expanduser()
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a loop of symbolic links: named when the folder is used (folder_problem)
        return Path(os.path.abspath(path))


FIX = f"set {HOME_ENV} to a folder you can write into (or {RUNS_ENV} / {STUDIES_ENV} for one of them)"
_OS_REASONS = {errno.ELOOP: "its path loops through symbolic links", errno.ENOTDIR: "a part of its path is a file",
               errno.EACCES: "permission denied", errno.EPERM: "permission denied",
               errno.EROFS: "the file system is read-only", errno.ENAMETOOLONG: "its name is too long"}


def _reason(err: OSError) -> str:
    return _OS_REASONS.get(err.errno or -1) or (err.strerror or type(err).__name__)


def folder_problem(path: Path, *, write: bool = False) -> str | None:
    """What keeps the lab from reading (and, with `write`, creating or writing into) the folder `path`, in words;
    None when nothing does. A folder that does not exist yet is fine when it can be created."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if not write:
            return None
        parent = next((p for p in path.parents if os.path.lexists(p)), None)
        try:
            if parent is not None and not stat.S_ISDIR(os.stat(parent).st_mode):
                return f"cannot be created: {parent} is not a folder"
        except OSError as err:
            return f"cannot be created: {_reason(err)}"
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            return f"cannot be created: {_reason(err)}"
        return None
    except OSError as err:
        return f"cannot be used: {_reason(err)}"
    if not stat.S_ISDIR(mode):
        kind = ("a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a named pipe" if stat.S_ISFIFO(mode)
                else "a file")
        return f"is {kind}, not a folder"
    try:
        with os.scandir(path) as entries:
            next(entries, None)
    except OSError as err:
        return f"cannot be read: {_reason(err)}"
    if write:
        probe = path / f".write-check-{os.getpid()}"
        try:
            probe.mkdir()
            probe.rmdir()
        except FileExistsError:
            pass
        except OSError as err:
            return f"cannot be written into: {_reason(err)}"
    return None


def check_folder(path: Path, what: str, *, write: bool = False) -> Path:
    """`path`, or a HomeError: "the lab's runs folder /x is a file, not a folder; set INFORMER_LAB_HOME to …"."""
    problem = folder_problem(path, write=write)
    if problem is not None:
        raise HomeError(f"{what} {path} {problem}; {FIX}")
    return Path(path)


def is_checkout(root: Path | None = CHECKOUT) -> bool:
    """A clone of the repository (the code in its folders, its .git beside them), not an installed copy."""
    return root is not None and (root / ".git").exists()


def lab_home() -> Home:
    configured = _configured(HOME_ENV)
    if configured is not None:
        return Home(configured, f"set by {HOME_ENV}")
    if is_checkout():
        return Home(CHECKOUT, "the source checkout")
    return Home(platformdirs.user_data_path(APP_NAME, appauthor=False), "this user's data folder")


def runs_dir() -> Path:
    """The folder holding one checkpoint folder per run."""
    return _configured(RUNS_ENV) or lab_home().path / "runs"


def studies_dir() -> Path:
    """The folder holding one folder per study."""
    return _configured(STUDIES_ENV) or lab_home().path / "studies"


def resolve_run(path: Path) -> Path:
    """A checkpoint folder as given; a bare name that is no folder here names a run in the lab's home, and `sample`
    the shipped sample model when the home has no run of that name (`--checkpoint NAME`)."""
    path = Path(path)
    if path.exists() or len(path.parts) != 1:
        return path
    runs = runs_dir()
    run = runs / path.name
    if run.exists():
        return run
    if path.name == "sample" and SAMPLE_CHECKPOINT.is_dir():
        return SAMPLE_CHECKPOINT
    problem = folder_problem(runs)
    if problem is not None:
        raise HomeError(f"no checkpoint folder {path} here, and the lab's runs folder {runs} {problem}: give the "
                        f"checkpoint's path, or {FIX}")
    return path


def benchmarks_dir() -> Path:
    """The folder holding one folder per instrument benchmark (`informer-lab benchmark --out`), read by the Known
    answers screen."""
    return lab_home().path / "instrument_benchmarks"


__all__ = ["FIX", "HOME_ENV", "HomeError", "benchmarks_dir", "check_folder", "folder_problem", "SAMPLE_CHECKPOINT",
           "SAMPLE_CSV", "Home", "RUNS_ENV", "STUDIES_ENV", "is_checkout", "lab_home", "resolve_run", "runs_dir",
           "studies_dir"]
