"""`informer-lab ui`: serve the app on this machine and open it, as `jupyter lab` and `marimo edit` do.

- Binds 127.0.0.1 (a network address only with `--host`, and then the server asks for its access token).
- Takes port 8501, or the next free one when it is taken, and says which; `--port N` takes N or stops with a message.
- A lab already running for this user is reused (its URL printed and opened) unless `--new`.
- Runs the server (`streamlit run app.py`) as a child in its own process group, waits for its health route, then
  opens the browser (not with `--no-browser`, nor where there is no display) or a native window (`--window`, with
  pywebview from the `desktop` extra).
- Ctrl-C (or `informer-lab stop`) stops the server and every process it started; the record is removed.

The server's settings are the ones `.streamlit/config.toml` gives a checkout, passed as flags (an installed copy has
no such file beside it; tests/launcher/test_launcher.py checks the two agree).
"""
from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import webbrowser

from . import running
from .home import check_folder, lab_home
from .source import SERVER_APP, child_env, command

DEFAULT_PORT = 8501
PORTS_TRIED = 50  # 8501 … 8550, as Jupyter tries 50 ports
START_TRIES = 3  # ports tried when another process takes the chosen one before the server binds it
HEALTH_TIMEOUT_S = 180.0  # a cold first start on a loaded two-core machine imports Streamlit's server in ~10 s
LOOPBACK = "127.0.0.1"

# The server settings of .streamlit/config.toml (every one but client.allowedOrigins: framing is refused by the
# lab's own middleware, ui/access.py), then the launcher's own: no browser from Streamlit (the launcher opens one
# once the server is healthy) and no watching of the installed source for changes.
SERVER_OPTIONS = {
    "browser.gatherUsageStats": "false",
    "logger.hideWelcomeMessage": "true",
    "server.maxUploadSize": "1024",
    "server.runOnSave": "false",
    "client.toolbarMode": "minimal",
    "theme.base": "light",
}
LAUNCHER_OPTIONS = {"server.headless": "true", "server.fileWatcherType": "none"}


class LaunchError(Exception):
    """A launch the user can fix (a port taken, no free port): one line, exit 2."""


def port_is_free(port: int, host: str = LOOPBACK) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    # A server bound to every interface also takes the port on loopback, and the reverse: check both.
    if host != LOOPBACK:
        return True
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def choose_port(requested: int | None, host: str) -> int:
    if requested is not None:
        if not port_is_free(requested, host):
            raise LaunchError(f"port {requested} is taken; choose another with --port, or leave --port out to take "
                              f"the next free one from {DEFAULT_PORT}")
        return requested
    for port in range(DEFAULT_PORT, DEFAULT_PORT + PORTS_TRIED):
        if port_is_free(port, host):
            return port
    raise LaunchError(f"no free port from {DEFAULT_PORT} to {DEFAULT_PORT + PORTS_TRIED - 1}; "
                      f"stop a lab ({command('list')}, {command('stop')}) or choose one with --port")


def server_command(port: int, host: str) -> list[str]:
    flags = [f"--{key}={value}" for key, value in {**SERVER_OPTIONS, **LAUNCHER_OPTIONS}.items()]
    return [sys.executable, "-P", "-m", "streamlit", "run", str(SERVER_APP), f"--server.address={host}",
            f"--server.port={port}", *flags]


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only: never through a proxy


def reachable_host(host: str) -> str:
    """Where this machine reaches a server bound to `host`: loopback for a wildcard address, else the address."""
    if host in ("", "0.0.0.0", "::"):
        return LOOPBACK
    return f"[{host}]" if ":" in host else host


def is_healthy(port: int, host: str = LOOPBACK) -> bool:
    """The server's health route answers (it needs no token, even on a served lab: ui/access.py)."""
    try:
        with _opener().open(f"http://{reachable_host(host)}:{port}/_stcore/health", timeout=2) as answer:
            return answer.status == 200
    except (urllib.error.URLError, OSError):
        return False


def answers_as(port: int, start_id: str, host: str = LOOPBACK) -> bool:
    """The server answering on `port` is the one started with `start_id`: its start route (open like the health
    route, ui/access.py) answers that id's digest. Another process on the port (a lab started meanwhile, any other
    server) does not."""
    from informer_lab.ui.access import START_PATH, start_digest

    try:
        with _opener().open(f"http://{reachable_host(host)}:{port}{START_PATH}", timeout=2) as answer:
            return answer.status == 200 and answer.read(200).decode(errors="replace") == start_digest(start_id)
    except (urllib.error.URLError, OSError):
        return False


def wait_ready(port: int, server: subprocess.Popen, start_id: str, host: str = LOOPBACK,
               timeout_s: float = HEALTH_TIMEOUT_S) -> bool:
    """True once the server this launcher started answers on `port`, healthy; False when it exits or the time is
    up. Whatever else answers on the port meanwhile is not taken for it."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            return False
        if answers_as(port, start_id, host) and is_healthy(port, host):
            return True
        time.sleep(0.2)
    return False


def exit_code(code: int) -> int:
    """The launcher's exit code for the server's: 0 when a stop ended it (`informer-lab stop`: SIGTERM; Ctrl-C:
    SIGINT), however the server reported the signal (−15, 128 + 15, or 241 = −15 mod 256); else the server's own."""
    asked = {signal.SIGTERM, signal.SIGINT}
    return 0 if code == 0 or any(code in (-s, 128 + s, 256 - s) for s in asked) else code


