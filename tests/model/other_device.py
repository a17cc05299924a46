"""A second device, emulated on the CPU: a GPU user's device placement, where CI has no GPU.

On a GPU the model's weights and every tensor it makes live on CUDA while window batches, masks and numpy arrays start
on the CPU, so code that mixes the two (a batch not moved, a `torch.zeros` without the model's device, `.numpy()`
without `.cpu()`) fails there and only there; on a CPU-only machine every such line runs. Here tensors "on the other
device" are `OtherDevice` tensors: they report the `meta` device and hold real CPU data, each op runs on that data,
and an op that mixes them with CPU tensors of one or more dimensions raises as CUDA does (CUDA, too, accepts 0-d CPU
tensors, CPU index tensors and copies across). `.numpy()` refuses them as it refuses a CUDA tensor.

`emulated_device()` is the context: inside it `torch.device("meta")` is the other device (`.to`, factories,
`torch.tensor`/`as_tensor`), in every thread started meanwhile too (Streamlit's script thread). It checks placement,
not numbers: the kernels are the CPU's.
"""
from __future__ import annotations

import contextlib
import threading

import torch
from torch.utils._pytree import tree_map
from torch.utils._python_dispatch import TorchDispatchMode

DEVICE = torch.device("meta")
aten = torch.ops.aten
# Ops CUDA runs with CPU tensors among their arguments: copies across devices, CPU index tensors
MIXED_ALLOWED = {aten.copy_.default, aten._to_copy.default, aten.index.Tensor, aten.index_put_.default,
                 aten.index_put.default, aten._index_put_impl_.default, aten.lift_fresh.default, aten.detach.default,
                 aten._has_compatible_shallow_copy_type.default, aten.set_.source_Tensor}


class OtherDevice(torch.Tensor):
    """A tensor that says it is on `DEVICE` and holds its data in `inner`, a CPU tensor."""

    @staticmethod
    def __new__(cls, inner: torch.Tensor):
        wrapper = torch.Tensor._make_wrapper_subclass(
            cls, inner.shape, strides=inner.stride(), storage_offset=inner.storage_offset(), dtype=inner.dtype,
            device=DEVICE, requires_grad=inner.requires_grad, layout=inner.layout)
        wrapper.inner = inner
        return wrapper

    def __repr__(self, *, tensor_contents=None):
        return f"OtherDevice({self.inner!r})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return _run(func, args, kwargs or {})


def _is_other(device) -> bool:
    return device is not None and torch.device(device).type == DEVICE.type


def _run(func, args, kwargs):
    other, cpu = [], []

    def unwrap(x):
        if isinstance(x, OtherDevice):
            other.append(x)
            return x.inner
        if isinstance(x, torch.Tensor) and x.device.type == "cpu" and x.dim() > 0:
            cpu.append(x)
        return x

    args_in, kwargs_in = tree_map(unwrap, args), tree_map(unwrap, kwargs)
    if other and cpu and func not in MIXED_ALLOWED:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{DEVICE} (the emulated GPU) and cpu! ({func})")
    target = kwargs_in.get("device")
    to_other, to_cpu = _is_other(target), target is not None and torch.device(target).type == "cpu"
    if to_other:
        kwargs_in = dict(kwargs_in, device=torch.device("cpu"))
    out = func(*args_in, **kwargs_in)
    if other and args and isinstance(args[0], OtherDevice) and func._schema.is_mutable \
            and func.__name__.split(".")[0].endswith("_"):
        return args[0]  # in place: the wrapper whose data changed
    if to_cpu or not (other or to_other):
        return out
    return tree_map(lambda x: OtherDevice(x) if isinstance(x, torch.Tensor) and not isinstance(x, OtherDevice) else x,
                    out)


class _Placement(TorchDispatchMode):
    """Turns `.to(DEVICE)` and factories on DEVICE into OtherDevice tensors; everything else runs as it is."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if any(issubclass(t, OtherDevice) for t in types) or _is_other(kwargs.get("device")):
            return _run(func, args, kwargs)
        return func(*args, **kwargs)


def _from_data(factory):
    """torch.tensor / as_tensor build on the CPU and move in C++, past the dispatch mode: route DEVICE through .to."""
    def made(*args, device=None, **kwargs):
        if _is_other(device):
            return factory(*args, **kwargs).to(DEVICE)
        return factory(*args, device=device, **kwargs)
    return made


@contextlib.contextmanager
def emulated_device():
    """Within: DEVICE is the other device, in this thread and every thread started meanwhile. → DEVICE."""
    boot = threading.Thread._bootstrap_inner
    factories = torch.tensor, torch.as_tensor

    def bootstrap_inner(thread):
        with _Placement():
            boot(thread)

    threading.Thread._bootstrap_inner = bootstrap_inner
    torch.tensor, torch.as_tensor = (_from_data(f) for f in factories)
    try:
        with _Placement():
            yield DEVICE
    finally:
        threading.Thread._bootstrap_inner = boot
        torch.tensor, torch.as_tensor = factories
