"""Real browser: the instruments draw (the query/key map in WebGL, a counterfactual edit that moves the
forecast), a second model side by side, and any screen downloads as a report that draws offline."""
from __future__ import annotations

import shutil

import pytest

from tests.e2e.test_browser import (SLOW, browser, runs, screenshots, settle, shoot,  # noqa: F401 (fixtures)
                                    streamlit_server, visit)


@pytest.fixture(scope="module")
def server(runs, tmp_path_factory):
    shutil.copytree(runs / "sample", runs / "twin-copy", dirs_exist_ok=True)  # a second model to put beside it
    with streamlit_server(runs, tmp_path_factory.mktemp("log") / "server.log") as url:
        yield url


def _choose(page, label: str, option: str) -> None:
    page.get_by_role("combobox", name=label).click()
    page.get_by_role("option", name=option).click()
    settle(page)


def test_the_query_key_map_draws_tens_of_thousands_of_points_in_webgl(browser, server, screenshots):
    context, page = visit(browser, f"{server}/qk-map", "Query/key map")
    page.locator(".js-plotly-plot .gl-container canvas").first.wait_for(timeout=SLOW)
    assert "12,288 queries and 12,288 keys" in page.locator('[data-testid="stApp"]').inner_text()
    shoot(page, screenshots, "qk-map")
    context.close()


def test_a_spike_moves_the_forecast_and_the_screen_downloads_as_an_offline_report(browser, server, screenshots,
                                                                                tmp_path):
    context, page = visit(browser, f"{server}/counterfactual", "Counterfactual editor")
    _choose(page, "Edit", "a spike at t")
    metric = page.locator('[data-testid="stMetric"]').filter(has_text="Input cells changed")
    assert metric.inner_text().strip().endswith("1")
    moved = page.locator('[data-testid="stMetric"]').filter(has_text="Max |forecast change|").inner_text()
    assert float(moved.split("\n")[-1]) > 0
    shoot(page, screenshots, "counterfactual-spike")
    with page.expect_download() as done:
        page.get_by_role("button", name="Download this screen as a report").click()
    report = tmp_path / "screen.html"
    done.value.save_as(report)
    figures = report.read_text().count("Plotly.newPlot(")
    assert figures >= 3
    offline = context.new_page()
    leaks = []
    offline.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                  else (leaks.append(route.request.url), route.abort()))
    offline.goto(report.as_uri())
    offline.wait_for_function(f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {figures}",
                              timeout=60_000)
    assert not leaks
    context.close()


def test_a_second_model_side_by_side_on_the_forecast(browser, server, screenshots):
    context, page = visit(browser, f"{server}/forecast", "Forecast")
    _choose(page, "Side by side with", "twin-copy")
    page.get_by_role("heading", name="Side by side with twin-copy").wait_for(timeout=SLOW)
    text = page.locator('[data-testid="stApp"]').inner_text()
    assert "twin-copy against sample" in text and "not distinguishable from sample" in text  # the same weights
    shoot(page, screenshots, "forecast-side-by-side")
    context.close()
