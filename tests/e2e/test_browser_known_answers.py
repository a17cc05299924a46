"""Real browser: the Known answers flow: generate a series with a planted answer on the Data page, train on it,
run the self-test and the attention baselines on the Known answers screen, the model-vs-baselines banner above."""
from __future__ import annotations

import re

import pandas as pd
import pytest

from tests.e2e.test_browser import (SLOW, browser, open_page, runs, screenshots, settle, shoot,  # noqa: F401
                                    start_tiny_training, streamlit_server, visit)


@pytest.fixture(scope="module")
def server(runs, tmp_path_factory):
    with streamlit_server(runs, tmp_path_factory.mktemp("log") / "server.log") as url:
        yield url


def _fill(page, role: str, label: str, value) -> None:
    field = page.get_by_role(role, name=label, exact=True)
    field.fill(str(value))
    field.press("Tab")


def test_generate_train_and_test_the_instruments_against_the_planted_answer(browser, server, screenshots):
    context, page = visit(browser, server, "Data & model")
    page.locator("label").filter(has_text="Known answer (generated)").click()
    settle(page)
    _fill(page, "spinbutton", "Rows", 3000)
    _fill(page, "textbox", "Seasonal lags", 12)
    page.get_by_role("button", name="Generate").click()
    settle(page)
    app = page.locator('[data-testid="stApp"]')
    page.get_by_text("Planted:").wait_for(timeout=SLOW)
    assert "y at lag 12" in app.inner_text() and "3,000" in app.inner_text()
    shoot(page, screenshots, "known-answer-source")

    start_tiny_training(page, "planted")
    page.get_by_text("It is now the active model").wait_for(timeout=SLOW)
    settle(page)

    more = page.get_by_text("View 3 more")  # the navigation shows its first pages; the rest behind this
    if more.count():
        more.first.click()
    open_page(page, "Known answers")
    page.get_by_text("Planted:").wait_for(timeout=SLOW)
    # the banner, once checked: 3 steps learn nothing (worse than the baselines, or no interval to say so)
    page.get_by_text(re.compile(r"This model is (worse than|not measured against|no better than)")).first.wait_for(
        timeout=SLOW)
    _fill(page, "spinbutton", "IG windows", 2)
    page.get_by_role("button", name="Run the self-test").click()
    page.get_by_text("FAIL: the model has not learned").wait_for(timeout=SLOW)  # 3 steps learn nothing: it says so
    settle(page)
    with page.expect_download(timeout=60_000) as info:  # the table as drawn (a canvas grid: read its download)
        page.get_by_role("button", name="Download table (CSV)").first.click()
    table = pd.read_csv(info.value.path())
    assert list(table["check"])[:2] == ["learned", "ig_top"] and "topu_events" in set(table["check"])
    assert table.set_index("check").loc["learned", "result"] == "FAIL"
    shoot(page, screenshots, "known-answers-selftest")

    _fill(page, "spinbutton", "Windows", 16)
    _fill(page, "spinbutton", "Permutation draws", 2)
    _fill(page, "spinbutton", "Other key samples", 1)
    page.get_by_role("button", name="Run the baselines").click()
    # 16 windows of 36 rows that overlap are a handful of independent stretches: no interval, and the page says so
    page.get_by_text("No evidence either way").wait_for(timeout=SLOW)
    settle(page)
    page.locator(".js-plotly-plot .scatterlayer .trace").first.wait_for(timeout=SLOW)
    shoot(page, screenshots, "known-answers-baselines")
    context.close()
