"""Rollout, flow and the distilling transfer against the maths (DESIGN §7)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from informer_lab.model import Batch, Informer, InformerConfig, key_generator, on_cpu, recording
from informer_lab.model.distilling import DistillingLayer

from informer_lab.analysis.anatomy.flow import SCALE, flow
from informer_lab.analysis.anatomy.rollout import Graph, attention_map, push_encoder, record_pieces, rollout, window_graph
from informer_lab.analysis.anatomy.transfer import jacobian_transfer, routed_transfer, structural_transfer, tap_inputs
from informer_lab.analysis.anatomy.true_rows import site_true_rows, token_rows


def small_model(**changes) -> Informer:
    base = dict(enc_in=2, dec_in=2, c_out=2, seq_len=24, label_len=8, pred_len=6, n_marks=3, d_model=16, n_heads=4,
                e_layers=(2,), d_ff=16, dropout=0.0, factor=1)
    torch.manual_seed(0)
    model = Informer(InformerConfig(**{**base, **changes}))
    for module in model.modules():  # BatchNorm statistics that are not the identity
        if isinstance(module, nn.BatchNorm1d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    return model.eval()


def batch_for(model: Informer, B: int = 2, seed: int = 0) -> Batch:
    c = model.config
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, c.seq_len, c.enc_in, generator=g)
    x_dec = torch.cat([x[:, -c.label_len:], torch.zeros(B, c.pred_len, c.enc_in)], dim=1)
    return Batch(x, torch.randn(B, c.seq_len, c.n_marks, generator=g), x_dec,
                 torch.randn(B, c.dec_len, c.n_marks, generator=g))


# ------------------------------------------------------------------------------------------ transfer P
@pytest.mark.parametrize("padding", [1, 2])
@pytest.mark.parametrize("L", [24, 25, 96])
def test_structural_rows_sum_to_one_and_have_the_tap_shape(padding, L):
    P = structural_transfer(L, padding)
    expected_out = (L + 2 * padding - 3) // 2 + 1
    assert P.shape == (expected_out, L)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    j = 5
    row = P[j] * 9
    centre = 2 * j - (padding - 1)  # p = 1: inputs 2j − 2 … 2j + 2; p = 2: one step to the left
    np.testing.assert_allclose(row[centre - 2:centre + 3], [1, 2, 3, 2, 1])
    assert row.sum() == pytest.approx(9.0)


def test_structural_first_row_wraps_round():
    P = structural_transfer(24, 1)
    assert P[0, -1] > 0  # output 0's conv reads input −1 = 23 (circular)


def test_routed_form_is_the_max_pools_winners():
    torch.manual_seed(1)
    distil = DistillingLayer(8, padding=1).eval()
    x = torch.randn(1, 20, 8)
    with recording("*") as rec:
        distil(x)
    kept = rec.records["kept"][0].numpy()  # [C, L_out]
    # MaxPool1d's own winners on the conv → BN → ELU output, computed by torch's modules
    conv = nn.Conv1d(8, 8, 3, padding=1, padding_mode="circular")
    conv.load_state_dict(distil.conv.state_dict())
    z = distil.activation(distil.norm(conv(x.transpose(1, 2))))
    _, indices = nn.MaxPool1d(3, 2, 1, return_indices=True)(z)
    np.testing.assert_array_equal(kept, indices[0].numpy())
    P = routed_transfer(kept, 20, 1)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    taps = tap_inputs(20, 1)
    brute = np.zeros_like(P)
    for c in range(8):
        for j in range(P.shape[0]):
            for i in taps[kept[c, j]]:
                brute[j, i] += 1 / 24
    np.testing.assert_allclose(P, brute)


@pytest.mark.parametrize("padding,L", [(1, 12), (2, 11), (1, 2)])
def test_jacobian_form_equals_autograd(padding, L):
    torch.manual_seed(2)
    distil = DistillingLayer(6, padding=padding).double()
    distil.norm.running_mean.uniform_(-0.3, 0.3)
    distil.norm.running_var.uniform_(0.5, 2.0)
    distil.eval()
    x = torch.randn(L, 6, dtype=torch.float64)
    J = torch.autograd.functional.jacobian(lambda t: distil(t[None])[0], x)  # [L_out, C, L, C_in]
    brute = J.pow(2).sum(dim=(1, 3)).sqrt().numpy()
    brute = brute / brute.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(jacobian_transfer(distil, x), brute, rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------------------------------ true rows
@pytest.mark.parametrize("lazy", ["cummean", "cumsum"])
def test_true_rows_are_what_the_model_computed(lazy):
    model = small_model(decoder_lazy=lazy, cross_attention="prob")
    batch = batch_for(model)
    with recording("*.rows", "*.selected", "*.values", "*.context") as rec:
        model(batch, generator=key_generator(0))
    for site in model.sites:
        true = site_true_rows(model, site, rec.records)
        V = rec.records[f"{site.name}.values"].double()  # [B, L_K, H, D]
        context = rec.records[f"{site.name}.context"].double()  # [B, L_Q, H, D]
        rebuilt = torch.einsum("bhqk,bkhd->bqhd", torch.from_numpy(true.rows * true.scale[..., None]), V)
        torch.testing.assert_close(rebuilt, context, rtol=1e-5, atol=1e-5)
        assert true.lazy.any() or model.attention_layer(site).kind != "prob"
        if site.kind == "decoder_self":  # a lazy row of the causal decoder never reads the future
            assert np.all(np.triu(true.rows[0, 0], 1) == 0)


def test_mix_token_rows_follow_the_interleaving():
    rows = np.random.default_rng(0).dirichlet(np.ones(5), size=(1, 2, 5))  # [B=1, H=2, L=5, L_K=5]
    from informer_lab.analysis.anatomy.true_rows import TrueRows
    true = TrueRows("x", rows, np.ones((1, 2, 5)), np.zeros((1, 2, 5), bool), mix=True)
    out = token_rows(true, 0)
    # q = 0 reads flat slots 0, 1 → (head 0, pos 0), (head 0, pos 1); q = 3 reads 6, 7 → (head 1, pos 1), (1, 2)
    np.testing.assert_allclose(out[0], rows[0, 0, [0, 1]].mean(axis=0))
    np.testing.assert_allclose(out[3], rows[0, 1, [1, 2]].mean(axis=0))


# ------------------------------------------------------------------------------------------ rollout
def _graph(encoder, dec=None, seq_len=None, label_len=2, pred_len=2, alpha=0.5):
    L_mem = encoder[-1][0].shape[0]
    seq_len = seq_len or encoder[0][0].shape[1]
    dec = dec or [(np.eye(label_len + pred_len), np.full((label_len + pred_len, L_mem), 1 / L_mem))]
    return Graph([encoder], [np.arange(seq_len)], dec, [L_mem], label_len, pred_len, seq_len, alpha)


def test_identity_attention_gives_identity_rollout():
    g = _graph([(attention_map(np.eye(6), 0.5), None)])
    inputs, _ = push_encoder(g, np.eye(6), np.arange(6))
    np.testing.assert_allclose(inputs, np.eye(6))


def test_one_layer_rollout_equals_a_hat():
    model = small_model(e_layers=(1,))
    pieces = record_pieces(model, batch_for(model), seed=0)
    g = window_graph(model, pieces, 1, alpha=0.3)
    inputs, _ = push_encoder(g, np.eye(24), np.arange(24))
    A = token_rows(pieces.true["encoder.0.0"], 1)
    np.testing.assert_allclose(inputs, 0.3 * A + 0.7 * np.eye(24), atol=1e-12)


@pytest.mark.parametrize("changes", [{}, {"mix": True, "mix_sites": "all"}, {"e_layers": (3, 2, 1), "seq_len": 32},
                                     {"distil_padding": 2}, {"decoder_lazy": "cumsum", "d_layers": 2}])
@pytest.mark.parametrize("form", ["routed", "structural", "jacobian"])
def test_rollout_shares_sum_to_one(changes, form):
    model = small_model(**changes)
    pieces = record_pieces(model, batch_for(model), seed=3)
    g = window_graph(model, pieces, 0, distil=form, head=None)
    r = rollout(g, range(1, 7))
    np.testing.assert_allclose(r.inputs.sum(axis=1) + r.label, 1.0)
    assert (r.inputs >= 0).all() and (r.label >= 0).all()
    np.testing.assert_allclose(r.known + r.placeholders, r.label)
    levels = r.levels
    memory = levels[levels["level"] == levels.groupby("replica")["level"].transform("max")]
    np.testing.assert_allclose(memory.groupby("target_step")["relevance"].sum() + r.label, 1.0)


def test_padding_two_model_gets_the_shifted_map():
    model = small_model(distil_padding=2)
    pieces = record_pieces(model, batch_for(model), seed=0)
    g = window_graph(model, pieces, 0, distil="structural")
    P = g.encoder[0][0][1]
    assert P.shape == (13, 24)  # 24 → ⌊25/2⌋ + 1
    np.testing.assert_allclose(P, structural_transfer(24, 2))


# ------------------------------------------------------------------------------------------ flow
def test_flow_on_a_chain_is_its_smallest_capacity():
    A = np.eye(4)
    A[0] = [0.3, 0.7, 0.0, 0.0]  # memory 0 → input 0 with capacity α·0.3
    C = np.zeros((4, 4))
    C[:, 0] = 1.0  # every decoder row reads memory 0 only
    g = _graph([(A, None)], dec=[(np.eye(4), C)], alpha=0.8)
    _, raw = flow(g, [1])
    assert raw[0, 0] == pytest.approx(0.3, abs=2 / SCALE)  # min(α = 0.8, 0.3)
    assert raw[0, 1] == pytest.approx(0.7, abs=2 / SCALE)
    assert raw[0, -1] == pytest.approx(0.2, abs=2 / SCALE)  # the residual 1 − α to the decoder's own tokens


def test_flow_never_exceeds_a_cut_of_the_rollout_graph():
    model = small_model()
    pieces = record_pieces(model, batch_for(model), seed=1)
    g = window_graph(model, pieces, 0)
    f, raw = flow(g, [3])
    # cut 1: the source's own edges (rows sum to 1); cut 2: the cross-attention's α into the memory for any input
    assert raw.max() <= 1.0 + 1e-6
    assert raw[0, :-1].max() <= g.alpha + 1e-6
    np.testing.assert_allclose(f.inputs.sum() + f.label, 1.0)


def test_the_rollout_graph_holds_the_routed_p_of_the_windows_own_winners(tiny_trained, tiny_prepared):
    """window_graph(distil="routed") takes P from the max-pool's winners of that window's own distilling input,
    worked out here by torch's own modules (circular Conv1d, the model's BatchNorm and ELU, MaxPool1d's indices),
    not the structural P it would equal if the winners were ignored."""
    from informer_lab.analysis.attention.recording import window_batch

    model = tiny_trained[0].model
    pieces = record_pieces(model, window_batch(tiny_prepared, "test", [0, 40]), seed=0)
    distil = on_cpu(model.encoder.replicas[0].distils[0])
    d = model.config.d_model
    conv = nn.Conv1d(d, d, 3, padding=distil.conv.padding[0], padding_mode="circular")
    conv.load_state_dict(distil.conv.state_dict())
    for window in (0, 1):
        P = window_graph(model, pieces, window, distil="routed").encoder[0][0][1]
        x = pieces.distil_inputs["encoder.0.distil0"][window]  # [L, d]
        L = x.shape[0]
        with torch.no_grad():
            z = distil.activation(distil.norm(conv(x.T[None].float())))
            _, winners = nn.MaxPool1d(3, 2, 1, return_indices=True)(z)
        taps = tap_inputs(L, distil.conv.padding[0])
        brute = np.zeros((winners.shape[-1], L))
        for c in range(d):
            for j, k in enumerate(winners[0, c].numpy()):
                for i in taps[k]:
                    brute[j, i] += 1 / (3 * d)
        np.testing.assert_allclose(P, brute, atol=1e-12)
        assert np.abs(P - structural_transfer(L, distil.conv.padding[0])).max() > 0.01


def test_flow_is_uniform_only_where_every_step_takes_the_same_value():
    from informer_lab.analysis.anatomy.flow import SAME, uniform, uniform_reason

    raw = np.array([[0.5, 0.5, 0.5 + SAME / 2, 0.3], [0.25, 0.25, 0.25, 0.7]])  # the label node last
    assert uniform(raw) and "0.375" in uniform_reason(raw, 0.5)
    raw[1, 0] += 3 * SAME
    assert not uniform(raw)


def test_a_graph_reformed_with_another_forms_transfers_is_that_forms_graph(tiny_trained, tiny_prepared):
    """The Anatomy screen builds the attention maps of a slice once and swaps the distilling P's per form: the result
    is exactly the graph built from scratch in that form, and the maps are shared, not copied."""
    from informer_lab.analysis.anatomy.rollout import distil_transfers, with_transfers
    from informer_lab.analysis.attention.recording import window_batch

    model = tiny_trained[0].model
    pieces = record_pieces(model, window_batch(tiny_prepared, "test", [3, 17]), seed=1)
    base = window_graph(model, pieces, 1, alpha=0.3, head=2, distil="routed")
    for form in ("structural", "jacobian"):
        reformed = with_transfers(base, distil_transfers(model, pieces, 1, form))
        fresh = window_graph(model, pieces, 1, alpha=0.3, head=2, distil=form)
        for (A, P), (A2, P2), (A0, _) in zip(reformed.encoder[0], fresh.encoder[0], base.encoder[0]):
            assert A is A0 and np.array_equal(A, A2)
            assert (P is None and P2 is None) or np.array_equal(P, P2)
        np.testing.assert_array_equal(rollout(reformed, [1, 5]).inputs, rollout(fresh, [1, 5]).inputs)
    assert not np.array_equal(rollout(base, [1]).inputs, rollout(reformed, [1]).inputs)  # the forms differ here
