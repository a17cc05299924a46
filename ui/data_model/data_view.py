"""How the active data parsed: its size, step (in words), columns, what a repair changed, the series itself.

Torch-free: on a fresh server this half of the page draws before torch loads (ui/deferred.py).
"""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.data import SeriesFrame, describe_frequency
from informer_lab.ui import widgets
from informer_lab.ui.data_model import charts, tables
from informer_lab.ui.tables import file_stem

MAX_PLOT_POINTS = 2000  # per column, min/max pairs: about one pair per pixel of a wide chart
MAX_PLOTTED = 8  # columns drawn at once (a panel each)


@st.fragment
def column_summary(frame: SeriesFrame) -> None:
    """The column summary, drawn only while its expander is open. Lazy: a table on the first page load makes
    the browser fetch and compile its data-grid bundle (~1.2 MB of JavaScript) while it draws the series
    chart: 0.4 s more main-thread work before the first chart (CPU profile of the cold start, 4 rounds).
    A fragment: opening it reruns only this part, not the page's model half."""
    summary = st.expander("Column summary (raw values)", key="summary_open", on_change="rerun")
    if summary.open:
        with summary:
            widgets.table(tables.column_summary(frame.values), f"{file_stem(frame.name)}-summary", "summary")


def repair_report(frame: SeriesFrame) -> None:
    """What the repair changed: one line per kind, every change in a table, and its CSV."""
    report = frame.repairs
    if report.empty:
        return
    with st.expander(f"Repair report: {len(report.changes):,} change{'s' if len(report.changes) > 1 else ''} "
                     f"({report.fill}, {describe_frequency(report.freq)} grid)", expanded=True,
                     icon=":material/build:"):
        st.markdown("  \n".join(f"· {line}" for line in report.summary()))
        widgets.table(report.changes, f"repair-report-{file_stem(frame.name)}", "repair_report",
                      label="Download the repair report (CSV)", height=260 if len(report.changes) > 6 else "auto")
        st.caption("Saved beside the checkpoint of every model trained on this data (repair.json).")


def long_table(frame: SeriesFrame) -> None:
    """A long table's id column and series (read or not), each with its length and span."""
    long = frame.long
    if long is None:
        return
    chosen = len(long.chosen)
    st.markdown(f"**Long table**: series id column {tables.md(long.id_column)}, {len(long.ids):,} series; "
                f"{'all' if chosen == len(long.ids) else f'{chosen:,}'} read"
                + (" as columns named *series.column*" if chosen > 1 else " with its value columns as named"))
    with st.expander(f"Series ({len(long.ids):,})", expanded=False):
        widgets.table(tables.series_table(long), f"{file_stem(frame.name)}-series", "series_list",
                      height=240 if len(long.ids) > 6 else "auto")


def draw(frame: SeriesFrame) -> None:
    st.subheader(frame.name)
    m = st.columns(4)
    m[0].metric("Rows", f"{frame.n_rows:,}")
    m[1].metric("Step", describe_frequency(frame.freq), help=f"pandas alias: {frame.freq}")
    m[2].metric("Datetime column", frame.datetime_column)
    m[3].metric("Numeric columns", f"{len(frame.columns):,}")
    dropped = tables.dropped_text(frame.dropped_why) if frame.dropped_why else \
        ", ".join(tables.md(c) for c in frame.dropped_columns[:20])
    st.markdown(f"**From** {frame.timestamps[0]} **to** {frame.timestamps[-1]}  \n"
                f"**Numeric columns:** {', '.join(tables.md(c) for c in frame.columns[:40])}"
                f"{', …' if len(frame.columns) > 40 else ''}  \n"
                f"**Left out of the model** (no numbers): {dropped or 'none'}")
    long_table(frame)
    if frame.notes:
        st.caption("  \n".join(f"Note: {tables.md(note)}." for note in frame.notes))
    repair_report(frame)
    shown = list(frame.columns)
    if len(shown) > MAX_PLOTTED:
        shown = st.multiselect("Columns to plot", list(frame.columns), default=list(frame.columns)[-MAX_PLOTTED:],
                               key="plot_columns", max_selections=MAX_PLOTTED)
    long, bucket = tables.downsample_minmax(frame.values[shown], MAX_PLOT_POINTS)
    title = f"{frame.name}: every numeric column" if len(shown) == len(frame.columns) else \
        f"{frame.name}: {len(shown)} of {len(frame.columns):,} numeric columns"
    widgets.chart(charts.series_figure(long, shown, title), f"{file_stem(frame.name)}-series", "series")
    if bucket > 1:
        st.caption(f"Display only: {frame.n_rows:,} rows drawn as the minimum and maximum of every {bucket} rows "
                   "per column; every analysis uses all rows.")
    column_summary(frame)
