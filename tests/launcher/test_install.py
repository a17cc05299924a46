"""The lab as a user installs it: a wheel with one import package, `pip install` of it into a fresh virtual
environment, an editable install that imports the very same modules, and the `informer-lab` command run from a
folder that holds the user's own `model.py`, `analysis/`, `ui.py`, `cli.py`, `app.py` and `utils.py` (each raising
on import): served with port 8501 taken, listed, opened in a real browser on the Runs page, stopped with nothing of
its process tree left; the Python blocks of docs/python-api.md run there as written.

The environments reuse the installed packages (`--system-site-packages`, pip's `--no-index`: nothing is fetched, and
a dependency missing from the machine fails the install instead of downloading it), so only the lab's own files are
installed; the copy of the source it builds from leaves the checkout untouched.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from informer_lab import __version__, running

ROOT = Path(__file__).resolve().parents[2]
SKIP = {".git", "runs", "studies", "tests", "benchmarks", "build", "test-artifacts", ".hypothesis", ".benchmarks",
        "__pycache__", ".pytest_cache", ".venv", "instrument_benchmarks"}
USER_MODULES = ("model.py", "analysis/__init__.py", "ui.py", "cli.py", "app.py", "utils.py")  # the user's own

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process trees are read from /proc")


def _pip(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", *args, "-q", "--no-index", "--no-build-isolation",
                           "--disable-pip-version-check"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


def _venv(folder: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(folder)], check=True)
    return folder / "bin" / "python"


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """A copy of the checkout's source (no runs, tests or git), to build and install from."""
    copy = tmp_path_factory.mktemp("source") / "informer-lab"
    shutil.copytree(ROOT, copy, ignore=lambda folder, names: [
        n for n in names if n == "__pycache__" or n.endswith(".egg-info") or (Path(folder) == ROOT and n in SKIP)])
    return copy


