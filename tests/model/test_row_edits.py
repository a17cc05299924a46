"""Per-call replacement of heads' attention rows (uniform / permuted), tested against the maths."""
import threading

import pytest
import torch

from informer_lab.model import RowEdit, patching, recording, replacing_rows
from informer_lab.model.row_edits import allowed_keys, apply_row_edit, permuted_rows, uniform_rows

from .test_informer import batch_for, model_for, run, tiny


def test_uniform_rows_weigh_every_key_a_query_may_see_equally():
    positions = torch.tensor([0, 3, 5])
    causal = uniform_rows(allowed_keys(positions, 6, causal=True), torch.float64)
    for row, i in zip(causal, positions.tolist()):
        assert torch.allclose(row[: i + 1], torch.full((i + 1,), 1.0 / (i + 1), dtype=torch.float64))
        assert torch.all(row[i + 1:] == 0)
    full = uniform_rows(allowed_keys(positions, 6, causal=False), torch.float64)
    assert torch.allclose(full, torch.full((3, 6), 1 / 6, dtype=torch.float64))


@pytest.mark.parametrize("pattern", ["prefix", "scattered"])  # causal; a sparse kind's keys anywhere in the row
def test_permuted_rows_shuffle_each_row_among_its_allowed_keys(pattern):
    g = torch.Generator().manual_seed(0)
    rows = torch.softmax(torch.randn(2, 3, 7, 9, generator=g), dim=-1)
    positions = torch.randint(0, 9, (2, 3, 7), generator=g)
    allowed = allowed_keys(positions, 9, causal=True)
    if pattern == "scattered":
        allowed = torch.rand(2, 3, 7, 9, generator=g) < 0.4
        allowed[..., 4] = True  # at least one key a row
    rows = rows * allowed
    rows = rows / rows.sum(-1, keepdim=True)
    out = permuted_rows(rows, allowed, torch.Generator().manual_seed(1))
    assert torch.all(out[~allowed] == 0)  # nothing lands on a key the query may not see
    for a, b, ok in zip(rows.reshape(-1, 9), out.reshape(-1, 9), allowed.reshape(-1, 9)):
        assert torch.equal(a[ok].sort().values, b[ok].sort().values)  # the same weights, moved
    again = permuted_rows(rows, allowed, torch.Generator().manual_seed(1))
    assert torch.equal(out, again)  # seeded
    several = allowed.sum(-1) > 2
    assert (out != rows).any(dim=-1)[several].float().mean() > 0.8  # rows with a choice do get shuffled


def test_a_permuted_one_hot_row_returns_the_value_it_now_points_at():
    g = torch.Generator().manual_seed(3)
    B, H, L, D = 2, 3, 8, 4
    V = torch.randn(B, H, L, D, generator=g)
    hot = torch.randint(0, L, (B, H, L), generator=g)
    rows = torch.nn.functional.one_hot(hot, L).float()  # non-causal one-hot rows
    context = rows @ V
    new_rows, new_context = apply_row_edit(RowEdit((1,), "permute", torch.Generator().manual_seed(5)), rows, None,
                                           V, context, causal=False)
    points = new_rows[:, 1].argmax(dim=-1)  # [B, L] where each row's 1 went
    expected = torch.stack([V[b, 1, points[b]] for b in range(B)])  # [B, L, D]
    assert torch.equal(new_rows[:, 1].sum(-1), torch.ones(B, L))
    torch.testing.assert_close(new_context[:, 1], expected)
    assert torch.equal(new_context[:, [0, 2]], context[:, [0, 2]])  # other heads untouched
    assert (points != hot[:, 1]).float().mean() > 0.5


@pytest.mark.parametrize("site_name,attention", [("encoder.0.0", "full"), ("encoder.0.1", "prob"),
                                                 ("decoder_self.0", "full"), ("decoder_self.0", "prob"),
                                                 ("cross.0", "full")])
