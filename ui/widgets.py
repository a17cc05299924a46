"""Small drawing helpers shared by pages: charts with an HTML download, tables with a CSV download."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from informer_lab import home

from . import screen_report, settings, state
from .tables import file_stem, markdown_table, progress_fraction

if TYPE_CHECKING:  # annotations only: the Data page draws its chart with these helpers before torch loads
    from .jobs import JobView, PhaseJob

PLOTLY_CONFIG = {"displaylogo": False}


def csv_bytes(table: pd.DataFrame) -> bytes:
    return table.to_csv(index=False).encode("utf-8")


def csv_download(table: pd.DataFrame, file_name: str, key: str, label: str) -> None:
    """A button that downloads `table` as CSV, named `<file_name>.csv` (made safe for file systems). The CSV is
    written when the button is clicked, not on every run (a long input's per-query table took 0.45 s to write,
    paid by every click on its screen)."""
    lazy_csv_download(lambda: table, file_name, key, label)


def lazy_csv_download(make_table: Callable[[], pd.DataFrame], file_name: str, key: str, label: str) -> None:
    """A CSV download whose table is built only when clicked (for tables too large to build on every rerun)."""
    st.download_button(label, lambda: csv_bytes(make_table()), file_name=f"{file_stem(file_name)}.csv",
                       mime="text/csv", key=f"dl_csv_{key}", on_click="ignore", icon=":material/download:")


def html_download(fig: go.Figure, file_name: str, key: str, *, label: str = "Download chart (HTML)") -> None:
    """A button that downloads `fig` as a self-contained HTML file, built only when clicked."""
    st.download_button(label, lambda: fig.to_html(include_plotlyjs=True, full_html=True),
                       file_name=f"{file_stem(file_name)}.html", mime="text/html", key=f"dl_html_{key}",
                       on_click="ignore", icon=":material/download:")


def table(df: pd.DataFrame, file_name: str, key: str, *, label: str = "Download table (CSV)",
          height: int | str = "auto", column_config: dict | None = None) -> None:
    """A dataframe and, under it, a button that downloads exactly that table as CSV."""
    if height == "auto" and len(df) <= 50:
        height = 35 * (len(df) + 1) + 3  # every row visible: no scrolling inside short tables
    st.dataframe(df, hide_index=True, height=height, column_config=column_config)
    csv_download(df, file_name, key, label)
    screen_report.add_table(key, file_name, df)


def small_table(df: pd.DataFrame, file_name: str, key: str, *, formats: dict[str, str] | None = None,
                height: int | None = None, label: str = "Download table (CSV)") -> None:
    """A short table drawn as one markdown table (scrolling inside `height` pixels when given), values shown
    through `formats` (column → format spec, e.g. "{:.3f}", "{:%m-%d %H:%M}"), and a button that downloads the
    raw values as CSV.

    For tables that a click redraws. An st.dataframe grid costs the browser ~0.3 s to redraw on two cores, and
    st.table ~0.15 s for 25 rows (it renders every cell as its own markdown element); one markdown block is one
    element (benchmarked on the sparsity explorer's grid clicks, where the 1 s budget is tight).
    """
    with st.container(height=height, border=False) if height else st.container():
        st.markdown(markdown_table(df, formats))
    csv_download(df, file_name, key, label)
    screen_report.add_table(key, file_name, df)


def chart(fig: go.Figure, file_name: str, key: str, *, label: str = "Download chart (HTML)") -> None:
    """A plotly chart and a button that downloads it as a self-contained HTML file (built on click).

    PNG: the chart's own toolbar (camera icon, "Download plot as a png") renders it in the user's browser at 2×,
    named like the HTML file; a server-side PNG would need kaleido, which is not a dependency.
    """
    png = {"format": "png", "filename": file_stem(file_name), "scale": 2}
    st.plotly_chart(fig, key=f"chart_{key}", config={**PLOTLY_CONFIG, "toImageButtonOptions": png})
    html_download(fig, file_name, key, label=label)
    screen_report.add_figure(key, fig)


def job_status_line(view: JobView) -> str:
    p = view.latest
    if view.status == "failed":
        return f"Training **{view.name}** failed."
    if view.finished:
        how = {"done": "finished", "stopped": "stopped by you (best weights kept)"}[view.status]
        return f"Training **{view.name}** {how} after {view.seconds:.0f} s."
    if p is None:
        return f"Training **{view.name}**: preparing the data and the model…"
    if view.stop_requested:
        return f"Training **{view.name}**: stopping after this step…"
    if p.stage in ("validate", "test"):
        what = "validating" if p.stage == "validate" else "scoring the test split"
        return (f"Training **{view.name}**: epoch {p.epoch}/{p.epochs}, {what}: {p.windows_done:,} of "
                f"{p.windows_total:,} windows · {view.seconds:.0f} s")
    phase = "validating" if p.val_loss is not None else f"step {p.step}/{p.steps}"
    return (f"Training **{view.name}**: epoch {p.epoch}/{p.epochs}, {phase}, "
            f"loss {p.train_loss:.4f} · {view.seconds:.0f} s")


def job_progress(view: JobView) -> None:
    """A progress bar with a one-line status; the error (a typed error's message) when it failed."""
    if view.status == "failed":
        st.error(view.error or "training failed")
        return
    fraction = 1.0 if view.finished else progress_fraction(view.latest)
    st.progress(fraction, text=job_status_line(view))


@st.fragment(run_every=0.5)
def _poll_phase_job(job: PhaseJob) -> None:
    """Polls a running job; a full rerun draws its result once it has finished."""
    if job.status != "running":
        st.rerun()
    st.status(f"{job.title}: {job.phase}… {job.seconds:.0f} s", state="running")


def phase_job_result(job: PhaseJob):
    """A background job's result (ui.jobs.PhaseJob), or None after drawing its progress or its error."""
    if job.status == "running":
        _poll_phase_job(job)
        return None
    if job.status == "failed":
        st.error(job.error or f"{job.title} failed")
        return None
    st.caption(f"{job.title}: {job.seconds:.1f} s (kept for these settings, shared by every tab).")
    return job.result


def seed_input() -> None:
    """The sidebar's analysis seed (session state), read by every page through `state.seed()`."""
    st.number_input("Analysis seed", min_value=0, max_value=2**31 - 1, value=0, step=1, key=state.SEED_KEY,
                    help="Seeds every random draw of the analyses (ProbSparse key samples), so the same "
                         "view always shows the same numbers.")


def model_line(ref: state.ModelRef) -> str:
    """The sidebar's "Model:" line: the active model's name and where it comes from."""
    return f"**Model:** `{ref.name}` ({'uploaded' if ref.source == 'upload' else 'runs/'})"


def lab_home_caption() -> None:
    """The sidebar's last line: the folder the lab keeps its runs in, and which rule chose it (informer_lab.home)."""
    where = home.lab_home()
    st.caption(f"Runs in `{settings.runs_dir()}` (lab home: {where.why}; `{home.HOME_ENV}` moves it).")
    problem = settings.runs_problem()
    if problem is not None:
        st.warning(problem, icon=":material/folder_off:")


# Reports a click on a point of the plotly chart drawn with key `data.chart` (plotly's own "plotly_click" event) as
# the trigger value "point", shaped as st.plotly_chart's selection state ({"selection": {"points": [...]}}). The
# graph is found again whenever the page changes (a redrawn chart is a new element).
_CLICKS_JS = """
export default function ({ data, setTriggerValue }) {
  let graph = null;
  const report = (event) => {
    const p = event && event.points && event.points[0];
    if (!p) return;
    setTriggerValue("point", {selection: {points: [{
      curve_number: p.curveNumber, point_number: p.pointNumber,
      point_index: p.pointIndex === undefined ? p.pointNumber : p.pointIndex,
      x: p.x === undefined ? null : p.x, y: p.y === undefined ? null : p.y,
      customdata: p.customdata === undefined ? null : p.customdata}]}});
  };
  const attach = () => {
    const found = document.querySelector(`.st-key-${data.chart} .js-plotly-plot`);
    if (found && found !== graph && typeof found.on === "function") {
      graph = found;
      graph.on("plotly_click", report);
    }
  };
  const observer = new MutationObserver(attach);
  observer.observe(document.body, {childList: true, subtree: true});
  attach();
  return () => {
    observer.disconnect();
    if (graph && typeof graph.removeListener === "function") graph.removeListener("plotly_click", report);
  };
}
"""
_chart_clicks = st.components.v2.component("informer_lab.chart_clicks", js=_CLICKS_JS)


def clickable_chart(fig: go.Figure, file_name: str, key: str, on_select: Callable[[], None]) -> None:
    """A plotly chart whose point clicks call `on_select` (which reads `clicked(key)`), and its HTML download.

    A click is plotly's click event, reported by a small component, not st.plotly_chart's point selection: a
    selection makes plotly restyle the clicked trace, which redraws every WebGL trace of the chart (0.7–0.9 s for the
    query/key map's 12,000 points in Chromium on two cores, every click). The chart itself is not a widget,
    so a click reruns only what `on_select` asks for (a fragment by its key, or the page)."""
    st.plotly_chart(fig, key=f"chart_{key}", config=PLOTLY_CONFIG)
    _chart_clicks(key=f"clicks_{key}", data={"chart": f"chart_{key}"}, on_point_change=on_select)
    html_download(fig, file_name, key)
    screen_report.add_figure(key, fig)


def clicked(key: str):
    """The last click on the `clickable_chart` drawn with `key`, as st.plotly_chart's selection state, or None."""
    state = st.session_state.get(f"clicks_{key}")
    return None if state is None else state.get("point")


def lazy_tabs(tabs: dict[str, Callable[..., None]], key: str, *args) -> None:
    """Tabs that draw only the open one (`draw(*args)`): another tab reruns the script, or the fragment this is
    called in, instead of computing every tab up front."""
    for tab, draw in zip(st.tabs(list(tabs), key=key, on_change="rerun"), tabs.values()):
        if tab.open:
            with tab:
                draw(*args)
