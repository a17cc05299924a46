"""Real-browser tests: `streamlit run app.py` driven by Debian's Chromium through Playwright.

Never runs `playwright install`: the browser is /usr/bin/chromium. Without it the tests are skipped,
unless the CI environment variable is set, where a missing browser is a failure.

Screenshots of every page go to $INFORMER_LAB_SCREENSHOTS (default test-artifacts/screenshots/);
the cold start (page.goto → the first plotly chart with its lines drawn, model on disk, fresh server) is printed
as `cold_start_seconds: X`. Run with `-s` to see both lines.
"""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
SAMPLE_CSV = ROOT / "sample_data" / "sample.csv"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1400, "height": 900}
SLOW = 180_000  # ms: the first script run imports torch; two CPU cores may be busy with other tests


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
def streamlit_server(runs: Path, log_path: Path, app: Path = APP):
    """`streamlit run app.py` (or `app`) on a free port with INFORMER_LAB_RUNS=runs; yields its URL."""
    port = _free_port()
    env = {**os.environ, "INFORMER_LAB_RUNS": str(runs), "PYTHONUNBUFFERED": "1"}
    env.pop("INFORMER_LAB_QUICK_TRAIN", None)
    command = [sys.executable, "-m", "streamlit", "run", str(app), "--server.headless", "true",
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
def runs(tiny_trained, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("e2e") / "runs"
    shutil.copytree(tiny_trained[2], folder / "sample")
    return folder


@pytest.fixture(scope="module")
def server(runs, tmp_path_factory):
    with streamlit_server(runs, tmp_path_factory.mktemp("log") / "server.log") as url:
        yield url


# ------------------------------------------------------------------------------------------ helpers
def settle(page, timeout: int = SLOW) -> None:
    """Wait until the script run triggered by the last action has finished."""
    app = page.locator('[data-testid="stApp"]')
    with contextlib.suppress(Exception):
        page.locator('[data-testid="stApp"][data-test-script-state="running"]').wait_for(timeout=1500)
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(timeout=timeout)
    app.wait_for(timeout=timeout)
    page.wait_for_timeout(300)


def shoot(page, folder: Path, name: str) -> Path:
    """A screenshot of the whole page (Streamlit scrolls inside its main block, so grow the viewport)."""
    height = page.evaluate("() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
                           " return m ? m.scrollHeight : document.body.scrollHeight; }")
    page.set_viewport_size({"width": VIEWPORT["width"], "height": max(VIEWPORT["height"], min(height + 40, 8000))})
    page.wait_for_timeout(800)  # plotly relayouts on resize
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(VIEWPORT)
    return path


def download(page, button: str) -> pd.DataFrame:
    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name=button).click()
    return pd.read_csv(io.StringIO(Path(info.value.path()).read_text()))


def visit(browser, url: str, title: str):
    """(context, page): a fresh context that accepts downloads, at `url`, once its page titled `title` has run."""
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    page = context.new_page()
    page.goto(url)
    page.get_by_role("heading", name=title, level=1).wait_for(timeout=SLOW)
    settle(page)
    return context, page


def start_tiny_training(page, name: str) -> None:
    """Fill the Data & model page's training form for a tiny model named `name` and press Train."""
    for label, value in {"seq_len (encoder window)": 48, "label_len (decoder start)": 24, "pred_len (horizon)": 12,
                         "d_model": 16, "d_ff": 32, "epochs": 1, "max steps per epoch (0: all)": 3,
                         "batch size": 16}.items():
        field = page.get_by_role("spinbutton", name=label, exact=True)
        field.fill(str(value))
        field.press("Tab")
    field = page.get_by_role("textbox", name="Run name")
    field.fill(name)
    field.press("Tab")
    page.get_by_role("button", name="Train", exact=True).click()


def open_page(page, title: str) -> None:
    page.get_by_role("link", name=title).click()
    page.get_by_role("heading", name=title, level=1).wait_for(timeout=SLOW)
    settle(page)


def toggle_head(page, label: str) -> None:
    box = page.get_by_role("checkbox", name=label)
    page.locator("label").filter(has=box).click()


# A drawn line of a plotly scatter trace: the first chart with its data, not just its frame.
FIRST_CHART = ".js-plotly-plot .scatterlayer .trace path.js-line"


def cold_start_times(browser, runs: Path, log_path: Path, app: Path = APP, then=None) -> tuple[float, float]:
    """The cold start: a fresh server for `app`, then page.goto → the first plotly chart's data drawn.
    Returns (seconds from goto, seconds from starting `streamlit run`; the latter includes the server's start,
    its health checked every 0.25 s). `then(page)`, if given, runs after the timing."""
    spawned = time.perf_counter()
    with streamlit_server(runs, log_path, app) as url:
        page = browser.new_page(viewport=VIEWPORT)
        started = time.perf_counter()
        page.goto(url)
        page.locator(FIRST_CHART).first.wait_for(state="visible", timeout=SLOW)
        drawn = time.perf_counter()
        if then is not None:
            then(page)
        page.close()
    return drawn - started, drawn - spawned


# ------------------------------------------------------------------------------------------ tests
def test_cold_start(browser, tiny_trained, tmp_path):
    """A fresh server with the model on disk: time from page.goto to the first plotly chart with its data drawn;
    then, with no interaction, the model half of the page and the sidebar's device line."""
    runs = tmp_path / "runs"
    shutil.copytree(tiny_trained[2], runs / "sample")
    def the_model_half_follows(page):  # no click: the browser's report reruns the app (ui/deferred.py)
        page.get_by_role("heading", name="Active model").wait_for(timeout=SLOW)
        # the same run draws the sidebar after the page: wait for it (a snapshot right after the heading races)
        page.get_by_text("Device:").first.wait_for(state="visible", timeout=SLOW)

    seconds, since_spawn = cold_start_times(browser, runs, tmp_path / "server.log", then=the_model_half_follows)
    print(f"\ncold_start_seconds: {seconds:.2f} (from `streamlit run`, server start included: {since_spawn:.2f})")
    assert seconds < 120


def test_upload_train_mask_forecast(browser, server, screenshots):
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    page = context.new_page()
    page.goto(server)
    page.get_by_role("heading", name="Data & model", level=1).wait_for(timeout=SLOW)
    page.locator(".js-plotly-plot").first.wait_for(state="visible", timeout=SLOW)
    settle(page)

    # the chart's toolbar renders a PNG in the browser, named after the chart
    chart = page.locator(".js-plotly-plot").first
    chart.hover()
    with page.expect_download(timeout=SLOW) as info:
        chart.locator('[data-title="download plot as a png" i]').click()
    assert info.value.suggested_filename == "sample-series.png"  # no ".csv" inside a download's name
    assert Path(info.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # upload the sample CSV through the file input
    page.get_by_text("Upload a CSV", exact=True).click()
    uploader = page.locator('[data-testid="stFileUploader"]').filter(has_text="CSV file")
    uploader.locator('input[type="file"]').set_input_files(str(SAMPLE_CSV))
    page.get_by_text("the bundled sample stays active").wait_for(state="detached", timeout=SLOW)
    settle(page)
    assert page.locator('[data-testid="stMetricValue"]').first.inner_text() == "8,760"

    # train a tiny model in the background and watch it finish
    start_tiny_training(page, "e2e-mini")
    page.get_by_role("heading", name="Run e2e-mini").wait_for(timeout=SLOW)
    page.get_by_role("heading", name="Run e2e-mini").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "1a-training.png"))  # live progress (may already be done)
    page.get_by_text("It is now the active model.").wait_for(timeout=300_000)
    settle(page)
    assert "e2e-mini" in page.locator('[data-testid="stSidebar"]').inner_text()
    shoot(page, screenshots, "1-data-model")

    # head masking: turn a head off, the masked column of the table changes, the baseline does not
    open_page(page, "Head masking")
    page.locator(".js-plotly-plot").first.wait_for(state="visible", timeout=SLOW)
    before = download(page, "Download table (CSV)")
    assert len(before) == 12 and (before["masked"] == before["baseline"]).all()
    toggle_head(page, "encoder.0.0:1")
    page.get_by_text("Off (1 of 16)").wait_for(timeout=SLOW)
    settle(page)
    after = download(page, "Download table (CSV)")
    assert (after["baseline"] == before["baseline"]).all()
    assert (after["masked"] - before["masked"]).abs().max() > 1e-6
    shoot(page, screenshots, "2-head-masking")

    # forecast: the downloaded CSV has pred_len rows: the datetime column, then the forecast columns
    open_page(page, "Forecast")
    page.locator(".js-plotly-plot").first.wait_for(state="visible", timeout=SLOW)
    forecast = download(page, "Download forecast (CSV)")
    assert len(forecast) == 12
    assert list(forecast.columns) == ["date", "temperature", "humidity", "price", "load"]
    shoot(page, screenshots, "3-forecast")
    context.close()


