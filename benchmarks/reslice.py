"""Re-slicing in a real browser: the sparsity explorer's grid clicks, tabs and score choice, click → finished rerun.

    python benchmarks/reslice.py --checkpoint runs/sample                       # 3 rounds × 6 clicks
    python benchmarks/reslice.py --checkpoint runs/sample --rounds 3 --against /tmp/old-checkout

Each round starts a fresh server for every contestant in turn (this checkout's app.py, then each --against
checkout's, named after its folder), opens the Sparsity explorer, lets it settle, and clicks six grid cells that
switch site and head. Each click is timed like tests/e2e/test_browser_analyses.py's `reslice`: from the click to
the finished rerun showing the new head's heading. Then it opens each detail tab and switches the score per query
twice, each timed from the click to the finished rerun showing what it asked for. All of these only re-slice
the cached sparsity report.

The machine's speed drifts, so compare contestants within a round. Needs Debian's /usr/bin/chromium and the
playwright package (requirements-dev.txt). Last line: `reslice_seconds_max: <x>` (the bar is 1 s for every click).
"""
from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.browser_rounds import parse_args  # noqa: E402
from tests.e2e.test_browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, settle, streamlit_server  # noqa: E402
from tests.e2e.test_browser_analyses import reslice, wait_for_charts  # noqa: E402

GRID_TITLE = "Mean row entropy"
CELLS = [(1, 0), (3, 1), (0, 0), (2, 2), (1, 1), (0, 1)]  # (head, site row), taken modulo the grid's size

# (tab, text the tab shows once drawn); (score option, its heatmap's title starts)
TABS = [("Attention rows", "Lazy queries"), ("Exact vs sampled", "Top-u agreement at"),
        ("Every head", "dominant lag"), ("Scores and selected queries", "Selected queries of this head")]
SCORES = [("exact M (log-sum-exp − mean)", "exact M per query"), ("sampled M̄ (as ProbSparse ranked them)",
                                                                  "sampled M̄ per query")]
IDLE_AND = """(want) => {
  const app = document.querySelector('[data-testid="stApp"]');
  return app && app.dataset.testScriptState === 'notRunning' && (%s);
}"""
TAB_DRAWN = IDLE_AND % ("document.querySelector('[role=tab][aria-selected=true]').innerText.includes(want[0]) && "
                        "document.querySelector('[data-testid=\"stMain\"]').innerText.includes(want[1])")
SCORE_DRAWN = IDLE_AND % ("Array.from(document.querySelectorAll('.js-plotly-plot'))"
                          ".some(g => g._fullLayout && (g._fullLayout.title.text || '').includes(want))")

GRID_TICKS_JS = """(title) => {
  const gd = Array.from(document.querySelectorAll('.js-plotly-plot'))
    .find(g => g._fullLayout && (g._fullLayout.title.text || '').includes(title));
  return [gd._fullLayout.xaxis.ticktext.length, gd._fullLayout.yaxis.ticktext];
}"""


def timed(page, click, done_js: str, want) -> float:
    page.wait_for_timeout(700)
    started = time.perf_counter()
    click()
    page.wait_for_function(done_js, arg=want, timeout=60_000, polling=20)
    return time.perf_counter() - started


def click_times(browser, runs: Path, log_path: Path, app: Path) -> dict[str, list[float]]:
    """A fresh server for `app`; the sparsity explorer; seconds from each click to its finished rerun."""
    with streamlit_server(runs, log_path, app) as url:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{url}/sparsity")
        page.get_by_role("heading", name="Sparsity explorer", level=1).wait_for(timeout=300_000)
        wait_for_charts(page, 3)
        settle(page)
        page.wait_for_timeout(1500)
        n_heads, sites = page.evaluate(GRID_TICKS_JS, GRID_TITLE)
        seconds: dict[str, list[float]] = {"grid": [], "tabs": [], "score": []}
        for head, row in CELLS:
            head, row = head % n_heads, row % len(sites)
            seconds["grid"].append(reslice(page, GRID_TITLE, head, row, f"{sites[row]} · head {head}"))
        for tab, shows in TABS:
            seconds["tabs"].append(timed(page, page.get_by_role("tab", name=tab).click, TAB_DRAWN, [tab, shows]))
        for option, title in SCORES:
            label = page.locator("label").filter(has=page.get_by_role("radio", name=option))
            seconds["score"].append(timed(page, label.click, SCORE_DRAWN, title))
        page.close()
    return seconds


def main() -> None:
    args, others = parse_args(__doc__.splitlines()[0], default_rounds=3, reserved=("app",))
    from playwright.sync_api import sync_playwright

    contestants = {"app": ROOT / "app.py", **others}
    times: dict[str, list[dict[str, list[float]]]] = {name: [] for name in contestants}
    with tempfile.TemporaryDirectory() as tmp_name, sync_playwright() as p:
        tmp = Path(tmp_name)
        runs = tmp / "runs"
        shutil.copytree(args.checkpoint, runs / "sample")
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for r in range(args.rounds):
            for name, app in contestants.items():
                times[name].append(click_times(browser, runs, tmp / f"{name}.log", app))
                print(f"round {r + 1} {name:10s} " + " | ".join(
                    f"{kind} " + " ".join(f"{t:.2f}" for t in values) for kind, values in times[name][-1].items()),
                    flush=True)
        browser.close()

    print()
    for name, rounds in times.items():
        for kind in rounds[0]:
            every = [t for clicks in rounds for t in clicks[kind]]
            print(f"{name:10s} {kind:5s} {len(every):2d} clicks: median {statistics.median(every):.2f} s, "
                  f"max {max(every):.2f} s, over 1 s: {sum(t > 1 for t in every)}")
    for name in others:
        gain = [statistics.median(b["grid"]) - statistics.median(a["grid"]) for a, b in zip(times["app"], times[name])]
        print(f"{name} − app, grid clicks, per round (medians): {' '.join(f'{g:+.2f}' for g in gain)} s; app faster "
              f"in {sum(g > 0 for g in gain)}/{len(gain)} rounds")
    print(f"reslice_seconds_max: {max(t for clicks in times['app'] for ts in clicks.values() for t in ts):.2f}")


if __name__ == "__main__":
    main()
