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
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

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


def _configured(variable: str) -> Path | None:
    value = os.environ.get(variable, "").strip()
    return Path(value).expanduser().resolve() if value else None


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
    run = runs_dir() / path.name
    if run.exists():
        return run
    return SAMPLE_CHECKPOINT if path.name == "sample" and SAMPLE_CHECKPOINT.is_dir() else path


def benchmarks_dir() -> Path:
    """The folder holding one folder per instrument benchmark (`informer-lab benchmark --out`), read by the Known
    answers screen."""
    return lab_home().path / "instrument_benchmarks"


__all__ = ["HOME_ENV", "benchmarks_dir", "SAMPLE_CHECKPOINT", "SAMPLE_CSV", "Home", "RUNS_ENV", "STUDIES_ENV", "is_checkout", "lab_home", "resolve_run", "runs_dir",
           "studies_dir"]
