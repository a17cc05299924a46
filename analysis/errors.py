"""Typed errors. Every message names the problem (column, row, value) so the UI and CLI can show it as is.

Messages are kept short (at most MESSAGE_CHARS characters, cut in the middle at words, keeping the cause at the
start and the way out at the end): a cell that is 10 MB long must not become a 10-MB error line.
"""
from __future__ import annotations

MESSAGE_CHARS = 300


def short(message: str, limit: int = MESSAGE_CHARS) -> str:
    """At most `limit` characters, cut in the middle at words: a message starts with what went wrong and ends with
    the way out, and the content it echoes sits between them."""
    if len(message) <= limit:
        return message
    head = message[: limit * 3 // 5].rsplit(" ", 1)[0]
    room = limit - len(head) - 3
    tail = message[-room:]
    tail = tail.split(" ", 1)[1] if " " in tail[:40] else tail
    return f"{head} … {tail}"

def count(n: int, noun: str, plural: str | None = None) -> str:
    """'1 window', '2 windows', '1,024 windows': a number with its noun in the right number."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


class InformerLabError(Exception):
    """Base of every error a user can cause; the UI shows str(err), the CLI prints it and exits 2."""

    def __init__(self, message: str = "", *args):
        super().__init__(short(str(message)), *args)


class DataError(InformerLabError):
    """A CSV that cannot be used. `column`, `row` (0-based data row) and `value` say where, when known.

    `repairable` is True when `--repair interpolate|ffill` (the app's Repair) would fix it: the message then
    names that option.
    """

    def __init__(self, message: str, *, column: str | None = None, row: int | None = None, value: object = None,
                 repairable: bool = False):
        super().__init__(message)
        self.column = column
        self.row = row
        self.value = value
        self.repairable = repairable


class CheckpointError(InformerLabError):
    """A checkpoint folder or file that is missing, tampered with, or does not match its config.
    `field` names the config field, file or tensor at fault, when one is."""

    def __init__(self, message: str = "", *, field: str | None = None):
        super().__init__(message)
        self.field = field


class ConfigError(InformerLabError):
    """Settings that cannot work together (e.g. label_len > seq_len)."""
