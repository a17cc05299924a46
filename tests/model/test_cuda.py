"""The CUDA path: what the CPU tests prove against the maths, proven again on the GPU, with bf16 autocast where the
training loop uses it (`model.device.autocast_context`; every analysis runs float32).

Skipped where torch sees no CUDA device (CI has none). `bash benchmarks/device_check.sh` runs it on a lent GPU.
`INFORMER_TEST_DEVICE=cpu` runs it on the CPU, to check the tests themselves (then CPU meets CPU: no proof).
"""
import math
import os

import numpy as np
import pytest
import torch

from informer_lab.model import HeadMask, Informer, autocast_context, key_generator
from informer_lab.model.attention import AttentionLayer, SPARSE_KINDS, full_attention, probsparse_attention
from tests.model.test_informer import batch_for, tiny

DEVICE = torch.device(os.environ.get("INFORMER_TEST_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu"))
pytestmark = pytest.mark.skipif(DEVICE.type == "cpu" and not os.environ.get("INFORMER_TEST_DEVICE"),
                                reason="no CUDA device (set INFORMER_TEST_DEVICE=cpu to dry-run these tests)")


def qkv(B=2, H=3, L_Q=40, L_K=40, D=8, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(B, H, n, D, generator=g, dtype=dtype).to(DEVICE) for n in (L_Q, L_K, L_K))


def reference_attention(Q, K, V, causal):
    """softmax(QKᵀ/√D)V written out in float64 on the CPU."""
    Q, K, V = (t.detach().double().cpu() for t in (Q, K, V))
    scores = torch.einsum("bhid,bhjd->bhij", Q, K) / math.sqrt(Q.shape[-1])
    if causal:
        scores = scores.masked_fill(torch.ones(Q.shape[2], K.shape[2], dtype=torch.bool).triu(1), float("-inf"))
    return torch.einsum("bhij,bhjd->bhid", torch.softmax(scores, -1), V)


def relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.detach().double().cpu(), b.detach().double().cpu()
    return float((a - b).norm() / b.norm())


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("block", [1, 7, 64])
def test_probsparse_with_every_query_active_is_full_attention_on_the_device(causal, block):
    Q, K, V = qkv(L_Q=30, L_K=30)
    result = probsparse_attention(Q, K, V, factor=100, causal=causal, mean_divisor="U", decoder_lazy="cummean",
                                  sample_block=block, generator=key_generator(0))
    assert result.context.device.type == DEVICE.type
    torch.testing.assert_close(result.context.cpu(), reference_attention(Q, K, V, causal), atol=1e-10, rtol=0)


@pytest.mark.parametrize("causal", [False, True])
def test_full_attention_both_paths_are_exact_on_the_device(causal):
    Q, K, V = qkv()
    fast = full_attention(Q, K, V, causal=causal).context
    explicit = full_attention(Q, K, V, causal=causal, need_rows=True)
    torch.testing.assert_close(fast.cpu(), reference_attention(Q, K, V, causal), atol=1e-10, rtol=0)
    torch.testing.assert_close(explicit.context.cpu(), fast.cpu(), atol=1e-10, rtol=0)


@pytest.mark.parametrize("block", [1, 4, 64])
def test_sampled_sparsity_is_the_brute_force_score_of_the_same_sample_on_the_device(block):
    Q, K, V = qkv(L_Q=37, L_K=50)
    result = probsparse_attention(Q, K, V, factor=5, causal=False, mean_divisor="U", decoder_lazy="cummean",
                                  sample_block=block, generator=torch.Generator(device=DEVICE).manual_seed(3))
    index = result.key_index.cpu()  # [L_Q, U]
    Qc, Kc = Q.cpu(), K.cpu()
    dots = torch.einsum("bhid,bhiud->bhiu", Qc, Kc[:, :, index]) / math.sqrt(8)  # [B, H, L_Q, U]
    brute = dots.max(-1).values - dots.mean(-1)
    torch.testing.assert_close(result.scores.cpu(), brute, atol=1e-10, rtol=0)
    top = brute.topk(result.selected.shape[-1], dim=-1).indices.sort(-1).values
    assert torch.equal(result.selected.cpu().sort(-1).values, top)


