"""One call trains and measures a site's dictionary on the tiny model: the table has a row per feature with its
effects, the concept scores come with a concept file, and bad window counts are refused before any work."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.features.concepts import Concepts
from informer_lab.analysis.features.run import run_features
from informer_lab.analysis.features.sae import SAESettings


def test_a_run_trains_measures_and_scores_concepts(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    times = tiny_prepared.test.timestamps
    concepts = Concepts(pd.DatetimeIndex(times), {"night": np.where(times.hour < 6, "yes", "no").astype(object)})
    phases = []
    run = run_features(model, tiny_prepared, "decoder.layer0.out", SAESettings(k=4, expansion=2, steps=100),
                       seed=1, train_windows=64, test_windows=32, effect_windows=16, ablation_windows=4,
                       concepts=concepts, say=phases.append)
    assert run.trained.settings.seed == 1 and run.metrics.windows == 32 and run.train_windows == 64
    table = run.table
    assert len(table) == 32 and {"density", "direct_rms", "ablation_rms", "best_concept"} <= set(table.columns)
    assert table.direct_rms.notna().all() and (table.ablation_rms >= 0).all()
    assert set(run.concepts.table.level) == {"position", "window"} and set(run.concepts.table.value) == {"yes", "no"}
    assert run.settings_dict()["latents"] == 32 and {"collect", "train", "evaluate"} <= set(run.seconds)
    assert any(p.startswith("training") for p in phases)
    with pytest.raises(ConfigError, match="--test-windows"):
        run_features(model, tiny_prepared, test_windows=0)
    with pytest.raises(ConfigError, match="not a residual site"):
        run_features(model, tiny_prepared, "cross.0")


@pytest.mark.parametrize("seq_len", [24, 96, 336, 1440, 5760])
def test_long_windows_read_as_many_input_rows_never_too_few_windows(seq_len):
    from informer_lab.analysis.features.run import FEWEST_WINDOWS, WINDOWS_AT_96, windows_for_length

    counts = windows_for_length(seq_len)
    for name, at_96 in WINDOWS_AT_96.items():
        assert counts[name] >= FEWEST_WINDOWS[name]
        if seq_len <= 96:
            assert counts[name] == at_96
        elif counts[name] > FEWEST_WINDOWS[name]:  # the input rows read stay within a window of those at 96
            assert abs(counts[name] * seq_len - at_96 * 96) <= seq_len
    assert windows_for_length(1440)["train_windows"] == 68
