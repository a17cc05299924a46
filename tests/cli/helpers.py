"""Running `python cli.py …` as a user would: a subprocess in the repository root."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def cli(*args, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
