"""The whole model: shapes, the distilling pyramid, seeds, head masks and scoped hooks."""
import threading

import pytest
import torch

from informer_lab.model import Batch, HeadMask, Informer, InformerConfig, distilled_length, recording


def tiny(**changes):
    base = dict(enc_in=3, dec_in=3, c_out=2, seq_len=48, label_len=24, pred_len=12, n_marks=4, d_model=16,
                n_heads=4, e_layers=(2,), d_layers=1, d_ff=32, dropout=0.0)
    return InformerConfig(**{**base, **changes})


def batch_for(config, B=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    return Batch(torch.randn(B, config.seq_len, config.enc_in, generator=g),
                 torch.rand(B, config.seq_len, config.n_marks, generator=g) - 0.5,
                 torch.randn(B, config.dec_len, config.dec_in, generator=g),
                 torch.rand(B, config.dec_len, config.n_marks, generator=g) - 0.5)


def model_for(config, seed=0):
    torch.manual_seed(seed)
    return Informer(config).eval()


def run(model, batch, seed=0, **kw):
    return model(batch, generator=torch.Generator().manual_seed(seed), **kw)


def test_distilled_length_formula():
    assert [distilled_length(n) for n in (96, 48, 24, 7, 2, 1)] == [48, 24, 12, 4, 1, 1]


@pytest.mark.parametrize("seq_len", [96, 51, 17])
def test_pyramid_lengths_follow_the_formula_through_every_layer_and_replica(seq_len):
    config = tiny(seq_len=seq_len, label_len=8, e_layers=(3, 2, 1))
    model = model_for(config)
    with recording("encoder.*") as rec:
        run(model, batch_for(config))
    total = 0
    for r, n_layers in enumerate(config.e_layers):
        length = seq_len // 2 ** r
        for l in range(n_layers):
            assert rec.records[f"encoder.{r}.layer{l}.out"].shape[1] == length
            if l < n_layers - 1:
                length = (length - 1) // 2 + 1
                assert rec.records[f"encoder.{r}.distil{l}.out"].shape[1] == length
        assert rec.records[f"encoder.{r}.out"].shape[1] == length
        total += length
    assert rec.records["encoder.out"].shape[1] == total


def test_sites_are_numbered_in_gate_order():
    model = model_for(tiny(e_layers=(3, 2, 1), d_layers=3))
    assert [s.index for s in model.sites] == list(range(model.n_sites)) == list(range(12))
    assert [model.attention_layer(s).index for s in model.sites] == list(range(12))
    assert [s.name for s in model.sites][6:] == ["decoder_self.0", "decoder_self.1", "decoder_self.2",
                                                 "cross.0", "cross.1", "cross.2"]


def test_forward_shape_and_one_head_one_element_batches():
    for config, B in ((tiny(), 2), (tiny(n_heads=1), 1), (tiny(n_heads=1, e_layers=(2, 1)), 1)):
        out = run(model_for(config), batch_for(config, B=B))
        assert out.shape == (B, config.pred_len, config.c_out)
        assert torch.isfinite(out).all()


def test_same_seed_same_forecast_other_seed_other_sample():
    config = tiny(seq_len=96, label_len=48, pred_len=24)
    model, batch = model_for(config), batch_for(config)
    assert torch.equal(run(model, batch, seed=7), run(model, batch, seed=7))
    with recording("*.key_index") as first:
        run(model, batch, seed=7)
    with recording("*.key_index") as second:
        run(model, batch, seed=8)
    assert first.records.keys() == second.records.keys()
    assert all(not torch.equal(first.records[k], second.records[k]) for k in first.records)


def test_batched_elements_are_independent_of_each_other():
    config = tiny()
    model, batch = model_for(config), batch_for(config, B=3)
    together = run(model, batch)
    alone = run(model, batch.slice(1, 2))
    torch.testing.assert_close(together[1:2], alone, atol=1e-6, rtol=0)


def test_full_attention_override_changes_a_prob_model_and_matches_a_full_model():
    config = tiny()
    prob_model = model_for(config)
    full_model = model_for(config.replace(encoder_attention="full", decoder_attention="full"))
    full_model.load_state_dict(prob_model.state_dict())
    batch = batch_for(config)
    counterfactual = run(prob_model, batch, attention="full")
    torch.testing.assert_close(counterfactual, run(full_model, batch), atol=1e-6, rtol=0)
    assert not torch.allclose(counterfactual, run(prob_model, batch))


def test_head_mask_of_ones_is_the_identity_and_zeros_change_the_forecast():
    config = tiny()
    model, batch = model_for(config), batch_for(config)
    plain = run(model, batch)
    torch.testing.assert_close(run(model, batch, head_mask=HeadMask(model.full_gates(1))), plain, atol=0, rtol=0)
    gates = model.full_gates(2)
    gates[1, 0, 2] = 0.0  # element 1 loses head 2 of the first encoder layer; element 0 keeps everything
    masked = run(model, batch, head_mask=HeadMask(gates))
    torch.testing.assert_close(masked[0], plain[0], atol=1e-6, rtol=0)
    assert not torch.allclose(masked[1], plain[1])


def test_masked_encoder_head_is_silent_in_the_recorded_forward():
    """Perturbing a gated head's value weights leaves the whole forecast bit-identical."""
    config = tiny()
    model, batch = model_for(config), batch_for(config)
    site = model.sites[1]
    gates = model.full_gates(1)
    gates[0, site.index, 3] = 0.0
    before = run(model, batch, head_mask=HeadMask(gates))
    with torch.no_grad():
        model.attention_layer(site).value_projection.weight[12:16] *= -7
    assert torch.equal(before, run(model, batch, head_mask=HeadMask(gates)))


def test_bad_batch_and_head_mask_shapes_are_named():
    config = tiny()
    model, batch = model_for(config), batch_for(config)
    with pytest.raises(ValueError, match=r"batch.x_enc has shape \[2, 47, 3\], expected \[2, 48, 3\]"):
        model(Batch(batch.x_enc[:, 1:], batch.mark_enc[:, 1:], batch.x_dec, batch.mark_dec))
    with pytest.raises(ValueError, match="head_mask.gates"):
        model(batch, head_mask=HeadMask(torch.ones(2, 3, 4)))


def test_config_rejects_impossible_settings():
    with pytest.raises(ValueError, match="not divisible"):
        tiny(d_model=18)
    with pytest.raises(ValueError, match="label_len"):
        tiny(label_len=100)
    with pytest.raises(ValueError, match="encoder_attention"):
        tiny(encoder_attention="sparse")


def test_hooks_do_not_leak_across_threads():
    config = tiny()
    model, batch = model_for(config), batch_for(config)
    seen: dict[str, int] = {}
    barrier = threading.Barrier(2)

    def plain_call():
        barrier.wait()
        for _ in range(5):
            run(model, batch)

    def recorded_call():
        with recording("*") as rec:
            barrier.wait()
            run(model, batch)
        seen["n"] = len(rec.records)

    threads = [threading.Thread(target=plain_call), threading.Thread(target=recorded_call)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    with recording("*") as reference:
        run(model, batch)
    assert seen["n"] == len(reference.records)  # no duplicate fires from the other thread (it would raise)
    with recording("*") as rec:
        pass
    assert rec.records == {}


def test_variant_masks_equal_one_mask_at_a_time():
    config = tiny(e_layers=(2, 1), d_layers=2)
    model, batch = model_for(config), batch_for(config, B=3)
    gates = model.full_gates(5)
    for k, (site, head) in enumerate([(0, 0), (1, 2), (3, 1), (5, 3)], start=1):
        gates[k, site, head] = 0.0  # variant 0 keeps every head
    together = run(model, batch, head_mask=HeadMask(gates, variants=True))
    assert together.shape == (5 * 3, config.pred_len, config.c_out)
    for k in range(5):
        alone = run(model, batch, head_mask=HeadMask(gates[k:k + 1]))
        torch.testing.assert_close(together[k * 3:(k + 1) * 3], alone, atol=1e-5, rtol=0)
    torch.testing.assert_close(together[:3], run(model, batch), atol=1e-5, rtol=0)


@pytest.mark.parametrize("e_layers,d_layers", [((2,), 1), ((3, 2, 1), 2)])
def test_variants_share_rows_and_still_equal_the_loop_for_many_masks(e_layers, d_layers):
    """Single-head masks at every site (and a mean-ablation variant): the grouped pass equals one call per mask."""
    config = tiny(e_layers=e_layers, d_layers=d_layers)
    model, batch = model_for(config), batch_for(config, B=2)
    singles = [(s, h) for s in range(model.n_sites) for h in range(config.n_heads)]
    gates = model.full_gates(len(singles) + 1)
    for k, (site, head) in enumerate(singles, start=1):
        gates[k, site, head] = 0.0
    gates[0, 0, :] = 0.5  # a fractional variant too
    with recording("*.context") as rec:
        run(model, batch)
    means = tuple(torch.randn_like(rec.records[f"{s.name}.context"][0]) for s in model.sites)  # [L_Q, H, D] each
    for m in (None, means):
        together = run(model, batch, head_mask=HeadMask(gates, m, variants=True))
        for k in range(0, len(singles) + 1, 5):
            alone = run(model, batch, head_mask=HeadMask(gates[k:k + 1], m))
            torch.testing.assert_close(together[k * 2:(k + 1) * 2], alone, atol=1e-5, rtol=0)


def test_probsparse_cross_attention_samples_encoder_keys_and_equals_full_when_every_query_is_active():
    config = tiny(cross_attention="prob", e_layers=(3,), seq_len=96, label_len=48, pred_len=24)
    model, batch = model_for(config), batch_for(config)
    with recording("cross.0.*") as rec:
        out = run(model, batch)
    L_dec, L_enc = config.dec_len, 24  # 96 → 48 → 24 after two distilling steps: ⌈ln 72⌉ = 5, ⌈ln 24⌉ = 4
    assert rec.records["cross.0.key_index"].shape == (L_dec, 5 * 4)  # U follows the encoder's length
    assert rec.records["cross.0.scores"].shape == (2, config.n_heads, L_dec)
    assert int(rec.records["cross.0.key_index"].max()) < L_enc
    # every query active (factor large): ProbSparse cross-attention is full cross-attention
    wide = config.replace(factor=100)
    full = config.replace(cross_attention="full", factor=100)
    a, b = model_for(wide), model_for(full)
    b.load_state_dict(a.state_dict())
    torch.testing.assert_close(run(a, batch), run(b, batch), atol=1e-6, rtol=1e-5)
    assert not torch.allclose(out, run(b, batch), atol=1e-6)  # with u < L_Q the lazy rows differ
