"""Real browser: files as people export them get in. A daylight-saving gap and empty cells are refused with a
message, training is off meanwhile, a repair lists every change, and the repaired data trains, forecasts and
downloads; every page opens by its URL on a fresh server."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.e2e.test_browser import (SLOW, VIEWPORT, browser, runs, screenshots, settle, shoot,  # noqa: F401 (fixtures)
                                    start_tiny_training, streamlit_server, visit)

PAGES = {"data-model": "Data & model", "forecast": "Forecast", "compare": "Compare", "head-masking": "Head masking",
         "sparsity": "Sparsity explorer", "pyramid": "Distilling pyramid", "ablation": "Ablation studies",
         "attribution": "Attribution", "qk-map": "Query/key map", "counterfactual": "Counterfactual editor",
         "patching": "Activation patching", "studies": "Studies"}


def _dst_gap_csv(path):
    """600 hours of local time across the 2021 spring change: 02:00 on 28 March does not exist."""
    stamps = pd.date_range("2021-03-10", periods=601, freq="h").delete(pd.date_range("2021-03-10", periods=601,
                                                                                     freq="h").get_loc("2021-03-28 02:00"))
    t = np.arange(len(stamps))
    table = pd.DataFrame({"Datum": stamps.strftime("%d.%m.%Y %H:%M"), "Temp": (10 + 5 * np.sin(t / 24 * 2 * np.pi)).round(2),
                          "Last": (100 + 20 * np.sin(t / 24 * 2 * np.pi + 1)).round(2)})
    table.to_csv(path, sep=";", decimal=",", index=False)
    return path


def _weekly_gaps_csv(path):
    """A weekly series with empty cells, as exported by a spreadsheet."""
    weeks = pd.date_range("2015-01-03", periods=300, freq="W-SAT")
    values = pd.Series(np.linspace(400, 420, 300).round(2)).astype(object)
    values[[5, 6, 40, 41, 42, 200]] = ""
    pd.DataFrame({"week": weeks.strftime("%Y-%m-%d"), "co2": values}).to_csv(path, index=False)
    return path


def _upload(page, path):
    page.get_by_text("Upload a CSV", exact=True).click()
    uploader = page.locator('[data-testid="stFileUploader"]').filter(has_text="CSV file")
    uploader.locator('input[type="file"]').set_input_files(str(path))
    settle(page)


@pytest.fixture(scope="module")
def server(runs, tmp_path_factory):
    with streamlit_server(runs, tmp_path_factory.mktemp("log") / "server.log") as url:
        yield url


def test_a_daylight_saving_gap_is_refused_repaired_trained_forecast_and_downloaded(browser, server, screenshots,
                                                                                 tmp_path):
    context, page = visit(browser, server, "Data & model")
    _upload(page, _dst_gap_csv(tmp_path / "last-sommerzeit.csv"))
    page.get_by_text("irregular spacing").first.wait_for(timeout=SLOW)
    assert "'28.03.2021 03:00'" in page.locator('[data-testid="stAlert"]').first.inner_text()
    assert page.get_by_role("button", name="Train", exact=True).is_disabled()
    shoot(page, screenshots, "8a-refused")

    page.get_by_role("button", name="Repair: interpolate").click()
    page.get_by_text("Repair report: 3 changes").wait_for(timeout=SLOW)  # a row added, its two cells filled
    settle(page)
    assert page.get_by_text("1 × row added (gap in the grid): 2021-03-28 02:00").count() == 1
    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name="Download the repair report (CSV)").click()
    assert info.value.suggested_filename == "repair-report-last-sommerzeit.csv"
    assert "2021-03-28 02:00:00" in pd.read_csv(info.value.path())["timestamp"].tolist()
    assert not page.get_by_role("button", name="Train", exact=True).is_disabled()
    shoot(page, screenshots, "8b-repaired")

    start_tiny_training(page, "e2e-repaired")
    page.get_by_text("It is now the active model.").wait_for(timeout=300_000)
    settle(page)

    page.get_by_role("link", name="Forecast").click()
    page.get_by_role("heading", name="Forecast", level=1).wait_for(timeout=SLOW)
    page.locator(".js-plotly-plot").first.wait_for(state="visible", timeout=SLOW)
    settle(page)
    assert page.get_by_text("Is it better than naive?").count() == 1
    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name="Download forecast (CSV)").click()
    assert info.value.suggested_filename == "forecast-e2e-repaired-last-sommerzeit.csv"
    forecast = pd.read_csv(info.value.path())
    assert list(forecast.columns) == ["Datum", "Temp", "Last"] and len(forecast) == 12
    assert forecast["Datum"].iloc[0] == "2021-04-04 01:00:00"  # the hour after the file's last row (04-04 00:00)
    shoot(page, screenshots, "8c-forecast-repaired")
    context.close()


def test_empty_cells_are_refused_then_filled_forward(browser, server, tmp_path):
    context, page = visit(browser, server, "Data & model")
    _upload(page, _weekly_gaps_csv(tmp_path / "co2.csv"))
    page.get_by_text("missing values: 6 in 'co2'").wait_for(timeout=SLOW)
    page.get_by_role("button", name="Repair: carry values forward").click()
    page.get_by_text("Repair report: 6 changes").wait_for(timeout=SLOW)
    settle(page)
    assert page.get_by_text("weekly (Saturdays)").count() >= 1
    assert "co2.csv" in page.locator('[data-testid="stSidebar"]').inner_text()
    context.close()


def _opens_by_its_url(browser, url: str, path: str, title: str, *, whole: bool = True) -> None:
    """The page's own heading, no "Page not found" (a dialog over the app, which then runs the first page) and no
    traceback. whole=False: taken once the heading is drawn, not after the page's whole first run — what a page
    computes in a fresh session its AppTest runs (tests/ui/<screen>/test_page.py); here only the routing is new."""
    context = browser.new_context(viewport=VIEWPORT)  # a session of its own: nothing opened before in it
    page = context.new_page()
    page.goto(f"{url}/{path}")
    page.get_by_role("heading", name=title, level=1).wait_for(timeout=SLOW)
    if whole:
        settle(page)
    else:
        page.wait_for_timeout(500)  # a dialog shown with the first page's heading has come by then
    text = page.locator("body").inner_text()
    assert "Page not found" not in text and "Traceback" not in text and not page.get_by_role("dialog").count()
    context.close()


@pytest.mark.parametrize("path, title", sorted(PAGES.items()))
def test_every_page_opens_by_its_url_in_a_new_session(browser, server, path, title):
    _opens_by_its_url(browser, server, path, title, whole=False)


# A server that has run no script yet knows its pages only once the entry script has run: the first request being a
# page's own URL is the case that once answered "Page not found". Two pages of different depth stand for all (the
# routing is the same for every page); each server start costs a worker about 20 s.
@pytest.mark.parametrize("path, title", [("forecast", "Forecast"), ("studies", "Studies")])
def test_a_page_opens_by_its_url_on_a_fresh_server(browser, runs, tmp_path, path, title):
    with streamlit_server(runs, tmp_path / "server.log") as url:
        _opens_by_its_url(browser, url, path, title)
