"""The efficient attention kinds inside the Informer: trained with, swapped in with the same weights,
recorded, masked, checked when they come from a checkpoint.

Against the maths, not the code: a kind whose parameters allow every key is full attention, so a full-attention
model swapped to it forecasts the same; a head whose value projection is zeroed contributes exactly nothing, as a
gated head must; recorded rows sum to one and vanish outside the kind's pattern; the learned parts get gradients.
"""
import pytest
import torch

from informer_lab.model import HeadMask, Informer, recording
from informer_lab.model.attention import SPARSE_KINDS, dense_pattern, positional_table
from tests.model.test_informer import batch_for, model_for, run, tiny

EVERY_KEY = {"logsparse": None, "strided": None, "fixed": None, "lsh": None, "compressed": None, "adaptive": None,
             "window": {"window": 64}, "block": {"blocks": 1}}  # None: no setting allows every key at every site


@pytest.mark.parametrize("kind", SPARSE_KINDS)
def test_every_kind_trains_at_every_site_it_may_sit(kind):
    cross = "lsh" if kind == "lsh" else "full"
    model = Informer(tiny(encoder_attention=kind, decoder_attention=kind, cross_attention=cross)).train()
    out = run(model, batch_for(model.config))
    assert out.shape == (2, 12, 2) and torch.isfinite(out).all()
    out.square().mean().backward()
    missing = [n for n, p in model.named_parameters() if p.grad is None and "key_projection" not in n]
    assert not missing, missing  # (shared-QK LSH has no keys of its own: its key projection is unused)
    if kind == "adaptive":
        assert model.encoder.replicas[0].layers[0].attention.span.grad.abs().sum() > 0
    if kind == "compressed":  # the learned strided convolution of Liu et al.
        assert model.encoder.replicas[0].layers[0].attention.compress_conv.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("kind", [k for k, o in EVERY_KEY.items() if o is not None])
