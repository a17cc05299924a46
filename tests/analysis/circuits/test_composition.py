"""Composition scores from the weights (analysis/circuits/composition.py) against the maths and the modules."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch import nn

from informer_lab.model import Informer, InformerConfig
from informer_lab.model.distilling import batch_norm_rows, circular_conv

from informer_lab.analysis.circuits.composition import (KINDS, composition_scores, connections, distilling_map, factored_scores,
                                           fold_matrix, layer_norm_map, random_baseline, score)


def small_model(**changes) -> Informer:
    """A random tiny Informer with LayerNorm gains and BatchNorm statistics that are not the identity."""
    base = dict(enc_in=2, dec_in=2, c_out=2, seq_len=24, label_len=8, pred_len=6, n_marks=3, d_model=16, n_heads=4,
                e_layers=(2,), d_ff=16, dropout=0.0, factor=1)
    torch.manual_seed(0)
    model = Informer(InformerConfig(**{**base, **changes}))
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.BatchNorm1d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
                module.weight.uniform_(0.5, 1.5)
            elif isinstance(module, nn.LayerNorm):
                module.weight.uniform_(0.2, 2.0)
    return model.eval()


def dense(layer: nn.Module, h: int) -> dict[str, torch.Tensor]:
    """Head h's OV and QK [d, d] read off the layer's modules by pushing basis rows through them (x ↦ x·M)."""
    layer = copy.deepcopy(layer).double()
    d = layer.query_projection.in_features
    D = d // layer.n_heads
    eye = torch.eye(d, dtype=torch.float64)
    cols = slice(h * D, (h + 1) * D)

    def through(linear):  # rows: e_i·W (bias removed)
        return (linear(eye) - linear.bias)[:, cols]

    q, k, v = (through(m) for m in (layer.query_projection, layer.key_projection, layer.value_projection))
    context = torch.zeros(d, 1, layer.n_heads, D, dtype=torch.float64)
    context[:, 0, h] = v  # head h's context for value row e_i is e_i·W_V^h
    written = layer.project(context)[:, 0] - layer.out_projection.bias  # [d, d]: what head h writes for row e_i
    return {"OV": written.detach(), "QK": (q @ k.T).detach()}


# ------------------------------------------------------------------------------------------ the score itself
def test_a_rank_one_projection_composed_with_itself_scores_one_and_with_its_complement_zero():
    torch.manual_seed(1)
    u = torch.randn(8, 1, dtype=torch.float64)
    u = u / u.norm()
    P = u @ u.T  # rank 1: P·P = P and ‖P‖_F = 1 = ‖P‖_F², so the score is exactly 1
    assert score(P, P) == pytest.approx(1.0, abs=1e-12)
    assert score(P, torch.eye(8, dtype=torch.float64) - P) == pytest.approx(0.0, abs=1e-12)
    # rank k: ‖P·P‖ = ‖P‖ = √k, so a projection composes with itself at 1/√k, not 1
    Q, _ = torch.linalg.qr(torch.randn(8, 3, dtype=torch.float64))
    P3 = Q @ Q.T
    assert score(P3, P3) == pytest.approx(1 / np.sqrt(3), abs=1e-12)
    # the factored computation, u·uᵀ as X [d, 1]·Y [1, d]
    f = factored_scores(u[None], u.T[None], u[None], u.T[None])
    assert float(f) == pytest.approx(1.0, abs=1e-12)


def test_factored_scores_equal_the_dense_definition():
    g = torch.Generator().manual_seed(2)
    X_A, Y_A = torch.randn(3, 12, 4, generator=g, dtype=torch.float64), torch.randn(3, 4, 12, generator=g,
                                                                                    dtype=torch.float64)
    X_B, Y_B = torch.randn(2, 12, 5, generator=g, dtype=torch.float64), torch.randn(2, 5, 12, generator=g,
                                                                                    dtype=torch.float64)
    pairwise = factored_scores(X_A, Y_A, X_B, Y_B)
    assert pairwise.shape == (3, 2)
    for a in range(3):
        for b in range(2):
            assert float(pairwise[a, b]) == pytest.approx(score(X_A[a] @ Y_A[a], X_B[b] @ Y_B[b]), rel=1e-10)
    diagonal = factored_scores(X_A[:2], Y_A[:2], X_B, Y_B, pairwise=False)
    np.testing.assert_allclose(diagonal.numpy(), np.diag(pairwise[:2].numpy()), rtol=1e-10)


def test_random_baseline_mean_matches_the_closed_form():
    """A = X₁Y₁, B = X₂Y₂ with X [d, D], Y [D, d] iid N(0, 1). E‖A‖² = tr(E[XᵀX]·E[YYᵀ]) = tr(d·I_D · d·I_D) = d²D.
    Given M = Y₁X₂ [D, D], E‖X₁MY₂‖² = tr(E[X₁ᵀX₁]·M·E[Y₂Y₂ᵀ]·Mᵀ) = d²‖M‖², and E‖M‖² = D²·d (each entry a sum of
    d products of unit variance), so E‖AB‖² = d³D² and E‖AB‖² / (E‖A‖²·E‖B‖²) = 1/d: the score's typical size is
    1/√d (the brief's n × n Gaussian case gives the same 1/√n). The norms concentrate (relative spread
    O(1/√(dD))), so the mean score lies within a few per cent of 1/√d (measured: 1.5 % at d = 16, D = 4).
    Checked three ways: (1) the ratio of the mean squares of an independent dense Monte Carlo is 1/d; (2) the
    module's mean agrees with that Monte Carlo's mean score within 4 standard errors; (3) both lie within 3 % of
    1/√d."""
    d, D, draws = 32, 8, 400
    mean, q95 = random_baseline(d, D, D, draws, 0)
    g = torch.Generator().manual_seed(123)

    def products():
        return torch.randn(draws, d, D, generator=g, dtype=torch.float64) @ torch.randn(draws, D, d, generator=g,
                                                                                       dtype=torch.float64)

    A, B = products(), products()
    norm = torch.linalg.matrix_norm
    ratio = float((norm(A @ B) ** 2).mean() / ((norm(A) ** 2).mean() * (norm(B) ** 2).mean()))
    assert ratio * d == pytest.approx(1.0, abs=0.05)
    dense_scores = (norm(A @ B) / (norm(A) * norm(B))).numpy()
    se = dense_scores.std() / np.sqrt(draws)
    assert abs(mean - dense_scores.mean()) < 4 * np.sqrt(2) * se
    assert mean == pytest.approx(d ** -0.5, rel=0.03)
    assert q95 > mean
    assert random_baseline(d, D, D, draws, 0) == (mean, q95)  # seeded (and cached)


# ------------------------------------------------------------------------------------------ orientation and folds
def test_fold_maps_are_the_modules_linear_parts():
    model = small_model()
    layer = model.encoder.replicas[0].layers[0]
    x = torch.randn(5, 16, dtype=torch.float64)
    norm = copy.deepcopy(layer.norm1).double()
    sigma = torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + norm.eps)
    G = layer_norm_map(norm, "norm1").matrix
    np.testing.assert_allclose(((norm(x) - norm.bias) * sigma).detach().numpy(), (x @ G).numpy(), atol=1e-10)
    # the distilling step's linear part: on a row held constant over time the conv reads it at every tap
    distil = copy.deepcopy(model.encoder.replicas[0].distils[0]).double()
    rows = x[:, None, :].expand(5, 7, 16).contiguous()

    def linear_part(inputs):
        return batch_norm_rows(circular_conv(inputs, distil.conv), distil.norm)[:, 3]

    with torch.no_grad():
        got = linear_part(rows) - linear_part(torch.zeros_like(rows))
    np.testing.assert_allclose(got.numpy(), (x @ distilling_map(distil).matrix).numpy(), atol=1e-10)


def test_q_k_v_orientation_and_folded_gains_by_hand():
    """Score(A, B) with the write x·OV_A entering B: V → x·OV_A·G·OV_B; Q → the query row x·OV_A·G against keys y,
    (x·OV_A·G)·QK_B·yᵀ, matrix OV_A·G·QK_B; K → a query row y against the key row x·OV_A·G, y·QK_B·(x·OV_A·G)ᵀ, matrix
    (OV_A·G·QK_Bᵀ)ᵀ. OV and QK are read off the modules, G built from the norms' and the BatchNorm's parameters."""
    model = small_model()
    result = composition_scores(model, draws=20)
    table = result.table.set_index(["sender", "receiver", "kind"])
    replica = model.encoder.replicas[0]
    l0, l1 = replica.layers
    d = 16
    C = torch.eye(d, dtype=torch.float64) - 1.0 / d

    def gains(norm):
        return C @ torch.diag(norm.weight.detach().double())

    bn = replica.distils[0].norm
    a = bn.weight.detach().double() / torch.sqrt(bn.running_var.double() + bn.eps)
    conv = replica.distils[0].conv.weight.detach().double().sum(-1).T @ torch.diag(a)
    G = gains(l0.norm1) @ gains(l0.norm2) @ conv
    norm = torch.linalg.matrix_norm
    for ha, hb in ((0, 1), (2, 3), (1, 1)):
        A, B = dense(l0.attention, ha), dense(l1.attention, hb)
        key = (f"encoder.0.0:{ha}", f"encoder.0.1:{hb}")
        v = norm(A["OV"] @ G @ B["OV"]) / (norm(A["OV"]) * norm(G @ B["OV"]))
        q = norm(A["OV"] @ G @ B["QK"]) / (norm(A["OV"]) * norm(G @ B["QK"]))
        k = norm(B["QK"] @ (A["OV"] @ G).T) / (norm(A["OV"]) * norm(B["QK"] @ G.T))
        for kind, expected in (("V", v), ("Q", q), ("K", k)):
            assert table.loc[key + (kind,), "score"] == pytest.approx(float(expected), rel=1e-4), kind
    # the gains matter: with γ = 1 and an identity BatchNorm the scores change
    with torch.no_grad():
        for norm_module in (l0.norm1, l0.norm2):
            norm_module.weight.fill_(1.0)
        bn.weight.fill_(1.0)
        bn.running_var.fill_(1.0 - bn.eps)
    plain = composition_scores(model, draws=20).table.set_index(["sender", "receiver", "kind"])
    A, B = dense(l0.attention, 0), dense(l1.attention, 1)
    G1 = C @ C @ replica.distils[0].conv.weight.detach().double().sum(-1).T
    expected = norm(A["OV"] @ G1 @ B["OV"]) / (norm(A["OV"]) * norm(G1 @ B["OV"]))
    got = plain.loc[("encoder.0.0:0", "encoder.0.1:1", "V"), "score"]
    assert got == pytest.approx(float(expected), rel=1e-4)
    assert abs(got - table.loc[("encoder.0.0:0", "encoder.0.1:1", "V"), "score"]) > 1e-3


def test_every_row_equals_the_dense_score_through_its_path():
    model = small_model(d_layers=2)
    table = composition_scores(model, draws=20).table
    conns = {(c.sender.name, c.receiver.name): c for c in connections(model)}
    sites = {s.name: s for s in model.sites}
    for row in table.itertuples():
        G = fold_matrix(conns[(row.sender_site, row.receiver_site)].folds)
        A = dense(model.attention_layer(sites[row.sender_site]), row.sender_head)["OV"]
        B = dense(model.attention_layer(sites[row.receiver_site]), row.receiver_head)
        M = {"Q": B["QK"], "K": B["QK"].T, "V": B["OV"]}[row.kind]
        assert row.score == pytest.approx(score(A, G @ M), rel=1e-4), row


# ------------------------------------------------------------------------------------------ which pairs
def expected_pairs(e_layers, d_layers):
    pairs = set()
    for r, n in enumerate(e_layers):
        for l in range(n - 1):
            pairs |= {(f"encoder.{r}.{l}", f"encoder.{r}.{l + 1}", k) for k in KINDS}
        for c in range(d_layers):
            pairs |= {(f"encoder.{r}.{n - 1}", f"cross.{c}", k) for k in "KV"}
    for l in range(d_layers):
        pairs.add((f"decoder_self.{l}", f"cross.{l}", "Q"))
        if l + 1 < d_layers:
            for sender in (f"decoder_self.{l}", f"cross.{l}"):
                pairs |= {(sender, f"decoder_self.{l + 1}", k) for k in KINDS}
                pairs.add((sender, f"cross.{l + 1}", "Q"))
    return pairs


@pytest.mark.parametrize("e_layers, d_layers", [((3, 2, 1), 1), ((2,), 2)])
def test_the_table_lists_exactly_the_connected_pairs(e_layers, d_layers):
    model = small_model(e_layers=e_layers, d_layers=d_layers)
    table = composition_scores(model, draws=20).table
    got = set(zip(table.sender_site, table.receiver_site, table.kind))
    assert got == expected_pairs(e_layers, d_layers)
    H = model.config.n_heads
    assert len(table) == len(got) * H * H
    assert not table.duplicated(["sender", "receiver", "kind"]).any()
    assert set(table.columns) >= {"sender", "receiver", "kind", "score", "random_mean", "random_q95", "above_q95"}
    assert table.score.between(0, 1).all() and (table.reason == "").all()
    assert (table.above_q95 == (table.score > table.random_q95)).all()
    assert table.sender.str.fullmatch(r"(encoder\.\d\.\d|decoder_self\.\d|cross\.\d):\d").all()


def test_mix_sites_are_not_scored_where_a_head_has_no_single_ov():
    model = small_model(d_layers=2, mix=True)  # Informer2020: decoder self-attention mixes heads and time
    table = composition_scores(model, draws=20).table
    mixed_sender = table.sender_site.str.startswith("decoder_self")
    mixed_value = table.receiver_site.str.startswith("decoder_self") & (table.kind == "V")
    unscored = mixed_sender | mixed_value
    assert table.loc[unscored, "score"].isna().all() and (table.loc[unscored, "reason"] != "").all()
    assert not table.loc[unscored, "above_q95"].any()
    scored = table[~unscored]
    assert scored.score.notna().all() and (scored.reason == "").all()
    assert {"Q", "K"} <= set(scored[scored.receiver_site == "decoder_self.1"].kind)


def test_same_seed_same_table_and_the_baseline_is_shared():
    model = small_model()
    a, b = composition_scores(model, draws=30, seed=3), composition_scores(model, draws=30, seed=3)
    assert a.table.equals(b.table)
    assert a.table.random_mean.nunique() == 1 and a.table.random_q95.nunique() == 1
    assert (a.d_model, a.head_dim, a.draws, a.seed) == (16, 4, 30, 3)
