"""The command line the browser benchmarks share (cold_start.py, reslice.py), and its checks.

Both time this checkout's app.py in rounds on a fresh server per contestant, against other checkouts given by
`--against DIR` (each named after its folder), with a checkpoint copied in as the runs folder's `sample`.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from tests.e2e.test_browser import CHROMIUM


def parse_args(description: str, default_rounds: int, reserved: tuple[str, ...],
               extra: Callable[[argparse.ArgumentParser], object] | None = None) -> tuple[argparse.Namespace,
                                                                                         dict[str, Path]]:
    """The parsed arguments, and {name: app.py} of each --against checkout; exits with a message on bad ones.
    `reserved`: contestant names the script uses itself; `extra` adds a script's own arguments."""
    parser = argparse.ArgumentParser(description=description)
    if extra is not None:
        extra(parser)
    parser.add_argument("--checkpoint", type=Path, required=True, help="a checkpoint folder (e.g. runs/sample)")
    parser.add_argument("--rounds", type=int, default=default_rounds)
    parser.add_argument("--against", type=Path, action="append", default=[],
                        help="another checkout whose app.py runs in every round too (repeatable)")
    args = parser.parse_args()
    if not (args.checkpoint / "manifest.json").is_file():
        sys.exit(f"error: {args.checkpoint} is not a checkpoint folder (no manifest.json); start the app once "
                 "(it trains runs/sample) or `python cli.py train ... --out DIR`")
    if not CHROMIUM.exists():
        sys.exit(f"error: {CHROMIUM} is missing (install Debian's chromium)")
    for other in args.against:
        if not (other / "app.py").is_file():
            sys.exit(f"error: {other} has no app.py")
    names = [other.resolve().name for other in args.against]
    if len(set(names)) < len(names) or set(reserved) & set(names):
        sys.exit(f"error: give the --against checkouts distinct folder names other than {' and '.join(reserved)}")
    return args, {name: other.resolve() / "app.py" for name, other in zip(names, args.against)}
