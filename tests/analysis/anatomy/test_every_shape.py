"""Every anatomy instrument on every shape of model the lab trains or imports: with and without distilling (imports
of Time-Series-Library and Hugging Face models may have none), one to three encoder layers, a stack of replicas, one
or two decoder layers. Models are built, not trained: the instruments read the wiring, not what was learnt."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from informer_lab.analysis.anatomy.direct import direct_shares, window_parts
from informer_lab.analysis.anatomy.flow import flow
from informer_lab.analysis.anatomy.lens import forecast_lens
from informer_lab.analysis.anatomy.relevance import validate, windows_relevance
from informer_lab.analysis.anatomy.rollout import record_pieces, rollout, window_graph
from informer_lab.analysis.anatomy.transfer import FORMS
from informer_lab.analysis.attention.pyramid import pyramid_report
from informer_lab.analysis.learning.training import config_for
from informer_lab.analysis.learning.windows import WindowDataset, collate
from informer_lab.model import Informer

SHAPES = [dict(distil=distil, e_layers=layers, d_layers=d_layers)
          for distil in (True, False) for layers, d_layers in (((1,), 1), ((2,), 1), ((3,), 2), ((3, 2, 1), 1))]


@pytest.fixture(scope="module", params=SHAPES, ids=lambda s: f"distil={s['distil']}-e{s['e_layers']}-d{s['d_layers']}")
def shaped(request, tiny_prepared):
    torch.manual_seed(0)
    config = config_for(tiny_prepared, d_model=8, n_heads=2, d_ff=8, dropout=0.0, **request.param)
    return Informer(config).eval(), tiny_prepared


def test_rollout_and_flow_give_shares_that_sum_to_one_on_every_distil_form(shaped):
    model, prepared = shaped
    batch = collate([WindowDataset(prepared, "test")[w] for w in (0, 5)])[0]
    pieces = record_pieces(model, batch, seed=0)
    for distil in FORMS:
        graph = window_graph(model, pieces, 1, distil=distil)
        for relevance in (rollout(graph, [1, 12]), flow(graph, [1, 12])[0]):
            total = relevance.inputs.sum(axis=1) + relevance.label
            np.testing.assert_allclose(total, 1.0, atol=1e-6)
            assert np.isfinite(relevance.inputs).all() and (relevance.inputs >= -1e-12).all()


def test_every_anatomy_instrument_runs(shaped):
    model, prepared = shaped
    result = windows_relevance(model, prepared, "test", windows=2, methods=("rollout", "flow"),
                               distils=("routed", "structural"), steps=[1, 6])
    assert set(result.table["method"]) == {"rollout", "flow"} and len(result.windows) == 2
    checked = validate(model, prepared, result, ig_steps=4)
    assert len(checked) == 2 * 2 * 2 and set(checked["against"]) == {"blank_out", "integrated_gradients"}
    lens = forecast_lens(model, prepared, "test", windows=4, fit_windows=8)
    assert len(lens.table) and np.isfinite(lens.table.select_dtypes("number").to_numpy(dtype=float)).any()
    shares = direct_shares(model, prepared, "test", windows=4)
    assert len(shares.heads) == 2 * 2 * model.config.d_layers and np.isfinite(shares.table["value"]).all()
    assert len(window_parts(model, prepared, "test", 0))
    assert pyramid_report(model, prepared, "test", 0).lengths_match
