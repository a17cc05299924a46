"""The commands' argument types: every number bounded, every list capped, every number inside an option's text
checked, while the arguments are parsed: before torch, Ray or pandas is imported and before anything is allocated.

A value out of range is one line naming the option (argparse puts it first), the value (its start, for a long one)
and the bound: `error: argument --seed: expected a whole number from 0 to 4,294,967,295, got '1844…'`.

Each numeric type carries `bounds` (low, high) and each list type `items` (the most it takes), so a test walks every
command's parser and finds an option without them (tests/cli/test_bounds.py).
"""
from __future__ import annotations

import argparse
import math
import os
import re

from informer_lab.analysis.seeds import SEED_MAX

COUNT_MAX = 1_000_000_000  # a count or an index with no tighter bound of its own (windows, steps per epoch)
DIGITS_MAX = 40  # longer number texts are refused before they are converted
LIST_MAX = 1024  # items of a list option with no tighter cap of its own
TEXT_INT_MAX = 1_000_000_000  # |whole numbers| inside an option's text (an edit's position, an attention option)
TEXT_FLOAT_MAX = 1e12  # |numbers| inside an option's text (an edit's size)


def shown(text: str, chars: int = 40) -> str:
    """A value as a message echoes it: its start, and its length when cut."""
    text = str(text)
    return repr(text) if len(text) <= chars else f"{text[:chars]!r}… ({len(text):,} characters)"


def _span(low: float, high: float, low_open: bool = False, high_open: bool = False) -> str:
    return f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def int_in(low: int, high: int):
    """An argparse type: a whole number in [low, high], the bound named when it is passed."""
    def parse(text: str) -> int:
        text = str(text).strip()
        value = None
        if len(text) <= DIGITS_MAX:
            try:
                value = int(text)
            except ValueError:
                pass
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected a whole number from {low:,} to {high:,}, got {shown(text)}")
        return value
    parse.bounds = (low, high)
    return parse


def number_in(low: float, high: float, *, low_open: bool = False, high_open: bool = False):
    """An argparse type: a finite number in [low, high] (open ends where said)."""
    def parse(text: str) -> float:
        text = str(text).strip()
        try:
            value = float(text) if len(text) <= DIGITS_MAX else math.nan
        except ValueError:
            value = math.nan
        below = value <= low if low_open else value < low
        above = value >= high if high_open else value > high
        if not math.isfinite(value) or below or above:
            raise argparse.ArgumentTypeError(f"expected a finite number in {_span(low, high, low_open, high_open)}, "
                                             f"got {shown(text)}")
        return value
    parse.bounds = (low, high)
    return parse


positive_int = int_in(1, COUNT_MAX)
non_negative_int = int_in(0, COUNT_MAX)
seed_int = int_in(0, SEED_MAX)  # numpy's and Ray's limit (torch takes more)


def cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def threads_int():
    """An argparse type: torch threads, from 1 to this machine's CPUs (more only wait for a core)."""
    return int_in(1, cpus())


def int_list(low: int, high: int, *, most: int = LIST_MAX, what: str = "whole numbers"):
    """An argparse type: whole numbers in [low, high] separated by commas, 1 to `most` of them → a tuple."""
    one = int_in(low, high)

    def parse(text: str) -> tuple[int, ...]:
        parts = [p for p in str(text).split(",", most) if p.strip()]
        if not parts or len(parts) > most:
            raise argparse.ArgumentTypeError(f"expected 1 to {most:,} {what} separated by commas, got {shown(text)}")
        try:
            return tuple(one(p) for p in parts)
        except argparse.ArgumentTypeError as err:
            raise argparse.ArgumentTypeError(f"{what}: {err}") from None
    parse.bounds, parse.items = (low, high), most
    return parse


def number_list(low: float, high: float, *, most: int = LIST_MAX):
    """An argparse type: finite numbers in [low, high] separated by commas, 1 to `most` of them → a tuple."""
    one = number_in(low, high)

    def parse(text: str) -> tuple[float, ...]:
        parts = [p for p in str(text).split(",", most) if p.strip()]
        if not parts or len(parts) > most:
            raise argparse.ArgumentTypeError(f"expected 1 to {most:,} numbers separated by commas, got {shown(text)}")
        return tuple(one(p) for p in parts)
    parse.bounds, parse.items = (low, high), most
    return parse


