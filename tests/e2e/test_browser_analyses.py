"""Real-browser tests of the analysis pages (sparsity, pyramid, attribution, compare).

`streamlit run app.py` driven by Debian's Chromium through Playwright, as in tests/e2e/test_browser.py
(never `playwright install`; without /usr/bin/chromium the tests are skipped, unless CI is set).
Screenshots go to $INFORMER_LAB_SCREENSHOTS (default test-artifacts/screenshots/), next to the other
e2e test's. A grid click that only re-slices the cached sparsity report (switch head) is timed from the
click to the finished rerun and printed as `reslice_seconds: X`. Run with `-s` to see it.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1400, "height": 900}
SLOW = 300_000  # ms: the first script run imports torch; comparison forecasts every window; CPUs may be shared
RESLICE_LIMIT = 1.0  # s


def _need_browser():
    problem = None
    if not CHROMIUM.exists():
        problem = f"{CHROMIUM} is missing (install Debian's chromium; never `playwright install`)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            problem = "the playwright Python package is not installed (requirements-dev.txt)"
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests cannot run in CI: {problem}")
        pytest.skip(f"browser tests skipped: {problem}")


@pytest.fixture(scope="module")
def browser():
    _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def screenshots() -> Path:
    folder = Path(os.environ.get("INFORMER_LAB_SCREENSHOTS") or ROOT / "test-artifacts" / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {folder}")
    return folder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(runs: Path, log_path: Path):
    """`streamlit run app.py` on a free port with INFORMER_LAB_RUNS=runs; yields its URL."""
    port = _free_port()
    env = {**os.environ, "INFORMER_LAB_RUNS": str(runs), "PYTHONUNBUFFERED": "1"}
    env.pop("INFORMER_LAB_QUICK_TRAIN", None)
    command = [sys.executable, "-m", "streamlit", "run", str(APP), "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
               "--browser.gatherUsageStats", "false"]
    with open(log_path, "w") as log:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 90
            while True:
                if server.poll() is not None:
                    raise RuntimeError(f"streamlit exited with {server.returncode}: {log_path.read_text()[-2000:]}")
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                        if response.read().strip() == b"ok":
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not become healthy: {log_path.read_text()[-2000:]}")
                time.sleep(0.25)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


@pytest.fixture(scope="module")
def server(tiny_trained, tmp_path_factory):
    runs = tmp_path_factory.mktemp("e2e-analyses") / "runs"
    shutil.copytree(tiny_trained[2], runs / "sample")
    with streamlit_server(runs, tmp_path_factory.mktemp("log") / "server.log") as url:
        yield url


# ------------------------------------------------------------------------------------------ helpers
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def settle(page, timeout: int = SLOW) -> None:
    """Wait until the script run triggered by the last action has finished."""
    with contextlib.suppress(Exception):
        page.locator('[data-testid="stApp"][data-test-script-state="running"]').wait_for(timeout=1500)
    page.locator(IDLE).wait_for(timeout=timeout)
    page.wait_for_timeout(300)


def shoot(page, folder: Path, name: str) -> Path:
    """A screenshot of the whole page (Streamlit scrolls inside its main block, so grow the viewport)."""
    height = page.evaluate("() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
                           " return m ? m.scrollHeight : document.body.scrollHeight; }")
    page.set_viewport_size({"width": VIEWPORT["width"], "height": max(VIEWPORT["height"], min(height + 40, 8000))})
    page.wait_for_timeout(1000)  # plotly relayouts on resize
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(VIEWPORT)
    return path


def open_page(page, title: str) -> None:
    page.get_by_role("link", name=title).click()
    page.get_by_role("heading", name=title, level=1).wait_for(timeout=SLOW)
    settle(page)


def wait_for_charts(page, n: int) -> None:
    page.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {n}",
                           timeout=SLOW)
    page.locator(".js-plotly-plot").first.wait_for(state="visible", timeout=SLOW)


# The page position of a data point (x, y) of the plotly chart whose title starts with `title`.
POINT_JS = """([title, x, y]) => {
  const gd = Array.from(document.querySelectorAll('.js-plotly-plot'))
    .find(g => g._fullLayout && (g._fullLayout.title.text || '').includes(title));
  if (!gd) return null;
  gd.scrollIntoView({block: 'center'});
  const fl = gd._fullLayout, box = gd.getBoundingClientRect();
  return [box.left + fl._size.l + fl.xaxis.l2p(fl.xaxis.d2l(x)), box.top + fl._size.t + fl.yaxis.l2p(fl.yaxis.d2l(y))];
}"""


def click_point(page, title: str, x, y) -> None:
    at = page.evaluate(POINT_JS, [title, x, y])
    assert at is not None, f"no chart titled {title!r}"
    page.mouse.move(at[0] + 3, at[1] + 2)  # a little off centre: the whole cell must answer
    page.wait_for_timeout(150)
    page.mouse.click(at[0] + 3, at[1] + 2)


def heading_text(page, level: int) -> list[str]:
    return page.get_by_role("heading", level=level).all_inner_texts()


# ------------------------------------------------------------------------------------------ tests
def test_analysis_pages(browser, server, screenshots):
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    page = context.new_page()
    page.goto(f"{server}/sparsity")
    page.get_by_role("heading", name="Sparsity explorer", level=1).wait_for(timeout=SLOW)
    wait_for_charts(page, 5)
    settle(page)
    assert "encoder.0.0 · head 0" in heading_text(page, 2)

    # click the grid cell (decoder_self.0, head 2): the overlay scatter answers, the detail switches head
    grid_title = "Mean row entropy"
    click_point(page, grid_title, 2, 2)
    page.get_by_role("heading", name="decoder_self.0 · head 2", level=2).wait_for(timeout=SLOW)
    settle(page)
    assert "running mean(V)" in page.locator('[data-testid="stMain"]').inner_text()
    shoot(page, screenshots, "4-sparsity")

    # the re-slice timing: another head of the same report, click → rerun finished
    page.wait_for_timeout(500)
    coords = page.evaluate(POINT_JS, [grid_title, 1, 0])
    page.mouse.move(coords[0] + 3, coords[1] + 2)
    page.wait_for_timeout(200)
    started = time.perf_counter()
    page.mouse.click(coords[0] + 3, coords[1] + 2)
    page.wait_for_function("""() => {
        const idle = document.querySelector('[data-testid="stApp"][data-test-script-state="notRunning"]');
        const h = Array.from(document.querySelectorAll('h2')).map(e => e.innerText);
        return idle && h.some(t => t.includes('encoder.0.0 · head 1'));
    }""", timeout=SLOW, polling=20)
    reslice = time.perf_counter() - started
    print(f"\nreslice_seconds: {reslice:.3f}")
    settle(page)
    assert "Lazy queries: 28 of 48" in page.locator('[data-testid="stMain"]').inner_text()
    assert reslice < RESLICE_LIMIT, f"switching head took {reslice:.2f} s"

    # pyramid: click a cell of the deepest layer; the text names the span it tiles
    open_page(page, "Distilling pyramid")
    wait_for_charts(page, 4)
    click_point(page, "The encoder pyramid", 17.5, 1)  # layer 1, position 5: centred cells start at x = 12
    page.get_by_text("position 5 tiles input steps 10–11").wait_for(timeout=SLOW)
    settle(page)
    shoot(page, screenshots, "5-pyramid")

    # attribution: run Integrated Gradients, the checks appear
    open_page(page, "Attribution")
    page.get_by_role("spinbutton", name="Path points (n_steps)").fill("32")
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("Convergence delta").wait_for(timeout=SLOW)
    wait_for_charts(page, 2)
    settle(page)
    main = page.locator('[data-testid="stMain"]').inner_text()
    assert "Completeness gap" in main and "Selection changed" in main and "of 32" in main
    shoot(page, screenshots, "6-attribution")

    # compare: one row per model, ε shown
    open_page(page, "Compare")
    page.get_by_role("radio", name="val").check()
    page.get_by_role("button", name="Run comparison").click()
    page.get_by_text("ε (counterfactual gap)").wait_for(timeout=SLOW)
    wait_for_charts(page, 2)
    settle(page)
    main = page.locator('[data-testid="stMain"]').inner_text()
    assert "val split" in main
    shoot(page, screenshots, "7-compare")
    context.close()
