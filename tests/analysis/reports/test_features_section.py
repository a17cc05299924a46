"""The checkpoint report's features section holds the numbers of the features analysis it runs (same settings, same
seed: the same dictionary), its features ranked by their ablation."""
from __future__ import annotations

import pytest

from informer_lab.analysis.features.run import run_features
from informer_lab.analysis.features.sae import SAESettings
from informer_lab.analysis.reports.features import features_section


def test_the_features_section_reads_the_analysis(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    section = features_section(model, tiny_prepared, "test", 1, steps=80, train_windows=64, test_windows=32, top=5)
    tables = dict(section.tables)
    run = run_features(model, tiny_prepared, settings=SAESettings(steps=80), seed=1, train_windows=64,
                       test_windows=32, effect_windows=32, ablation_windows=8)
    assert section.title == "Features" and f"FVU {run.metrics.fvu:.3f}" in section.text
    assert tables["dictionary"]["fvu"].iloc[0] == pytest.approx(run.metrics.fvu)
    top = tables["features"]
    assert len(top) == 5 and top.ablation_rms.is_monotonic_decreasing
    assert top.ablation_rms.iloc[0] == pytest.approx(run.table.ablation_rms.max())
