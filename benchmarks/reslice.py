"""Re-slicing in a real browser: every control that only re-slices recorded data, click → finished rerun.

    python benchmarks/reslice.py --checkpoint runs/sample                       # 3 rounds, every page
    python benchmarks/reslice.py --checkpoint runs/sample --pages pyramid compare
    python benchmarks/reslice.py --checkpoint runs/sample --rounds 3 --against /tmp/old-checkout

Each round starts a fresh server for every contestant in turn (this checkout's app.py, then each --against
checkout's, named after its folder) and walks the pages in one browser tab, through the sidebar:

- sparsity: six grid clicks that switch site and head (timed like tests/e2e/test_browser_analyses.py's
  `reslice`: click → finished rerun showing the new head's heading), the four detail tabs, two score choices;
- data: open the column summary (twice; closing it does not rerun);
- forecast: the plotted column, the history shown;
- masking: the plotted column (the forecast of the window is cached after its first draw);
- pyramid: the position, the attention rows' head and layer;
- compare (after one "Run comparison", not timed: it forecasts the whole split): metric, scale, window, column;
- ablation (after one single-head sweep on 32 windows, not timed): the sweep's head, and the ablation mode to
  a setting not run and back to the finished sweep.

Every one of these only re-slices a cached result. Each is timed from the action (the option chosen, the key
pressed, the click) to the end of the rerun it started, with what it asked for on screen, plus two animation
frames. The machine's speed drifts, so compare contestants within a round. Needs Debian's /usr/bin/chromium
and the playwright package (requirements-dev.txt). Last line: `reslice_seconds_max: <x>` (the bar is 1 s).
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
from tests.e2e.test_browser import open_page as switch_page  # noqa: E402
from tests.e2e.test_browser_analyses import SLOW, reslice, wait_for_charts  # noqa: E402

GRID_TITLE = "Mean row entropy"
CELLS = [(1, 0), (3, 1), (0, 0), (2, 2), (1, 1), (0, 1)]  # (head, site row), taken modulo the grid's size

# (tab, text the tab shows once drawn); (score option, its heatmap's title starts)
TABS = [("Attention rows", "Lazy queries"), ("Exact vs sampled", "Top-u agreement at"),
        ("Every head", "dominant lag"), ("Scores and selected queries", "Selected queries of this head")]
SCORES = [("exact M (log-sum-exp − mean)", "exact M per query"), ("sampled M̄ (as ProbSparse ranked them)",
                                                                  "sampled M̄ per query")]
GRID_TICKS_JS = """(title) => {
  const gd = Array.from(document.querySelectorAll('.js-plotly-plot'))
    .find(g => g._fullLayout && (g._fullLayout.title.text || '').includes(title));
  return [gd._fullLayout.xaxis.ticktext.length, gd._fullLayout.yaxis.ticktext];
}"""

# Before an action (the app idle): watch the app's script state, so that "finished" means the rerun this action
# started (any change of state, then idle again), not the idle state before it.
ARM_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  window.__reslice = {ran: false};
  if (window.__resliceObserver) window.__resliceObserver.disconnect();
  window.__resliceObserver = new MutationObserver(() => { window.__reslice.ran = true; });  // it was idle
  window.__resliceObserver.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""
# After it: that rerun finished, and `want` (if any) is in the page's text or a chart's title.
FINISHED_JS = """(want) => {
  const app = document.querySelector('[data-testid="stApp"]');
  return app && app.dataset.testScriptState === 'notRunning' && window.__reslice.ran && (!want ||
    document.querySelector('[data-testid="stMain"]').innerText.includes(want) ||
    Array.from(document.querySelectorAll('.js-plotly-plot'))
      .some(g => g._fullLayout && (g._fullLayout.title.text || '').includes(want)));
}"""
TWO_FRAMES_JS = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def rerun_seconds(page, act, want: str | None = None, prepare=None) -> float:
    """Seconds from `act()` to the end of the rerun it started, with `want` shown, plus two frames.
    `prepare()` runs first, untimed (e.g. open a selectbox's list)."""
    page.wait_for_timeout(700)
    if prepare is not None:
        prepare()
        page.wait_for_timeout(300)
    page.evaluate(ARM_JS)
    started = time.perf_counter()
    act()
    page.wait_for_function(FINISHED_JS, arg=want, timeout=60_000, polling=20)
    page.evaluate(TWO_FRAMES_JS)
    return time.perf_counter() - started


# ------------------------------------------------------------------------------------------ controls
def choose(page, label: str, option: str | int, want: str | None = None) -> float:
    """Choose `option` (its text, or how many places down the list) in the selectbox labelled `label`;
    timed from the Enter that picks it."""
    def prepare() -> None:
        box = page.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text(label, exact=True)).first
        box.get_by_role("combobox").click()
        if isinstance(option, int):
            for _ in range(option):
                page.keyboard.press("ArrowDown")
        else:
            page.keyboard.type(option)
    return rerun_seconds(page, lambda: page.keyboard.press("Enter"), want, prepare)


