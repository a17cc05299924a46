"""Real browser: a long ("tidy") table gets in. Its series are found by their id column, aligned on the span they
share, and offered in a picker with each series' length and span; picking series re-reads the file (one series:
its own columns; several: <series>.<column>), and the id with a comma, quotes and non-ASCII letters is shown as it is."""
from __future__ import annotations

import pytest

from tests.corpus.long_tables import TRICKY, csv_of, long_frame
from tests.e2e.test_browser import (SLOW, browser, runs, screenshots, settle, shoot,  # noqa: F401 (fixtures)
                                    streamlit_server, visit)


@pytest.fixture(scope="module")
def server(runs, tmp_path_factory):
    with streamlit_server(runs, tmp_path_factory.mktemp("log") / "server.log") as url:
        yield url


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_the_series_picker_reads_the_series_picked(browser, server, screenshots, tmp_path):
    path = tmp_path / "stocks.csv"
    path.write_bytes(csv_of(long_frame()))
    context, page = visit(browser, server, "Data & model")
    page.get_by_text("Upload a CSV", exact=True).click()
    settle(page)
    uploader = page.locator('[data-testid="stFileUploader"]').filter(has_text="CSV file")
    uploader.locator('input[type="file"]').set_input_files(str(path))
    settle(page)
    picker = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Series")
    picker.wait_for(timeout=SLOW)
    assert _metric(page, "Numeric columns") == "6" and _metric(page, "Rows") == "35"
    assert "cut to the span they share" in page.locator("body").inner_text()
    shoot(page, screenshots, "series-1-all")
    picker.click()
    options = page.get_by_role("option")
    options.first.wait_for(timeout=SLOW)
    labels = [options.nth(i).inner_text() for i in range(options.count())]
    assert any(label.startswith("AAPL · 60 rows · 2021-01-01 → 2021-03-01") for label in labels), labels
    assert any(label.startswith(f"{TRICKY} · 40 rows") for label in labels), labels
    shoot(page, screenshots, "series-2-picker-open")
    page.get_by_role("option", name=f"{TRICKY} · 40 rows · 2021-01-06 → 2021-02-14").click()
    page.keyboard.press("Escape")
    settle(page)
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=\"stMetricValue\"]')]"
                           ".some(e => e.innerText.trim() === '40')", timeout=SLOW)
    assert _metric(page, "Rows") == "40" and _metric(page, "Numeric columns") == "2"
    body = page.locator("body").inner_text()
    assert "1 series of 3 read" in body and "active data: stocks.csv" in body
    shoot(page, screenshots, "series-3-one-picked")
    context.close()
