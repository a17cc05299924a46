"""AppTest fixtures: a temporary runs directory holding the tiny trained model as `sample`."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from informer_lab.source import PACKAGE

ROOT = Path(__file__).resolve().parents[2]
APP = PACKAGE / "lab.py"  # the script every tab runs (app.py is the server around it)


@pytest.fixture
def runs_dir(tiny_trained, tmp_path, monkeypatch) -> Path:
    """<tmp>/runs/sample = the tiny model (seq 48 / label 24 / pred 12, 4 columns, 4 heads)."""
    runs = tmp_path / "runs"
    shutil.copytree(tiny_trained[2], runs / "sample")
    monkeypatch.setenv("INFORMER_LAB_RUNS", str(runs))
    monkeypatch.delenv("INFORMER_LAB_QUICK_TRAIN", raising=False)
    return runs


@pytest.fixture
def with_second(runs_dir, tiny_second) -> str:
    """<tmp>/runs/other = a second tiny model (seed 1, seq_len 36) beside `sample`; its name."""
    shutil.copytree(tiny_second[1], runs_dir / "other")
    return "other"


@pytest.fixture(autouse=True)
def pages_named_from_the_checkout(monkeypatch):
    """Tests name a page as it sits in the checkout ("ui/runs/page.py"); AppTest takes a path relative to the main
    script, which now lives in the package (informer_lab/lab.py)."""
    import os

    from streamlit.testing.v1 import AppTest

    switch = AppTest.switch_page

    def switch_page(self, page_path: str):
        if not (APP.parent / page_path).is_file() and (ROOT / page_path).is_file():
            page_path = os.path.relpath(ROOT / page_path, APP.parent)
        return switch(self, page_path)

    monkeypatch.setattr(AppTest, "switch_page", switch_page)


@pytest.fixture
def open_app(runs_dir):
    """open_app(page=None) → an AppTest that has run the app (and switched to `page`)."""
    from streamlit.testing.v1 import AppTest

    import informer_lab.ui.cache  # noqa: F401  the model stack loaded, as in a server past its first run (test_cold_path)

    def make(page: str | None = None):
        at = AppTest.from_file(str(APP), default_timeout=60).run()
        assert not at.exception, at.exception
        if page is not None:
            at.switch_page(page).run()
            assert not at.exception, at.exception
        return at

    return make


@pytest.fixture(scope="session", autouse=True)
def background_checks_finish():
    """At the end of the session, wait for the model checks the pages started in background threads: a thread still
    running torch when the interpreter exits aborts it (exit code 134), whatever the tests said."""
    yield
    import sys

    model_check = sys.modules.get("informer_lab.ui.model_check")
    if model_check is not None:
        for job in list(model_check._JOBS._values.values()):
            job.wait(300)
