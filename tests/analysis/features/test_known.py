"""Known answers: a model that did not learn (untrained weights) is reported and not scored; dictionaries of several
SAE seeds on one site are matched and set against shuffled ones."""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Informer, InformerConfig

from informer_lab.analysis.features.concepts import Concepts
from informer_lab.analysis.features.known import dictionary_stability, planted_recovery, recovery_table
from informer_lab.analysis.features.sae import SAESettings


def test_a_model_that_did_not_learn_is_not_scored(tiny_prepared):
    torch.manual_seed(0)
    p = tiny_prepared
    model = Informer(InformerConfig(enc_in=p.enc_in, dec_in=p.dec_in, c_out=p.c_out, n_marks=p.n_marks, seq_len=48,
                                    label_len=24, pred_len=12, d_model=16, n_heads=4, d_ff=32, dropout=0.0)).eval()
    times = p.test.timestamps
    concepts = Concepts(pd.DatetimeIndex(times), {"night": np.where(times.hour < 6, "yes", "no").astype(object)})
    row = planted_recovery(model, p, concepts, "night", settings=SAESettings(k=4, expansion=2, steps=20))
    assert not row.learned and not row.recovered and np.isnan(row.auroc) and "baseline" in row.warning
    table = recovery_table([row])
    assert list(table.columns[:3]) == ["seed", "learned", "recovered"] and not table.learned[0]


def test_dictionaries_of_several_seeds_are_matched_against_shuffled_ones(tiny_trained, tiny_prepared):
    st = dictionary_stability(tiny_trained[0].model, tiny_prepared, settings=SAESettings(k=4, expansion=2, steps=150),
                              seeds=(0, 1, 2), train_windows=96)
    assert st.cosine.shape == (3, 3) and np.allclose(np.diag(st.cosine), 1.0)
    assert 0 < st.shuffled.estimate < st.stability.estimate <= 1
