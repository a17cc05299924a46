"""CUDA's autocast type policy, emulated on the CPU: a GPU user's dtypes, where CI has no GPU.

Under `torch.autocast("cuda", torch.bfloat16)` the matrix ops (linear, matmul, bmm, baddbmm, conv, SDPA) run in bf16
while the reductions and pointwise ops of its float32 list (softmax, cumsum, sum, exp, log, pow, norm, layer_norm,
mse_loss, …) return float32 — so one block of code can meet tensors of both types, and ops that demand one type
(index_copy_, scatter) fail there and only there. CPU autocast's lists differ (cumsum and softmax stay bf16), so
CPU autocast cannot show it. This mode casts the arguments as CUDA autocast does (the lists of torch's AMP docs,
"CUDA Op-Specific Behavior"); in-place ops and `out=` calls are left alone, as autocast leaves them.
"""
from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_map

LOWER = {"linear", "matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "baddbmm", "addmm", "addbmm", "mv", "addmv",
         "conv1d", "conv2d", "conv_transpose1d", "scaled_dot_product_attention", "prelu", "chain_matmul",
         "einsum"}  # (einsum: its products reach autocast as bmm)
FLOAT32 = {"softmax", "log_softmax", "softmin", "cumsum", "cumprod", "sum", "prod", "exp", "expm1", "log", "log1p",
           "log2", "log10", "pow", "__pow__", "__rpow__", "reciprocal", "rsqrt", "norm", "normalize", "layer_norm",
           "group_norm", "mse_loss", "l1_loss", "smooth_l1_loss", "cdist", "dist", "pdist", "renorm", "erfinv",
           "acos", "asin", "cosh", "sinh", "tan", "softplus", "__rtruediv__", "__rdiv__", "cosine_similarity",
           "kl_div", "nll_loss", "cross_entropy", "binary_cross_entropy_with_logits"}
WIDEST = {"addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sample", "index_put", "scatter_add",
          "tensordot"}


def _cast(dtype):
    return lambda x: x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dtype != torch.float64 \
        else x


class CudaAutocast(TorchFunctionMode):
    """Within it, float tensors reaching the listed ops are cast as under CUDA autocast with `dtype` (bf16)."""

    def __init__(self, dtype: torch.dtype = torch.bfloat16):
        super().__init__()
        self.dtype = dtype

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if "out" not in kwargs and not (name.endswith("_") and not name.startswith("__")):
            if name in LOWER:
                args, kwargs = tree_map(_cast(self.dtype), (args, kwargs))
            elif name in FLOAT32:
                args, kwargs = tree_map(_cast(torch.float32), (args, kwargs))
            elif name in WIDEST:
                floats = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor) and a.is_floating_point()]
                if floats:
                    widest = max((a.dtype for a in floats), key=lambda d: torch.finfo(d).bits)
                    args, kwargs = tree_map(_cast(widest), (args, kwargs))
        return func(*args, **kwargs)
