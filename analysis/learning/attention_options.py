"""Attention kinds' parameters as people type them, for `cli.py train --attention-option` and the app's form.

    "window=16, encoder.window=32, cross.buckets=4"  →  {"encoder": {"window": 32}, "decoder_self": {"window": 16},
                                                          "cross": {"buckets": 4}}

A bare NAME goes to every site whose kind takes it; SITE.NAME to that site type only (a later item wins).
Values: '16' → 16, '0.5' → 0.5, 'true' → True, '0,-1' → [0, -1] (positions), 'conv' → 'conv'. The ranges are
checked when the model's config is built (`InformerConfig`, `option_problems`), so a wrong value is named there,
once, for every caller.
"""
from __future__ import annotations

import re

from informer_lab.model.attention.dispatch import DEFAULTS
from informer_lab.model.config import ATTENTION_KINDS, SITE_TYPES

__all__ = ["ATTENTION_KINDS", "SITE_TYPES", "describe_parameters", "parse_attention_options", "parse_option_value",
           "split_option_text"]


def parse_option_value(text: str):
    """'16' → 16, '0.5' → 0.5, 'true' → True, '0,-1' → [0, -1], 'conv' → 'conv'."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        if "," in text:
            return [int(v) for v in text.split(",") if v.strip()]
        return int(text) if low.lstrip("-").isdigit() else float(text)
    except ValueError:
        return text.strip()


def split_option_text(text: str) -> list[str]:
    """One line of NAME=VALUE items separated by spaces, semicolons or commas → the items ('globals=0,-1' keeps its
    list: a comma followed by a number or a minus continues the value)."""
    return [item for item in re.split(r"[;\s]+|,(?=\s*[A-Za-z_][\w.]*\s*=)", text.strip()) if item]


def parse_attention_options(items: list[str], kinds: dict[str, str], flag: str = "--attention-option"
                            ) -> dict[str, dict]:
    """['window=16', 'cross.buckets=4'] with each site type's kind → attention_options; errors name the item."""
    out: dict[str, dict] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"{flag} takes [SITE.]NAME=VALUE, got {item[:60]!r}")
        site, _, name = name.strip().rpartition(".")
        if site and site not in kinds:
            raise ValueError(f"{flag} {item[:60]!r}: the site type is one of {', '.join(kinds)}")
        sites = [site] if site else [s for s, k in kinds.items() if name in DEFAULTS.get(k, {})]
        if not sites:
            raise ValueError(f"{flag} {item[:60]!r}: no site's attention ({', '.join(sorted(set(kinds.values())))}) "
                             f"takes {name!r}")
        for s in sites:
            out.setdefault(s, {})[name] = parse_option_value(value)
    return out


def describe_parameters(kind: str) -> str:
    """'window=8, dilation=1, globals=none' (the defaults), or 'no parameters'."""
    defaults = DEFAULTS.get(kind, {})
    if not defaults:
        return "no parameters"

    def show(value) -> str:
        if value is None:
            return "by length"
        if isinstance(value, (list, tuple)):
            return ",".join(map(str, value)) or "none"
        return str(value).lower() if isinstance(value, bool) else str(value)
    return ", ".join(f"{name}={show(value)}" for name, value in defaults.items())
