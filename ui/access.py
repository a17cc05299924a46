"""Who may reach the lab: this machine only by default; the network only by choice, and then with a token.

The server binds the loopback address (`.streamlit/config.toml`: `server.address = "127.0.0.1"`), and this ASGI
middleware, installed by app.py on every HTTP request and websocket, adds what a bind address cannot:

* **Host header.** A request whose Host is not a name of this server gets 400 and nothing else, so a web page the
  user visits cannot reach the lab through DNS rebinding (its requests carry the attacker's host name).
* **Loopback peers.** While the lab is local, a peer that is not on this machine is refused (403) even if the
  server was bound wider by accident (e.g. started from a folder whose config was not read).
* **Token.** Served to a network on purpose (`streamlit run app.py --server.address 0.0.0.0`, or any address that
  is not loopback), every request must carry the access token: `?token=…` once (answered by a redirect that sets an
  HttpOnly, SameSite=Strict cookie and drops the token from the address bar), the cookie, or an
  `Authorization: token …` header. Without it a browser gets a page that asks for the token and nothing of the
  lab: no script, no data, no websocket, so no session runs. The token is `INFORMER_LAB_TOKEN` when set, else
  generated at start and printed with the URL (as Jupyter does); tokens are compared in constant time.

Allowed hosts: loopback names while local; served to a network, also the bind address, this machine's host names
and addresses, and the names in `INFORMER_LAB_ALLOWED_HOSTS` (comma separated; `*` allows any, the token still
guards every request).

Also, on every request:
* **No framing.** `X-Frame-Options: DENY` and `Content-Security-Policy: frame-ancestors 'none'`, so no other page
  can frame the lab (clickjacking); `INFORMER_LAB_FRAME_ANCESTORS` (a CSP source list, e.g. `https://wiki.example`)
  allows the pages named there instead.
* **Redirects stay in the lab.** The token page always submits to `/`; the page asked for rides along as `next` and
  the grant redirects only to a path of this server (never `//host/…`, a scheme, a backslash or a control
  character, which would leave the lab or break the response header).
* **Offline.** Nothing asks another host for anything (`keep_streamlit_offline`).
* **Health.** `/_stcore/health` and `/healthz` (the same check) are open without the token: they answer "ok" and
  nothing else. So is `/_informer_lab/start`, for the launcher alone: the SHA-256 of the start id it gave this
  server (INFORMER_LAB_START_ID), so that it never takes another process answering on its port for its own server;
  404 when the server was started without one.
* **Tokens.** A token set by the user must have at least 16 characters (the server refuses to start otherwise);
  wrong tokens from one peer, whatever carries them (`?token=`, the login form, an `Authorization` header, the
  cookie), wait longer and longer (0.25 s doubling up to 8 s) and one after another: a peer's guesses in parallel
  queue behind each other instead of sharing one wait.
* **Proxies.** While local, a request that a proxy forwarded for a peer off this machine (`Forwarded`,
  `X-Forwarded-For`, `X-Real-IP` and their kin) is refused like that peer. The headers are read as RFC 7239 and
  their common use allow (several headers or elements, any case, spaces around `=`, quoted and bracketed forms,
  ports); only an address of this machine's loopback counts as local: a name (even `*.localhost`), `unknown` or an
  obfuscated identifier is a peer that could be anywhere, and one such element refuses the request. A reverse proxy
  on this machine that sends none of these headers makes every visitor look local: serve the lab with a token
  (`--server.address`) behind such a proxy.
"""
from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import html
import ipaddress
import os
import secrets
import socket
from dataclasses import dataclass
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, quote, urlencode

from informer_lab.ui.forwarded import FORWARDED, forwarded_peers, is_this_machine  # noqa: F401 (FORWARDED: tests)

TOKEN_ENV = "INFORMER_LAB_TOKEN"
HOSTS_ENV = "INFORMER_LAB_ALLOWED_HOSTS"
FRAME_ENV = "INFORMER_LAB_FRAME_ANCESTORS"
COOKIE = "informer_lab_token"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
HEALTH = "/_stcore/health"  # Streamlit's own check ("ok" once the server is ready)
OPEN_PATHS = frozenset({HEALTH, "/healthz"})  # "ok" and nothing else: probes may call them
START_PATH, START_ENV = "/_informer_lab/start", "INFORMER_LAB_START_ID"  # which start this server is (the launcher)
MIN_TOKEN = 16  # characters a user-set token must have
FIRST_DELAY, MAX_DELAY = 0.25, 8.0  # seconds a wrong guess waits: doubling per failure from one peer


