"""Informer Lab's computations: pure functions, data in, frozen dataclasses or DataFrames out; never Streamlit.

By subject (ARCHITECTURE.md): data/ (files to scaled splits, no torch), learning/ (windows, training, forecasts),
checkpoints/ (saving, checks, safe reading, imports from other code), attention/ (recordings, M and M̄, the pyramid),
heads/ (masks, ablation, importance, roles, faithfulness), instruments/ (query/key map, counterfactual, patching,
attribution, attention variants), planted/ (series with a known answer, the self-test), compare/ (baselines, the
full-attention counterfactual, the verdict), reports/ (the offline HTML report); errors.py, outputs.py,
intervals.py (intervals over windows and seeds) and discoveries.py (false discoveries across heads) serve them all.

The modules once sat side by side (`analysis.sparsity`, `analysis.checkpoint`, …; now under `informer_lab.`). Code
written against those names keeps working: `FORMER` maps each onto its place, and importing a former name gives the module itself
(one module object whichever name imported it). The project's own code uses the new names (tests/test_structure.py).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

FORMER = {  # former module (informer_lab.analysis.<name>) → its place now (informer_lab.analysis.<place>)
    "checkpoint": "checkpoints.folder", "checkpoint_checks": "checkpoints.checks",
    "checkpoint_store": "checkpoints.store", "weights_checks": "checkpoints.weights",
    "torch_file": "checkpoints.torch_file", "official": "checkpoints.official", "imports": "checkpoints.imports",
    "training": "learning.training", "schedules": "learning.schedules", "workflow": "learning.workflow",
    "windows": "learning.windows", "forecasting": "learning.forecasting", "passes": "learning.passes",
    "masking": "heads.masking", "mask_scoring": "heads.mask_scoring", "ablation": "heads.ablation",
    "importance": "heads.importance", "head_roles": "heads.roles", "faithfulness": "heads.faithfulness",
    "recording": "attention.recording", "positions": "attention.positions", "sparsity": "attention.sparsity",
    "sparsity_sites": "attention.sparsity_sites", "attention_stats": "attention.stats",
    "agreement": "attention.agreement", "pyramid": "attention.pyramid", "qk_map": "instruments.qk_map",
    "counterfactual": "instruments.counterfactual", "window_edits": "instruments.window_edits",
    "patching": "instruments.patching", "attribution": "instruments.attribution", "variants": "instruments.variants",
    "attention_cost": "instruments.attention_cost", "paired": "instruments.paired", "synth": "planted.synth",
    "known_answer": "planted.known_answer", "selftest": "planted.selftest",
    "selftest_heads": "planted.selftest_heads", "comparison": "compare.comparison", "baselines": "compare.baselines",
    "pairing": "compare.pairing", "verdict": "compare.verdict", "report": "reports.report",
    "report_html": "reports.html", "report_figures": "reports.figures", "report_verdict": "reports.verdict",
}


class _FormerNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`analysis.<former>[.rest]` → the module `analysis.<place>[.rest]` (imported under its own name first)."""

    @staticmethod
    def _target(fullname: str) -> str | None:
        if not fullname.startswith(__name__ + "."):
            return None
        first, _, tail = fullname[len(__name__) + 1:].partition(".")
        if first not in FORMER:
            return None
        return ".".join([__name__, FORMER[first]] + ([tail] if tail else []))

    def find_spec(self, fullname, path=None, target=None):
        return importlib.util.spec_from_loader(fullname, self) if self._target(fullname) else None

    def create_module(self, spec):
        return importlib.import_module(self._target(spec.name))

    def exec_module(self, module) -> None:
        """Nothing to run: the module ran under its own name."""


if not any(isinstance(finder, _FormerNames) for finder in sys.meta_path):
    sys.meta_path.insert(0, _FormerNames())  # before the path finder, which would load a second copy of a submodule


def __getattr__(name: str):
    """`analysis.<former>` as an attribute, as `import analysis` users wrote it."""
    if name in FORMER:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
