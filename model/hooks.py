"""Named hook sites and a recorder scoped to one call.

A `HookPoint` is an identity module at a named site. It records only while a `Recorder` is active
in the *current context* (`contextvars`), so a model shared by every Streamlit session never
carries hooks of its own: two tabs, two threads, two recorders, no leaks.

    with recording("encoder.0.*.scores") as rec:
        model(batch)
    rec.records["encoder.0.1.scores"]   # [B, H, L_Q]

`patching({name: tensor})` is the same kind of scope for activation patching: inside it, the hook site
`name` passes the given tensor on instead of what it computed (same shape; a recorder there still sees the
computed value).
"""
from __future__ import annotations

import contextvars
import fnmatch
from contextlib import contextmanager
from typing import Iterable, Iterator

import torch
from torch import nn

_ACTIVE: contextvars.ContextVar["Recorder | None"] = contextvars.ContextVar("informer_recorder", default=None)
_PATCHES: contextvars.ContextVar["dict[str, torch.Tensor] | None"] = contextvars.ContextVar("informer_patches",
                                                                                          default=None)


class Recorder:
    """Collects detached tensors at the hook sites whose names match one of `patterns` (fnmatch); with
    keep_graph=True the tensors themselves, still in the autograd graph, with `retain_grad()` (attribution patching
    reads each site's gradient after a backward pass)."""

    def __init__(self, patterns: Iterable[str] = ("*",), keep_graph: bool = False):
        self.patterns = tuple(patterns)
        self.keep_graph = keep_graph
        self.records: dict[str, torch.Tensor] = {}

    def wants(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in self.patterns)

    def record(self, name: str, tensor: torch.Tensor) -> None:
        if name in self.records:
            raise RuntimeError(f"hook site {name!r} fired twice in one recording; record one forward pass at a time")
        if self.keep_graph and tensor.requires_grad:
            tensor.retain_grad()
            self.records[name] = tensor
        else:
            self.records[name] = tensor.detach()


@contextmanager
def recording(*patterns: str, keep_graph: bool = False) -> Iterator[Recorder]:
    """Record the sites matching `patterns` (default: all) for the forward passes inside the block (keep_graph: see
    Recorder)."""
    recorder = Recorder(patterns or ("*",), keep_graph)
    token = _ACTIVE.set(recorder)
    try:
        yield recorder
    finally:
        _ACTIVE.reset(token)


def active_recorder() -> Recorder | None:
    return _ACTIVE.get()


def observed() -> bool:
    """A recorder or a patch is active in this context (hook sites may read or replace values)."""
    return _ACTIVE.get() is not None or _PATCHES.get() is not None


@contextmanager
def patching(replacements: dict[str, torch.Tensor]) -> Iterator[None]:
    """Inside the block, hook site `name` returns `replacements[name]` (its exact shape) instead of its input."""
    token = _PATCHES.set(dict(replacements))
    try:
        yield
    finally:
        _PATCHES.reset(token)


class HookPoint(nn.Module):
    """Identity at a named site. `name` is filled in by the model once it is built."""

    def __init__(self, suffix: str):
        super().__init__()
        self.suffix = suffix
        self.name = suffix

    def wanted(self) -> bool:
        recorder = _ACTIVE.get()
        return recorder is not None and recorder.wants(self.name)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        recorder = _ACTIVE.get()
        if recorder is not None and recorder.wants(self.name):
            recorder.record(self.name, x)
        patches = _PATCHES.get()
        if patches is not None and self.name in patches:
            patch = patches[self.name]
            if patch.shape != x.shape:
                raise ValueError(f"patch for hook site {self.name!r} has shape {list(patch.shape)}, "
                                 f"expected {list(x.shape)}")
            return patch.to(device=x.device, dtype=x.dtype)
        return x

    def extra_repr(self) -> str:
        return repr(self.name)


def name_hooks(module: nn.Module, prefix: str) -> None:
    """Name every HookPoint directly owned by `module` as `prefix.suffix`."""
    for child in module.children():
        if isinstance(child, HookPoint):
            child.name = f"{prefix}.{child.suffix}"
