"""Recording one forward pass: a pass stopped once the sites asked for have fired records what the whole pass does."""
from __future__ import annotations

import torch

from informer_lab.analysis.attention.recording import record_forward, record_until, window_batch


def test_a_pass_stopped_after_its_sites_records_the_whole_passes_values_and_skips_the_rest(tiny_trained,
                                                                                           tiny_prepared):
    model = tiny_trained[0].model
    batch = window_batch(tiny_prepared, "test", [3, 40, 77])
    names = [f"encoder.0.1.{suffix}" for suffix in ("queries", "keys", "scores", "selected")]
    runs = []
    hook = model.decoder.register_forward_pre_hook(lambda *_: runs.append(1))
    try:
        early = record_until(model, batch, 9, *names)
        assert not runs  # the decoder never ran
        whole = record_forward(model, batch, 9, *names)
        assert runs == [1]
    finally:
        hook.remove()
    assert early.keys() == whole.keys() == set(names)
    for name in names:  # the second encoder layer's key sample: the draws before it happened in the same order
        assert torch.equal(early[name], whole[name])


def test_a_site_that_never_fires_lets_the_pass_run_to_its_end(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    batch = window_batch(tiny_prepared, "test", [0])
    names = ["cross.0.queries", "cross.0.scores"]  # full attention: no scores
    assert record_until(model, batch, 0, *names).keys() == {"cross.0.queries"}
