"""Who a proxy says it forwarded a request for: the `Forwarded` header read as RFC 7239 allows, X-Forwarded-For,
X-Real-IP and their kin read as they are used, and whether a forwarded peer is this machine (ui/access.py refuses a
local lab's request when any is not). Pure functions: no Streamlit.

    Forwarded: for=192.0.2.60;proto=http;by=203.0.113.43, For="[2001:db8:cafe::17]:4711"
    X-Forwarded-For: 203.0.113.195, 70.41.3.18:1234, [2001:db8::1]
"""
from __future__ import annotations

import ipaddress

FORWARDED = ("forwarded", "x-forwarded-for", "x-real-ip", "x-client-ip", "true-client-ip", "cf-connecting-ip",
             "x-cluster-client-ip", "forwarded-for")


def _split_unquoted(text: str, separator: str) -> list[str]:
    """`text` split at `separator` outside double quotes (a backslash escapes inside them)."""
    parts, current, quoted, escaped = [], [], False, False
    for ch in text:
        if escaped:
            current.append(ch)
            escaped = False
        elif quoted and ch == "\\":
            current.append(ch)
            escaped = True
        elif ch == '"':
            current.append(ch)
            quoted = not quoted
        elif ch == separator and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
        out, escaped = [], False
        for ch in value:
            if escaped or ch != "\\":
                out.append(ch)
                escaped = False
            else:
                escaped = True
        value = "".join(out)
    return value.strip()


def _node(value: str) -> str:
    """A forwarded node without its port: '[2001:db8::1]:4711' → '2001:db8::1', '1.2.3.4:80' → '1.2.3.4'."""
    value = _unquote(value)
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value[1:]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def forwarded_peers(headers: dict[str, str]) -> list[str]:
    """Every peer a proxy says it forwarded for: each `for` of every element of `Forwarded` (RFC 7239: elements by
    ",", pairs by ";", names in any case, spaces around "=", quoted and bracketed values, ports), and each entry of
    X-Forwarded-For, X-Real-IP and their kin. An element without `for` says nothing about the peer; an empty or
    unparsable one is kept as it is (it names no address of this machine)."""
    peers = []
    for name in FORWARDED:
        value = headers.get(name)
        if value is None:
            continue
        if name == "forwarded":
            for element in _split_unquoted(value, ","):
                for pair in _split_unquoted(element, ";"):
                    key, eq, raw = pair.partition("=")
                    if eq and key.strip().lower() == "for":
                        peers.append(_node(raw))
        else:
            peers += [_node(p) for p in _split_unquoted(value, ",")]
    return peers


def is_this_machine(peer: str) -> bool:
    """A forwarded peer is on this machine only as a loopback address (127.0.0.0/8, ::1, ::ffff:127.x): a name,
    even localhost or *.localhost, is what a client wrote, and `unknown` or `_hidden` could be anywhere."""
    try:
        address = ipaddress.ip_address(peer.strip().strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


__all__ = ["FORWARDED", "forwarded_peers", "is_this_machine"]