def test_a_swap_that_allows_every_key_forecasts_as_full_attention(kind):
    model = model_for(tiny(encoder_attention="full", decoder_attention="full"))
    batch = batch_for(model.config)
    swap = {"encoder": (kind, EVERY_KEY[kind]), "decoder_self": (kind, EVERY_KEY[kind])}
    torch.testing.assert_close(run(model, batch, attention=swap), run(model, batch), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("kind", SPARSE_KINDS)
def test_a_swap_changes_the_forecast_and_leaves_the_model_as_it_was(kind):
    model = model_for(tiny(encoder_attention="full", decoder_attention="full", seq_len=96, label_len=48))
    batch = batch_for(model.config)
    before = run(model, batch)
    swapped = run(model, batch, attention=kind)
    assert not torch.allclose(swapped, before, atol=1e-6)
    torch.testing.assert_close(run(model, batch), before, atol=0, rtol=0)  # nothing of the swap stays behind


@pytest.mark.parametrize("kind", ["window", "lsh", "adaptive", "logsparse"])
def test_a_gated_head_contributes_exactly_what_a_head_with_zero_values_does(kind):
    """gate 0 on head h ≡ v_h = 0 (context_h = Σ p·v_h = 0 on every row, whatever rows the kind computes)."""
    config = tiny(encoder_attention=kind, decoder_attention=kind)
    model, batch = model_for(config), batch_for(config)
    site, h, D = model.sites[1], 2, config.head_dim
    gates = model.full_gates()
    gates[0, site.index, h] = 0
    masked = run(model, batch, head_mask=HeadMask(gates))
    zeroed = model_for(config)
    layer = zeroed.attention_layer(site)
    with torch.no_grad():
        layer.value_projection.weight[h * D:(h + 1) * D] = 0
        layer.value_projection.bias[h * D:(h + 1) * D] = 0
    torch.testing.assert_close(masked, run(zeroed, batch), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("kind", ["strided", "window", "block", "adaptive"])
def test_recorded_rows_sum_to_one_inside_the_kinds_pattern(kind):
    config = tiny(encoder_attention=kind, decoder_attention=kind)
    model, batch = model_for(config), batch_for(config)
    with recording("encoder.0.0.rows", "encoder.0.0.scores", "decoder_self.0.rows") as rec:
        run(model, batch)
    rows = rec.records["encoder.0.0.rows"]  # [B, H, L, L]
    assert rows.shape == (2, 4, 48, 48) and rec.records["encoder.0.0.scores"].shape == (2, 4, 48)
    torch.testing.assert_close(rows.sum(-1), torch.ones(2, 4, 48, dtype=rows.dtype))
    pattern = dense_pattern(positional_table(kind, 48, 4, causal=False, options={}), 48)
    assert (rows * ~pattern).abs().max() == 0
    causal_rows = rec.records["decoder_self.0.rows"]
    assert causal_rows.triu(1).abs().max() == 0  # the decoder's self-attention never reads the future


def test_a_positional_kind_is_refused_where_queries_and_keys_differ():
    model = model_for(tiny())
    with pytest.raises(ValueError, match="positional"):
        run(model, batch_for(model.config), attention={"cross": "window"})
    with pytest.raises(ValueError, match="no parameter 'reach'"):
        run(model, batch_for(model.config), attention={"encoder": ("window", {"reach": 3})})


def test_a_kind_name_swaps_the_self_attention_sites_and_cross_attention_keeps_its_own():
    model = model_for(tiny(encoder_attention="full", decoder_attention="full"))
    batch = batch_for(model.config)
    named = run(model, batch, attention="logsparse")
    spelled = run(model, batch, attention={"encoder": "logsparse", "decoder_self": "logsparse"})
    torch.testing.assert_close(named, spelled, atol=0, rtol=0)


def test_adaptive_spans_carry_the_paper_s_l1_penalty_and_it_shrinks_them():
    """Sukhbaatar et al. 2019 §3.2: loss + λ/M·Σ z_i over the M learned spans (clamped to [0, S]). The term's value
    is that sum; its gradient on each span is λ/M inside [0, S] and nothing outside; and optimising it alone moves
    every span down while λ = 0 leaves them where they are."""
    assert Informer(tiny()).span_penalty() is None  # no learned spans: nothing added
    options = {"encoder": {"span_loss": 0.5, "max_span": 20}, "decoder_self": {"span_loss": 0.5, "max_span": 20}}
    model = Informer(tiny(encoder_attention="adaptive", decoder_attention="adaptive", attention_options=options))
    layers = [m for m in model.modules() if hasattr(m, "span")]
    with torch.no_grad():
        layers[0].span.copy_(torch.tensor([-3.0, 5.0, 25.0, 12.0])[:layers[0].span.numel()])
    M = sum(m.span.numel() for m in layers)
    expected = sum(0.5 * m.span.detach().clamp(0, 20).sum() for m in layers) / M
    penalty = model.span_penalty()
    torch.testing.assert_close(penalty, expected)
    penalty.backward()
    grad, z = layers[0].span.grad, layers[0].span.detach()
    inside = (z > 0) & (z < 20)
    torch.testing.assert_close(grad[inside], torch.full_like(grad[inside], 0.5 / M))
    assert (grad[~inside] == 0).all()

    def spans_after(loss_weight: float) -> torch.Tensor:
        opts = {s: {"span_loss": loss_weight} for s in ("encoder", "decoder_self")}
        torch.manual_seed(0)
        m = Informer(tiny(encoder_attention="adaptive", decoder_attention="adaptive", attention_options=opts))
        start = torch.cat([layer.span.detach().clone() for layer in m.modules() if hasattr(layer, "span")])
        optimiser = torch.optim.SGD([p for n, p in m.named_parameters() if n.endswith("span")], lr=100.0)
        for _ in range(5):
            optimiser.zero_grad()
            m.span_penalty().backward()
            optimiser.step()
        return start, torch.cat([layer.span.detach() for layer in m.modules() if hasattr(layer, "span")])
    start, shrunk = spans_after(0.1)
    assert (shrunk < start).all()
    start, kept = spans_after(0.0)
    torch.testing.assert_close(kept, start)



@pytest.mark.parametrize("kind", ["logsparse", "strided", "window", "block", "lsh"])
def test_row_edits_under_a_sparse_kind_stay_inside_its_pattern(kind):
    """Uniform rows weigh exactly the keys the kind lets each query read (not every key, not the whole prefix);
    permuted rows move each row's weights among the same keys. The keys read are the kind's brute-force pattern for
    the positional kinds, and the support of its own rows for LSH (its buckets depend on the rotations drawn)."""
    from informer_lab.model import RowEdit, replacing_rows

    config = tiny(encoder_attention=kind, decoder_attention=kind, cross_attention="lsh" if kind == "lsh" else "full")
    model, batch = model_for(config), batch_for(config)
    sites = {"encoder.0.0": False, "decoder_self.0": True}  # site: causal
    names = [f"{s}.rows" for s in sites]

    def rows_under(edit=None):
        with replacing_rows(edit or {}), recording(*names) as rec:
            run(model, batch)  # the same key-sample seed, so LSH draws the same rotations every time
        return {s: rec.records[f"{s}.rows"][:, 1] for s in sites}  # head 1: [B, L_Q, L_K]

    own = rows_under()
    uniform = rows_under({s: RowEdit((1, 3), "uniform") for s in sites})
    moved = rows_under({s: RowEdit((1,), "permute", torch.Generator().manual_seed(2)) for s in sites})
    for site, causal in sites.items():
        L = own[site].shape[-1]
        if kind == "lsh":
            pattern = own[site] > 0
        else:
            pattern = dense_pattern(positional_table(kind, L, 4, causal=causal, options={}), L)
            pattern = (pattern if pattern.dim() == 2 else pattern[1]).expand_as(own[site])
            assert ((own[site] > 0) <= pattern).all()
        assert not pattern.all(dim=-1).all()  # the kind reads fewer keys than full attention
        width = pattern.sum(-1, keepdim=True)
        torch.testing.assert_close(uniform[site], pattern / width, atol=1e-7, rtol=0)
        assert ((moved[site] > 0) & ~pattern).sum() == 0
        for a, b in zip(own[site].reshape(-1, L), moved[site].reshape(-1, L)):
            torch.testing.assert_close(a.sort().values, b.sort().values, atol=0, rtol=0)
        assert not torch.equal(moved[site], own[site])


@pytest.mark.parametrize("causal", [False, True])
def test_a_window_s_pattern_includes_its_global_rows(causal):
    """Longformer's global queries read every key (causal: every key up to them): the pattern a row edit spreads over
    is exactly the support of the kind's own rows, global rows included."""
    from informer_lab.model.attention import sparse_attention

    g = torch.Generator().manual_seed(0)
    Q, K, V = (torch.randn(2, 3, 40, 8, generator=g) for _ in range(3))
    r = sparse_attention("window", Q, K, V, causal=causal, options={"window": 4, "globals": (0, 17, -1)},
                         need_rows=True)
    pattern = r.pattern.expand_as(r.rows)
    assert torch.equal(r.rows > 0, pattern)
    keys = torch.arange(40)
    for q in (0, 17, 39):
        assert torch.equal(pattern[0, 0, q], keys <= q if causal else torch.ones(40, dtype=torch.bool))
    assert not pattern[0, 0, 5].all()
