"""Running `python cli.py …` as a user would, and what it costs a test run.

`cli(*args)` runs the command through `informer_lab.cli.main`, the function `cli.py` calls, inside the test's own
process, in the repository root, its stdout and stderr captured and its return code kept, the way a subprocess would
give them: an exception that escapes `main` becomes return code 1 and a traceback on stderr, as Python's own exit would.
A subprocess of `python cli.py` costs 3–5 s of CPU importing torch and the lab before the command runs, most of what
a small command costs; the suite's dozens of them added minutes on two cores.

Where the process itself is what is tested, `cli(..., process=True)` runs the real `python cli.py` subprocess; the
commands that serve, stop servers or start Ray always do, and INFORMER_LAB_TEST_CLI=subprocess makes every call one
(a check that in-process and real runs agree).
"""
from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
import traceback
import warnings

from tests.conftest import ROOT

SUBPROCESS_ONLY = {"ui", "serve", "stop", "list", "study"}  # signal handlers, servers, a Ray of their own


def cli(*args, timeout=300, process: bool = False) -> subprocess.CompletedProcess:
    argv = [str(a) for a in args]
    command = next((a for a in argv if not a.startswith("-")), "")
    if process or command in SUBPROCESS_ONLY or os.environ.get("INFORMER_LAB_TEST_CLI") == "subprocess":
        return subprocess.run([sys.executable, str(ROOT / "cli.py"), *argv], capture_output=True, text=True,
                              timeout=timeout, cwd=ROOT)
    return _in_process(argv)


class _Captured(io.StringIO):
    """A text stream with a `.buffer` for the commands that write bytes to standard output (`--out -`)."""

    def __init__(self):
        super().__init__()
        self.buffer = _Bytes(self)


class _Bytes(io.RawIOBase):
    def __init__(self, text: io.StringIO):
        super().__init__()
        self._text = text

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self._text.write(bytes(data).decode("utf-8"))
        return len(data)


def _in_process(argv: list[str]) -> subprocess.CompletedProcess:
    """main(argv) with what a fresh process would have: the repository root as working folder, no logging handler
    (main configures logging), and afterwards the working folder, logging, warnings and torch's thread count as they
    were before."""
    import torch

    from informer_lab.cli import main

    out, err = _Captured(), _Captured()
    threads = torch.get_num_threads()  # --threads sets it for the rest of a process
    root = logging.getLogger()
    level, handlers = root.level, root.handlers[:]
    root.handlers = []  # as in a fresh process: main's basicConfig adds its own, on the captured stderr, at its level
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        with warnings.catch_warnings(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as stop:  # as Python exits: a number is the status, None 0, anything else printed, 1
                if stop.code is None or isinstance(stop.code, int):
                    code = stop.code
                else:
                    print(stop.code, file=sys.stderr)
                    code = 1
            except Exception:  # what Python prints on an uncaught exception, and its exit status
                traceback.print_exc(file=sys.stderr)
                code = 1
    finally:
        os.chdir(cwd)
        root.handlers = handlers
        root.setLevel(level)
        logging.captureWarnings(False)
        if threads != torch.get_num_threads():
            torch.set_num_threads(threads)
    return subprocess.CompletedProcess(["cli.py", *argv], int(code or 0), out.getvalue(), err.getvalue())
