"""The cached model and data layer every screen shares (STYLE.md, Streamlit).

- `st.cache_resource`: objects shared by every session and never mutated — loaded checkpoints
  (keyed by folder + manifest mtime, or by the SHA-256 of uploaded files), prepared splits, mean
  contexts.
- Each screen's cached analyses live in its folder (`ui/<screen>/cache.py`, mostly `st.cache_data`, bounded),
  keyed by the model key, the data key and the widget values passed in. CSV frames (keyed by the SHA-256 of
  the file's bytes) are in `ui.frames`, which does not import torch.

Arguments whose names start with "_" are not hashed: each such object is fully identified by the
key arguments next to it (`model_key`, `data_key`). Widgets are never read in here.
"""
from __future__ import annotations

import gc

import streamlit as st

from informer_lab.analysis.checkpoints.folder import Checkpoint, load_checkpoint, read_checkpoint_files
from informer_lab.analysis.compare.baselines import LinearBaseline, fit_linear_baseline
from informer_lab.analysis.data import PreparedData, SeriesFrame
from informer_lab.analysis.heads.masking import mean_contexts
from informer_lab.analysis.learning.windows import WindowDataset
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from informer_lab.model import pick_device
from informer_lab.ui.lru import SharedLRU


MEAN_WINDOWS = 256  # train windows averaged for mean ablation (evenly strided through the split), at seq_len ≤ 96
MEAN_ROWS = MEAN_WINDOWS * 96  # the input rows that buys; longer windows average fewer of them (at least 32)


def mean_windows(seq_len: int) -> int:
    """Train windows averaged for mean ablation: 256 up to seq_len 96, then as many as 256 × 96 input rows allow
    (at seq_len 1440: 32), so that "mean" costs about the same at any length (it took 10.6 s at 1440)."""
    return int(max(32, min(MEAN_WINDOWS, MEAN_ROWS // max(1, seq_len))))


def _to_device(checkpoint: Checkpoint) -> Checkpoint:
    device = pick_device()
    checkpoint.model.to(device).eval()  # done once, before the checkpoint is shared
    return checkpoint


@st.cache_resource(max_entries=8, show_spinner="Loading the checkpoint…")
def checkpoint_from_folder(folder: str, mtime_ns: int) -> Checkpoint:
    """The validated checkpoint of `folder`; `mtime_ns` (of its manifest) makes a rewritten folder reload."""
    return _to_device(load_checkpoint(folder))


@st.cache_resource(max_entries=4, show_spinner="Loading the uploaded checkpoint…")
def checkpoint_from_upload(files_digest: str, _files: dict[str, bytes]) -> Checkpoint:
    return _to_device(read_checkpoint_files(_files))


@st.cache_resource(max_entries=8, show_spinner=False)
def prepared_for(model_key: str, data_key: str, _checkpoint: Checkpoint, _frame: SeriesFrame) -> PreparedData:
    """The frame split and scaled as the model was trained (its own scaler). Read-only, shared."""
    return prepare_for_checkpoint(_checkpoint, _frame)


def n_windows(prepared: PreparedData, split: str) -> int:
    return len(WindowDataset(prepared, split))


@st.cache_resource(max_entries=8, show_spinner="Averaging head contexts over train windows…")
def mean_contexts_for(model_key: str, data_key: str, seed: int, _checkpoint: Checkpoint,
                      _prepared: PreparedData):
    """Each site's mean per-head context over up to `mean_windows(seq_len)` train windows (mean ablation)."""
    return mean_contexts(_checkpoint.model, _prepared, "train", max_windows=mean_windows(_prepared.spec.seq_len),
                         seed=seed)


# The linear baseline of a model on its data (it reads the train split only): fitted once, for the model check above
# every page and for Compare alike (at seq_len 5760 a fit is seconds of LAPACK on both cores).
_LINEAR: SharedLRU[LinearBaseline] = SharedLRU(4)


def linear_baseline(model_key: str, data_key: str, prepared: PreparedData) -> LinearBaseline:
    """The default linear baseline (kernel 25, ridge 1e-6) of this model's data: fitted once, shared."""
    return _LINEAR.get_or_make((model_key, data_key), lambda: fit_linear_baseline(prepared))


def known_linear_baseline(model_key: str, data_key: str) -> LinearBaseline | None:
    """That baseline if it is fitted, or being fitted (then waited for); None if nobody has started it."""
    return _LINEAR.get((model_key, data_key), wait=True)


def keep_linear_baseline(model_key: str, data_key: str, linear: LinearBaseline) -> None:
    _LINEAR.put((model_key, data_key), linear)


# The model stack (torch, pandas, plotly, the analyses) is ~250,000 Python objects that live as long as the server.
# Streamlit runs a full garbage collection after every script run, fragment runs included (runner.postScriptGC): it
# scanned them all each time, 0.15 s on a quiet two-core machine and ~0.45 s on a busy one, holding the GIL while the
# browser waited for the run's last messages (every click on a long-input screen paid it). Frozen here, once
# they are loaded, a collection scans only what was made since.
gc.freeze()
