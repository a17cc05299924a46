"""The training step's shortcuts give the same function: the decoder's label rows dropped after the last
self-attention (Decoder.forward's keep_last) only where nothing reads them, with the same forecast and gradients."""
from __future__ import annotations

import pytest
import torch

from informer_lab.model import HeadMask, Informer, InformerConfig, recording
from informer_lab.model.decoder import Decoder

from .test_informer import batch_for, run, tiny


def forecast_and_grads(model, batch, observe: bool, **kw):
    model.zero_grad(set_to_none=True)
    if observe:  # an active recorder (matching nothing) keeps every decoder row
        with recording("no-such-site"):
            out = run(model, batch, **kw)
    else:
        out = run(model, batch, **kw)
    out.pow(2).sum().backward()
    return out.detach(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("changes", [{}, {"d_layers": 2}, {"decoder_attention": "full"}, {"mix": True},
                                     {"cross_attention": "prob"}, {"mix": True, "mix_sites": "all"},
                                     {"e_layers": (3, 2, 1), "label_len": 0}])
def test_forecast_rows_only_gives_the_same_forecast_and_gradients(changes):
    config = tiny(**changes)
    torch.manual_seed(0)
    model = Informer(config).eval()
    batch = batch_for(config)
    fast, fast_grads = forecast_and_grads(model, batch, observe=False)
    full, full_grads = forecast_and_grads(model, batch, observe=True)
    torch.testing.assert_close(fast, full)
    assert fast_grads.keys() == full_grads.keys()
    for name in fast_grads:
        torch.testing.assert_close(fast_grads[name], full_grads[name], msg=name)


def test_forecast_rows_only_applies_where_nothing_reads_the_label_rows(monkeypatch):
    config = tiny()
    torch.manual_seed(0)
    model = Informer(config).eval()
    seen = []
    original = Decoder.forward
    monkeypatch.setattr(Decoder, "forward", lambda self, x, memory, args, keep_last=None: (
        seen.append(keep_last), original(self, x, memory, args, keep_last))[1])
    batch = batch_for(config)
    run(model, batch)
    run(model, batch, attention="prob")  # ProbSparse cross-attention picks queries among all rows
    run(model, batch, head_mask=HeadMask(model.full_gates(2)))
    with recording("decoder.*"):
        run(model, batch)
    assert seen == [config.pred_len, None, None, None]
    assert Informer(InformerConfig(**{**config.__dict__, "mix": True, "mix_sites": "all"})).forecast_rows_only(
        None, None) is None
