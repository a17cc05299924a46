"""First start: from `streamlit run` with an empty runs folder to every page usable, in Chromium, optionally on a
busy machine.

    python benchmarks/first_start.py                 # 3 rounds, idle machine
    python benchmarks/first_start.py --busy 2        # 2 processes spinning on the CPU meanwhile (2 cores: busy)

Each round starts a fresh server on a new, empty runs folder (the app installs the shipped sample model,
sample_data/checkpoint/), then opens each page in turn through the sidebar and waits until its main content is
drawn: its first chart with data, or (the pages whose work starts on a button) its Run button. The clock starts
when `streamlit run` is started. Last line: `first_start_all_pages_seconds_max: <x>` (bar: 60 s).
"""
from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.test_browser import CHROMIUM, CHROMIUM_ARGS, SLOW, VIEWPORT, open_page, streamlit_server  # noqa: E402

# page title → what shows it is usable (a chart with data, or the button that starts its work)
PAGES = {"Data & model": "chart", "Forecast": "chart", "Head masking": "chart", "Sparsity explorer": "chart",
         "Distilling pyramid": "chart", "Compare": "Run comparison", "Ablation studies": "Run single-head sweep",
         "Attribution": "Run"}
CHART = ".js-plotly-plot .scatterlayer .trace path.js-line, .js-plotly-plot .heatmaplayer image, .js-plotly-plot .barlayer path"


def _spin() -> None:
    while True:
        pass


def one_round(browser) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        spawned = time.perf_counter()
        with streamlit_server(runs, Path(tmp) / "server.log") as url:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(url)
            times = {}
            for title, ready in PAGES.items():
                if title != "Data & model":
                    open_page(page, title)
                if ready == "chart":
                    page.locator(CHART).first.wait_for(state="visible", timeout=SLOW)
                else:
                    page.get_by_role("button", name=ready, exact=True).first.wait_for(timeout=SLOW)
                times[title] = time.perf_counter() - spawned
            page.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--busy", type=int, default=0, help="processes spinning on the CPU during the rounds")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        sys.exit(f"error: {CHROMIUM} is missing (install Debian's chromium)")
    from playwright.sync_api import sync_playwright

    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for p in spinners:
        p.start()
    rounds = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for r in range(args.rounds):
                times = one_round(browser)
                rounds.append(times)
                print(f"round {r + 1}: " + " | ".join(f"{k} {v:.1f} s" for k, v in times.items()))
            browser.close()
    finally:
        for p in spinners:
            p.terminate()
    last = [max(t.values()) for t in rounds]
    print(f"every page usable, seconds from `streamlit run` ({args.busy} busy processes): median "
          f"{statistics.median(last):.1f}, max {max(last):.1f}")
    print(f"first_start_all_pages_seconds_max: {max(last):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
