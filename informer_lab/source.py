"""Where the lab's own files are, in a checkout and in an install, and how to run its commands from either.

In a checkout (a clone, run in place or installed editable) the code and the shipped sample sit in the repository's
top-level folders, which `informer_lab`'s path spans (informer_lab/__init__.py); in a wheel they sit inside the
package. Nothing here imports torch or Streamlit.
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import informer_lab

PACKAGE = Path(informer_lab.__file__).resolve().parent
IMPORT_ROOT = PACKAGE.parent  # the folder on sys.path that holds `informer_lab` (the checkout, or site-packages)
CHECKOUT: Path | None = IMPORT_ROOT if str(IMPORT_ROOT) in informer_lab.__path__ else None
FILES = CHECKOUT or PACKAGE  # the folder holding sample_data/ (and, in a checkout, docs/, tests/, …)
SERVER_APP = PACKAGE / "server" / "app.py"  # the st.App `informer-lab ui` serves (app.py is the same for a checkout)


COMMAND_ENV = "INFORMER_LAB_COMMAND"  # how the lab that started this process was started (child_env sets it)
_STARTED_AS: ContextVar[str | None] = ContextVar("informer_lab_started_as", default=None)


@contextmanager
def started_as(prog: str):
    """While a command runs: how the user started it (`informer-lab`, `python cli.py`, `python -m informer_lab`),
    for the commands it shows and the processes it starts (the app's server, a study)."""
    token = _STARTED_AS.set(prog)
    try:
        yield
    finally:
        _STARTED_AS.reset(token)


def command_prefix() -> str:
    """How the user runs the lab's commands: as the running command was started, or as the lab that started this
    process was (a server `informer-lab ui` started), else `python cli.py` in a checkout (`streamlit run app.py`)
    and `informer-lab` installed."""
    return (_STARTED_AS.get() or os.environ.get(COMMAND_ENV)
            or ("python cli.py" if CHECKOUT is not None else "informer-lab"))


def command(words: str) -> str:
    """A command line to show a user: `command("train --csv F")` → `informer-lab train --csv F` (or python cli.py)."""
    return f"{command_prefix()} {words}".strip()


def child_command(*args: str) -> list[str]:
    """argv of a child process that runs a lab command in this Python (`python -P -m informer_lab …`: -P keeps the
    child's working folder, which may hold a user's own `cli.py` or `model/`, off its import path; child_env puts
    the lab there)."""
    return [sys.executable, "-P", "-m", "informer_lab", *args]


def child_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for such a child: this package importable first, whatever folder it runs in."""
    env = dict(os.environ if base is None else base)
    env[COMMAND_ENV] = command_prefix()
    env["PYTHONPATH"] = os.pathsep.join([str(IMPORT_ROOT), *filter(None, [env.get("PYTHONPATH", "")])])
    return env


__all__ = ["CHECKOUT", "COMMAND_ENV", "FILES", "IMPORT_ROOT", "PACKAGE", "SERVER_APP", "child_command", "child_env", "command",
           "command_prefix", "started_as"]
