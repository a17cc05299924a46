"""Cold start in a real browser: fresh `streamlit run`, model on disk, page.goto → first chart drawn.

    python benchmarks/cold_start.py --checkpoint runs/sample             # 5 rounds
    python benchmarks/cold_start.py --checkpoint runs/sample --rounds 8 --against /tmp/old-checkout
    python benchmarks/cold_start.py --checkpoint runs/sample --against /tmp/a --against /tmp/b

Each round starts a fresh server for every contestant in turn, the way tests/e2e/test_browser.py's
`test_cold_start` does (the checkpoint copied to a temporary runs folder as `sample`; the clock starts
at `page.goto`, right after the server answers its health check; each round also prints the time from
starting `streamlit run`, since the app does some work at server start (app.py, ui/server.py)):

  app      this checkout's app.py;
  floor    a Streamlit page with one 3-point plotly chart and nothing else: what any Streamlit + plotly
           page costs on this machine (the browser loads and evaluates Streamlit's plotly bundle);
  against  (optional, repeatable) app.py of another checkout, e.g. `git worktree add /tmp/old <commit>`;
           named after its folder.

The machine's speed drifts, so compare contestants within a round: the script prints each round and the
per-round difference app − floor. Needs Debian's /usr/bin/chromium and the playwright package
(requirements-dev.txt), like the browser tests. Last line: `cold_start_seconds_median: <x>`.
"""
from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.browser_rounds import parse_args  # noqa: E402
from tests.e2e.test_browser import CHROMIUM, CHROMIUM_ARGS, cold_start_times  # noqa: E402

FLOOR_APP = '''import plotly.graph_objects as go
import streamlit as st

st.title("One chart")
st.plotly_chart(go.Figure(go.Scatter(y=[1, 3, 2])))
'''


def main() -> None:
    args, others = parse_args(__doc__.splitlines()[0], default_rounds=5, reserved=("app", "floor"))
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp_name, sync_playwright() as p:
        tmp = Path(tmp_name)
        runs = tmp / "runs"
        shutil.copytree(args.checkpoint, runs / "sample")
        floor = tmp / "floor.py"
        floor.write_text(FLOOR_APP)
        contestants = {"app": ROOT / "app.py", "floor": floor, **others}
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        times: dict[str, list[float]] = {name: [] for name in contestants}
        spawn: dict[str, list[float]] = {name: [] for name in contestants}
        for r in range(args.rounds):
            for name, app in contestants.items():
                seconds, since_spawn = cold_start_times(browser, runs, tmp / f"{name}.log", app)
                times[name].append(seconds)
                spawn[name].append(since_spawn)
            print(f"round {r + 1}: " + ", ".join(f"{name} {t[-1]:.2f} s ({spawn[name][-1]:.2f})"
                                                for name, t in times.items()), flush=True)
        browser.close()

    print("\nfrom goto (in brackets above: from starting `streamlit run`, the server's start included)")
    for name, values in times.items():
        print(f"{name:10s} median {statistics.median(values):.2f} s  (min {min(values):.2f}, max {max(values):.2f}); "
              f"from `streamlit run` median {statistics.median(spawn[name]):.2f} s")
    over_floor = [a - f for a, f in zip(times["app"], times["floor"])]
    print(f"app − floor, per round: median {statistics.median(over_floor):.2f} s")
    for name in others:
        gain = [b - a for a, b in zip(times["app"], times[name])]
        print(f"{name} − app, per round: median {statistics.median(gain):.2f} s; app faster in "
              f"{sum(g > 0 for g in gain)}/{len(gain)} rounds")
    print(f"cold_start_seconds_median: {statistics.median(times['app']):.2f}")


if __name__ == "__main__":
    main()
