"""Per-tab state: which model and which data are active, and the analysis seed.

Everything here lives in `st.session_state` (one browser tab). The objects it resolves to come from
`ui.frames` and `ui.cache` and are shared read-only between tabs. Pages call `require_model()` /
`require_data()` and get a small bundle with the cache key to pass on to cached analyses.

The data half does not import torch; the functions that touch a model import `ui.cache` (and with it
torch) when first called, so the Data & model page plots the data before torch has loaded.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, NoReturn

import pandas as pd
import streamlit as st

from informer_lab.analysis.data import PreparedData, ReadOptions, SeriesFrame
from informer_lab.analysis.errors import CheckpointError, InformerLabError

from . import frames, nav, settings

if TYPE_CHECKING:
    from informer_lab.analysis.checkpoints.folder import Checkpoint
    from informer_lab.model import InformerConfig

SEED_KEY = "analysis_seed"
MODEL_KEY = "active_model_ref"
DATA_KEY = "active_data_ref"
UPLOADED_CHECKPOINTS = "uploaded_checkpoints"  # digest → {file name: bytes}
DATA_BYTES = "data_bytes"  # digest → bytes of an uploaded CSV
JOB_KEY = "train_job"
DATA_PAGE = nav.page_file("data_model")


@dataclass(frozen=True)
class ModelRef:
    """A model the user chose: a run folder, or checkpoint files uploaded in this tab."""

    source: str  # "folder" | "upload"
    name: str
    path: str | None = None
    digest: str | None = None


@dataclass(frozen=True)
class DataRef:
    """A CSV the user chose (the bundled sample, an upload of this tab, or a file on the server: a study's data) and
    how it is read (repair included)."""

    source: str  # "sample" | "upload" | "synth" (generated with a planted answer, bytes in the tab) | "file"
    name: str
    digest: str
    options: ReadOptions = ReadOptions()
    path: str | None = None  # source "file": where it is

    @property
    def key(self) -> str:
        """Identifies the data (its bytes and how they are read) in every cache."""
        return f"{self.digest}:{self.options.key}"  # every reading option (a long table's series too)


@dataclass(frozen=True)
class ActiveModel:
    ref: ModelRef
    key: str  # identifies the checkpoint in every cache: folder@mtime or upload digest
    checkpoint: Checkpoint


@dataclass(frozen=True)
class ActiveData:
    ref: DataRef
    key: str
    frame: SeriesFrame


def seed() -> int:
    return int(st.session_state.get(SEED_KEY, 0))


# ------------------------------------------------------------------------------------------ models
def run_folders() -> list[str]:
    """Names of the checkpoint folders in the runs directory (those with a manifest), sample first."""
    root = settings.runs_dir()
    try:
        names = sorted(p.name for p in root.iterdir()
                       if p.is_dir() and not p.name.startswith(".") and (p / "manifest.json").is_file())
    except OSError:  # missing, a file, a loop, unreadable: no runs (the pages name the problem)
        return []
    return sorted(names, key=lambda n: n != settings.SAMPLE_RUN)


def folder_ref(path: Path) -> ModelRef:
    return ModelRef("folder", Path(path).name, path=str(Path(path).resolve()))


def sample_ref() -> ModelRef | None:
    """runs/sample (installed from the shipped checkpoint on first use), or None."""
    folder = settings.install_sample()
    return folder_ref(folder) if folder is not None else None


def model_ref() -> ModelRef | None:
    ref = st.session_state.get(MODEL_KEY)
    return ref if ref is not None else sample_ref()


def set_model(ref: ModelRef, files: dict[str, bytes] | None = None) -> None:
    if files is not None:
        st.session_state.setdefault(UPLOADED_CHECKPOINTS, {})[ref.digest] = files
    st.session_state[MODEL_KEY] = ref


def load_model(ref: ModelRef) -> ActiveModel:
    """Resolve a reference through the cache. Raises CheckpointError naming the problem."""
    from . import cache  # torch: see the module docstring

    if ref.source == "folder":
        manifest = Path(ref.path) / "manifest.json"
        if not manifest.is_file():
            raise CheckpointError(f"checkpoint folder {ref.path} does not exist or has no manifest.json")
        mtime = manifest.stat().st_mtime_ns
        return ActiveModel(ref, f"{ref.path}@{mtime}", cache.checkpoint_from_folder(ref.path, mtime))
    files = st.session_state.get(UPLOADED_CHECKPOINTS, {}).get(ref.digest)
    if files is None:
        raise CheckpointError(f"the uploaded checkpoint {ref.name} is no longer in this session; upload it again")
    return ActiveModel(ref, f"upload:{ref.digest}", cache.checkpoint_from_upload(ref.digest, files))


def active_model() -> ActiveModel | None:
    """The tab's model, or None when there is none yet. Raises InformerLabError if it cannot be loaded."""
    ref = model_ref()
    return None if ref is None else load_model(ref)


# ------------------------------------------------------------------------------------------ data
def _sample_bytes() -> bytes:
    return settings.SAMPLE_CSV.read_bytes()


@functools.lru_cache(maxsize=4)
def _sample_digest(mtime_ns: int, size: int) -> str:
    return frames.digest(_sample_bytes())


def sample_data_ref() -> DataRef:
    stat = settings.SAMPLE_CSV.stat()
    return DataRef("sample", settings.SAMPLE_CSV.name, _sample_digest(stat.st_mtime_ns, stat.st_size))


def data_ref() -> DataRef:
    ref = st.session_state.get(DATA_KEY)
    return ref if ref is not None else sample_data_ref()


def set_data(ref: DataRef, data: bytes | None = None) -> None:
    if data is not None:
        st.session_state.setdefault(DATA_BYTES, {})[ref.digest] = data
    st.session_state[DATA_KEY] = ref


def file_data_ref(path: str | Path, options: ReadOptions) -> DataRef:
    """A CSV on the server (a study's data), read with `options`."""
    path = Path(path)
    if not path.is_file():
        raise InformerLabError(f"the data file {path} does not exist any more")
    return DataRef("file", path.name, frames.digest(path.read_bytes()), options, str(path))


def data_bytes(ref: DataRef) -> bytes:
    if ref.source == "sample":
        return _sample_bytes()
    if ref.source == "file":
        try:
            data = Path(ref.path).read_bytes()
        except OSError:
            raise InformerLabError(f"the data file {ref.path} cannot be read any more") from None
        if frames.digest(data) != ref.digest:
            raise InformerLabError(f"the data file {ref.path} has changed since it was chosen; choose it again")
        return data
    data = st.session_state.get(DATA_BYTES, {}).get(ref.digest)
    if data is None:
        raise InformerLabError(f"the uploaded file {ref.name} is no longer in this session; upload it again")
    return data


def load_data(ref: DataRef, progress=None) -> ActiveData:
    """Parse (cached by content hash and reading options) the referenced CSV. Raises DataError naming
    column/row/value. `progress(fraction, what)` is called while a big file is read (not on a cache hit)."""
    frame = frames.frame_from_bytes(ref.digest, data_bytes(ref), ref.name, ref.options, progress)
    return ActiveData(ref, ref.key, frame)


def active_data() -> ActiveData:
    return load_data(data_ref())


# ------------------------------------------------------------------------------------------ pages
class PageStopped(Exception):
    """Raised by `stop_page()`; lab.py catches it and goes on to draw the sidebar."""


def stop_page() -> NoReturn:
    """End the page here, after it has drawn why (st.info / st.error).

    Not st.stop(): once a stop is requested, every further Streamlit call of the run raises again, so the
    sidebar, which lab.py draws after the page, would vanish on exactly the pages that explain a problem.
    """
    raise PageStopped


def require_model() -> ActiveModel:
    """The active model, or a message and stop_page() (no traceback) when there is none."""
    try:
        model = active_model()
    except InformerLabError as err:
        st.error(str(err))
        stop_page()
    if model is None:
        st.info("No model yet. The sample model is being trained (see the sidebar), or load / train one on "
                "the **Data & model** page.")
        stop_page()
    return model


def require_data() -> ActiveData:
    try:
        return active_data()
    except InformerLabError as err:
        st.error(f"The active data cannot be used: {err}")
        stop_page()


class PageInputs(NamedTuple):
    model: ActiveModel
    data: ActiveData
    prepared: PreparedData
    seed: int
    checkpoint: Checkpoint  # model.checkpoint
    config: InformerConfig  # its model's config


def require_page() -> PageInputs:
    """What an analysis page starts from: the active model, the active data prepared for it, the analysis seed,
    and the model's checkpoint and config. A message and stop_page() when any is missing or they do not fit.

    Draws the model's check against seasonal naive and the linear baseline (ui/model_check.py) first: beside the
    page, never before its first result."""
    from . import model_check  # torch: see the module docstring

    model = require_model()
    data = require_data()
    prepared = require_prepared(model, data)
    model_check.draw(model.key, data.key, model.checkpoint, prepared)
    return PageInputs(model, data, prepared, seed(), model.checkpoint, model.checkpoint.config)


def require_windows(prepared, data: ActiveData, split: str) -> int:
    """How many complete windows the split has, or st.error and stop_page() when it has none."""
    from . import cache  # torch: see the module docstring

    n = cache.n_windows(prepared, split)
    if n < 1:
        st.error(f"The {split} split of {data.ref.name} has no complete window for this model.")
        stop_page()
    return n


def forecast_starts(prepared: PreparedData, split: str, n: int):
    """[n] the timestamp at which each window of the split starts its forecast."""
    seq_len = prepared.spec.seq_len
    return prepared.split(split).timestamps[seq_len:seq_len + n]


def window_slider(where, n: int, split: str, prefix: str, starts=None) -> int:
    """A window-of-the-split slider in `where` (a column or st), remembered per split and page prefix.

    starts: each window's forecast start (`forecast_starts`): then a date-and-time field beside the slider picks
    the window whose forecast starts there (or next), and follows the slider — with thousands of windows a
    slider alone cannot reach a given day."""
    key = f"{prefix}_window_{split}"
    if starts is None or n < 2:
        return where.slider(f"Window (0 … {n - 1} of the {split} split)", 0, n - 1, 0, key=key,
                            persist_state="session")
    a, b = where.columns([3, 1.5], vertical_alignment="bottom")
    window = a.slider(f"Window (0 … {n - 1} of the {split} split)", 0, n - 1, 0, key=key, persist_state="session")
    date_key = f"{prefix}_date_{split}_{window}"  # one field per window: its default follows the slider

    def _go_to_date() -> None:
        chosen = st.session_state.get(date_key)
        if chosen is not None:
            st.session_state[key] = int(min(n - 1, starts.searchsorted(pd.Timestamp(chosen))))

    b.datetime_input("Forecast from", value=starts[window].to_pydatetime(), min_value=starts[0].to_pydatetime(),
                     max_value=starts[-1].to_pydatetime(), key=date_key, on_change=_go_to_date, format="YYYY-MM-DD",
                     step=max(pd.Timedelta(minutes=1), min(pd.Timedelta(hours=1), starts[1] - starts[0])),
                     help="Jump to the window whose forecast starts at this moment (or the next one).")
    return window


def _use_run(name: str) -> None:
    set_model(folder_ref(settings.runs_dir() / name))


def way_out(data: ActiveData, model: ActiveModel) -> None:
    """What to do when the active data does not fit the active model: train on this data, or use a model that fits."""
    from informer_lab.analysis.learning.workflow import fitting_runs  # torch: see the module docstring

    runs = [name for name in fitting_runs(settings.runs_dir(), data.frame) if name != model.ref.name]
    c = st.columns([1.4, 3], vertical_alignment="center")
    c[0].page_link(DATA_PAGE, label=f"Train a model on {data.ref.name}", icon=":material/model_training:")
    if runs:
        with c[1].container(horizontal=True):
            for name in runs[:6]:
                st.button(f"Use {name}", key=f"use_fitting_{name}", on_click=_use_run, args=(name,),
                          help=f"A model in {settings.runs_dir()} that reads {data.ref.name}.")
    else:
        c[1].caption(f"No model in `{settings.runs_dir()}` reads {data.ref.name}; or go back to the data the model "
                     "was trained on (Data & model).")


def require_prepared(model: ActiveModel, data: ActiveData):
    """The active data split and scaled for the active model, or st.error naming the mismatch and the way out."""
    from . import cache  # torch: see the module docstring

    try:
        return cache.prepared_for(model.key, data.key, model.checkpoint, data.frame)
    except InformerLabError as err:
        st.error(f"The active data ({data.ref.name}) does not fit the active model ({model.ref.name}): {err}")
        way_out(data, model)
        stop_page()