class TokenError(ValueError):
    """A user-set token the server will not start with."""


def is_loopback(host: str | None) -> bool:
    """127.0.0.0/8, ::1, ::ffff:127.x and the name localhost."""
    if not host:
        return False
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


def host_name(header: str) -> str:
    """The name of a Host header without its port: 'a.b:8501' → 'a.b', '[::1]:8501' → '::1'."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header[1:]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


@dataclass(frozen=True)
class Access:
    """The policy of one server: local (loopback peers and names only) or served to a network with a token."""

    network: bool
    token: str | None = None  # required when network
    allowed_hosts: frozenset[str] | None = LOOPBACK_NAMES  # None: any host (the token still guards)

    def host_allowed(self, host: str) -> bool:
        return self.allowed_hosts is None or host_name(host) in self.allowed_hosts

    def token_ok(self, candidate: str | None) -> bool:
        return bool(self.token and candidate) and hmac.compare_digest(candidate.encode(), self.token.encode())

    def cookie_value(self) -> str:
        return hashlib.sha256(f"informer-lab:{self.token}".encode()).hexdigest()

    def cookie_ok(self, candidate: str | None) -> bool:
        return bool(self.token and candidate) and hmac.compare_digest(candidate.encode(), self.cookie_value().encode())


def _machine_names(address: str) -> set[str]:
    names = set(LOOPBACK_NAMES)
    if address and address not in ("0.0.0.0", "::"):
        names.add(address.strip("[]").lower())
    for name in {socket.gethostname(), socket.getfqdn()}:
        if name:
            names.add(name.lower())
            try:
                names.update(info[4][0] for info in socket.getaddrinfo(name, None))
            except OSError:
                pass
    try:  # the address this machine leaves by (no packet is sent: UDP connect only picks a route)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))
            names.add(probe.getsockname()[0])
    except OSError:
        pass
    return names


def access_for(address: str | None, environ: dict | None = None) -> Access:
    """The policy for a server bound to `address` (Streamlit's server.address; None when unset). TokenError when
    the user set a token shorter than MIN_TOKEN characters."""
    environ = os.environ if environ is None else environ
    if not address or is_loopback(address):
        return Access(network=False)
    given = environ.get(TOKEN_ENV)
    if given is not None and len(given.strip()) < MIN_TOKEN:
        raise TokenError(f"{TOKEN_ENV} has {len(given.strip())} characters: a token guards the whole lab and needs at "
                         f"least {MIN_TOKEN} (e.g. python -c \"import secrets; print(secrets.token_urlsafe(32))\"), "
                         "or unset it for a generated one")
    token = given.strip() if given else secrets.token_urlsafe(32)
    extra = {h.strip().lower() for h in environ.get(HOSTS_ENV, "").split(",") if h.strip()}
    hosts = None if "*" in extra else frozenset(_machine_names(address) | extra)
    return Access(network=True, token=token, allowed_hosts=hosts)


def _headers(scope) -> dict[str, str]:
    """name → value; a header sent several times has its values joined with ", " (RFC 9110 § 5.3), so a second
    X-Forwarded-For or Host never hides the first."""
    out: dict[str, str] = {}
    for k, v in scope.get("headers", []):
        name, value = k.decode("latin-1").lower(), v.decode("latin-1")
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


def _presented_token(scope, headers: dict[str, str]) -> str | None:
    auth = headers.get("authorization", "")
    for prefix in ("token ", "bearer "):
        if auth.lower().startswith(prefix):
            return auth[len(prefix):].strip()
    return None


def _query(scope) -> list[tuple[str, str]]:
    return parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)


async def _send_http(send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] = ()) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-length", str(len(body)).encode()), (b"cache-control", b"no-store"),
                            *headers]})
    await send({"type": "http.response.body", "body": body})


LOGIN_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Informer Lab: access token</title>
<style>body{{font-family:sans-serif;max-width:32em;margin:4em auto;color:#222}}input{{width:100%;padding:.4em}}
button{{margin-top:.8em;padding:.4em 1.2em}}</style></head><body><h1>Informer Lab</h1>
<p>This lab is served to the network and asks for its access token. The token was printed where the lab was
started (or is the value of <code>INFORMER_LAB_TOKEN</code>).</p>{error}
<form method="get" action="{action}"><label>Access token <input name="token" type="password" autofocus
autocomplete="off"></label><input type="hidden" name="next" value="{next}"><button type="submit">Open the lab</button>
</form></body></html>"""


def safe_path(path: str | None) -> str:
    """`path` when it is a path of this server, else "/": one leading slash, no backslash, no control character,
    no scheme; percent-encoded so that it can stand in a Location header."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return "/"
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in path):
        return "/"
    return quote(path, safe="/:@!$&'()*+,;=-._~%")


def frame_headers(environ: dict | None = None) -> list[tuple[bytes, bytes]]:
    """The headers that keep other pages from framing the lab (or allow only `INFORMER_LAB_FRAME_ANCESTORS`)."""
    environ = os.environ if environ is None else environ
    allowed = " ".join(environ.get(FRAME_ENV, "").replace(",", " ").split())
    if allowed and all(ch not in allowed for ch in ";\r\n"):
        return [(b"content-security-policy", f"frame-ancestors {allowed}".encode("latin-1", "replace"))]
    return [(b"x-frame-options", b"DENY"), (b"content-security-policy", b"frame-ancestors 'none'")]


class AccessMiddleware:
    """ASGI middleware enforcing an `Access` policy on HTTP and websocket requests (lifespan passes through)."""

    def __init__(self, app, access: Access | None = None):
        self.app = app
        self._access = access
        self._failures: dict[str, int] = {}  # peer → wrong tokens in a row
        self._queues: dict[str, asyncio.Lock] = {}  # peer → its wrong tokens wait one after another
        self._frame = frame_headers()

    @property
    def access(self) -> Access:
        if self._access is None:
            self._access = server_access()
        return self._access

    async def __call__(self, scope, receive, send):
        kind = scope.get("type")
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if kind == "http":
            send = self._with_headers(send)
        access, headers = self.access, _headers(scope)
        if not access.host_allowed(headers.get("host", "")):
            await self._refuse(scope, send, 400, b"Host not allowed: this lab answers only its own names.\n")
            return
        if scope.get("path") == START_PATH:
            await self._start_id(scope, send)
            return
        if scope.get("path") in OPEN_PATHS:  # the health check alone, whatever the policy
            if kind == "http":
                await self.app({**scope, "path": HEALTH, "raw_path": HEALTH.encode(), "query_string": b""}, receive,
                               send)
            else:
                await self._refuse(scope, send, 404, b"")
            return
        if not access.network:
            client = (scope.get("client") or ("", 0))[0]
            if (client and not is_loopback(client)) or not all(map(is_this_machine, forwarded_peers(headers))):
                await self._refuse(scope, send, 403, b"This lab serves this machine only.\n")
                return
            await self.app(scope, receive, send)
            return
        query = _query(scope)
        given = next((v for k, v in query if k == "token"), None)
        if kind == "http" and given is not None:
            peer = (scope.get("client") or ("", 0))[0]
            if access.token_ok(given):
                self._failures.pop(peer, None)
                await self._grant(scope, send, [(k, v) for k, v in query if k not in ("token", "next")],
                                  next((v for k, v in query if k == "next"), None))
            else:
                await self._slow_down(peer)
                await self._login(scope, send, "The token was not right.")
            return
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # noqa: BLE001  a malformed cookie header is simply no cookie
            cookie = SimpleCookie()
        held = cookie[COOKIE].value if COOKIE in cookie else None
        presented = _presented_token(scope, headers)
        if access.cookie_ok(held) or access.token_ok(presented):
            await self.app(scope, receive, send)
            return
        if held is not None or presented is not None:  # a wrong cookie or header waits as a wrong ?token= does
            await self._slow_down((scope.get("client") or ("", 0))[0])
        if kind == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        elif "text/html" in headers.get("accept", "text/html"):  # a browser: the page that asks for the token
            await self._login(scope, send, "")
        else:
            await _send_http(send, 401, b"An access token is required.\n", [(b"content-type", b"text/plain")])

    async def _start_id(self, scope, send) -> None:
        start = os.environ.get(START_ENV, "")
        if scope["type"] != "http" or not start:
            await self._refuse(scope, send, 404, b"")
            return
        await _send_http(send, 200, start_digest(start).encode(), [(b"content-type", b"text/plain")])

    async def _refuse(self, scope, send, status: int, text: bytes) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            await _send_http(send, status, text, [(b"content-type", b"text/plain; charset=utf-8")])

    def _with_headers(self, send):
        """`send` adding the framing headers to every HTTP response (the lab's and this middleware's)."""
        async def sending(message):
            if message.get("type") == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self._frame]}
            await send(message)
        return sending

    async def _slow_down(self, peer: str) -> None:
        """A wrong token waits FIRST_DELAY · 2^(failures − 1) s, at most MAX_DELAY (per peer; reset by a right one),
        after the peer's earlier wrong tokens have waited theirs: guesses sent in parallel are answered one by one."""
        if len(self._failures) > 4096:  # a bounded table: forget the oldest peers
            for old in list(self._failures)[:1024]:
                self._failures.pop(old, None)
        queue = self._queues.setdefault(peer, asyncio.Lock())
        if len(self._queues) > 4096:
            for old in [p for p, lock in self._queues.items() if not lock.locked()][:1024]:
                del self._queues[old]
        async with queue:
            failures = self._failures.get(peer, 0) + 1
            self._failures[peer] = failures
            await asyncio.sleep(min(MAX_DELAY, FIRST_DELAY * 2 ** (failures - 1)))

    async def _login(self, scope, send, error: str) -> None:
        root = safe_path(scope.get("root_path", "") or "/").rstrip("/")
        page = LOGIN_PAGE.format(action=html.escape(root + "/"), next=html.escape(safe_path(scope.get("path", "/"))),
                                 error=f"<p style='color:#b00'>{html.escape(error)}</p>" if error else "")
        await _send_http(send, 401, page.encode(), [(b"content-type", b"text/html; charset=utf-8")])

    async def _grant(self, scope, send, rest: list[tuple[str, str]], wanted: str | None = None) -> None:
        root = safe_path(scope.get("root_path", "") or "/").rstrip("/")
        path = safe_path(wanted if wanted is not None else scope.get("path", "/"))
        location = root + path + (f"?{urlencode(rest)}" if rest else "")
        secure = "; Secure" if scope.get("scheme") == "https" else ""
        cookie = f"{COOKIE}={self.access.cookie_value()}; Path=/; HttpOnly; SameSite=Strict{secure}"
        await _send_http(send, 303, b"", [(b"location", location.encode("latin-1", "replace")),
                                          (b"set-cookie", cookie.encode())])


def start_digest(start_id: str) -> str:
    """What `START_PATH` answers for a start id (the launcher compares it with its own)."""
    return hashlib.sha256(f"informer-lab-start:{start_id}".encode()).hexdigest()


def keep_streamlit_offline() -> None:
    """Streamlit asks checkip.amazonaws.com for this machine's public address when it prints a wildcard-bound
    server's URLs and when it checks an unknown Origin against its allow-list: a researcher's lab would call a third
    party at start. Its lookup answers "unknown" here instead (the URLs printed are the local and network ones)."""
    from streamlit import net_util

    net_util.get_external_ip = lambda: None


@functools.cache
def server_access() -> Access:
    """The policy of the running Streamlit server, from its server.address (one per process: its token is the one
    printed at start)."""
    from streamlit import config

    return access_for(config.get_option("server.address"))


def network_url(access: Access, address: str, port: int) -> str:
    """The URL to open the lab from another machine, with its token."""
    host = socket.gethostname() if address in ("0.0.0.0", "::") else address
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}/?token={access.token}"


__all__ = ["Access", "AccessMiddleware", "MIN_TOKEN", "TokenError", "access_for", "forwarded_peers", "frame_headers",
           "host_name", "is_loopback", "is_this_machine", "keep_streamlit_offline", "network_url", "safe_path",
           "server_access"]
