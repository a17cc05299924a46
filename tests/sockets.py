"""Which TCP sockets a process tree listens on, read from Linux's /proc (no extra dependency).

    listening(pid) -> [(address, port, pid, name)]   address as text: '127.0.0.1', '::', '::ffff:127.0.0.1', …
    kill_tree(pid)                                    SIGKILL to pid and every process below it, read first
"""
from __future__ import annotations

import ipaddress
import os
import signal
import socket
import struct
from pathlib import Path

LISTEN = "0A"


def descendants(pid: int) -> set[int]:
    """pid and every process below it (by parent pid, read from /proc/*/stat)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat[stat.rindex(")") + 2:].split()[1])
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in tree:
                tree.add(child)
                frontier.append(child)
    return tree


def kill_tree(pid: int) -> None:
    """A crash of pid's whole tree: every process below it (read before any is killed) and pid, SIGKILL, no goodbye."""
    for proc in descendants(pid):
        try:
            os.kill(proc, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _address(hex_ip: str, family: int) -> str:
    raw = bytes.fromhex(hex_ip)
    if family == socket.AF_INET:
        return socket.inet_ntop(family, struct.pack("<I", struct.unpack(">I", raw)[0]))
    words = struct.unpack("<4I", raw)  # /proc prints IPv6 as four host-order 32-bit words
    return str(ipaddress.IPv6Address(struct.pack(">4I", *words)))


def _listening_inodes() -> dict[str, tuple[str, int]]:
    out = {}
    for name, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        try:
            lines = Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == LISTEN:
                ip, port = local.split(":")
                out[inode] = (_address(ip, family), int(port, 16))
    return out


def listening(pid: int) -> list[tuple[str, int, int, str]]:
    """Every TCP socket that pid's process tree listens on."""
    inodes, found = _listening_inodes(), []
    for proc in sorted(descendants(pid)):
        try:
            name = Path(f"/proc/{proc}/comm").read_text().strip()
            fds = os.listdir(f"/proc/{proc}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{proc}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:[") and target[8:-1] in inodes:
                found.append((*inodes[target[8:-1]], proc, name))
    return found


def loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)
