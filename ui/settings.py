"""Where the app keeps its models and data (no Streamlit, no torch here), and the first start's sample model.

The sample model is shipped in sample_data/checkpoint/ (made by sample_data/make_checkpoint.py); the first start
copies it into the runs folder as `sample`, so every page works at once, without training.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from informer_lab import home

SAMPLE_CSV = home.SAMPLE_CSV
SAMPLE_CHECKPOINT = home.SAMPLE_CHECKPOINT
SAMPLE_RUN = "sample"

RUNS_ENV = home.RUNS_ENV  # overrides the runs directory (tests point it at a temporary folder)
STUDIES_ENV = home.STUDIES_ENV  # overrides the studies directory


def runs_dir() -> Path:
    """The folder holding one checkpoint folder per run (informer_lab.home says which folder wins)."""
    return home.runs_dir()


def studies_dir() -> Path:
    """The folder holding one folder per study."""
    return home.studies_dir()


def runs_problem(write: bool = True) -> str | None:
    """What is wrong with the runs folder, naming it and the way out (a loop, a file, a device, read-only), or None."""
    root = runs_dir()
    problem = home.folder_problem(root, write=write)
    return None if problem is None else f"The runs folder `{root}` {problem}: {home.FIX}."


def install_sample() -> Path | None:
    """runs/sample, copied from the shipped checkpoint when it is not there yet (a copy in a hidden temporary
    folder, then one rename: a second session doing the same at the same moment loses the race harmlessly).
    None when neither exists."""
    dest = runs_dir() / SAMPLE_RUN
    if (dest / "manifest.json").is_file():
        return dest
    if dest.exists() or not (SAMPLE_CHECKPOINT / "manifest.json").is_file():
        return None  # a folder of the user's own by that name (broken or not), or no shipped model
    if home.folder_problem(dest.parent, write=True) is not None:
        return None  # a runs folder the lab cannot write into: the pages say so (runs_problem)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{SAMPLE_RUN}.install-", dir=dest.parent))
    except OSError:
        return None
    try:
        shutil.copytree(SAMPLE_CHECKPOINT, tmp, dirs_exist_ok=True)
        os.rename(tmp, dest)
    except OSError:
        pass  # installed meanwhile by another session
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest if (dest / "manifest.json").is_file() else None
