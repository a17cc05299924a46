"""Informer Lab, headless, from a checkout: `python cli.py COMMAND ...` (installed: `informer-lab COMMAND ...`).

The commands live in informer_lab/cli.py and cli_commands/.
"""
import sys

from informer_lab.cli import main

if __name__ == "__main__":
    sys.exit(main())
