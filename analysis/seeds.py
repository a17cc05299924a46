"""Seeds as people type them (`--seeds 0-7`, `0,3,9`, `2-4,8`): parsed without building any list until its size is
known, and the text of a seed list. Pure Python (no numpy): the CLI checks --seeds while it parses its arguments,
before torch or Ray is imported.

    '0-7' → (0, …, 7);  '0,3,9' → (0, 3, 9);  '2-4,8' → (2, 3, 4, 8)

A seed is at most SEED_MAX (numpy's and Ray's limit; torch takes more), and a list holds at most `limit` seeds:
`--seeds 0-99999999` is refused from its ranges at once, not after a hundred million seeds were built.
"""
from __future__ import annotations

import re

from informer_lab.analysis.errors import ConfigError

SEED_MAX = 2**32 - 1
_PART = re.compile(r"(\d{1,12})(?:-(\d{1,12}))?")


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 60 else f"{text[:60]!r}… ({len(text):,} characters)"


def parse_seeds(text: str, limit: int, option: str = "--seeds") -> tuple[int, ...]:
    """Distinct seeds from 0 to SEED_MAX, at most `limit` of them; ConfigError naming `option` otherwise."""
    text = str(text)
    parts: list[tuple[int, int]] = []
    total = 0
    for part in text.replace(" ", "").split(","):
        m = _PART.fullmatch(part)
        if not m:
            raise ConfigError(f"{option} takes numbers and ranges such as 0-7 or 0,3,9, got {_shown(text)}")
        a, b = int(m.group(1)), int(m.group(2) or m.group(1))
        if b < a:
            raise ConfigError(f"{option} range {part!r} runs backwards")
        if b > SEED_MAX:
            raise ConfigError(f"{option} {part!r}: a seed is at most {SEED_MAX:,}")
        total += b - a + 1
        if total > limit:
            raise ConfigError(f"{option} {_shown(text)} names {total:,} seeds or more; at most {limit:,}")
        parts.append((a, b))
    seeds = [s for a, b in parts for s in range(a, b + 1)]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ConfigError(f"{option} must name distinct seeds, got {_shown(text)}")
    return tuple(seeds)


def format_seeds(seeds) -> str:
    """(0, 1, 2, 5) → '0-2,5': the --seeds text of a seed list."""
    seeds, parts = sorted(seeds), []
    for s in seeds:
        if parts and s == parts[-1][1] + 1:
            parts[-1][1] = s
        else:
            parts.append([s, s])
    return ",".join(f"{a}-{b}" if b > a else f"{a}" for a, b in parts)


__all__ = ["SEED_MAX", "format_seeds", "parse_seeds"]
