"""ui/access.py: the lab answers its own host names and loopback peers only, and served to a network it shows
nothing and runs nothing without the access token (ASGI calls with a recording inner app: no server needed)."""
from __future__ import annotations

import asyncio

import pytest

from ui.access import COOKIE, Access, AccessMiddleware, access_for, host_name, is_loopback

TOKEN = "s3cret-token"


class Inner:
    """The app behind the middleware: records that it was reached and answers 200."""

    def __init__(self):
        self.calls = 0

    async def __call__(self, scope, receive, send):
        self.calls += 1
        if scope["type"] == "websocket":
            await send({"type": "websocket.accept"})
        else:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"the lab"})


def call(access: Access, *, host="localhost:8501", path="/", query="", kind="http", client="127.0.0.1",
         headers=()) -> tuple[Inner, list[dict]]:
    inner, sent = Inner(), []
    scope = {"type": kind, "path": path, "root_path": "", "query_string": query.encode(), "scheme": "http",
             "client": (client, 50000), "headers": [(b"host", host.encode())] + [(k.encode(), v.encode())
                                                                                   for k, v in headers]}

    async def receive():
        return {"type": "http.request"}

    async def send(message):
        sent.append(message)

    asyncio.run(AccessMiddleware(inner, access)(scope, receive, send))
    return inner, sent


def status(sent: list[dict]) -> int | str:
    first = sent[0]
    return first.get("status") if first["type"] == "http.response.start" else first["type"]


def body(sent: list[dict]) -> bytes:
    return b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_loopback_names_and_host_headers():
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"))
    assert not any(is_loopback(h) for h in ("192.168.1.4", "0.0.0.0", "::", "rebind.example", "", None))
    assert host_name("Example.org:8501") == "example.org" and host_name("[::1]:8501") == "::1"
    assert host_name("127.0.0.1") == "127.0.0.1"


@pytest.mark.parametrize("address", [None, "", "127.0.0.1", "localhost", "::1"])
def test_a_local_server_serves_its_own_names_and_refuses_a_rebound_host(address):
    access = access_for(address, environ={})
    assert not access.network and access.token is None
    for host in ("localhost:8501", "127.0.0.1:8501", "[::1]:8501"):
        inner, sent = call(access, host=host)
        assert inner.calls == 1 and status(sent) == 200
    for kind in ("http", "websocket"):
        inner, sent = call(access, host="rebind.example:8501", kind=kind)
        assert inner.calls == 0  # nothing of the lab ran
        assert status(sent) == (400 if kind == "http" else "websocket.close")
        assert b"lab" not in body(sent).replace(b"this lab", b"")


def test_a_local_server_refuses_a_peer_from_the_network_even_if_bound_wider():
    inner, sent = call(access_for(None, environ={}), client="192.168.1.20")
    assert inner.calls == 0 and status(sent) == 403


def test_served_to_a_network_nothing_is_shown_or_run_without_the_token():
    access = access_for("0.0.0.0", environ={"INFORMER_LAB_TOKEN": TOKEN})
    assert access.network and access.token == TOKEN
    for path, accept in (("/", "text/html"), ("/static/js/index.js", "*/*"), ("/_stcore/host-config", "*/*")):
        inner, sent = call(access, path=path, client="10.0.0.7", headers=[("accept", accept)])
        assert inner.calls == 0 and status(sent) == 401
    inner, sent = call(access, path="/", client="10.0.0.7", headers=[("accept", "text/html")])
    assert b"access token" in body(sent) and b"<script" not in body(sent)  # the page that asks, and no app
    inner, sent = call(access, kind="websocket", path="/_stcore/stream", client="10.0.0.7")
    assert inner.calls == 0 and status(sent) == "websocket.close"  # no session, so no script run
    inner, sent = call(access, query="token=wrong", client="10.0.0.7", headers=[("accept", "text/html")])
    assert inner.calls == 0 and b"not right" in body(sent)
    inner, sent = call(access, kind="websocket", client="10.0.0.7", headers=[("cookie", f"{COOKIE}=forged")])
    assert inner.calls == 0


def test_the_token_once_gives_a_cookie_that_opens_http_and_the_websocket():
    access = access_for("0.0.0.0", environ={"INFORMER_LAB_TOKEN": TOKEN})
    inner, sent = call(access, path="/sparsity", query=f"token={TOKEN}&site=encoder.0.0", client="10.0.0.7")
    assert inner.calls == 0 and status(sent) == 303
    headers = dict(sent[0]["headers"])
    assert headers[b"location"] == b"/sparsity?site=encoder.0.0"  # the token leaves the address bar
    cookie = headers[b"set-cookie"].decode()
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN not in cookie
    value = cookie.split(";")[0]
    for kind in ("http", "websocket"):
        inner, sent = call(access, kind=kind, client="10.0.0.7", headers=[("cookie", value)])
        assert inner.calls == 1
    inner, _ = call(access, client="10.0.0.7", headers=[("authorization", f"token {TOKEN}")])
    assert inner.calls == 1


def test_served_to_a_network_the_allowed_hosts_follow_the_address():
    access = access_for("192.0.2.55", environ={"INFORMER_LAB_TOKEN": TOKEN})
    assert {"192.0.2.55", "localhost", "127.0.0.1"} <= access.allowed_hosts
    inner, sent = call(access, host="rebind.example", headers=[("authorization", f"token {TOKEN}")])
    assert inner.calls == 0 and status(sent) == 400
    extra = access_for("0.0.0.0", environ={"INFORMER_LAB_TOKEN": TOKEN, "INFORMER_LAB_ALLOWED_HOSTS": "lab.example"})
    assert "lab.example" in extra.allowed_hosts
    assert access_for("0.0.0.0", environ={"INFORMER_LAB_ALLOWED_HOSTS": "*"}).allowed_hosts is None


def test_a_generated_token_is_long_and_differs_per_server():
    a, b = access_for("0.0.0.0", environ={}), access_for("0.0.0.0", environ={})
    assert len(a.token) >= 40 and a.token != b.token
