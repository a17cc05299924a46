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
