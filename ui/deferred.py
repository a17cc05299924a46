"""The first script run of a fresh server process draws without torch.

Importing torch and the model stack (`ui.cache`) takes 2–3 s on two cores and holds the GIL for much of it.
Done while the browser loads Streamlit's plotly bundle (4.7 MB) and draws the first chart, it slowed that by
about a second (the server sent the bundle several times slower, and the two shared the CPU), even once the
page sent its chart before loading the model (benchmarks/cold_start.py).

So, until the model stack has loaded in this process:
- the Data & model page draws its data half and a placeholder for its model half;
- the sidebar names the active model without loading it, and mounts `browser_ready`, a script-free
  component whose JavaScript reports back once the browser has finished the run, drawn every chart on the
  page, and had a quiet moment (at most 20 s after it mounted);
- that report reruns the app, and `load_if_requested` (first thing in lab.py) imports the stack, so the
  rerun draws everything. Any other rerun of the session (a click) loads it too.
Pages that need the model import it themselves; from then on every run of every session draws in one pass.

A timer instead of the browser's report was tried and measured: 0.5 s overlapped the browser's work (first
chart no sooner than before); 2 s helped at fast moments and overlapped again when the machine was slow.
"""
from __future__ import annotations

import sys

import streamlit as st

from . import state, widgets

MODEL_STACK = "informer_lab.ui.cache"  # imports torch, the model and the analyses
_REQUESTED = "model_stack_requested"

# Charts are drawn by `ui.widgets.chart` / `clickable_chart` with keys "chart_<name>"; Streamlit gives their
# element containers the class "st-key-chart_<name>", and plotly draws into ".main-svg".
_BROWSER_READY_JS = """
export default function ({ setTriggerValue }) {
  let stopped = false;
  const started = performance.now();
  const report = () => { if (!stopped) { stopped = true; setTriggerValue("ready", true); } };
  // Safari has no requestIdleCallback: there, 200 ms without news counts as a quiet period.
  const whenIdle = window.requestIdleCallback ||
    ((callback) => setTimeout(() => callback({ timeRemaining: () => 50 }), 200));
  const pageDrawn = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.dataset.testScriptState !== "notRunning") return false;
    return Array.from(document.querySelectorAll('[class*="st-key-chart_"]'))
      .every((chart) => chart.querySelector(".main-svg"));
  };
  // Quiet: three idle periods in a row with nothing scheduled (the browser grants up to 50 ms);
  // while plotly still draws, idle periods are the scraps between frames.
  const waitQuiet = (periods) => whenIdle((deadline) => {
    if (stopped) return;
    const quiet = deadline.timeRemaining() >= 40 ? periods + 1 : 0;
    if (quiet >= %(periods)d || performance.now() - started > %(limit_ms)d) report(); else waitQuiet(quiet);
  });
  const check = () => {
    if (stopped) return;
    if (pageDrawn() || performance.now() - started > %(limit_ms)d) waitQuiet(0); else setTimeout(check, 100);
  };
  check();
  return () => { stopped = true; };
}
""" % {"periods": 3, "limit_ms": 20000}
_browser_ready = st.components.v2.component("informer_lab.browser_ready", js=_BROWSER_READY_JS)


def model_stack_loaded() -> bool:
    """True once some run of this process has imported the model stack (a partly imported module counts:
    a second importer waits on Python's import lock until it has finished)."""
    return MODEL_STACK in sys.modules


def load_if_requested() -> None:
    """Import the model stack if an earlier run of this session deferred it (see the module docstring)."""
    if not model_stack_loaded() and st.session_state.pop(_REQUESTED, False):
        __import__(MODEL_STACK)


def draw_sidebar() -> None:
    """The sidebar before the model stack has loaded: the active model's name, the seed, and the loader."""
    st.session_state[_REQUESTED] = True
    with st.sidebar:
        ref = state.model_ref()
        st.markdown(widgets.model_line(ref) if ref is not None else "**Model:** none yet")
        st.caption("Loading PyTorch and the model…")
        _browser_ready(key="browser_ready", on_ready_change=lambda: None)  # its report reruns the app
        widgets.seed_input()
        widgets.lab_home_caption()
