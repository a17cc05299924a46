"""A second model beside the active one (LIT-style): chosen once per tab, shown by the Sparsity, Head masking,
Pyramid, Compare and Forecast screens on the same data, the same window (matched by the row its forecast
starts at: `analysis.compare.pairing`) and the same key-sample seed.

The candidates are the saved checkpoints that read the active data (the runs folder's, then every study's
runs); the choice lives in this tab's session state under one key, so picking it on one screen shows it on
the others.
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import streamlit as st

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import InformerLabError
from informer_lab.analysis.compare.pairing import aligned_forecasts, matching_window, windows_needed
from informer_lab.analysis.learning.training import predict
from informer_lab.analysis.learning.windows import limit_windows
from informer_lab.analysis.learning.workflow import read_schema, schema_misfit

from . import cache, settings, state

KEY = "second_model"
NONE = "none"
SECOND = "second"  # the name of its forecasts in the comparison tables


class Second(NamedTuple):
    """The second model and the active data prepared for it (its own scaler)."""

    model: state.ActiveModel
    prepared: PreparedData

    @property
    def name(self) -> str:
        return self.model.ref.name


def _folders() -> dict[str, Path]:
    """name → checkpoint folder: runs/<name>, then studies/<study>/runs/<run>/checkpoint as <study>/<run>."""
    found = {}
    try:
        runs = settings.runs_dir()
        if runs.is_dir():
            found.update({p.name: p for p in sorted(runs.iterdir()) if p.is_dir() and not p.name.startswith(".")})
        studies = settings.studies_dir()
        if studies.is_dir():
            for study in sorted(p for p in studies.iterdir() if (p / "runs").is_dir()):
                found.update({f"{study.name}/{run.name}": run / "checkpoint"
                              for run in sorted((study / "runs").iterdir()) if (run / "checkpoint").is_dir()})
    except OSError:  # an unreadable folder on the way: what was found so far
        pass
    return found


def candidates(first: state.ActiveModel, data: state.ActiveData) -> dict[str, Path]:
    """The saved checkpoints (but the active one) whose schema reads the active data, by name."""
    own = Path(first.ref.path).resolve() if first.ref.path else None
    out = {}
    for name, folder in _folders().items():
        schema = read_schema(folder)
        if schema is not None and schema_misfit(schema, data.frame) is None and folder.resolve() != own:
            out[name] = folder
    return out


def picker(first: state.ActiveModel, data: state.ActiveData, where=st) -> Second | None:
    """The "Side by side with" choice, drawn in `where`; the second model ready to use, or None (none chosen,
    none fits, or it cannot be loaded: then a warning says why)."""
    options = candidates(first, data)
    names = [NONE, *options]
    if st.session_state.get(KEY) not in names:
        st.session_state[KEY] = NONE
    name = where.selectbox("Side by side with", names, key=KEY, persist_state="session",
                           format_func=lambda n: "no second model" if n == NONE else n,
                           help=f"A second checkpoint that reads {data.ref.name}, shown beside "
                                f"{first.ref.name} on the same window and key-sample seed (Sparsity, Head masking, "
                                "Pyramid, Compare, Forecast). The choice holds on every screen of this tab." +
                                ("" if len(names) > 1 else " None fits this data yet: train one, or run a study."))
    if name == NONE:
        return None
    try:
        second = state.load_model(state.ModelRef("folder", name, path=str(options[name].resolve())))
        return Second(second, cache.prepared_for(second.key, data.key, second.checkpoint, data.frame))
    except InformerLabError as err:
        st.warning(f"The second model {name} cannot be shown: {err}")
        return None


def window_of(second: Second, prepared: PreparedData, split: str, window: int) -> int | None:
    """The second model's window of `split` matching the first's `window`, or None."""
    return matching_window(prepared, second.prepared, split, window)


def no_window_note(second: Second, split: str, window: int) -> str:
    return (f"{second.name} has no {split} window whose forecast starts where window {window} does (its seq_len "
            f"{second.prepared.spec.seq_len}, pred_len {second.prepared.spec.pred_len}); pick another window.")


@st.cache_resource(max_entries=8, show_spinner="Forecasting every window with the second model…")
def forecasts_on_first(first_key: str, second_key: str, data_key: str, split: str, seed: int,
                       _first: PreparedData, _second: Second, windows: int | None = None) -> np.ndarray:
    """The second model's forecasts of every window of `split` that `_first` has (cut to its first `windows`, which
    names that cut in the cache key), on the first's windows and in its scale (read-only). Raises ConfigError when
    the two cannot be paired."""
    own = limit_windows(_second.prepared, split, windows_needed(_first, _second.prepared, split))  # no more
    forecasts, _ = predict(_second.model.checkpoint.model, own, split, seed=seed)
    out = aligned_forecasts(forecasts, _first, own, split)
    out.setflags(write=False)
    return out