def test_two_browser_contexts_keep_their_own_masks(browser, server):
    pages = []
    for _ in range(2):
        context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
        page = context.new_page()
        page.goto(f"{server}/head-masking")
        page.locator(".js-plotly-plot").first.wait_for(state="visible", timeout=SLOW)
        settle(page)
        pages.append(page)
    a, b = pages
    toggle_head(a, "encoder.0.0:0")
    a.get_by_text("Off (1 of 16)").wait_for(timeout=SLOW)
    settle(a)
    table_a = download(a, "Download table (CSV)")
    toggle_head(b, "cross.0:3")
    b.get_by_text("Off (1 of 16)").wait_for(timeout=SLOW)
    settle(b)
    table_b = download(b, "Download table (CSV)")
    assert (table_a["baseline"] == table_b["baseline"]).all()  # one shared model, same window and seed
    assert (table_a["masked"] - table_b["masked"]).abs().max() > 1e-6
    # each tab still holds exactly its own mask and result
    assert not a.get_by_role("checkbox", name="encoder.0.0:0").is_checked()
    assert a.get_by_role("checkbox", name="cross.0:3").is_checked()
    assert b.get_by_role("checkbox", name="encoder.0.0:0").is_checked()
    assert not b.get_by_role("checkbox", name="cross.0:3").is_checked()
    a.get_by_role("slider").first.focus()  # any interaction reruns a's script
    a.keyboard.press("ArrowRight")
    a.keyboard.press("ArrowLeft")
    settle(a)
    again = download(a, "Download table (CSV)")
    pd.testing.assert_frame_equal(again, table_a)
    for page in pages:
        page.context.close()
