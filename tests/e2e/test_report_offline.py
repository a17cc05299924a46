"""The HTML report opened offline in Debian's Chromium (Playwright; never `playwright install`; without
/usr/bin/chromium the test is skipped, unless CI is set): from a file:// URL, with every request that is not a
file:// one aborted and recorded, every figure is drawn, nothing reaches the network and the console has no error."""
from __future__ import annotations

import plotly.graph_objects as go

from informer_lab.analysis.reports.report import Report, ReportSection, checkpoint_report, write_report
from tests.e2e.test_browser import VIEWPORT, browser  # noqa: F401 (fixture)

LOCAL = ("file:", "data:", "blob:", "about:")
SLOW = 60_000  # ms


def open_offline(browser, path):  # noqa: F811 (the fixture's name)
    """The report in a fresh page with the network cut: (page, requests that were not local, console errors)."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    blocked, errors = [], []

    def route(r):
        if r.request.url.startswith(LOCAL):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("request", lambda request: None if request.url.startswith(LOCAL) else blocked.append(request.url))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.resolve().as_uri(), wait_until="load", timeout=SLOW)
    return context, page, blocked, errors


def test_the_report_draws_every_figure_offline_without_a_request(browser, tiny_trained, sample_frame,  # noqa: F811
                                                                 tmp_path):
    checkpoint, _, folder = tiny_trained
    report = checkpoint_report(checkpoint, sample_frame, max_windows=130, folder=folder)
    extra = go.Figure([go.Scatter(x=[1, 2, 3], y=[3, 1, 2], name="<b>drawn elsewhere</b>")],
                      {"title": {"text": "a screen's own figure $x^2$"}})  # math-like text: no MathJax fetched
    report = Report(report.title, [*report.sections, ReportSection("From a screen", figures=[extra])],
                    report.provenance)
    path = write_report(report, tmp_path / "report.html")
    context, page, blocked, errors = open_offline(browser, path)
    try:
        n = report.figure_count
        page.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {n}",
                               timeout=SLOW)
        page.wait_for_timeout(500)  # anything a figure would fetch after drawing has had its chance
        drawn = page.evaluate("""() => Array.from(document.querySelectorAll('div.figure')).map(div =>
            [div.classList.contains('js-plotly-plot'), div.querySelectorAll('.main-svg').length,
             div.querySelectorAll('.cartesianlayer .trace, .cartesianlayer .hm image').length])""")
        # the verdict, errors, single-head ablation, sparsity, pyramid, rollout and lens figures, and the screen's own
        assert len(drawn) == n == page.locator(".js-plotly-plot").count() == 8
        assert all(plot and svgs >= 1 and traces >= 1 for plot, svgs, traces in drawn), drawn
        assert blocked == [], f"requests that would reach the network: {blocked}"
        assert errors == [], errors
    finally:
        context.close()
