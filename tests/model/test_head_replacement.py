"""Per-window head replacements (activation patching at the gate), hook-site patches, and what is recorded."""
import pytest
import torch

from informer_lab.model import HeadMask, gate_heads, patching, recording

from .test_informer import batch_for, model_for, run, tiny


def test_gate_heads_takes_one_replacement_per_batch_row():
    g = torch.Generator().manual_seed(0)
    context, other = torch.randn(3, 5, 4, 2, generator=g), torch.randn(3, 5, 4, 2, generator=g)
    gate = torch.ones(3, 4)
    gate[1, 2] = 0.0
    out = gate_heads(context, gate, other)
    assert torch.equal(out[1, :, 2], other[1, :, 2])  # row 1's head 2 is row 1's replacement
    keep = torch.ones_like(out, dtype=torch.bool)
    keep[1, :, 2] = False
    assert torch.equal(out[keep], context[keep])  # everything else bit for bit
    assert torch.equal(gate_heads(context, gate, other[1:2]), gate_heads(context, gate, other[1:2].expand(3, -1, -1, -1)))
    with pytest.raises(ValueError, match="head replacement has shape"):
        gate_heads(context, gate, other[:2])


@pytest.mark.parametrize("e_layers,d_layers,cross", [((2,), 1, "full"), ((3, 2, 1), 2, "prob")])
def test_per_window_replacements_in_variants_equal_one_mask_at_a_time(e_layers, d_layers, cross):
    config = tiny(e_layers=e_layers, d_layers=d_layers, cross_attention=cross)
    model, batch, donor = model_for(config), batch_for(config, B=2), batch_for(config, B=2, seed=5)
    with recording("*.context") as rec:
        run(model, donor)
    contexts = tuple(rec.records[f"{s.name}.context"] for s in model.sites)  # [2, L_Q, H, D]: per window
    singles = [(s, h) for s in range(model.n_sites) for h in range(config.n_heads)]
    gates = model.full_gates(len(singles) + 1)
    for k, (site, head) in enumerate(singles, start=1):
        gates[k, site, head] = 0.0
    together = run(model, batch, head_mask=HeadMask(gates, contexts, variants=True))
    for k in range(len(singles) + 1):
        alone = run(model, batch, head_mask=HeadMask(gates[k:k + 1], contexts))
        torch.testing.assert_close(together[k * 2:(k + 1) * 2], alone, atol=1e-5, rtol=0)
    assert torch.equal(run(model, batch, head_mask=HeadMask(model.full_gates(1), contexts)), run(model, batch))
    with pytest.raises(ValueError, match=r"head_mask.means\[0\] \(encoder.0.0\) has shape"):
        run(model, batch, head_mask=HeadMask(model.full_gates(1), tuple(c.repeat(2, 1, 1, 1) for c in contexts)))


def test_a_patched_hook_site_passes_the_given_tensor_on():
    config = tiny()
    model, batch, donor = model_for(config), batch_for(config), batch_for(config, seed=9)
    with recording("encoder.out", "enc_embedding", "dec_embedding") as rec:
        target = run(model, donor)
    assert rec.records["enc_embedding"].shape == (2, config.seq_len, config.d_model)
    assert rec.records["dec_embedding"].shape == (2, config.dec_len, config.d_model)
    with patching({"encoder.out": rec.records["encoder.out"], "dec_embedding": rec.records["dec_embedding"]}):
        assert torch.equal(run(model, batch), target)  # everything the decoder reads comes from the donor
    with patching({"enc_embedding": rec.records["enc_embedding"], "dec_embedding": rec.records["dec_embedding"]}):
        assert torch.equal(run(model, batch), target)
    assert not torch.equal(run(model, batch), target)  # outside the block nothing is patched
    with patching({"encoder.out": rec.records["encoder.out"][:1]}), \
            pytest.raises(ValueError, match="patch for hook site 'encoder.out' has shape"):
        run(model, batch)


def test_probsparse_selection_is_recorded_without_the_rows():
    config = tiny()
    model, batch = model_for(config), batch_for(config)
    with recording("*.selected") as light:
        run(model, batch)
    with recording("*.selected", "*.rows") as full:
        run(model, batch)
    prob = [s.name for s in model.sites if model.attention_layer(s).kind == "prob"]
    assert sorted(light.records) == sorted(f"{name}.selected" for name in prob)  # full attention: only with rows
    for name in prob:
        assert torch.equal(light.records[f"{name}.selected"], full.records[f"{name}.selected"])
    assert "cross.0.selected" in full.records
