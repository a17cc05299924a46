"""Informer Lab: the one import package the lab installs (`pip install .` puts nothing else into site-packages).

    informer_lab.api         what a notebook needs, in one import (docs/python-api.md)
    informer_lab.analysis    pure functions: data in, tables and frozen dataclasses out
    informer_lab.model       the Informer in the paper's names
    informer_lab.ui          the Streamlit screens;  informer_lab.lab  the script every browser tab runs
    informer_lab.study       studies of many runs on Ray
    informer_lab.cli, informer_lab.cli_commands   the headless commands (`informer-lab COMMAND`, `python cli.py`)
    home.py, source.py, running.py, launch.py      the launcher: the lab's home, its files, running labs, `ui`

How a checkout and an install meet. The repository keeps its top-level layout (`analysis/`, `model/`, `ui/`,
`study/`, `cli_commands/`, `sample_data/` beside this folder), and the wheel maps those folders into this package
(setup.py's package_dir). In a checkout (or an editable install, which imports from the checkout) this package's
path spans the checkout's root, so `informer_lab.analysis` is the top-level `analysis/` folder there as it is
`informer_lab/analysis/` in a wheel: the code imports `informer_lab.…` everywhere, and nothing of a user's own
`model.py`, `analysis/` or `cli.py` can shadow it. Moving the code under this folder would have hidden the layout
the repository is read in; a path that spans it keeps both.
"""
import os as _os

__version__ = "0.1.0"


def _span_the_checkout() -> None:
    """Adds the checkout's root to this package's path when the subpackages live there, not here."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    root = _os.path.dirname(here)
    if (not _os.path.isdir(_os.path.join(here, "analysis"))
            and _os.path.isfile(_os.path.join(root, "analysis", "__init__.py"))
            and _os.path.isfile(_os.path.join(root, "pyproject.toml"))):
        __path__.append(root)  # noqa: F821  (a package's __path__)


_span_the_checkout()
