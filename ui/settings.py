"""Where the app keeps its models and data (no Streamlit, no torch here). The sample model's recipe is
`ui.jobs.sample_recipe`."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_CSV = ROOT / "sample_data" / "sample.csv"
SAMPLE_RUN = "sample"

RUNS_ENV = "INFORMER_LAB_RUNS"  # overrides the runs directory (tests point it at a temporary folder)
QUICK_ENV = "INFORMER_LAB_QUICK_TRAIN"  # "1": the first-start sample model trains for a few steps only


def runs_dir() -> Path:
    """The folder holding one checkpoint folder per run: $INFORMER_LAB_RUNS, else <repo>/runs."""
    configured = os.environ.get(RUNS_ENV, "").strip()
    return Path(configured).expanduser().resolve() if configured else ROOT / "runs"


def quick_train() -> bool:
    return os.environ.get(QUICK_ENV, "").strip().lower() in ("1", "true", "yes")