def test_a_device_generator_repeats_its_sample_and_another_seed_draws_another():
    Q, K, V = qkv(L_Q=64, L_K=64, dtype=torch.float32)

    def keys(seed):
        return probsparse_attention(Q, K, V, factor=5, causal=False, mean_divisor="U", decoder_lazy="cummean",
                                    sample_block=1, generator=torch.Generator(device=DEVICE).manual_seed(seed)
                                    ).key_index.cpu()
    assert torch.equal(keys(1), keys(1)) and not torch.equal(keys(1), keys(2))


def test_bf16_probsparse_stays_near_the_float32_answer_on_the_same_sample():
    Q, K, V = qkv(B=4, H=8, L_Q=512, L_K=512, D=64, dtype=torch.float32)
    exact = probsparse_attention(Q, K, V, factor=100, causal=False, mean_divisor="U", decoder_lazy="cummean",
                                 sample_block=512, generator=key_generator(0))
    with autocast_context(DEVICE):
        low = probsparse_attention(*(t.to(torch.bfloat16) for t in (Q, K, V)), factor=100, causal=False,
                                   mean_divisor="U", decoder_lazy="cummean", sample_block=512, generator=key_generator(0))
    assert torch.isfinite(low.context).all()
    assert relative_error(low.context, exact.context) < 2e-2  # bf16 keeps 8 bits of mantissa


def twins(config, seed=0):
    torch.manual_seed(seed)
    cpu = Informer(config).eval()
    device = Informer(config).eval()
    device.load_state_dict(cpu.state_dict())
    return cpu, device.to(DEVICE)


# LSH's bucket is an argmax over rotated vectors: a near-tie may hash differently on another device's arithmetic
KINDS = ["prob", "full", *[k for k in SPARSE_KINDS if k != "lsh"]]


@pytest.mark.parametrize("kind", KINDS)
def test_every_attention_kind_forecasts_on_the_device_as_on_the_cpu(kind):
    """float32, same weights, same key sample: the device computes the CPU's function (TF32 convolutions allowed)."""
    config = tiny(encoder_attention=kind, decoder_attention=kind, seq_len=96, label_len=48)
    cpu, dev = twins(config)
    batch = batch_for(config)
    with torch.no_grad():
        want = cpu(batch, generator=key_generator(0))
        got = dev(batch.to(DEVICE), generator=key_generator(0))
    assert got.device.type == DEVICE.type
    assert relative_error(got, want) < 5e-3


@pytest.mark.parametrize("kind", ["prob", "full", "lsh"])
def test_autocast_forecast_is_finite_and_near_the_float32_one(kind):
    config = tiny(encoder_attention=kind, decoder_attention="full" if kind == "lsh" else kind)
    cpu, dev = twins(config)
    batch = batch_for(config, B=8)
    with torch.no_grad():
        want = dev(batch.to(DEVICE), generator=key_generator(0))
        with autocast_context(DEVICE):
            got = dev(batch.to(DEVICE), generator=key_generator(0))
    assert torch.isfinite(got).all()
    assert relative_error(got.float(), want) < 5e-2


@pytest.mark.parametrize("kind,causal", [("prob", False), ("prob", True), ("full", False), ("full", True)])
def test_a_gated_head_contributes_exactly_nothing_under_autocast(kind, causal):
    """Perturb everything head 2 reads; with its gate at 0 the layer's output must not move by one bit."""
    torch.manual_seed(0)
    attn = AttentionLayer(kind, 16, 4, causal=causal, mix=False, factor=2, dropout=0.0, mean_divisor="U",
                          decoder_lazy="cummean", sample_block=4).eval().to(DEVICE)
    x = torch.randn(3, 40, 16, device=DEVICE)
    gate = torch.ones(1, 4, device=DEVICE)
    gate[0, 2] = 0.0
    with torch.no_grad(), autocast_context(DEVICE):
        out = attn(x, x, gate=gate, generator=key_generator(0))
        attn.value_projection.weight[8:12] += torch.randn(4, 16, device=DEVICE) * 5
        attn.value_projection.bias[8:12] += 3.0
        perturbed = attn(x, x, gate=gate, generator=key_generator(0))
        ungated = attn(x, x, generator=key_generator(0))
    assert torch.equal(out, perturbed)
    assert not torch.allclose(ungated, perturbed)


