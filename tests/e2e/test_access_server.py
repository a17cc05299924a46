"""Who can reach a running lab: started as the README says, it listens on loopback only and answers
nothing to a rebound Host; served to the network on purpose, a browser without the access token sees the page that
asks for it and nothing else, and the lab starts nothing until the token is given."""
from __future__ import annotations

import http.client
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.test_browser import SLOW, VIEWPORT, _free_port, browser, screenshots, shoot  # noqa: F401 (fixtures)
from tests.sockets import listening, loopback

ROOT = Path(__file__).resolve().parents[2]


class Server:
    """`streamlit run app.py [extra]` from the repository root, as the README starts it."""

    def __init__(self, tmp_path: Path, *extra: str, env: dict | None = None):
        self.port = _free_port()
        self.runs = tmp_path / "runs"
        self.log = tmp_path / "server.log"
        environ = {**os.environ, "INFORMER_LAB_RUNS": str(self.runs), "PYTHONUNBUFFERED": "1", **(env or {})}
        environ.pop("INFORMER_LAB_TOKEN", None) if not (env or {}).get("INFORMER_LAB_TOKEN") else None
        command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                   "--server.port", str(self.port), "--server.fileWatcherType", "none", *extra]
        self._out = open(self.log, "w")
        self.process = subprocess.Popen(command, cwd=ROOT, env=environ, stdout=self._out, stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 90
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"streamlit exited: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                    if response.read().strip() == b"ok":
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, self.log.read_text()[-2000:]
            time.sleep(0.25)

    def request(self, path: str = "/", host: str | None = None, headers: dict | None = None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        connection.request("GET", path, headers={"Host": host or f"127.0.0.1:{self.port}", **(headers or {})})
        response = connection.getresponse()
        return response.status, response.read()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._out.close()


WEBSOCKET = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
             "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}


def test_started_as_the_readme_says_it_listens_on_loopback_only_and_refuses_a_rebound_host(tmp_path):
    server = Server(tmp_path)
    try:
        sockets = listening(server.process.pid)
        assert any(port == server.port for _, port, _, _ in sockets), sockets
        assert all(loopback(address) for address, _, _, _ in sockets), sockets
        assert "Network URL" not in server.log.read_text()
        assert server.request()[0] == 200
        status, body = server.request(host="rebind.example")
        assert 400 <= status < 500 and b"<script" not in body and b"streamlit" not in body.lower()
        status, _ = server.request("/_stcore/stream", host=f"rebind.example:{server.port}", headers=WEBSOCKET)
        assert status != 101 and 400 <= status < 500
        assert server.request("/_stcore/stream", headers=WEBSOCKET)[0] == 101  # its own name still opens the socket
    finally:
        server.stop()


def test_served_to_the_network_nothing_is_shown_or_started_without_the_token(browser, screenshots, tmp_path):
    server = Server(tmp_path, "--server.address", "0.0.0.0")
    try:
        printed = re.search(r"\?token=([A-Za-z0-9_\-]+)", server.log.read_text())
        deadline = time.monotonic() + 20
        while printed is None and time.monotonic() < deadline:  # the lifespan prints it as the server starts
            time.sleep(0.25)
            printed = re.search(r"\?token=([A-Za-z0-9_\-]+)", server.log.read_text())
        assert printed, server.log.read_text()
        token = printed.group(1)
        status, body = server.request("/", headers={"Accept": "text/html"})
        assert status == 401 and b"access token" in body and b"<script" not in body
        assert server.request("/static/js/", headers={"Accept": "*/*"})[0] == 401
        assert server.request("/_stcore/stream", headers=WEBSOCKET)[0] != 101

        page = browser.new_page(viewport=VIEWPORT)
        page.goto(server.url)
        page.get_by_text("access token", exact=False).first.wait_for(timeout=30_000)
        time.sleep(3)
        assert page.locator('[data-testid="stApp"]').count() == 0
        assert not server.runs.exists() or not any(server.runs.iterdir())  # no session ran: the sample not installed
        shoot(page, screenshots, "access_token_page")

        page.get_by_label("Access token").fill("not the token")
        page.get_by_role("button", name="Open the lab").click()
        page.get_by_text("The token was not right").wait_for(timeout=30_000)
        page.get_by_label("Access token").fill(token)
        page.get_by_role("button", name="Open the lab").click()
        page.get_by_role("heading", name="Data & model", level=1).wait_for(timeout=SLOW)
        assert "token=" not in page.url
        shoot(page, screenshots, "access_granted")
        page.close()
    finally:
        server.stop()


@pytest.mark.parametrize("token", ["chosen-by-the-user-0123456789"])
def test_a_token_set_by_the_user_is_the_one_asked_for(tmp_path, token):
    server = Server(tmp_path, "--server.address", "0.0.0.0", env={"INFORMER_LAB_TOKEN": token})
    try:
        assert server.request("/", headers={"Authorization": f"token {token}"})[0] == 200
        assert server.request("/", headers={"Authorization": "token nope"})[0] == 401
    finally:
        server.stop()


def _trap():
    """A listening socket on loopback that counts the connections it is offered: the proxy every outbound HTTP request
    of the server is sent to (http_proxy / https_proxy), so that any request to another host shows up here."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    seen, stop = [], threading.Event()

    def accept():
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
                seen.append(connection.recv(200))
                connection.close()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    return listener.getsockname()[1], seen, stop


def test_served_to_the_network_the_lab_asks_no_other_host_and_refuses_a_short_token(tmp_path):
    """Streamlit looked up this machine's public address at checkip.amazonaws.com when bound to 0.0.0.0 (and again
    for a request from an unknown Origin); a one-character token was accepted."""
    port, seen, stop = _trap()
    proxy = f"http://127.0.0.1:{port}"
    env = {"http_proxy": proxy, "https_proxy": proxy, "HTTP_PROXY": proxy, "HTTPS_PROXY": proxy, "no_proxy": ""}
    server = Server(tmp_path, "--server.address", "0.0.0.0", env=env)
    try:
        status, _ = server.request("/_stcore/host-config", headers={"Origin": "https://elsewhere.example"})
        status, page = server.request("//evil.example/", headers={"Accept": "text/html"})
        assert status == 401 and b'action="/"' in page and b"evil.example" not in page
        status, body = server.request("/healthz")
        assert status == 200 and body.strip() == b"ok"
        time.sleep(2)
        assert seen == [], seen  # no request left for another host
    finally:
        server.stop()
        stop.set()
    short = subprocess.run([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                            "--server.address", "0.0.0.0", "--server.port", str(_free_port()),
                            "--server.fileWatcherType", "none"], cwd=ROOT, capture_output=True, text=True,
                           timeout=120, env={**os.environ, "INFORMER_LAB_TOKEN": "short"})
    assert short.returncode == 2 and "INFORMER_LAB_TOKEN has 5 characters" in short.stdout + short.stderr
    assert "Traceback" not in short.stdout + short.stderr
