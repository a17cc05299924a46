"""First start: with no model in the runs directory the app installs the shipped sample model at once."""
from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

import informer_lab.ui.cache  # noqa: F401  the model stack loaded, as in a server past its first run (test_cold_path)
from tests.ui.conftest import APP
from tests.ui.helpers import MASK_PAGE, sidebar_text, table
from informer_lab.ui import settings


def test_first_start_installs_the_shipped_sample_model_and_every_page_works(tmp_path, monkeypatch):
    runs = tmp_path / "empty-runs"
    monkeypatch.setenv("INFORMER_LAB_RUNS", str(runs))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception
    assert "`sample` (runs/)" in sidebar_text(at) and "none yet" not in sidebar_text(at)
    shipped = json.loads((settings.SAMPLE_CHECKPOINT / "manifest.json").read_text())
    assert json.loads((runs / "sample" / "manifest.json").read_text()) == shipped
    assert not [p for p in runs.iterdir() if p.name.startswith(".")]  # no leftovers of the copy
    at.switch_page(MASK_PAGE).run()
    assert not at.exception and len(table(at)) == 24  # the shipped recipe: pred_len 24


def test_a_folder_of_the_users_own_named_sample_is_left_alone(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    (runs / "sample").mkdir(parents=True)
    (runs / "sample" / "notes.txt").write_text("mine")
    monkeypatch.setenv("INFORMER_LAB_RUNS", str(runs))
    assert settings.install_sample() is None
    assert sorted(p.name for p in (runs / "sample").iterdir()) == ["notes.txt"]
