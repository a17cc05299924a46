"""Real browser, Ablation page: run a small single-head sweep and see its heatmap.

Same server, browser and screenshot folder as `test_browser.py` (its fixtures and helpers are reused; Debian's
Chromium, never `playwright install`). The screenshot is `4-ablation-sweep.png`.
"""
from __future__ import annotations

from tests.e2e.test_browser import (SLOW, VIEWPORT, browser, download, runs, screenshots,  # noqa: F401 (fixtures)
                                    server, settle, shoot)

SITES = ["encoder.0.0", "encoder.0.1", "decoder_self.0", "cross.0"]


def test_single_head_sweep_heatmap(browser, server, screenshots):  # noqa: F811 (fixtures)
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    page = context.new_page()
    page.goto(f"{server}/ablation")
    page.get_by_role("heading", name="Ablation studies", level=1).wait_for(timeout=SLOW)
    settle(page)
    assert page.get_by_role("tab", name="Single-head sweep").get_attribute("aria-selected") == "true"
    assert page.locator(".js-plotly-plot").count() == 0  # nothing runs before a Run button is pressed

    few = page.get_by_role("radio", name="32", exact=True)
    page.locator("label").filter(has=few).click()
    settle(page)
    assert few.is_checked()
    page.get_by_text("32 of 1,741", exact=True).wait_for(timeout=SLOW)

    page.get_by_role("button", name="Run single-head sweep").click()
    panel = page.get_by_role("tabpanel", name="Single-head sweep")
    heatmap = panel.locator(".js-plotly-plot").first
    heatmap.wait_for(state="visible", timeout=SLOW)
    page.get_by_text("Most harmful removal").wait_for(timeout=SLOW)
    settle(page)

    # the heatmap: one row per site in gate order, one column per head, each cell's value written in it
    assert heatmap.locator(".hm").count() == 1
    ticks = heatmap.locator(".ytick text").all()
    assert [t.text_content() for t in sorted(ticks, key=lambda t: t.bounding_box()["y"])] == SITES  # top to bottom
    assert heatmap.locator(".xtick text").all_text_contents() == ["h0", "h1", "h2", "h3"]
    table = download(page, "Download table (CSV)")
    assert len(table) == 17 and table["site"].iloc[0] == "baseline" and (table["windows"] == 32).all()
    written = heatmap.locator("text").all_text_contents()
    for value in table["delta_mse"].iloc[1:]:
        assert f"{value:+.3g}" in written
    shoot(page, screenshots, "4-ablation-sweep")
    context.close()
