"""Rollout over many windows and its validation: blank-out ΔMSE against a hand-made forward pass, Spearman ρ against
scipy's, and the lab's interval (none where too few independent stretches exist)."""
from __future__ import annotations

import numpy as np
import torch
from scipy.stats import spearmanr

from informer_lab.model import Batch, key_generator

from informer_lab.analysis.anatomy.relevance import blank_out_delta, spearman_rows, validate, windows_relevance
from informer_lab.analysis.data import load_csv
from informer_lab.analysis.learning.windows import WindowDataset, decoder_values
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from tests.conftest import SAMPLE_CSV


def test_blank_out_is_the_forecasts_loss_with_one_step_at_its_mean(tiny_trained):
    checkpoint = tiny_trained[0]
    model, prepared = checkpoint.model, prepare_for_checkpoint(tiny_trained[0], load_csv(SAMPLE_CSV))
    targets = np.array([1, 5])
    delta = blank_out_delta(model, prepared, "test", np.array([3]), targets, seed=2)[0]
    x, mark, _, mark_dec, y = WindowDataset(prepared, "test")[3]
    c = model.config

    column = c.c_out - 1  # features M: the last forecast column alone, as the benchmark reads its target's
    alone = blank_out_delta(model, prepared, "test", np.array([3]), targets, seed=2, columns=np.array([column]))[0]

    def loss(values, columns=slice(None)):
        batch = Batch(values[None], mark[None], decoder_values(values[None], c.label_len, c.pred_len), mark_dec[None])
        with torch.no_grad():
            f = model(batch, generator=key_generator(2))[0, targets - 1].double().cpu()
        return float(((f - y[targets - 1].double()) ** 2)[:, columns].mean())

    assert c.c_out > 1
    for step in (0, 20, 47):  # the last one also sits in the decoder's known tail
        blanked = x.clone()
        blanked[step] = 0.0
        assert abs(delta[step] - (loss(blanked) - loss(x))) < 1e-5
        assert abs(alone[step] - (loss(blanked, [column]) - loss(x, [column]))) < 1e-5
    assert not np.allclose(alone, delta)


def test_spearman_rows_is_scipys():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(5, 30)), rng.normal(size=(5, 30))
    np.testing.assert_allclose(spearman_rows(a, b), [spearmanr(x, y).statistic for x, y in zip(a, b)])
    assert np.isnan(spearman_rows(np.ones((1, 4)), np.arange(4.0)[None]))[0]


def test_validation_has_an_interval_only_where_enough_windows_exist(tiny_trained):
    checkpoint = tiny_trained[0]
    model, prepared = checkpoint.model, prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    few = windows_relevance(model, prepared, "test", windows=3, steps=[1])
    table = validate(model, prepared, few, ig_steps=8)
    assert table["rho_low"].isna().all() and table["reason"].str.startswith("no interval").all()
    many = windows_relevance(model, prepared, "test", windows=40, steps=[1])
    assert len(many.windows) >= 30 and many.inputs[("rollout", "routed")].shape == (len(many.windows), 48)
    table = validate(model, prepared, many, ig_steps=4)
    shown = table.dropna(subset=["rho_low"])
    assert len(shown) >= 1, table  # windows far enough apart to be independent stretches
    assert ((shown["rho_low"] <= shown["rho"]) & (shown["rho"] <= shown["rho_high"])).all()
    assert (table.loc[table["rho_low"].isna(), "reason"].str.startswith("no interval")).all()