_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d[\d_]*\.?\d*(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?|inf(?:inity)?|nan)(?![\w.])",
                     re.IGNORECASE)


def bounded_text(*, chars: int = 4096, numbers: int = LIST_MAX):
    """An argparse type for an option whose text holds numbers that a later step parses (an edit, an attention
    option, a grid): at most `chars` characters and `numbers` numbers, whole numbers within ±TEXT_INT_MAX, the
    others finite within ±TEXT_FLOAT_MAX. Returns the text; its own parser names what else is wrong."""
    def parse(text: str) -> str:
        text = str(text)
        if len(text) > chars:
            raise argparse.ArgumentTypeError(f"expected at most {chars:,} characters, got {shown(text)}")
        found = _NUMBER.findall(text)
        if len(found) > numbers:
            raise argparse.ArgumentTypeError(f"expected at most {numbers:,} numbers, got {len(found):,} in "
                                             f"{shown(text)}")
        for token in found:
            if len(token) > DIGITS_MAX:
                raise argparse.ArgumentTypeError(f"the number {shown(token)} in {shown(text)} is too long")
            try:
                value = int(token.replace("_", ""))
                bad = abs(value) > TEXT_INT_MAX
                bound = f"a whole number from {-TEXT_INT_MAX:,} to {TEXT_INT_MAX:,}"
            except ValueError:
                value = float(token)
                bad = not math.isfinite(value) or abs(value) > TEXT_FLOAT_MAX
                bound = f"a finite number within ±{TEXT_FLOAT_MAX:g}"
            if bad:
                raise argparse.ArgumentTypeError(f"{token} in {shown(text)}: expected {bound}")
        return text
    parse.bounds, parse.items = (-TEXT_FLOAT_MAX, TEXT_FLOAT_MAX), numbers
    return parse


def text(chars: int = 1000, *, items: int | None = None, what: str = "names"):
    """An argparse type: free text (a column name, a site) of at most `chars` characters; with `items`, a list
    separated by commas of at most that many."""
    def parse(value: str) -> str:
        value = str(value)
        if len(value) > chars:
            raise argparse.ArgumentTypeError(f"expected at most {chars:,} characters, got {shown(value)}")
        if items is not None and value.count(",") >= items:
            raise argparse.ArgumentTypeError(f"expected at most {items:,} {what} separated by commas, got "
                                             f"{value.count(',') + 1:,}")
        return value
    parse.chars = chars
    if items is not None:
        parse.items = items
    return parse


def choice_list(choices, what: str):
    """An argparse type: names from `choices` separated by commas (each once, in the order given; at most four
    times as many items as there are choices are split off a hostile text)."""
    choices = tuple(choices)

    def parse(value: str) -> tuple[str, ...]:
        names = tuple(dict.fromkeys(n.strip() for n in str(value).split(",", parse.items) if n.strip()))
        unknown = [n for n in names if n not in choices]
        if not names or unknown:
            raise argparse.ArgumentTypeError(f"expected {what} from {', '.join(choices)} separated by commas, got "
                                             f"{shown((unknown or [value])[0])}")
        return names
    parse.items = 4 * len(choices)
    return parse


def seeds(limit: int):
    """An argparse type: seeds as 0-7, 0,3,9 or 2-4,8 (analysis.seeds), at most `limit` → a tuple."""
    from informer_lab.analysis.errors import ConfigError
    from informer_lab.analysis.seeds import parse_seeds

    def parse(text: str) -> tuple[int, ...]:
        try:
            return parse_seeds(text, limit, option="seeds")
        except ConfigError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    parse.bounds, parse.items = (0, SEED_MAX), limit
    return parse


__all__ = ["COUNT_MAX", "LIST_MAX", "SEED_MAX", "bounded_text", "cpus", "int_in", "int_list", "non_negative_int",
           "number_in", "number_list", "positive_int", "seed_int", "seeds", "shown", "text", "threads_int"]