def pick_radio(page, option: str, want: str | None = None) -> float:
    label = page.locator("label").filter(has=page.get_by_role("radio", name=option, exact=True)).first
    return rerun_seconds(page, label.click, want)


def nudge_slider(page, label: str, want: str | None = None, key: str = "ArrowRight") -> float:
    thumb = page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider").first
    thumb.focus()
    return rerun_seconds(page, lambda: thumb.press(key), want)


def open_page(page, title: str, charts: int) -> None:
    """The e2e tests' page switch (sidebar link, heading, rerun finished), then its first `charts` charts drawn."""
    switch_page(page, title)
    if charts:
        wait_for_charts(page, charts)
    settle(page)
    page.wait_for_timeout(1000)


# ------------------------------------------------------------------------------------------ pages
def sparsity(page) -> dict[str, list[float]]:
    open_page(page, "Sparsity explorer", 3)
    page.wait_for_timeout(500)
    n_heads, sites = page.evaluate(GRID_TICKS_JS, GRID_TITLE)
    seconds: dict[str, list[float]] = {"sparsity grid": [], "sparsity tabs": [], "sparsity score": []}
    for head, row in CELLS:
        head, row = head % n_heads, row % len(sites)
        seconds["sparsity grid"].append(reslice(page, GRID_TITLE, head, row, f"{sites[row]} · head {head}"))
    for tab, shows in TABS:  # lazy tabs: only the open one is drawn
        seconds["sparsity tabs"].append(rerun_seconds(page, page.get_by_role("tab", name=tab).click, shows))
    for option, title in SCORES:
        seconds["sparsity score"].append(pick_radio(page, option, title))
    return seconds


def data(page) -> dict[str, list[float]]:
    open_page(page, "Data & model", 1)
    toggle = page.get_by_text("Column summary (raw values)")
    opened = rerun_seconds(page, toggle.click, "Download table (CSV)")
    toggle.click()  # closing does not rerun (the browser only hides the table)
    page.wait_for_timeout(1000)
    return {"data summary": [opened, rerun_seconds(page, toggle.click, "Download table (CSV)")]}


def forecast(page) -> dict[str, list[float]]:
    open_page(page, "Forecast", 1)
    columns = [choose(page, "Plotted column", name, f"{name}: last") for name in ("temperature", "humidity", "load")]
    return {"forecast column": columns, "forecast history": [nudge_slider(page, "History shown"),
                                                             nudge_slider(page, "History shown", key="ArrowLeft")]}


def masking(page) -> dict[str, list[float]]:
    open_page(page, "Head masking", 2)
    return {"masking column": [choose(page, "Plotted column", name, f"{name}:")
                               for name in ("temperature", "humidity", "load")]}


def pyramid(page) -> dict[str, list[float]]:
    open_page(page, "Distilling pyramid", 4)
    return {"pyramid position": [nudge_slider(page, "Position"), nudge_slider(page, "Position", key="ArrowLeft")],
            "pyramid rows": [choose(page, "Head", "head 2", "Softmax rows of head 2"), choose(page, "Encoder layer", 1),
                             choose(page, "Head", "head 0", "Softmax rows of head 0")]}