def test_uniform_rows_on_a_head_whose_rows_are_already_uniform_change_nothing(site_name, attention):
    config = tiny(encoder_attention=attention, decoder_attention=attention, e_layers=(2,))
    model, batch = model_for(config), batch_for(config)
    site = next(s for s in model.sites if s.name == site_name)
    layer = model.attention_layer(site)
    D = config.d_model // config.n_heads
    with torch.no_grad():  # head 2's queries are all zero: every score equal, every computed row uniform
        layer.query_projection.weight[2 * D:3 * D] = 0
        layer.query_projection.bias[2 * D:3 * D] = 0
    before = run(model, batch)
    with replacing_rows({site_name: RowEdit((2,), "uniform")}), recording(f"{site_name}.rows") as rec:
        after = run(model, batch)
    torch.testing.assert_close(after, before, atol=1e-6, rtol=0)
    assert rec.records[f"{site_name}.rows"].shape[1] == config.n_heads
    with replacing_rows({site_name: RowEdit((1,), "uniform")}):
        assert not torch.allclose(run(model, batch), before, atol=1e-4)  # a head that is not uniform does change


def test_permuting_a_one_hot_head_moves_the_forecast_to_the_values_it_points_at():
    config = tiny(encoder_attention="full")
    model, batch = model_for(config), batch_for(config)
    site = "encoder.0.0"
    layer = model.attention_layer(model.sites[0])
    D = config.d_model // config.n_heads
    with torch.no_grad():  # head 1's queries huge: its softmax rows one-hot in float32
        layer.query_projection.weight[D:2 * D].mul_(1e6)
    with recording(f"{site}.rows", f"{site}.values", f"{site}.context") as rec:
        run(model, batch)
    rows, V, context = (rec.records[f"{site}.{k}"] for k in ("rows", "values", "context"))
    assert rows[:, 1].amax(-1).min() > 1 - 1e-6  # one-hot
    edit = RowEdit((1,), "permute", torch.Generator().manual_seed(7))
    with replacing_rows({site: edit}), recording(f"{site}.rows") as rec:
        moved = run(model, batch)
    points = rec.records[f"{site}.rows"][:, 1].argmax(-1)  # [B, L_Q] the key each row now points at
    expected = context.clone()
    for b in range(points.shape[0]):
        expected[b, :, 1] = V[b, points[b], 1]  # [L_Q, D]: head 1 returns the values it now points at
    with patching({f"{site}.context": expected}):
        patched = run(model, batch)
    torch.testing.assert_close(moved, patched, atol=1e-5, rtol=0)
    assert not torch.allclose(moved, run(model, batch), atol=1e-4)


def test_prob_sparse_edits_touch_only_the_computed_rows():
    config = tiny(encoder_attention="prob")
    model, batch = model_for(config), batch_for(config)
    site = "encoder.0.0"
    with recording(f"{site}.context", f"{site}.selected", f"{site}.rows") as plain:
        run(model, batch)
    with replacing_rows({site: RowEdit((0, 3), "uniform")}), recording(f"{site}.context") as edited:
        run(model, batch)
    before, after = plain.records[f"{site}.context"], edited.records[f"{site}.context"]  # [B, L_Q, H, D]
    selected = plain.records[f"{site}.selected"]  # [B, H, u]
    changed = (before != after).any(dim=-1)  # [B, L_Q, H]
    for b in range(changed.shape[0]):
        for h in range(config.n_heads):
            rows = set(torch.nonzero(changed[b, :, h]).flatten().tolist())
            assert rows <= set(selected[b, h].tolist())
            if h in (1, 2):
                assert not rows
    assert changed[:, :, [0, 3]].any()


def test_edits_are_scoped_to_the_call_and_the_thread():
    config = tiny()
    model, batch = model_for(config), batch_for(config)
    plain = run(model, batch)
    results = {}

    def edited():
        with replacing_rows({"cross.0": RowEdit((0, 1, 2, 3), "uniform")}):
            results["edited"] = run(model, batch)

    def untouched():
        results["plain"] = run(model, batch)

    threads = [threading.Thread(target=edited), threading.Thread(target=untouched)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert torch.equal(results["plain"], plain)
    assert torch.equal(run(model, batch), plain)
    assert not torch.allclose(results["edited"], plain)
    with pytest.raises(ValueError, match="head 9"):
        with replacing_rows({"cross.0": RowEdit((9,), "uniform")}):
            run(model, batch)
    with pytest.raises(ValueError, match="needs a torch.Generator"):
        RowEdit((0,), "permute")
