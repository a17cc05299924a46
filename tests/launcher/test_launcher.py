"""The launcher's pieces (informer_lab): where the lab's state lives, the port it takes, the records of running labs
and stopping a process tree. The whole command, installed, is tested in test_install.py."""
from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from informer_lab import home, launch, running

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def runtime(tmp_path, monkeypatch):
    monkeypatch.setenv(running.RUNTIME_ENV, str(tmp_path / "rt"))
    return tmp_path / "rt" / "running"


def test_server_flags_agree_with_the_checkout_config():
    """An installed lab has no .streamlit/config.toml beside app.py: the launcher passes the same settings as flags."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    flat = {f"{section}.{key}": value for section, options in config.items() for key, value in options.items()}
    flat.pop("client.allowedOrigins")  # framing is refused by the lab's middleware (ui/access.py)
    assert flat.pop("server.address") == launch.LOOPBACK
    as_flags = {key: str(value).lower() if isinstance(value, bool) else str(value) for key, value in flat.items()}
    assert as_flags == launch.SERVER_OPTIONS
    command = launch.server_command(8600, launch.LOOPBACK)
    assert "--server.address=127.0.0.1" in command and "--server.port=8600" in command
    assert command[-len(launch.SERVER_OPTIONS) - len(launch.LAUNCHER_OPTIONS):][0].startswith("--browser.")


def test_home_rules(tmp_path, monkeypatch):
    for variable in (home.HOME_ENV, home.RUNS_ENV, home.STUDIES_ENV):
        monkeypatch.delenv(variable, raising=False)
    assert home.is_checkout() == (ROOT / ".git").exists()
    if home.is_checkout():  # a clone keeps its runs/ beside app.py
        assert home.runs_dir() == ROOT / "runs" and home.lab_home().why == "the source checkout"
    monkeypatch.setenv(home.HOME_ENV, str(tmp_path / "h"))
    assert home.runs_dir() == tmp_path / "h" / "runs" and home.studies_dir() == tmp_path / "h" / "studies"
    monkeypatch.setenv(home.RUNS_ENV, str(tmp_path / "r"))
    assert home.runs_dir() == tmp_path / "r" and home.studies_dir() == tmp_path / "h" / "studies"


def test_installed_copy_uses_the_users_data_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(home.HOME_ENV, raising=False)
    monkeypatch.setattr(home, "is_checkout", lambda root=None: False)
    import platformdirs

    assert home.lab_home().path == platformdirs.user_data_path("informer-lab", appauthor=False)


def test_a_taken_port_is_skipped_and_a_requested_one_refused():
    with socket.socket() as taken:
        taken.bind((launch.LOOPBACK, 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert not launch.port_is_free(port)
        with pytest.raises(launch.LaunchError, match=f"port {port} is taken"):
            launch.choose_port(port, launch.LOOPBACK)
    assert launch.port_is_free(port)


def test_default_port_moves_on_when_8501_is_taken():
    with socket.socket() as taken:
        try:
            taken.bind((launch.LOOPBACK, launch.DEFAULT_PORT))
            taken.listen()
        except OSError:
            pass  # taken already by something else: the same case
        chosen = launch.choose_port(None, launch.LOOPBACK)
        assert launch.DEFAULT_PORT < chosen < launch.DEFAULT_PORT + launch.PORTS_TRIED


def test_records_are_owner_only_and_dropped_when_the_process_has_gone(runtime):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lab = running.Lab(port=8777, pid=child.pid, started=time.time(), folder="/x", home="/h", url="u",
                          proc_start=running.process_start(child.pid))
        path = running.write(lab)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(runtime.stat().st_mode) == 0o700
        assert running.running() == [lab]
        if lab.proc_start is not None:  # a reused pid (another start time) is not the lab
            running.write(running.Lab(**{**lab.__dict__, "port": 8778, "proc_start": lab.proc_start + 1}))
            assert [x.port for x in running.running()] == [8777]
    finally:
        child.kill()
        child.wait()
    assert running.running() == [] and not path.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the process tree is read from /proc")
def test_stop_tree_ends_every_descendant():
    """A parent in its own session with a child and a grandchild that ignore SIGTERM: all gone after stop_tree."""
    script = ("import signal, subprocess, sys, time\n"
              "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
              "if len(sys.argv) < 2: subprocess.Popen([sys.executable, __file__, '1'])\n"
              "elif sys.argv[1] == '1': subprocess.Popen([sys.executable, __file__, '2'])\n"
              "time.sleep(120)\n")
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"tree-{os.getpid()}.py"
    path.write_text(script)
    parent = subprocess.Popen([sys.executable, str(path)], start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while len(running.descendants(parent.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        tree = [parent.pid, *running.descendants(parent.pid)]
        assert len(tree) == 3
        assert running.stop_tree(parent.pid, grace_s=1.0) == []
        parent.wait(timeout=10)
        assert not any(running.is_alive(pid) for pid in tree)
    finally:
        path.unlink(missing_ok=True)
        if parent.poll() is None:
            parent.kill()


def test_stop_and_list_commands_name_the_problem(runtime, capsys):
    from informer_lab import cli

    assert cli.main(["list"], prog="informer-lab") == 0
    assert "No lab is running" in capsys.readouterr().out
    assert cli.main(["stop", "8123"], prog="informer-lab") == 2
    assert "no lab of yours runs on port 8123" in capsys.readouterr().err
    assert cli.main(["stop", "soon"], prog="informer-lab") == 2
    assert "stop takes a port or all" in capsys.readouterr().err


def test_no_command_means_ui(monkeypatch):
    from informer_lab import cli
    from informer_lab import __main__ as entry

    seen = []
    monkeypatch.setattr(cli, "main", lambda argv, prog: seen.append((argv, prog)) or 0)
    entry.main([])
    entry.main(["--port", "8600", "--no-browser"])
    entry.main(["--version"])
    entry.main(["evaluate", "--help"])
    assert seen == [(["ui"], "informer-lab"), (["ui", "--port", "8600", "--no-browser"], "informer-lab"),
                    (["--version"], "informer-lab"), (["evaluate", "--help"], "informer-lab")]


class _OtherServer:
    """Another process's server on a loopback port: healthy, and it knows no start id but `start_id`'s (or none)."""

    def __init__(self, start_id: str | None = None):
        import http.server
        import threading

        from informer_lab.ui.access import HEALTH, START_PATH, start_digest

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = {HEALTH: b"ok", START_PATH: start_digest(start_id).encode() if start_id else None}.get(self.path)
                self.send_response(200 if body else 404)
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer((launch.LOOPBACK, 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_healthy_server_is_taken_for_the_lab_only_with_its_start_id():
    other = _OtherServer(start_id="theirs")
    waiting = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # ours, never binding
    try:
        assert launch.is_healthy(other.port)
        assert launch.answers_as(other.port, "theirs") and not launch.answers_as(other.port, "ours")
        assert not launch.wait_ready(other.port, waiting, "ours", timeout_s=1.5)
    finally:
        other.close()
        waiting.kill()
        waiting.wait()


def test_a_port_taken_after_it_was_chosen_is_said_not_claimed(runtime, tmp_path, monkeypatch, capsys):
    """The server cannot bind the port another process took meanwhile and exits: the launcher says so, tries the
    next port, and after its tries stops with that reason, never reporting the other process as the lab."""
    other = _OtherServer()
    monkeypatch.setenv(home.HOME_ENV, str(tmp_path / "home"))
    monkeypatch.setattr(launch, "choose_port", lambda port, host: other.port)
    monkeypatch.setattr(launch, "server_command", lambda port, host: [sys.executable, "-c", "raise SystemExit(1)"])
    try:
        with pytest.raises(launch.LaunchError, match=f"port {other.port} was taken by another process after the "
                                                     "launcher chose it; start again"):
            launch.serve(browser=False, new=True)
        out = capsys.readouterr().out
        assert out.count("trying the next free port") == launch.START_TRIES - 1 and "is serving" not in out
        assert running.running() == []
    finally:
        other.close()


@pytest.mark.parametrize("code, expected", [(0, 0), (-15, 0), (-2, 0), (241, 0), (143, 0), (130, 0), (254, 0),
                                            (1, 1), (2, 2), (-9, -9)])
def test_the_launcher_exits_0_when_a_stop_ended_the_server(code, expected):
    assert launch.exit_code(code) == expected


def test_commands_are_shown_as_the_lab_was_started(monkeypatch):
    """`python cli.py` in a checkout (or as cli.py was run), `informer-lab` installed or as the launcher ran it; a
    process the lab starts (its server, a study) inherits the way."""
    from informer_lab import source

    monkeypatch.delenv(source.COMMAND_ENV, raising=False)
    assert source.command("runs") == ("python cli.py runs" if source.CHECKOUT else "informer-lab runs")
    with source.started_as("informer-lab"):
        assert source.command("train --csv F") == "informer-lab train --csv F"
        assert source.child_env({})[source.COMMAND_ENV] == "informer-lab"
    monkeypatch.setenv(source.COMMAND_ENV, "python -m informer_lab")  # a server the launcher started that way
    assert source.command("list") == "python -m informer_lab list"
    monkeypatch.setattr(source, "CHECKOUT", None)
    monkeypatch.delenv(source.COMMAND_ENV)
    assert source.command("list") == "informer-lab list"
