"""Every attention kind at every site under CUDA's autocast type policy, emulated on the CPU (tests/model/
cuda_autocast.py): the training loop's step and the analyses' forecasts run there on a GPU, and mixed bf16/float32
blocks failed there only (index_copy_ in the causal ProbSparse decoder, LSH's scatter) until this test.

The GPU itself is checked by tests/model/test_cuda.py where one is present."""
import pytest
import torch

from informer_lab.model import HeadMask, Informer
from informer_lab.model.attention import SPARSE_KINDS
from tests.model.cuda_autocast import CudaAutocast
from tests.model.test_informer import batch_for, tiny

KINDS = ["prob", "full", *SPARSE_KINDS]


def relative_error(a, b):
    return float((a.float() - b.float()).norm() / b.float().norm())


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_forecasts_and_trains_under_the_cuda_policy(kind):
    config = tiny(encoder_attention=kind, decoder_attention=kind, cross_attention="lsh" if kind == "lsh" else "full",
                  seq_len=96, label_len=48)
    torch.manual_seed(0)
    model = Informer(config).eval()
    batch = batch_for(config, B=4)
    with torch.no_grad():
        exact = model(batch, generator=torch.Generator().manual_seed(0))
        with CudaAutocast():
            low = model(batch, generator=torch.Generator().manual_seed(0))
    assert low.dtype == torch.bfloat16 and torch.isfinite(low).all()
    assert relative_error(low, exact) < 5e-2  # bf16 matrix products: ~3 significant digits
    model.train()
    with CudaAutocast():
        loss = torch.nn.functional.mse_loss(model(batch, generator=torch.Generator().manual_seed(0)).float(),
                                            torch.zeros_like(exact))
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)


@pytest.mark.parametrize("kind", ["prob", "full", "lsh", "window"])
def test_a_masked_head_is_bit_silent_under_the_cuda_policy(kind):
    config = tiny(encoder_attention=kind, decoder_attention=kind, cross_attention="lsh" if kind == "lsh" else "full")
    torch.manual_seed(0)
    model = Informer(config).eval()
    batch = batch_for(config)
    for site in (model.sites[1], model.sites[-1]):
        gates = model.full_gates(1)
        gates[0, site.index, 3] = 0.0

        def forecast():
            with torch.no_grad(), CudaAutocast():
                return model(batch, head_mask=HeadMask(gates), generator=torch.Generator().manual_seed(0))
        before = forecast()
        with torch.no_grad():
            model.attention_layer(site).value_projection.weight[12:16] *= -7
        assert torch.equal(before, forecast()), site.name


def test_the_training_loop_and_the_forecasts_run_under_the_cuda_policy(tiny_prepared):
    from informer_lab.analysis.learning.training import TrainSettings, config_for, predict, train

    config = config_for(tiny_prepared, d_model=16, n_heads=4, e_layers=(2,), d_layers=1, d_ff=32, dropout=0.0)
    with CudaAutocast():
        result = train(tiny_prepared, config, TrainSettings(epochs=1, max_steps_per_epoch=5, seed=0))
        preds, _ = predict(result.model, tiny_prepared, "test")
    assert torch.isfinite(torch.as_tensor(preds)).all() and result.steps == 5
