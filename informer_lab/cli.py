"""Informer Lab, headless: `informer-lab COMMAND ...`, `python cli.py COMMAND ...` in a checkout (train, evaluate,
import, forecast, and the analyses).

The same parser serves `informer-lab COMMAND ...` (informer_lab/__main__.py), which adds nothing of its own: `ui`,
`list` and `stop` are commands here too (cli_commands/serve.py).

Errors a user can cause print one line on stderr and exit with code 2; never a traceback.
Each command lives in `cli_commands/<name>.py` as `register(subparsers)`, setting `func(args) -> int`.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys

from informer_lab.hugepages import prefer_huge_pages

prefer_huge_pages()  # before anything imports torch (it reads the setting at its first tensor)

from informer_lab import cli_commands  # noqa: E402
from informer_lab.analysis.errors import MESSAGE_CHARS, InformerLabError, short  # noqa: E402
from informer_lab.cli_commands._output import run_command  # noqa: E402
from informer_lab.source import started_as  # noqa: E402


class Parser(argparse.ArgumentParser):
    """Argument errors as one line too (the option named), pointing at --help instead of printing the usage."""

    def error(self, message: str):
        self.exit(2, f"error: {message} ({self.prog} --help lists the options)\n")


def build_parser(prog: str = "python cli.py") -> argparse.ArgumentParser:
    from informer_lab import __version__

    parser = Parser(prog=prog, description="Informer Lab: serve the app (ui), train, evaluate, forecast, import, and every "
                    "analysis of the screens, headless.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    parser.add_argument("--version", action="version", version=f"informer-lab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(cli_commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"informer_lab.cli_commands.{info.name}").register(sub)
    return parser


def main(argv: list[str] | None = None, prog: str = "python cli.py") -> int:
    parser = build_parser(prog)
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help, or an argument error already printed as one line
        return int(stop.code or 0)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
    try:
        with started_as(prog):
            return run_command(args)
    except (InformerLabError, ValueError, OSError) as err:  # one line of at most MESSAGE_CHARS, "error: " included
        print(f"error: {short(' '.join(str(err).split()), MESSAGE_CHARS - len('error: '))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
