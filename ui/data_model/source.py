"""Where the data comes from: the bundled sample, an upload (CSV, compressed CSV, .xlsx, Parquet) or a series
generated with a planted answer (known_answer.py), how it is read, the series of a long table, and the repair of a
refused file.

A file that cannot be used as it is stays refused, with its message and, where a repair would fix it, buttons
that repair it (time interpolation or carrying values forward); until then the page's Train form is off, so the
previous data is never trained by mistake. A long table (an id column, a time column, values) offers a series
picker, each series with its length and span, also when reading every series was refused. Torch-free: this half
of the page draws before torch loads.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from informer_lab.analysis.data import LongTable, ReadOptions, SeriesError
from informer_lab.analysis.errors import InformerLabError
from informer_lab.ui import frames, state
from informer_lab.ui.data_model import known_answer
from informer_lab.ui.data_model.tables import series_label
from informer_lab.analysis.data.messages import short_name

SOURCES = ("Bundled sample", "Upload a CSV", "Known answer (generated)")
FAILED_KEY = "csv_upload_failed"  # the Refusal of the last file the uploader held
REPAIRS = {"none": "none (refuse)", "interpolate": "interpolate in time", "ffill": "carry the last value forward"}
DAYFIRST = {"auto": None, "day first": True, "month first": False}
DECIMAL = {"auto": None, ". (1,234.5)": ".", ", (1.234,5)": ","}
BIG_FILE = 4 << 20  # bytes: a read this big shows a progress bar
UPLOAD_TYPES = ["csv", "txt", "tsv", "gz", "bz2", "xz", "zip", "xlsx", "xlsm", "parquet", "pq"]
SERIES_KEY = "read_series"  # the series picked in a long table (empty: every series)
SERIES_FOR = "read_series_for"  # the digest of the file those series belong to


@dataclass(frozen=True)
class Refusal:
    """An upload that could not be used: which file and options, why, and whether a repair would fix it."""

    ref: state.DataRef
    message: str
    repairable: bool
    long: LongTable | None = None  # a long table's series, when reading them was refused


def refused() -> Refusal | None:
    """The refusal of the file the uploader holds now, if it was refused (the Train form is off meanwhile)."""
    failed = st.session_state.get(FAILED_KEY)
    if failed is None or st.session_state.get("data_source") != SOURCES[1]:
        return None
    return failed


def _text(key: str) -> str | None:
    return (st.session_state.get(key) or "").strip() or None


def _options() -> ReadOptions:
    return ReadOptions(datetime_column=_text("datetime_column"),
                       repair=st.session_state.get("read_repair", "none"),
                       freq=_text("read_freq"),
                       dayfirst=DAYFIRST[st.session_state.get("read_dayfirst", "auto")],
                       decimal=DECIMAL[st.session_state.get("read_decimal", "auto")],
                       sheet=_text("read_sheet"), id_column=_text("read_id_column"),
                       series=tuple(st.session_state.get(SERIES_KEY) or ()) or None)


def _reading_options() -> None:
    with st.expander("How to read the file", expanded=st.session_state.get("read_repair", "none") != "none"):
        c = st.columns([1.2, 1.6, 1, 1.2, 1.2])
        c[0].text_input("Datetime column", key="datetime_column", persist_state="session", placeholder="detect",
                        help="Leave empty to find it by its content (any column that holds dates or times).")
        c[1].selectbox("Repair", list(REPAIRS), key="read_repair", format_func=REPAIRS.get, persist_state="session",
                       help="Gaps, repeated or unsorted timestamps and missing cells: refuse them, or regularise "
                            "the series to its step and fill the missing cells. Every change is listed.")
        c[2].text_input("Step", key="read_freq", persist_state="session", placeholder="inferred",
                        help="The grid a repair regularises to, as a pandas alias: h, 15min, D, W-SUN, MS, …")
        c[3].selectbox("Dates", list(DAYFIRST), key="read_dayfirst", persist_state="session",
                       help="Whether 01/02/2021 is 1 February (day first) or 2 January (month first); auto decides "
                            "from the whole column.")
        c[4].selectbox("Decimal mark", list(DECIMAL), key="read_decimal", persist_state="session",
                       help="auto decides from every cell; a file where no cell decides (only '1,234') is refused "
                            "until you choose.")
        c = st.columns([1.2, 1.2, 3.6])
        c[0].text_input("Sheet", key="read_sheet", persist_state="session", placeholder="the first",
                        help="A spreadsheet's sheet (.xlsx); leave empty for the first.")
        c[1].text_input("Series id column", key="read_id_column", persist_state="session", placeholder="detect",
                        help="A long table's column saying which series a row belongs to (unique_id, symbol, …); "
                             "leave empty to find it by its content.")


def _series_picker(long: LongTable, digest: str) -> None:
    """The series of a long table, each with its length and span; none picked reads every series."""
    if any(s not in long.ids for s in st.session_state.get(SERIES_KEY) or ()):
        st.session_state[SERIES_KEY] = []
    infos = {s.id: s for s in long.series}
    st.multiselect(f"Series (column `{long.id_column}`: {len(long.ids):,} series)", list(long.ids), key=SERIES_KEY,
                   format_func=lambda sid: series_label(infos[sid]), placeholder="every series, aligned on the span "
                   "they share", help="One series: its value columns as they are named. Several (or none picked: "
                   "every series): columns named <series>.<column>, cut to the span the series share.")


def _new_file(digest: str) -> None:
    """Another file: its own series (none picked yet), and no repair until it asks for one (a repair chosen for the
    last file said nothing about this one); the other reading options are the user's habits and stay."""
    st.session_state[SERIES_KEY], st.session_state[SERIES_FOR] = [], digest
    st.session_state["read_repair"] = "none"
    st.session_state["read_freq"] = ""


