"""`pip install .` into a fresh virtual environment, then the `informer-lab` command as a user runs it: from another
directory, with port 8501 taken, listed, opened in a real browser on the Runs page, and stopped with nothing of its
process tree left.

The environment reuses the installed packages (`--system-site-packages`, pip's `--no-index`: nothing is fetched, and
a dependency missing from the machine fails the install instead of downloading it), so only the lab's own files are
installed; the copy of the source it installs from leaves the checkout untouched.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from informer_lab import __version__, running

ROOT = Path(__file__).resolve().parents[2]
SKIP = {".git", "runs", "studies", "tests", "benchmarks", "build", "test-artifacts", ".hypothesis", ".benchmarks",
        "__pycache__", ".pytest_cache", ".venv"}

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process trees are read from /proc")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The virtual environment's bin folder, `informer-lab` installed in it from a copy of the source."""
    base = tmp_path_factory.mktemp("install")
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=lambda folder, names: [
        n for n in names if n == "__pycache__" or n.endswith(".egg-info") or (Path(folder) == ROOT and n in SKIP)])
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                           "--no-index", "--no-build-isolation", "--disable-pip-version-check", str(source)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return venv / "bin"


@pytest.fixture
def user(tmp_path) -> tuple[Path, dict]:
    """A working folder away from the checkout, and an environment whose lab home and runtime records are temporary."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "INFORMER_LAB_RUNS", "INFORMER_LAB_STUDIES")}
    env.update(INFORMER_LAB_HOME=str(tmp_path / "home"), INFORMER_LAB_RUNTIME_DIR=str(tmp_path / "runtime"))
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    return elsewhere, env


def test_installed_command_and_files(installed, user):
    elsewhere, env = user
    out = subprocess.run([str(installed / "informer-lab"), "--version"], cwd=elsewhere, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == f"informer-lab {__version__}"
    where = subprocess.run([str(installed / "python"), "-c", "import app, ui.settings as s; print(app.__file__); "
                            "print(s.SAMPLE_CHECKPOINT.joinpath('manifest.json').is_file())"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    app_file, sample_shipped = where.stdout.split()
    assert not Path(app_file).is_relative_to(ROOT) and sample_shipped == "True"
    # the dependencies are requirements.txt's, read by the build (one place pins them)
    requires = subprocess.run([str(installed / "python"), "-c", "from importlib.metadata import requires; "
                               "print('\\n'.join(requires('informer-lab')))"], cwd=elsewhere, env=env,
                              capture_output=True, text=True, timeout=120).stdout.split("\n")
    pinned = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert [r.replace(" ", "") for r in requires if r and "extra ==" not in r] == pinned


def test_a_command_prints_what_cli_py_prints(installed, user):
    elsewhere, env = user
    args = ["evaluate", "--csv", str(ROOT / "sample_data" / "sample.csv"), "--no-baseline-check"]
    lab = subprocess.run([str(installed / "informer-lab"), *args, "--checkpoint", "sample"], cwd=elsewhere, env=env,
                         capture_output=True, text=True, timeout=300)
    cli = subprocess.run([sys.executable, str(ROOT / "cli.py"), *args, "--checkpoint",
                          str(ROOT / "sample_data" / "checkpoint")], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert lab.returncode == cli.returncode == 0, lab.stderr + cli.stderr
    assert lab.stdout == cli.stdout and lab.stdout.startswith("test mse ")


class Lines:
    """The launcher's output, read in a thread (a pipe left unread would block it)."""

    def __init__(self, stream):
        self.lines: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for line in stream:
            self.lines.append(line)

    def wait_for(self, text: str, timeout: float, process: subprocess.Popen) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = next((line for line in self.lines if text in line), None)
            if found is not None:
                return found
            assert process.poll() is None, "".join(self.lines)[-3000:]
            time.sleep(0.2)
        raise AssertionError(f"no {text!r} within {timeout} s: {''.join(self.lines)[-3000:]}")


