"""The Data & model page plots the data before torch loads (cold start): its first half imports no torch.

Checked in a fresh interpreter, since this test process has torch loaded already. If someone adds a
module-level torch import to the data half, the browser waits for torch (2–3 s here) before the first chart.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What app.py and the data half of ui/pages/data_model.py import before the page's first chart.
COLD_PATH = ["analysis.data", "analysis.errors", "ui.nav", "ui.frames", "ui.state", "ui.settings", "ui.tables",
             "ui.charts", "ui.widgets"]


def _loads_torch(modules: list[str]) -> bool:
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + "print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1] == "True"


def test_the_data_half_of_the_app_does_not_import_torch():
    assert not _loads_torch(COLD_PATH)


def test_the_check_can_fail():
    assert _loads_torch(COLD_PATH + ["ui.cache"])  # the model half does load torch


def test_the_page_imports_the_model_half_only_after_its_chart():
    page = (ROOT / "ui" / "pages" / "data_model.py").read_text()
    chart = page.index('widgets.chart(charts.series_figure(')
    for heavy in ("from ui import cache", "from ui.jobs import", "from analysis.training import",
                  "from analysis.workflow import"):
        assert page.index(heavy) > chart, heavy
    app = (ROOT / "app.py").read_text()
    assert app.index("page.run()") < app.index("from ui import sidebar")
