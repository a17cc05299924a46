"""Distilling in time-major layout (model/distilling.py) against torch's own modules, forward and backward: the
GEMM-form circular convolution against nn.Conv1d(padding_mode="circular"), the row BatchNorm against nn.BatchNorm1d
(running statistics included), the strided-slice max-pool against MaxPool1d (values, indices, gradients, ties)."""
from __future__ import annotations

import torch
from hypothesis import given, settings, strategies as st
from torch import nn

from informer_lab.model import distilled_length
from informer_lab.model.distilling import DistillingLayer, batch_norm_rows, circular_conv, max_pool3, pool_indices
from informer_lab.model.embedding import DataEmbedding

F64 = dict(dtype=torch.float64)


def grads(out, inputs, seed=0):
    g = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed), **F64).to(out.dtype)
    return torch.autograd.grad(out, inputs, g)


@settings(max_examples=40, deadline=None)
@given(B=st.integers(1, 3), L=st.integers(2, 20), C=st.integers(1, 5), O=st.integers(1, 4), padding=st.sampled_from([1, 2]),
       bias=st.booleans(), seed=st.integers(0, 10_000))
def test_circular_conv_equals_conv1d_forward_and_backward(B, L, C, O, padding, bias, seed):
    """(nn.Conv1d refuses a circular padding longer than the input; L ≥ 2 covers both paddings.)"""
    torch.manual_seed(seed)
    conv = nn.Conv1d(C, O, 3, padding=padding, padding_mode="circular", bias=bias).double()
    x = torch.randn(B, L, C, **F64, requires_grad=True)
    ours = circular_conv(x, conv)  # [B, L_out, O]
    theirs = conv(x.transpose(1, 2)).transpose(1, 2)
    assert ours.shape == theirs.shape == (B, L + 2 * padding - 2, O) and ours.is_contiguous()
    torch.testing.assert_close(ours, theirs)
    params = [x, conv.weight] + ([conv.bias] if bias else [])
    for a, b in zip(grads(ours, params), grads(theirs, params)):
        torch.testing.assert_close(a, b)


def pools(y):
    ours = max_pool3(y)
    theirs, indices = nn.functional.max_pool1d(y.transpose(1, 2), 3, 2, 1, return_indices=True)
    return ours, theirs.transpose(1, 2), indices


@settings(max_examples=60, deadline=None)
@given(B=st.integers(1, 3), L=st.integers(1, 25), C=st.integers(1, 4), levels=st.sampled_from([0, 2, 3]),
       seed=st.integers(0, 10_000))
def test_strided_max_pool_equals_maxpool1d_values_indices_and_gradients(B, L, C, levels, seed):
    """levels > 0 draws integers from a few levels: many ties, where MaxPool1d keeps the first maximum."""
    gen = torch.Generator().manual_seed(seed)
    y = (torch.randint(0, levels, (B, L, C), generator=gen).double() if levels
         else torch.randn(B, L, C, generator=gen, **F64)).requires_grad_()
    ours, theirs, indices = pools(y)
    assert ours.shape[1] == (L - 1) // 2 + 1
    assert torch.equal(ours, theirs)
    assert torch.equal(pool_indices(y, ours).transpose(1, 2), indices)
    assert torch.equal(grads(ours, [y], seed)[0], grads(theirs, [y], seed)[0])


@settings(max_examples=30, deadline=None)
@given(B=st.integers(1, 3), L=st.integers(1, 12), C=st.integers(1, 5), affine=st.booleans(),
       momentum=st.sampled_from([0.1, None]), seed=st.integers(0, 10_000))
def test_row_batch_norm_equals_batchnorm1d_with_running_statistics(B, L, C, affine, momentum, seed):
    if B * L < 2:
        return  # BatchNorm needs more than one value per channel in training
    torch.manual_seed(seed)
    ours, theirs = nn.BatchNorm1d(C, affine=affine, momentum=momentum).double(), nn.BatchNorm1d(
        C, affine=affine, momentum=momentum).double()
    if affine:
        with torch.no_grad():
            ours.weight.uniform_(0.5, 2)
            ours.bias.uniform_(-1, 1)
    theirs.load_state_dict(ours.state_dict())
    for step in range(3):
        y = (torch.randn(B, L, C, **F64) * 3 + step).requires_grad_()
        a, b = batch_norm_rows(y, ours), theirs(y.transpose(1, 2)).transpose(1, 2)
        torch.testing.assert_close(a, b)
        pa = [y] + ([ours.weight, ours.bias] if affine else [])
        pb = [y] + ([theirs.weight, theirs.bias] if affine else [])
        for u, v in zip(grads(a, pa, step), grads(b, pb, step)):
            torch.testing.assert_close(u, v)
    for name, buffer in ours.named_buffers():
        torch.testing.assert_close(buffer, theirs.get_buffer(name))
    ours.eval(), theirs.eval()
    y = torch.randn(B, L, C, **F64, requires_grad=True)
    torch.testing.assert_close(batch_norm_rows(y, ours), theirs(y.transpose(1, 2)).transpose(1, 2))


def reference_distilling(layer: DistillingLayer, x):
    """The modules themselves in their own [B, C, L] layout: Conv1d → BatchNorm1d → ELU → MaxPool1d."""
    y = layer.activation(layer.norm(layer.conv(x.transpose(1, 2))))
    return nn.functional.max_pool1d(y, 3, 2, 1).transpose(1, 2)


def test_distilling_layer_equals_its_modules_and_keeps_the_pyramid_length():
    for padding in (1, 2):
        torch.manual_seed(padding)
        ours, theirs = DistillingLayer(8, padding).double(), DistillingLayer(8, padding).double()
        theirs.load_state_dict(ours.state_dict())
        x = torch.randn(4, 96, 8, **F64, requires_grad=True)
        a, b = ours(x), reference_distilling(theirs, x)
        assert a.shape[1] == distilled_length(96, padding)
        torch.testing.assert_close(a, b)
        for u, v in zip(grads(a, [x, *ours.parameters()]), grads(b, [x, *theirs.parameters()])):
            torch.testing.assert_close(u, v)
        for name, buffer in ours.named_buffers():
            torch.testing.assert_close(buffer, theirs.get_buffer(name))
        assert set(ours.state_dict()) == {"conv.weight", "conv.bias", "norm.weight", "norm.bias", "norm.running_mean",
                                          "norm.running_var", "norm.num_batches_tracked"}


def test_embedding_gemm_equals_conv_plus_linear_plus_position():
    for value_bias, mark_bias in ((True, True), (False, True), (True, False), (False, False)):
        torch.manual_seed(0)
        emb = DataEmbedding(3, 4, 8, 0.0, 20, mark_bias, value_bias).double()
        x, marks = torch.randn(2, 11, 3, **F64, requires_grad=True), torch.randn(2, 11, 4, **F64)
        ours = emb(x, marks)
        theirs = (emb.value_embedding(x.transpose(1, 2)).transpose(1, 2) + emb.position[:11]
                  + emb.mark_embedding(marks))
        torch.testing.assert_close(ours, theirs)
        params = [x, *emb.parameters()]
        for u, v in zip(grads(ours, params), grads(theirs, params)):
            torch.testing.assert_close(u, v)
