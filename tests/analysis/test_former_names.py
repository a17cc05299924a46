"""Code written against analysis/'s former flat layout (analysis.sparsity, analysis.imports.tsl, …) still imports,
and gets the very module of the new layout, not a second copy with its own classes."""
import importlib
import subprocess
import sys

import pytest

from informer_lab.analysis import FORMER


@pytest.mark.parametrize("former", sorted(FORMER))
def test_a_former_name_is_the_module_itself(former):
    old = importlib.import_module(f"informer_lab.analysis.{former}")
    assert old is importlib.import_module(f"informer_lab.analysis.{FORMER[former]}")


def test_a_former_subpackage_s_modules_are_not_loaded_twice():
    code = ("import sys, informer_lab.analysis.imports.tsl as a, informer_lab.analysis.checkpoints.imports.tsl as b; "
            "from informer_lab.analysis.checkpoint import load_checkpoint; "
            "from informer_lab.analysis.checkpoints.folder import load_checkpoint as l2; "
            "from informer_lab import analysis; assert a is b and load_checkpoint is l2 and "
            "analysis.sparsity.__name__ == 'informer_lab.analysis.attention.sparsity'; copies = [m for m in sys.modules.values() if getattr(m, '__file__', '')"
            " and m.__file__.endswith('imports/tsl.py')]; assert len(set(map(id, copies))) == 1, copies")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_unknown_name_is_still_an_import_error():
    with pytest.raises(ImportError):
        importlib.import_module("informer_lab.analysis.no_such_module")
    from informer_lab import analysis
    with pytest.raises(AttributeError):
        analysis.no_such_module  # noqa: B018
