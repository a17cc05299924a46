"""The cold start: the first run of a fresh server draws the Data & model page without importing torch, and
what it does import was imported at server start (app.py's lifespan, ui/server.py).

Checked in fresh interpreters, since this test process has torch loaded already. If someone adds a
module-level torch import to the data half, or the sidebar loads the model on the first run, torch's import
(2–3 s here, holding the GIL) competes with the browser for the first chart (ui/deferred.py).
"""
from __future__ import annotations

import asyncio
import json
import logging
import runpy
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from streamlit.web.server.app_discovery import discover_asgi_app

from informer_lab.source import PACKAGE, SERVER_APP
from informer_lab.ui import server

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = PACKAGE / "lab.py"

# What lab.py and the data half of ui/data_model/page.py import before the page's first chart.
COLD_PATH = ["informer_lab.analysis.data", "informer_lab.analysis.errors",
             *(f"informer_lab.ui.{name}" for name in ("nav", "frames", "state", "settings", "tables", "charts", "widgets",
                                                     "deferred", "data_model.charts", "data_model.tables",
                                                     "data_model.source", "data_model.data_view"))]

# Two runs of lab.py in one fresh interpreter. The first is a fresh server's first run; the second stands in
# for the rerun that the browser's ready report triggers (AppTest runs no JavaScript; any later run of the
# session loads the stack, see ui/deferred.py).
TWO_RUNS = f"""
import json, sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({str(SCRIPT)!r}, default_timeout=120)
runs = []
for _ in range(2):
    at.run()
    runs.append(dict(exception=[e.value for e in at.exception], torch="torch" in sys.modules,
                     charts=len(at.get("plotly_chart")), info=[i.value for i in at.info],
                     subheaders=[h.value for h in at.subheader],
                     sidebar=[m.value for m in at.sidebar.markdown] + [c.value for c in at.sidebar.caption]))
print(json.dumps(runs))
"""


def _loads_torch(modules: list[str]) -> bool:
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + "print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1] == "True"


def test_the_data_half_of_the_app_does_not_import_torch():
    assert not _loads_torch(COLD_PATH)


def test_the_check_can_fail():
    assert _loads_torch(COLD_PATH + ["informer_lab.ui.cache"])  # the model half does load torch


def test_the_page_imports_the_model_half_only_after_its_chart():
    page = (ROOT / "ui" / "data_model" / "page.py").read_text()
    chart = page.index("data_view.draw(")
    assert "widgets.chart(charts.series_figure(" in (ROOT / "ui" / "data_model" / "data_view.py").read_text()
    model_half = page.index("from informer_lab.ui.data_model import model_panel, training")
    assert chart < page.index("deferred.model_stack_loaded()") < model_half
    for heavy in ("from informer_lab.ui import cache", "from informer_lab.ui.jobs import",
                  "from informer_lab.analysis.learning.training import",
                  "from informer_lab.analysis.learning.workflow import"):
        assert heavy not in page[:model_half], heavy
    script = SCRIPT.read_text()
    assert script.index("page.run()") < script.index("from informer_lab.ui import sidebar")


def test_a_fresh_server_draws_the_data_first_and_loads_the_model_on_the_next_run(runs_dir):
    out = subprocess.run([sys.executable, "-c", TWO_RUNS], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    first, second = json.loads(out.stdout.strip().splitlines()[-1])
    assert not first["exception"] and not second["exception"]
    # First run: the data, its chart and the model's name; no torch, no model half, no device line yet.
    assert not first["torch"] and first["charts"] == 1 and "sample.csv" in first["subheaders"]
    assert any("Loading PyTorch" in i for i in first["info"]) and "Active model" not in first["subheaders"]
    assert "**Model:** `sample` (runs/)" in first["sidebar"]
    assert not any("Device:" in line for line in first["sidebar"])
    # The loader's run: the model stack is in, and the page and sidebar are whole.
    assert second["torch"] and "Active model" in second["subheaders"] and not second["info"]
    assert "**Device:** CPU" in second["sidebar"] and any("seq 48" in line for line in second["sidebar"])


# ------------------------------------------------------------------------------------------ server start
# The warm-up in a fresh interpreter; then the first run of the script. Which project, pandas and plotly
# modules did the first run still have to import? And is the sample's frame already in the CSV cache?
WARM_THEN_RUN = f"""
import json, sys
from informer_lab.ui import frames, server, state
server.warm_up()
warm = set(sys.modules)
torch_after_warm_up = "torch" in sys.modules
def refuse(*args, **kwargs):
    raise AssertionError("the sample was parsed again")
real_load_csv, frames.load_csv = frames.load_csv, refuse
rows = state.load_data(state.sample_data_ref()).frame.n_rows  # must come from the cache warm_up filled
frames.load_csv = real_load_csv
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({str(SCRIPT)!r}, default_timeout=120).run()
ours = ("informer_lab", "pandas", "plotly")
late = sorted(m for m in set(sys.modules) - warm if m.split(".")[0] in ours)
print(json.dumps(dict(torch=torch_after_warm_up, rows=rows, late=late, charts=len(at.get("plotly_chart")),
                      exception=[e.value for e in at.exception])))
"""


@pytest.mark.parametrize("served", [ROOT / "app.py", SERVER_APP], ids=["checkout", "installed"])
def test_streamlit_run_app_py_serves_the_script_through_the_app(served):
    """`streamlit run app.py` in a checkout and the file `informer-lab ui` serves: the same st.App."""
    found = discover_asgi_app(served)
    assert found.is_asgi_app and found.app_name == "app"
    app = runpy.run_path(str(served))["app"]  # the st.App itself: its script, its lifespan and the middleware

    from informer_lab.ui.access import AccessMiddleware

    assert Path(app.script_path) == SCRIPT and SCRIPT.is_file()
    assert app._user_lifespan is server.lifespan
    assert any(m.cls is AccessMiddleware for m in app._user_middleware)


def test_the_lifespan_starts_the_warm_up_without_waiting_for_it(monkeypatch):
    release = threading.Event()
    monkeypatch.setattr(server, "warm_up", lambda: release.wait(30))

    async def enter() -> list[str]:
        async with server.lifespan(None):  # would hang here if the lifespan waited for the warm-up
            return [t.name for t in threading.enumerate() if t.is_alive()]

    try:
        assert server.THREAD in asyncio.run(asyncio.wait_for(enter(), 10))
    finally:
        release.set()


def test_the_warm_up_leaves_the_first_run_nothing_to_import_and_the_sample_parsed(runs_dir):
    out = subprocess.run([sys.executable, "-c", WARM_THEN_RUN], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert not result["exception"] and result["charts"] == 1
    assert not result["torch"] and result["rows"] == 8760
    assert result["late"] == [], f"the first run imported these after the warm-up: {result['late']}"


def test_only_the_warm_up_threads_missing_context_warning_is_dropped():
    quiet = server._NoContextWarning()

    def record(thread: str, message: str) -> logging.LogRecord:
        made = logging.LogRecord("streamlit", logging.WARNING, __file__, 1, message, (), None)
        made.threadName = thread
        return made

    warning = "Thread 'x': missing ScriptRunContext! This warning can be ignored when running in bare mode."
    assert not quiet.filter(record(server.THREAD, warning))
    assert quiet.filter(record("ScriptRunner.scriptThread", warning))
    assert quiet.filter(record(server.THREAD, "another warning"))