@pytest.fixture(scope="module")
def wheel(source, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _pip("wheel", "--no-deps", "-w", str(out), str(source))
    return next(out.glob("informer_lab-*.whl"))


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The virtual environment's bin folder, the wheel installed in it."""
    python = _venv(tmp_path_factory.mktemp("install") / "venv")
    _pip("--python", str(python), "install", "--no-deps", str(wheel))
    return python.parent


@pytest.fixture
def user(tmp_path) -> tuple[Path, dict]:
    """The user's project folder, away from the checkout, holding modules of the user's own under the lab's former
    names (each raising on import); an environment whose lab home and runtime records are temporary."""
    elsewhere = tmp_path / "elsewhere"
    for name in USER_MODULES:
        (elsewhere / name).parent.mkdir(parents=True, exist_ok=True)
        (elsewhere / name).write_text(f"raise ImportError('a module of the user was imported: {name}')\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "INFORMER_LAB_RUNS", "INFORMER_LAB_STUDIES")}
    env.update(INFORMER_LAB_HOME=str(tmp_path / "home"), INFORMER_LAB_RUNTIME_DIR=str(tmp_path / "runtime"))
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    return elsewhere, env


def test_the_wheel_holds_one_import_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"informer_lab", f"informer_lab-{__version__}.dist-info"}
    top_level = zipfile.ZipFile(wheel).read(f"informer_lab-{__version__}.dist-info/top_level.txt").decode().split()
    assert top_level == ["informer_lab"]
    modules = {n for n in names if n.endswith(".py")}
    for folder in ("analysis", "model", "ui", "study", "cli_commands"):  # every module of the checkout's folders
        for path in (ROOT / folder).rglob("*.py"):
            assert f"informer_lab/{path.relative_to(ROOT).as_posix()}" in modules, path
    assert not any(n.startswith("informer_lab/sample_data/") and n.endswith(".py") for n in names)  # data only
    assert {"informer_lab/sample_data/sample.csv", "informer_lab/sample_data/checkpoint/weights.safetensors",
            "informer_lab/lab.py", "informer_lab/server/app.py",
            "informer_lab/analysis/planted/measured/instruments.csv"} <= set(names)  # the scores beside every instrument


FIND = """
import hashlib, importlib.util, json, sys
out = {}
for name in sys.argv[1:]:
    spec = importlib.util.find_spec(name)
    out[name] = hashlib.sha256(open(spec.origin, "rb").read()).hexdigest() if spec and spec.origin else None
print(json.dumps(out))
"""


def test_an_editable_install_imports_the_wheels_modules(wheel, installed, source, tmp_path, user):
    """Each module the wheel holds is found by an editable install too, with the same content (setuptools' editable
    installs of remapped packages are a known trap), from a folder of the user's own."""
    elsewhere, env = user
    editable = _venv(tmp_path / "editable")
    _pip("--python", str(editable), "install", "--no-deps", "-e", str(source))
    modules = sorted(n[:-3].replace("/", ".").removesuffix(".__init__") for n in zipfile.ZipFile(wheel).namelist()
                     if n.endswith(".py") and "/__main__" not in n and "/server/app" not in n and n != "informer_lab/lab.py")
    found = {}
    for python in (installed / "python", editable):
        done = subprocess.run([str(python), "-c", FIND, *modules], cwd=elsewhere, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        found[python] = json.loads(done.stdout.strip().splitlines()[-1])
    wheel_found, editable_found = found.values()
    assert len(modules) > 250 and None not in wheel_found.values()
    assert editable_found == wheel_found


def test_installed_command_and_files(installed, user):
    elsewhere, env = user
    for command in ([str(installed / "informer-lab"), "--version"],
                    [str(installed / "python"), "-m", "informer_lab", "--version"]):
        out = subprocess.run(command, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and out.stdout.strip() == f"informer-lab {__version__}", out.stderr
    helped = subprocess.run([str(installed / "python"), "-m", "informer_lab", "--help"], cwd=elsewhere, env=env,
                            capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: python -m informer_lab"), helped.stderr
    where = subprocess.run([str(installed / "python"), "-c", "import informer_lab.ui.settings as s; print(s.__file__);"
                            " print(s.SAMPLE_CHECKPOINT.joinpath('manifest.json').is_file())"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    module_file, sample_shipped = where.stdout.split()
    assert not Path(module_file).is_relative_to(ROOT) and sample_shipped == "True", where.stderr
    # the dependencies are requirements.txt's, read by the build (one place pins them)
    requires = subprocess.run([str(installed / "python"), "-c", "from importlib.metadata import requires; "
                               "print('\\n'.join(requires('informer-lab')))"], cwd=elsewhere, env=env,
                              capture_output=True, text=True, timeout=120).stdout.split("\n")
    pinned = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert [r.replace(" ", "") for r in requires if r and "extra ==" not in r] == pinned


def test_the_python_api_page_runs_as_written(installed, user):
    """Every Python block of docs/python-api.md, in order, in the installed lab, from the user's folder."""
    elsewhere, env = user
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "python-api.md").read_text(), re.S)
    assert len(blocks) >= 3
    done = subprocess.run([str(installed / "python"), "-c", "\n".join(blocks)], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Test MSE (standardised)" in done.stdout and "delta_mse" in done.stdout


def test_train_without_out_writes_a_run_the_lab_lists(installed, user):
    elsewhere, env = user
    data = elsewhere / "sales.csv"
    data.write_text("\n".join(["date,units", *(f"2024-01-{1 + i // 24:02d} {i % 24:02d}:00,{(i * 7) % 24 + i / 50}"
                                               for i in range(24 * 28))]) + "\n")
    lab = str(installed / "informer-lab")
    trained = subprocess.run([lab, "train", "--csv", str(data), "--seq-len", "24", "--label-len", "12",
                              "--pred-len", "6", "--d-model", "16", "--n-heads", "2", "--d-ff", "16", "--epochs", "1",
                              "--max-steps", "5"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=600)
    assert trained.returncode == 0, trained.stderr[-3000:]
    name = re.search(r"run '(sales-[0-9-]+)' written to", trained.stdout).group(1)
    assert (Path(env["INFORMER_LAB_HOME"]) / "runs" / name / "manifest.json").is_file()
    assert "`informer-lab runs` lists the runs" in trained.stdout  # the command as this user started the lab
    listed = subprocess.run([lab, "runs"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and name in listed.stdout and "seasonal naive MSE" in listed.stdout
    evaluated = subprocess.run([lab, "evaluate", "--checkpoint", name, "--csv", str(data), "--no-baseline-check"],
                               cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)
    assert evaluated.returncode == 0 and evaluated.stdout.startswith("test mse "), evaluated.stderr[-2000:]


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


@pytest.fixture
def launch_lab(installed, user, monkeypatch):
    """Starts `informer-lab ARGS` from the user's folder; at teardown, also when the test failed or timed out, the
    launcher is asked to stop (it stops its server's tree), then killed, and every server its records name is
    stopped with its whole tree: nothing the test started outlives it."""
    elsewhere, env = user
    started: list[subprocess.Popen] = []

    def start(*args: str) -> tuple[subprocess.Popen, Lines]:
        launcher = subprocess.Popen([str(installed / "informer-lab"), *args], cwd=elsewhere, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        started.append(launcher)
        return launcher, Lines(launcher.stdout)

    yield start
    for launcher in started:
        if launcher.poll() is None:
            launcher.terminate()
            try:
                launcher.wait(timeout=30)
            except subprocess.TimeoutExpired:
                launcher.kill()
                launcher.wait(timeout=30)
    for lab in _records(env, monkeypatch):
        running.stop(lab)


def test_serve_on_a_free_port_list_open_runs_and_stop(installed, user, launch_lab, monkeypatch):
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
    try:
        launcher, lines = launch_lab("ui", "--no-browser")
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
        assert launcher.wait(timeout=60) == 0  # a lab ended by `stop` exits 0
        assert not any(running.is_alive(pid) for pid in tree)
        listed = subprocess.run([str(installed / "informer-lab"), "list"], env=env, capture_output=True, text=True,
                                timeout=120)
        assert "No lab is running" in listed.stdout
    finally:
        blocker.close()


def _records(env: dict, monkeypatch) -> list[running.Lab]:
    """The launcher's records, read as the user whose environment is `env`."""
    monkeypatch.setenv(running.RUNTIME_ENV, env[running.RUNTIME_ENV])
    return running.running()


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_ctrl_c_stops_the_server_and_its_tree(user, launch_lab, monkeypatch, inherited):
    """Also when the launcher inherits SIGINT ignored (started from a script or in the background: Python then
    installs no handler of its own), as the suite itself may be."""
    elsewhere, env = user
    if inherited == "ignored":
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Popen's child inherits the disposition
        try:
            launcher, lines = launch_lab("--no-browser", "--new")
        finally:
            signal.signal(signal.SIGINT, previous)
    else:
        launcher, lines = launch_lab("--no-browser", "--new")
    lines.wait_for("Informer Lab is serving at", 240, launcher)
    lab = _records(env, monkeypatch)[0]
    tree = [lab.pid, *running.descendants(lab.pid)]
    launcher.send_signal(2)  # SIGINT, as Ctrl-C in its terminal
    try:
        code = launcher.wait(timeout=60)
    except subprocess.TimeoutExpired:
        alive = [pid for pid in tree if running.is_alive(pid)]
        raise AssertionError(f"the launcher did not stop within 60 s of Ctrl-C (still alive: {alive}); it printed: "
                             + "".join(lines.lines)[-3000:]) from None
    assert code == 0, "".join(lines.lines)[-3000:]
    assert not any(running.is_alive(pid) for pid in tree) and _records(env, monkeypatch) == []