def compare(page) -> dict[str, list[float]]:
    open_page(page, "Compare", 0)
    page.get_by_role("button", name="Run comparison").click()
    page.get_by_text("ε (counterfactual gap)").first.wait_for(timeout=SLOW)
    wait_for_charts(page, 2)
    settle(page)
    page.wait_for_timeout(1000)
    return {"compare metric": [pick_radio(page, "MAE", "MAE (standardised)"),
                               pick_radio(page, "original units", "MAE (original units)"),
                               pick_radio(page, "MSE", "MSE (original units)")],
            "compare window": [nudge_slider(page, "Window (0", "window 1,"),
                               choose(page, "Column", "price", "price:"),
                               nudge_slider(page, "Window (0", "window 0,", key="ArrowLeft")]}


def ablation(page) -> dict[str, list[float]]:
    open_page(page, "Ablation studies", 0)
    page.locator("label").filter(has=page.get_by_role("radio", name="32", exact=True)).first.click()
    settle(page)
    page.get_by_role("button", name="Run single-head sweep").click()
    page.get_by_text("Baseline MSE (all heads on)").first.wait_for(timeout=SLOW)
    wait_for_charts(page, 2)
    settle(page)
    page.wait_for_timeout(1000)
    return {"ablation head": [choose(page, "Head (most harmful first)", 3, "ΔMSE per horizon step:"),
                              choose(page, "Head (most harmful first)", 1, "ΔMSE per horizon step:")],
            "ablation mode": [pick_radio(page, "mean", "Not run for these settings"),
                              pick_radio(page, "zero", "Baseline MSE (all heads on)")]}


PAGES = {"sparsity": sparsity, "data": data, "forecast": forecast, "masking": masking, "pyramid": pyramid,
         "compare": compare, "ablation": ablation}


def click_times(browser, runs: Path, log_path: Path, app: Path, pages: list[str]) -> dict[str, list[float]]:
    """A fresh server for `app`; one tab walks `pages`; seconds of each timed action, by kind."""
    seconds: dict[str, list[float]] = {}
    with streamlit_server(runs, log_path, app) as url:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(url)
        page.get_by_role("heading", name="Data & model", level=1).wait_for(timeout=SLOW)
        wait_for_charts(page, 1)
        page.get_by_text("Device:").first.wait_for(timeout=SLOW)  # the model stack has loaded
        settle(page)
        for name in pages:
            seconds |= PAGES[name](page)
        page.close()
    return seconds


def main() -> None:
    args, others = parse_args(__doc__.splitlines()[0], default_rounds=3, reserved=("app",),
                              extra=lambda parser: parser.add_argument(
                                  "--pages", nargs="+", choices=list(PAGES), default=list(PAGES),
                                  help="the pages to walk (default: all)"))
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
                times[name].append(click_times(browser, runs, tmp / f"{name}.log", app, args.pages))
                print(f"round {r + 1} {name:10s} " + " | ".join(
                    f"{kind} " + " ".join(f"{t:.2f}" for t in values) for kind, values in times[name][-1].items()),
                    flush=True)
        browser.close()

    print()
    for name, rounds in times.items():
        for kind in rounds[0]:
            every = [t for clicks in rounds for t in clicks[kind]]
            print(f"{name:10s} {kind:18s} {len(every):2d} actions: median {statistics.median(every):.2f} s, "
                  f"max {max(every):.2f} s, over 1 s: {sum(t > 1 for t in every)}")
    for name in others:
        for kind in times["app"][0]:
            gain = [statistics.median(b[kind]) - statistics.median(a[kind])
                    for a, b in zip(times["app"], times[name])]
            print(f"{name} − app, {kind}, per round (medians): {' '.join(f'{g:+.2f}' for g in gain)} s; app faster "
                  f"in {sum(g > 0 for g in gain)}/{len(gain)} rounds")
    print(f"reslice_seconds_max: {max(t for clicks in times['app'] for ts in clicks.values() for t in ts):.2f}")


if __name__ == "__main__":
    main()
