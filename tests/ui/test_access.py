"""ui/access.py: the lab answers its own host names and loopback peers only, and served to a network it shows
nothing and runs nothing without the access token (ASGI calls with a recording inner app: no server needed)."""
from __future__ import annotations

import asyncio
from urllib.parse import quote

import pytest

from informer_lab.ui.access import (COOKIE, HEALTH, MIN_TOKEN, Access, AccessMiddleware, TokenError, access_for, host_name,
                       is_loopback, safe_path)

TOKEN = "s3cret-token-of-the-lab"


class Inner:
    """The app behind the middleware: records that it was reached (and the path it was asked for) and answers 200."""

    def __init__(self):
        self.calls = 0
        self.paths = []

    async def __call__(self, scope, receive, send):
        self.calls += 1
        self.paths.append(scope.get("path"))
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


def headers_of(sent: list[dict]) -> dict[bytes, bytes]:
    return dict(sent[0]["headers"])


def test_the_token_page_submits_to_the_root_and_the_grant_redirects_only_within_the_lab():
    """GET //evil.example/ once gave a form whose action was //evil.example/ (the token sent to another site), and
    after a good token a redirect there; a CR LF in a path broke the response header."""
    access = access_for("0.0.0.0", environ={"INFORMER_LAB_TOKEN": TOKEN})
    for path in ("//evil.example/", "/\\evil.example", "/data-model"):
        _, sent = call(access, path=path, client="10.0.0.7", headers=[("accept", "text/html")])
        page = body(sent).decode()
        assert 'action="/"' in page and "evil" not in page.split("<form")[1].split(">")[0]
        assert f'name="next" value="{"/data-model" if path == "/data-model" else "/"}"' in page
    for wanted, expected in (("//evil.example/", b"/"), ("https://evil.example/x", b"/"), ("/\\evil", b"/"),
                             ("/data-model", b"/data-model"), ("/x\r\nSet-Cookie: a=b", b"/")):
        query = f"token={TOKEN}&next={quote(wanted)}"
        _, sent = call(access, path="/", query=query, client="10.0.0.7")
        assert status(sent) == 303 and headers_of(sent)[b"location"] == expected, wanted
    _, sent = call(access, path="//evil.example/", query=f"token={TOKEN}", client="10.0.0.7")
    assert headers_of(sent)[b"location"] == b"/"
    assert safe_path("/a b\r\n") == "/" and safe_path("/ok") == "/ok"


def test_every_response_forbids_framing_unless_the_user_names_who_may_frame(monkeypatch):
    for access, client, extra in ((access_for(None, environ={}), "127.0.0.1", []),
                                  (access_for("0.0.0.0", environ={"INFORMER_LAB_TOKEN": TOKEN}), "10.0.0.7", []),
                                  (access_for("0.0.0.0", environ={"INFORMER_LAB_TOKEN": TOKEN}), "10.0.0.7",
                                   [("authorization", f"token {TOKEN}")])):
        _, sent = call(access, client=client, headers=extra)  # the lab's own answer, the token page, a refusal
        headers = headers_of(sent)
        assert headers[b"x-frame-options"] == b"DENY"
        assert headers[b"content-security-policy"] == b"frame-ancestors 'none'"
    monkeypatch.setenv("INFORMER_LAB_FRAME_ANCESTORS", "https://wiki.example")
    _, sent = call(access_for(None, environ={}))
    assert headers_of(sent)[b"content-security-policy"] == b"frame-ancestors https://wiki.example"
    assert b"x-frame-options" not in headers_of(sent)


def test_the_health_check_alone_is_open_and_it_is_streamlits_own():
    access = access_for("0.0.0.0", environ={"INFORMER_LAB_TOKEN": TOKEN})
    for path in ("/healthz", HEALTH):
        inner, sent = call(access, path=path, client="10.0.0.7")
        assert inner.paths == [HEALTH] and status(sent) == 200  # never the index page
    inner, sent = call(access, path="/healthz/", client="10.0.0.7", headers=[("accept", "text/html")])
    assert inner.calls == 0 and status(sent) == 401