def _repair_with(fill: str) -> None:
    st.session_state["read_repair"] = fill


def _back_to_sample() -> None:
    st.session_state["data_source"] = SOURCES[0]
    st.session_state.pop(FAILED_KEY, None)


def _show_refusal(failure: Refusal) -> None:
    st.error(failure.message, icon=":material/block:")
    c = st.columns([1.3, 1.5, 1.2, 3], vertical_alignment="center")
    if failure.repairable:
        c[0].button("Repair: interpolate", key="repair_interpolate", on_click=_repair_with, args=("interpolate",),
                    type="primary", icon=":material/build:")
        c[1].button("Repair: carry values forward", key="repair_ffill", on_click=_repair_with, args=("ffill",))
    c[2].button("Back to the sample", key="back_to_sample", on_click=_back_to_sample)
    c[3].caption("Training is off until this file is repaired, another file is uploaded or the sample is chosen "
                 "again. " + ("A repair lists every change it makes." if failure.repairable else
                              "Fix the file, or settle the reading under *How to read the file*."))


def _read(candidate: state.DataRef, raw: bytes) -> None:
    """Read a new file (or the same file with new options); use it, or remember why it was refused."""
    bar = st.progress(0.0, text=f"Reading {candidate.name}…") if len(raw) > BIG_FILE else None

    def progress(fraction: float, what: str) -> None:
        if bar is not None:
            bar.progress(min(1.0, fraction), text=f"{what[:1].upper()}{what[1:]}… {fraction:.0%}")
    try:
        frames.frame_from_bytes(candidate.digest, raw, candidate.name, candidate.options, progress)
    except InformerLabError as err:
        st.session_state[FAILED_KEY] = Refusal(candidate, f"{short_name(candidate.name, 40)}: {err}",
                                               getattr(err, "repairable", False),
                                               err.long if isinstance(err, SeriesError) else None)
    else:
        st.session_state.pop(FAILED_KEY, None)
        state.set_data(candidate, raw)
        st.rerun()
    finally:
        if bar is not None:
            bar.empty()


def draw() -> Refusal | None:
    """The data source controls. Returns the refusal of the uploaded file, when it was refused."""
    active = state.data_ref()
    on_file = f"Study data ({active.name})" if active.source == "file" else None
    options = list(SOURCES) + ([on_file] if on_file else [])
    if st.session_state.get("data_source") not in options:
        st.session_state.pop("data_source", None)
    source = st.radio("Data source", options, key="data_source", horizontal=True, persist_state="session",
                      index={"sample": 0, "upload": 1, "synth": 2, "file": 3}[active.source])
    if source == on_file:
        st.caption(f"`{active.path}`, read as the study read it (repair: {active.options.repair}).")
        return None
    if source == SOURCES[0]:
        if state.data_ref().source != "sample":
            state.set_data(state.sample_data_ref())
            st.rerun()
        return None
    if source == SOURCES[2]:
        known_answer.draw()
        return None
    upload = st.file_uploader("CSV file (or .csv.gz, .zip, .xlsx, Parquet): a time column and numeric columns, or "
                              "a long table (id, time, values)", type=UPLOAD_TYPES, key="csv_upload")
    raw = upload.getvalue() if upload is not None else None
    digest = frames.digest(raw) if raw is not None else None
    if digest is not None and st.session_state.get(SERIES_FOR) != digest:
        _new_file(digest)  # before the reading options are drawn: their widgets may still be set here
    _reading_options()
    if upload is None:
        st.session_state.pop(FAILED_KEY, None)
        if state.data_ref().source == "sample":
            st.info("Upload a CSV to use it; the bundled sample stays active until then.")
        return None
    long = _long_of(digest)
    if long is not None:
        _series_picker(long, digest)
    candidate = state.DataRef("upload", upload.name, digest, _options())
    failed: Refusal | None = st.session_state.get(FAILED_KEY)
    if candidate != state.data_ref() and (failed is None or failed.ref != candidate):
        _read(candidate, raw)
    failure = refused()
    if long is None and (failure is not None and failure.long is not None or _active_long(digest) is not None):
        st.rerun()  # a long table seen for the first time: draw its picker
    if failure is not None and failure.ref == candidate:
        _show_refusal(failure)
        return failure
    return None


def _active_long(digest: str) -> LongTable | None:
    ref = state.data_ref()
    if ref.source != "upload" or ref.digest != digest:
        return None
    try:
        return state.active_data().frame.long
    except InformerLabError:
        return None


def _long_of(digest: str) -> LongTable | None:
    """The series of the uploaded file, from the frame read last or from its refusal."""
    failed: Refusal | None = st.session_state.get(FAILED_KEY)
    if failed is not None and failed.ref.digest == digest and failed.long is not None:
        return failed.long
    return _active_long(digest)