def test_serve_on_a_free_port_list_open_runs_and_stop(installed, user, monkeypatch):
    from tests.e2e.test_browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, _need_browser, settle, shoot

    elsewhere, env = user
    # a Streamlit config in the folder the lab is started from does not change how the lab is served
    (elsewhere / ".streamlit").mkdir()
    (elsewhere / ".streamlit" / "config.toml").write_text('[server]\nbaseUrlPath = "elsewhere"\n')
    blocker = socket.socket()
    try:
        blocker.bind(("127.0.0.1", 8501))
        blocker.listen()
    except OSError:
        pass  # taken already: the same case
    launcher = subprocess.Popen([str(installed / "informer-lab"), "ui", "--no-browser"], cwd=elsewhere, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = Lines(launcher.stdout)
    tree: list[int] = []
    try:
        serving = lines.wait_for("Informer Lab is serving at", 240, launcher)
        assert any("Port 8501 is taken; serving on port" in line for line in lines.lines)
        url = serving.split("serving at ")[1].split()[0]
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        assert port != 8501 and url.startswith("http://127.0.0.1:")

        listed = subprocess.run([str(installed / "informer-lab"), "list"], env=env, capture_output=True, text=True,
                                timeout=120)
        assert f"{port:>5}" in listed.stdout and str(elsewhere) in listed.stdout
        again = subprocess.run([str(installed / "informer-lab"), "--no-browser"], env=env, capture_output=True,
                               text=True, timeout=120)
        assert again.returncode == 0 and f"already running at {url}" in again.stdout

        _need_browser()
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.goto(url)
            page.get_by_role("heading", name="Data & model", level=1).wait_for(timeout=240_000)
            page.get_by_role("link", name="Runs").click()
            page.get_by_role("heading", name="Runs", level=1).wait_for(timeout=240_000)
            settle(page)
            page.get_by_text("Training (dotted) and validation (solid) loss").first.wait_for(timeout=120_000)
            body = page.inner_text("[data-testid='stMain']")
            assert str(Path(env["INFORMER_LAB_HOME"]) / "runs") in body
            folder = Path(os.environ.get("INFORMER_LAB_SCREENSHOTS") or ROOT / "test-artifacts" / "screenshots")
            folder.mkdir(parents=True, exist_ok=True)
            shoot(page, folder, "runs")
            browser.close()
        assert (Path(env["INFORMER_LAB_HOME"]) / "runs" / "sample" / "manifest.json").is_file()

        lab = next(lab for lab in _records(env, monkeypatch) if lab.port == port)
        tree = [lab.pid, *running.descendants(lab.pid)]
        stopped = subprocess.run([str(installed / "informer-lab"), "stop", str(port)], env=env, capture_output=True,
                                 text=True, timeout=120)
        assert stopped.returncode == 0 and f"Stopped the lab on port {port}" in stopped.stdout
        launcher.wait(timeout=60)
        assert not any(running.is_alive(pid) for pid in tree)
        listed = subprocess.run([str(installed / "informer-lab"), "list"], env=env, capture_output=True, text=True,
                                timeout=120)
        assert "No lab is running" in listed.stdout
    finally:
        blocker.close()
        if launcher.poll() is None:
            launcher.terminate()
            launcher.wait(timeout=60)
        for pid in tree:
            if running.is_alive(pid):
                os.kill(pid, 9)


def _records(env: dict, monkeypatch) -> list[running.Lab]:
    """The launcher's records, read as the user whose environment is `env`."""
    monkeypatch.setenv(running.RUNTIME_ENV, env[running.RUNTIME_ENV])
    return running.running()


def test_ctrl_c_stops_the_server_and_its_tree(installed, user, monkeypatch):
    elsewhere, env = user
    launcher = subprocess.Popen([str(installed / "informer-lab"), "--no-browser", "--new"], cwd=elsewhere, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = Lines(launcher.stdout)
    try:
        lines.wait_for("Informer Lab is serving at", 240, launcher)
        lab = _records(env, monkeypatch)[0]
        tree = [lab.pid, *running.descendants(lab.pid)]
        launcher.send_signal(2)  # SIGINT, as Ctrl-C in its terminal
        launcher.wait(timeout=60)
        assert not any(running.is_alive(pid) for pid in tree) and _records(env, monkeypatch) == []
    finally:
        if launcher.poll() is None:
            launcher.kill()