def test_a_short_token_is_refused_and_wrong_guesses_wait_longer_and_longer(monkeypatch):
    with pytest.raises(TokenError, match="at least 16"):
        access_for("0.0.0.0", environ={"INFORMER_LAB_TOKEN": "x" * (MIN_TOKEN - 1)})
    assert access_for("0.0.0.0", environ={"INFORMER_LAB_TOKEN": "x" * MIN_TOKEN}).token == "x" * MIN_TOKEN
    assert not access_for(None, environ={"INFORMER_LAB_TOKEN": "short"}).network  # local: no token at all
    waits = []

    async def sleep(seconds):
        waits.append(seconds)

    monkeypatch.setattr("informer_lab.ui.access.asyncio.sleep", sleep)
    access = access_for("0.0.0.0", environ={"INFORMER_LAB_TOKEN": TOKEN})
    middleware = AccessMiddleware(Inner(), access)

    def guess(token, client="10.0.0.7"):
        scope = {"type": "http", "path": "/", "root_path": "", "query_string": f"token={token}".encode(),
                 "scheme": "http", "client": (client, 1), "headers": [(b"host", b"localhost:8501")]}

        async def receive():
            return {"type": "http.request"}

        async def send(message):
            pass

        asyncio.run(middleware(scope, receive, send))

    for _ in range(6):
        guess("wrong")
    assert waits == [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    guess("wrong", client="10.0.0.8")  # another peer starts afresh
    guess(TOKEN)  # the right token resets this peer
    guess("wrong")
    assert waits[6:] == [0.25, 0.25]


def test_a_local_lab_refuses_what_a_proxy_forwarded_from_off_this_machine():
    access = access_for(None, environ={})
    for header, value in (("x-forwarded-for", "203.0.113.9"), ("x-real-ip", "203.0.113.9"),
                          ("forwarded", 'for="[2001:db8::7]:4711";proto=https'), ("x-forwarded-for", "10.0.0.1, ::1")):
        inner, sent = call(access, headers=[(header, value)])
        assert inner.calls == 0 and status(sent) == 403, (header, value)
    inner, sent = call(access, headers=[("x-forwarded-for", "127.0.0.1")])
    assert inner.calls == 1 and status(sent) == 200


def test_streamlit_asks_no_other_host_for_this_machines_address():
    import informer_lab.ui.server  # noqa: F401  the server's parts: importing them turns the lookup off
    from streamlit import net_util

    calls = []
    original = net_util._make_blocking_http_get
    net_util._make_blocking_http_get = lambda *a, **k: calls.append(a) or None
    try:
        assert net_util.get_external_ip() is None and calls == []
    finally:
        net_util._make_blocking_http_get = original


def _scope(*, client="10.0.0.7", query="", headers=()):
    return {"type": "http", "path": "/", "root_path": "", "query_string": query.encode(), "scheme": "http",
            "client": (client, 1), "headers": [(b"host", b"localhost:8501")] + [(k.encode(), v.encode())
                                                                               for k, v in headers]}


def test_wrong_tokens_wait_whatever_carries_them_and_a_peers_parallel_guesses_queue(monkeypatch):
    """?token=, an Authorization header (token or bearer), a cookie: each wrong one counts for its peer and waits;
    guesses sent at once from one peer wait one after another (counted in the order the waits end, not timed)."""
    waits, events = [], []
    real_sleep = asyncio.sleep

    async def sleep(seconds):
        waits.append(seconds)
        events.append("start")
        await real_sleep(0)  # let the other guesses run: waits side by side would all start before any ends
        events.append("end")

    monkeypatch.setattr("informer_lab.ui.access.asyncio.sleep", sleep)
    access = access_for("0.0.0.0", environ={"INFORMER_LAB_TOKEN": TOKEN})
    inner = Inner()
    middleware = AccessMiddleware(inner, access)
    carriers = [dict(query="token=wrong"), dict(headers=[("authorization", "token wrong")]),
                dict(headers=[("authorization", "Bearer wrong")]), dict(headers=[("cookie", f"{COOKIE}=wrong")])]

    async def send(message):
        pass

    async def receive():
        return {"type": "http.request"}

    async def all_at_once():
        await asyncio.gather(*(middleware(_scope(**c), receive, send) for c in carriers * 2))

    asyncio.run(all_at_once())
    assert waits == [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert events == ["start", "end"] * 8  # one after another
    assert inner.calls == 0
    asyncio.run(middleware(_scope(headers=[("authorization", f"token {TOKEN}")]), receive, send))
    assert inner.calls == 1 and len(waits) == 8  # a right token passes at once
    asyncio.run(middleware(_scope(client="10.0.0.9"), receive, send))  # no token at all: the page, no wait
    assert len(waits) == 8


@pytest.mark.parametrize("header, value", [
    ("forwarded", "for = 203.0.113.9"), ("forwarded", "FOR=203.0.113.9"), ("forwarded", 'for="203.0.113.9"'),
    ("forwarded", "for=127.0.0.1, for=198.51.100.2"), ("forwarded", 'proto=http;For="[2001:db8::7]:4711"'),
    ("forwarded", "for=unknown"), ("forwarded", 'for="_hidden"'), ("forwarded", "for=localhost"),
    ("x-forwarded-for", "evil.localhost"), ("x-forwarded-for", "localhost"), ("x-forwarded-for", " 127.0.0.1 ,10.0.0.1"),
    ("x-forwarded-for", "[2001:db8::1]:80"), ("x-forwarded-for", "10.0.0.1:8080"), ("x-real-ip", "a.localhost"),
    ("true-client-ip", "203.0.113.9"), ("x-client-ip", "203.0.113.9")])
def test_a_local_lab_reads_forwarded_headers_as_their_rfcs_allow_and_refuses_any_element_off_this_machine(header,
                                                                                                            value):
    inner, sent = call(access_for(None, environ={}), headers=[(header, value)])
    assert inner.calls == 0 and status(sent) == 403, (header, value)


def test_a_second_forwarded_header_does_not_hide_the_first_and_loopback_forms_pass():
    access = access_for(None, environ={})
    inner, sent = call(access, headers=[("x-forwarded-for", "203.0.113.9"), ("x-forwarded-for", "127.0.0.1")])
    assert inner.calls == 0 and status(sent) == 403
    for header, value in (("forwarded", 'for="[::1]:5000";proto=http, for=127.0.0.2'), ("x-forwarded-for", "::1"),
                          ("x-real-ip", "[::ffff:127.0.0.1]"), ("forwarded", "by=203.0.113.9")):
        inner, sent = call(access, headers=[(header, value)])
        assert inner.calls == 1 and status(sent) == 200, (header, value)
