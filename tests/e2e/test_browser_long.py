"""A long-input model in a real browser: every screen opened and put through its main interactions, nothing raises.

Branches only long inputs reach (a query/key map past its drawing limit, Compare's first 512 windows, thousands of
windows behind a date field, the Forecast's test split behind its button) run here on every CI run: a seeded,
untrained Informer with seq_len 1440 (the shape: d_model 32, 4 heads, 3 encoder layers; training is not what is
tested) on a generated 15-minute series, uploaded through the Data & model page. The walk is tests/e2e/walk.py, the
one benchmarks/reslice.py times; its timings are printed (`-s`), not asserted (a busy CI machine would fail them).
Debian's /usr/bin/chromium, as the other browser tests.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.e2e.test_browser import VIEWPORT, browser, screenshots, shoot, streamlit_server  # noqa: F401 (fixtures)
from tests.e2e.walk import SCREENS, SLOW, Walk, untrained_model, upload

SEQ_LEN = 1440
# The screens in three walks, one test each (a failure names its walk), in one tab on one server: the model is built,
# the server started and the 6,000-row file uploaded once for the three (about 20 s each on a busy two-core machine).
# Each walk starts on Data & model, where the uploaded file is still the tab's data.
GROUPS = {"inputs-and-forecast": ("data", "forecast", "compare", "masking", "sparsity"),
          "anatomy-and-features": ("data", "pyramid", "anatomy", "features", "ablation", "attribution"),
          "instruments": ("data", "patching", "counterfactual", "qk_map", "circuits", "variants", "studies")}
pytestmark = pytest.mark.xdist_group("long-walk")  # one pytest-xdist worker: the three share the module's tab


def long_series(path, rows: int = 6_000, seed: int = 0):
    """15-minute readings of three columns: a daily and a weekly season, a drift, noise (seeded)."""
    rng = np.random.default_rng(seed)
    t = np.arange(rows)
    day, week = 2 * np.pi * t / 96, 2 * np.pi * t / (96 * 7)
    frame = pd.DataFrame({
        "date": pd.date_range("2023-03-01", periods=rows, freq="15min").strftime("%Y-%m-%d %H:%M:%S"),
        "load": 50 + 10 * np.sin(day) + 4 * np.sin(week) + 0.001 * t + rng.normal(0, 1, rows),
        "temperature": 12 + 6 * np.sin(day - 1.0) + rng.normal(0, 0.5, rows),
        "price": 30 + 5 * np.sin(week + 0.3) + rng.normal(0, 2, rows)})
    frame.to_csv(path, index=False)
    return path


def test_the_walks_cover_every_screen():
    assert sorted({name for group in GROUPS.values() for name in group}) == sorted(SCREENS)


@pytest.fixture(scope="module")
def long_tab(browser, tmp_path_factory):  # noqa: F811 (fixture)
    """(page, server log): a tab on a fresh server with the long series uploaded; the server ends with the module."""
    folder = tmp_path_factory.mktemp("long")
    csv = long_series(folder / "long.csv")
    untrained_model(csv, folder / "runs" / "sample", SEQ_LEN, target="load")
    log = folder / "server.log"
    with streamlit_server(folder / "runs", log) as url:
        page = browser.new_page(viewport=VIEWPORT)
        try:
            page.goto(url)
            page.get_by_role("heading", name="Data & model", level=1).wait_for(timeout=SLOW)
            page.get_by_text("Device:").first.wait_for(timeout=SLOW)
            upload(page, csv)
            yield page, log
        finally:
            page.close()


@pytest.mark.parametrize("group", list(GROUPS))
def test_every_screen_of_a_seq_len_1440_model_works(group, long_tab, screenshots):  # noqa: F811 (fixtures)
    page, log = long_tab
    seen = len(log.read_text())  # the server's log before this walk: a traceback after it is this walk's
    walk = Walk(page, log=lambda line: print(f"  {line}"))
    for name in GROUPS[group]:
        try:
            SCREENS[name](walk)  # raises ScreenError naming the screen, the action and the message
        except Exception:
            shoot(page, screenshots, f"long-{group}-failed-at-{name}")  # what the page showed when it failed
            raise
        if name in ("qk_map", "pyramid", "compare", "variants", "features"):
            shoot(page, screenshots, f"long-{name}")
    text = log.read_text()[seen:]
    assert "Traceback" not in text, text[-3000:]
    slowest = max(walk.times, key=lambda t: t.seconds)
    print(f"\nlong_input_walk_seconds: {sum(t.seconds for t in walk.times):.1f} over {len(walk.times)} actions; "
          f"slowest {slowest.screen}, {slowest.action}: {slowest.seconds:.2f} s")