@pytest.mark.parametrize("site_number", [1, -1])  # an encoder site and the last (cross) site
def test_a_masked_head_leaves_the_whole_autocast_forecast_bit_identical(site_number):
    config = tiny()
    _, dev = twins(config)
    batch = batch_for(config).to(DEVICE)
    site = dev.sites[site_number]
    gates = dev.full_gates(1).to(DEVICE)
    gates[0, site.index, 3] = 0.0

    def forecast():
        with torch.no_grad(), autocast_context(DEVICE):
            return dev(batch, head_mask=HeadMask(gates), generator=key_generator(0))
    before = forecast()
    with torch.no_grad():
        dev.attention_layer(site).value_projection.weight[12:16] *= -7
    assert torch.equal(before, forecast())


def test_training_on_the_device_learns_and_its_forecasts_are_the_cpus(sample_frame, tiny_spec, tmp_path):
    """Trained under bf16 autocast; forecast in float32 from a CPU-drawn key sample (model.device): the same numbers
    on the device and, from the saved checkpoint, on the CPU."""
    from informer_lab.analysis.learning.training import TrainSettings, evaluate, predict
    from informer_lab.analysis.learning.workflow import ModelSize, load_checkpoint, prepare_for_checkpoint, train_on_frame

    settings = TrainSettings(epochs=2, batch_size=32, learning_rate=1e-3, max_steps_per_epoch=30, seed=0,
                             device=DEVICE.type)
    checkpoint, result = train_on_frame(sample_frame, tiny_spec, ModelSize(d_model=16, n_heads=4, e_layers=(2,),
                                                                           d_layers=1, d_ff=32, dropout=0.0),
                                        settings, out=tmp_path / "ckpt")
    assert result.device == DEVICE.type and next(result.model.parameters()).device.type == DEVICE.type
    assert all(np.isfinite([h.train_loss, h.val_loss]).all() for h in result.history)
    assert result.history[-1].train_loss < result.history[0].train_loss * 1.05
    loaded = load_checkpoint(tmp_path / "ckpt")
    prepared = prepare_for_checkpoint(loaded, sample_frame)
    on_cpu, _ = predict(loaded.model.cpu(), prepared, "test", seed=5)
    here, _ = predict(result.model, prepared, "test", seed=5)
    np.testing.assert_allclose(here, on_cpu, rtol=1e-4, atol=1e-5)
    assert evaluate(loaded.model, prepared, "test").mse == pytest.approx(result.test.mse, rel=1e-4)


def test_a_head_sweep_on_the_device_is_the_cpus(tiny_trained, tiny_prepared):
    """Every mask's MSE, the variants batched together on the device, equals the CPU's to float32 rounding: a head's
    delta is not drowned by the device's arithmetic."""
    import copy

    from informer_lab.analysis.heads.ablation import head_sweep
    from informer_lab.analysis.learning.windows import limit_windows

    model = tiny_trained[0].model
    subset = limit_windows(tiny_prepared, "test", 64)
    cpu = head_sweep(copy.deepcopy(model).cpu(), subset, "test", seed=2).table
    dev = head_sweep(copy.deepcopy(model).to(DEVICE), subset, "test", seed=2).table
    np.testing.assert_allclose(dev.mse.to_numpy(), cpu.mse.to_numpy(), rtol=1e-4)
    np.testing.assert_allclose(dev.delta_mse.to_numpy(), cpu.delta_mse.to_numpy(), atol=1e-5 * cpu.mse.max())
