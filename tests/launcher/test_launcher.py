"""The launcher's pieces (informer_lab): where the lab's state lives, the port it takes, the records of running labs
and stopping a process tree. The whole command, installed, is tested in test_install.py."""
from __future__ import annotations

import json
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


def fake_server(port: int) -> subprocess.Popen:
    """A process of the test's own that looks like a lab server: the server app's command line and its port,
    listening (the launcher's record is trusted only for such a process)."""
    from informer_lab.source import SERVER_APP

    code = ("import socket, sys, time\n"
            "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            f"s.bind(('127.0.0.1', {port})); s.listen(); print('up', flush=True); time.sleep(120)\n")
    child = subprocess.Popen([sys.executable, "-c", code, "streamlit", "run", str(SERVER_APP),
                              f"--server.port={port}"], stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert child.stdout.readline().strip() == "up"
    return child


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_records_are_owner_only_and_dropped_when_the_process_has_gone(runtime):
    port = free_port()
    child = fake_server(port)
    try:
        lab = running.Lab(port=port, pid=child.pid, started=time.time(), folder="/x", home="/h", url="u",
                          proc_start=running.process_start(child.pid))
        path = running.write(lab)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(runtime.stat().st_mode) == 0o700
        assert running.running() == [lab]
        if lab.proc_start is not None:  # a reused pid (another start time) is not the lab
            running.write(running.Lab(**{**lab.__dict__, "port": port + 1, "proc_start": lab.proc_start + 1}))
            found = running.survey()
            assert [x.port for x in found.labs] == [port] and "another time" in " ".join(found.skipped)
    finally:
        child.kill()
        child.wait()
    assert running.running() == [] and not path.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command line and start time are read from /proc")
def test_stop_signals_only_a_lab_server_and_a_process_of_ours_named_by_a_record_survives(runtime, capsys):
    """A record naming a process of the test's own (alive, ours, its true start time, but no lab server) is reported
    in one line and skipped: `stop` sends it nothing. A real-looking server on the record's port is stopped."""
    from informer_lab import cli

    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    port = free_port()
    server = fake_server(port)
    try:
        running.write(running.Lab(port=port + 1, pid=bystander.pid, started=time.time(), folder="/x", home="/h",
                                  url="u", proc_start=running.process_start(bystander.pid)))
        running.write(running.Lab(port=port, pid=server.pid, started=time.time(), folder="/x", home="/h", url="u",
                                  proc_start=running.process_start(server.pid)))
        assert cli.main(["stop", "all"], prog="informer-lab") == 0
        out, err = capsys.readouterr()
        assert f"Stopped the lab on port {port}" in out
        notes = [line for line in err.splitlines() if line.strip()]
        assert len(notes) == 1 and f"lab-{port + 1}.json" in notes[0] and "not a lab server" in notes[0], notes
        assert server.wait(timeout=30) is not None
        time.sleep(0.2)
        assert bystander.poll() is None  # still running: never signalled
    finally:
        for child in (bystander, server):
            child.kill()
            child.wait()


def test_damaged_records_are_reported_in_one_line_and_never_signalled(runtime, capsys, monkeypatch):
    """pid as a string, a float, a huge number, 1, 0, −1; fields missing or extra; a list; nested JSON; no JSON:
    `list` and `stop` report each in one line and signal nothing (os.kill is watched)."""
    from informer_lab import cli

    runtime.mkdir(parents=True, exist_ok=True)
    good = {"port": 8700, "pid": 0, "started": 1.0, "folder": "/x", "home": "/h", "url": "u", "proc_start": 5}
    bad = {"str": {**good, "pid": "123"}, "float": {**good, "pid": 123.0}, "huge": {**good, "pid": 2**70},
           "one": {**good, "pid": 1}, "zero": {**good, "pid": 0}, "minus": {**good, "pid": -1},
           "bool": {**good, "pid": True}, "port": {**good, "pid": 4242, "port": 70000},
           "extra": {**good, "pid": 4242, "user": "x"}, "missing": {"pid": 4242}}
    for i, (name, record) in enumerate(bad.items()):
        (runtime / f"lab-{9000 + i}.json").write_text(json.dumps(record))
    (runtime / "lab-9100.json").write_text("[1, 2]")
    (runtime / "lab-9101.json").write_text("[" * 50_000 + "]" * 50_000)
    (runtime / "lab-9102.json").write_text("not json")
    signalled = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: signalled.append((pid, sig)))
    monkeypatch.setattr(os, "killpg", lambda pid, sig: signalled.append((pid, sig)))
    assert cli.main(["list"], prog="informer-lab") == 0
    out, err = capsys.readouterr()
    notes = [line for line in err.splitlines() if line.strip()]
    assert "No lab is running" in out and len(notes) == len(bad) + 3, notes
    assert all(line.startswith("note: lab-") and "nothing was signalled" in line for line in notes)
    assert "Traceback" not in err and signalled == [] and list(runtime.glob("lab-*.json")) == []
    assert running.stop_tree.__name__ and not running.is_alive(-1) and not running.is_alive(0)
    with pytest.raises(ValueError, match="nothing was signalled"):
        running.stop_tree(-1)
    assert signalled == []


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
    assert "expected a port from 1 to 65,535 or all" in capsys.readouterr().err


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
