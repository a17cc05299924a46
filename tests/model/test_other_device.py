"""The model on another device than its data, emulated on the CPU (tests/model/other_device.py): every analysis reads
CPU batches, masks and data beside a model elsewhere and gives the CPU's numbers, as on a GPU. On a lent GPU
tests/model/test_cuda.py and the suite check the same on CUDA itself (benchmarks/device_check.sh)."""
from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import torch

from informer_lab.analysis.attention.recording import window_batch
from informer_lab.model import HeadMask, key_generator
from tests.model.other_device import DEVICE, emulated_device

# float32 on both sides, but the CPU's ProbSparse takes its threaded path and another device its batched one
TOLERANCE = dict(rtol=1e-4, atol=1e-5)


@pytest.fixture
def both(tiny_trained):
    """(CPU model, the same weights on the other device), inside the emulation."""
    model = tiny_trained[0].model
    with emulated_device():
        yield model, copy.deepcopy(model).to(DEVICE)


def same(cpu, other) -> None:
    if isinstance(cpu, pd.DataFrame):
        numeric = cpu.select_dtypes("number").columns
        pd.testing.assert_frame_equal(cpu.drop(columns=numeric), other.drop(columns=numeric))
        cpu, other = cpu[numeric].to_numpy(float), other[numeric].to_numpy(float)
    np.testing.assert_allclose(np.asarray(other, float), np.asarray(cpu, float), equal_nan=True, **TOLERANCE)


def test_the_emulation_refuses_what_a_gpu_refuses():
    with emulated_device():
        layer = torch.nn.Linear(4, 2).to(DEVICE)
        x = torch.randn(3, 4)
        assert layer.weight.device == DEVICE and torch.zeros(2, device=DEVICE).device == DEVICE
        with pytest.raises(RuntimeError, match="same device"):
            layer(x)
        y = layer(x.to(DEVICE))
        with pytest.raises(RuntimeError):
            y.detach().numpy()
        np.testing.assert_allclose(y.detach().cpu().numpy(), (x @ layer.weight.cpu().T + layer.bias.cpu()).detach())
        assert (torch.tensor([1.0], device=DEVICE) + y).device == DEVICE  # data built on the device joins it


def test_the_model_reads_a_cpu_batch_and_mask_wherever_it_sits(both, tiny_prepared):
    """A window batch and a head mask are made on the CPU; the model moves them to itself (the Python API's
    examples call model(window_batch(...)) whatever the device). Gates keep their gradient across the move."""
    cpu, other = both
    batch = window_batch(tiny_prepared, "test", [0, 5])
    gates = cpu.full_gates(2)
    gates[1, 0, 1] = 0.0
    gates.requires_grad_(True)
    out = other(batch, head_mask=HeadMask(gates), generator=key_generator(3))
    assert out.device == DEVICE
    same(cpu(batch, head_mask=HeadMask(gates), generator=key_generator(3)).detach().numpy(), out.detach().cpu().numpy())
    (grad,) = torch.autograd.grad(out.sum(), gates)
    assert grad.device.type == "cpu" and grad.abs().sum() > 0


ANALYSES = {  # name → (model, prepared) → numbers a screen or report reads
    "composition": lambda m, p: __import__("informer_lab.analysis.circuits.composition", fromlist=["x"])
    .composition_scores(m, draws=20).table,
    "direct_shares": lambda m, p: __import__("informer_lab.analysis.anatomy.direct", fromlist=["x"])
    .direct_shares(m, p, windows=4).table,
    "forecast_lens": lambda m, p: __import__("informer_lab.analysis.anatomy.lens", fromlist=["x"])
    .forecast_lens(m, p, windows=4, fit_windows=8).table,
    "jacobian_rollout": lambda m, p: _rollout(m, p, "jacobian"),
    "routed_rollout": lambda m, p: _rollout(m, p, "routed"),
    "residual_pass": lambda m, p: __import__("informer_lab.analysis.features.residual", fromlist=["x"])
    .residual_pass(m, window_batch(p, "test", [0, 3]), 0).forecast,
    "head_importance": lambda m, p: __import__("informer_lab.analysis.heads.importance", fromlist=["x"])
    .head_importance(m, __import__("informer_lab.analysis.learning.windows", fromlist=["x"])
                     .limit_windows(p, "test", 8), "test", seed=1, batch_size=4).table,
    "head_sweep": lambda m, p: __import__("informer_lab.analysis.heads.ablation", fromlist=["x"])
    .head_sweep(m, p, "test", seed=0, max_windows=8).table,
    "patching": lambda m, p: __import__("informer_lab.analysis.instruments.patching", fromlist=["x"])
    .activation_patching(m, p, "test", 0, 9, seed=2).patched,
    "window_forecaster": lambda m, p: _forecaster(m, p),
}


def _rollout(model, prepared, form: str):
    from informer_lab.analysis.anatomy.rollout import record_pieces, rollout, window_graph

    pieces = record_pieces(model, window_batch(prepared, "test", [0]), 0)
    return rollout(window_graph(model, pieces, 0, distil=form), range(1, 13)).inputs


def _forecaster(model, prepared):
    from informer_lab.analysis.circuits.scores import window_forecaster
    from informer_lab.analysis.learning.windows import WindowDataset

    x, mark, _, mark_dec, _ = WindowDataset(prepared, "test")[2]
    return window_forecaster(model, mark, mark_dec, 0, seed=4)(x[None]).numpy()  # a CPU forecast, numpy-ready


@pytest.mark.parametrize("name", sorted(ANALYSES))
def test_every_analysis_gives_the_cpus_numbers_with_the_model_elsewhere(both, tiny_prepared, name):
    cpu, other = both
    analysis = ANALYSES[name]
    result = analysis(other, tiny_prepared)
    if isinstance(result, torch.Tensor):
        assert result.device.type == "cpu", f"{name} returned a tensor on the model's device"
        result = result.numpy()
    same(analysis(cpu, tiny_prepared), result)
