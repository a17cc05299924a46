"""`informer-lab` and `python -m informer_lab`: the launcher's commands and every command of `python cli.py`,
from one parser (cli.build_parser). With no command, or only the options of `ui`, it serves the app."""
from __future__ import annotations

import sys

UI_DEFAULT = "ui"
TOP_LEVEL = {"-h", "--help", "-v", "--verbose", "--version"}


def main(argv: list[str] | None = None, prog: str = "informer-lab") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in TOP_LEVEL):
        argv = [UI_DEFAULT, *argv]  # `informer-lab` and `informer-lab --port 8600` serve the app, as `jupyter lab` does
    from informer_lab import cli  # noqa: PLC0415  (cli sets torch's huge-page preference before torch loads)

    return cli.main(argv, prog=prog)


if __name__ == "__main__":
    sys.exit(main(prog="python -m informer_lab"))
