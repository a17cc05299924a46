"""First start: with no model in the runs directory the app trains the (quick) sample model itself."""
from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest

import ui.cache  # noqa: F401  the model stack loaded, as in a server past its first run (test_cold_path)
from tests.ui.conftest import APP
from tests.ui.helpers import MASK_PAGE, sidebar_text, table


def test_first_start_trains_the_quick_sample_model(tmp_path, monkeypatch):
    runs = tmp_path / "empty-runs"
    monkeypatch.setenv("INFORMER_LAB_RUNS", str(runs))
    monkeypatch.setenv("INFORMER_LAB_QUICK_TRAIN", "1")
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception
    assert "First start" in sidebar_text(at) and "Model:** none yet" in sidebar_text(at)
    at.switch_page(MASK_PAGE).run()
    assert not at.exception
    assert "No model yet" in at.info[0].value
    assert "First start" in sidebar_text(at)  # a page that stops early keeps its sidebar
    manifest = runs / "sample" / "manifest.json"
    deadline = time.monotonic() + 180
    while not manifest.is_file() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert manifest.is_file(), "the first-start training did not write runs/sample"
    at.run()
    assert not at.exception
    assert "`sample` (runs/)" in sidebar_text(at) and "First start" not in sidebar_text(at)
    assert len(table(at)) == 12  # quick recipe: pred_len 12
