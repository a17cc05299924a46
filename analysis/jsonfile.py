"""JSON from outside the process (a run folder, a study folder, an answer file, a record of a running lab): read with
a size cap and a depth cap, so a file of a million nested brackets is one typed error naming it, never a
RecursionError, and a 10-GB file is refused from its size before it is read.

`JsonError` is a ConfigError and a ValueError: readers that already treat a ValueError as "not readable" (and show
or skip the file) keep doing so.
"""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from informer_lab.analysis.errors import ConfigError

MAX_DEPTH = 64  # the lab's own files nest at most 6 levels
MAX_BYTES = 64 << 20


class JsonError(ConfigError, ValueError):
    """A JSON file or text that cannot be used: unreadable, too large, too deep, or not the shape asked for."""


def depth(value: object) -> int:
    """Nesting depth of parsed JSON (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


def loads(data: bytes | str, name: str, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH,
          want: type | None = dict, object_pairs_hook=None):
    """The JSON value of `data` (the file `name`, for messages): at most `max_bytes` long and `max_depth` deep, of
    type `want` (None: any). JsonError otherwise."""
    if len(data) > max_bytes:
        raise JsonError(f"{name} is {len(data):,} bytes, more than the {max_bytes:,} it may have")
    try:
        value = json.loads(data, object_pairs_hook=object_pairs_hook)
    except RecursionError:
        raise JsonError(f"{name} is nested too deeply to be read (at most {max_depth} levels)") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise JsonError(f"{name} is not readable JSON: {' '.join(str(err).split())[:120]}") from None
    if depth(value) > max_depth:
        raise JsonError(f"{name} is nested more than {max_depth} levels deep")
    if want is not None and not isinstance(value, want):
        raise JsonError(f"{name} must hold a JSON {'object' if want is dict else want.__name__}, not "
                        f"{'an array' if isinstance(value, list) else 'a ' + type(value).__name__}")
    return value


def read(path: str | os.PathLike, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH,
         want: type | None = dict, name: str | None = None):
    """The JSON value of the file `path` (`loads`); its size is checked before it is read. JsonError naming the
    file when it cannot be read (missing, a folder, a device, no permission) or used."""
    path = Path(path)
    name = name or path.name
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the open, a device never end
            raise JsonError(f"{name} is not a regular file")
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:
                raise JsonError(f"{name} is {size:,} bytes, more than the {max_bytes:,} it may have")
            data = handle.read(max_bytes + 1)
    except OSError as err:
        raise JsonError(f"cannot read {name}: {err.strerror or type(err).__name__}") from None
    return loads(data, name, max_bytes=max_bytes, max_depth=max_depth, want=want)


def read_or_none(path: str | os.PathLike, **limits):
    """`read`, or None when the file cannot be read or used (a reader that skips what it cannot use)."""
    try:
        return read(path, **limits)
    except JsonError:
        return None


__all__ = ["JsonError", "MAX_BYTES", "MAX_DEPTH", "depth", "loads", "read", "read_or_none"]