def has_display() -> bool:
    """Whether a browser can be shown: always on macOS and Windows; on Linux and the BSDs, an X or Wayland display."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_browser(url: str) -> None:
    if not has_display():
        print("  (no display here: open the URL in a browser)", flush=True)
        return
    webbrowser.open(url)


def open_window(url: str) -> bool:
    """A native window on the lab (pywebview), blocking until it is closed; False, with the reason printed in one
    line, where it cannot be shown."""
    try:
        import webview  # noqa: PLC0415  (optional: pip install 'informer-lab[desktop]')
    except ImportError:
        print("--window needs pywebview (pip install 'informer-lab[desktop]'); opening the browser instead", flush=True)
        return False
    if not has_display():
        print("--window needs a display; none here", flush=True)
        return False
    try:
        webview.create_window("Informer Lab", url, width=1400, height=900)
        webview.start()
    except Exception as err:  # noqa: BLE001  pywebview's backends raise their own kinds; the browser still works
        print(f"--window could not open a window ({' '.join(str(err).split())[:120]}); opening the browser instead",
              flush=True)
        return False
    return True


def _local_url(host: str, port: int) -> str:
    return f"http://{reachable_host(host)}:{port}/"


def reuse(browser: bool) -> int | None:
    """Point to a lab of this user's that is running and healthy, as TensorBoard's "reusing" does; None if none."""
    for lab in running.running():
        if is_healthy(lab.port, lab.host):
            print(f"Informer Lab is already running at {lab.url} (pid {lab.pid}, started "
                  f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(lab.started))} in {lab.folder}).\n"
                  f"  {command('ui --new')} starts another; {command(f'stop {lab.port}')} stops it.", flush=True)
            if browser:
                open_browser(lab.url)
            return 0
    return None


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM to the launcher stops the server as Ctrl-C does


def _start(port: int, host: str, home) -> tuple[subprocess.Popen, str]:
    """The server on `port` as a child in its own process group (running in the lab's home), and its start id."""
    from informer_lab.ui.access import START_ENV

    start_id = secrets.token_hex(16)
    # The server runs in the lab's home: Streamlit reads a .streamlit/config.toml from its working folder, and the
    # folder a user starts the lab from should not change how it is served (a checkout's home is the checkout).
    server = subprocess.Popen(server_command(port, host), start_new_session=True, cwd=home,
                              env={**child_env(), START_ENV: start_id})
    running.write(running.Lab(port=port, pid=server.pid, started=time.time(), folder=os.getcwd(), home=str(home),
                              url=_local_url(host, port), proc_start=running.process_start(server.pid), host=host))
    return server, start_id


def _stop(server: subprocess.Popen, port: int) -> list[int]:
    survivors = running.stop_tree(server.pid) if server.poll() is None else []
    server.poll()
    running.forget(port)
    return survivors


def serve(port: int | None = None, host: str = LOOPBACK, browser: bool = True, window: bool = False,
          new: bool = False) -> int:
    if not new:
        reused = reuse(browser and not window)
        if reused is not None:
            return reused
    # Ctrl-C and `informer-lab stop` both stop the server. SIGINT gets its handler here too: a launcher started from a
    # shell script or in the background inherits SIGINT ignored, and Python then installs none, so an explicit
    # `kill -INT` (what a supervisor or a test sends for Ctrl-C) would leave the launcher and its server running.
    for asked in (signal.SIGTERM, signal.SIGINT):
        signal.signal(asked, _interrupt)
    home = check_folder(lab_home().path, "the lab's home", write=True)  # a loop, a file, a device: one line
    server, chosen = None, None
    try:
        for attempt in range(1, START_TRIES + 1):
            chosen = choose_port(port, host)
            if port is None and chosen != DEFAULT_PORT and attempt == 1:
                print(f"Port {DEFAULT_PORT} is taken; serving on port {chosen} instead.", flush=True)
            server, start_id = _start(chosen, host, home)
            if wait_ready(chosen, server, start_id, host):
                break
            code = server.poll()
            survivors = _stop(server, chosen)
            if survivors:
                print(f"warning: processes {survivors} did not stop", file=sys.stderr, flush=True)
            if code is None:
                raise LaunchError(f"the server did not answer on port {chosen} within {HEALTH_TIMEOUT_S:.0f} s")
            if port_is_free(chosen, host):
                raise LaunchError(f"the server did not start (exit code {code}); its messages are above")
            taken = f"port {chosen} was taken by another process after the launcher chose it"
            if port is not None or attempt == START_TRIES:
                raise LaunchError(f"{taken}; start again" + (" with another --port" if port is not None else ""))
            print(f"{taken[0].upper()}{taken[1:]}; trying the next free port.", flush=True)
        url = _local_url(host, chosen)
        served = "" if host == LOOPBACK else " (served to the network: open the token URL printed above)"
        print(f"Informer Lab is serving at {url}{served} (pid {server.pid}; lab home {home}).\n"
              f"  Ctrl-C stops it; {command('list')} shows the running labs.", flush=True)
        if window and open_window(url):
            return 0  # the window was closed: stop the server (finally)
        if browser or window:
            open_browser(url)
        return exit_code(server.wait())
    except KeyboardInterrupt:
        print("\nStopping Informer Lab…", flush=True)
        return 0
    finally:
        survivors = _stop(server, chosen) if server is not None else []
        if survivors:
            print(f"warning: processes {survivors} did not stop", file=sys.stderr, flush=True)


__all__ = ["DEFAULT_PORT", "LAUNCHER_OPTIONS", "LaunchError", "SERVER_OPTIONS", "answers_as", "choose_port",
           "exit_code", "has_display", "is_healthy", "port_is_free", "reuse", "serve", "server_command", "wait_ready"]
