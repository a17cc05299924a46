"""Where the model runs: CUDA, else Apple MPS, else the CPU; mixed precision in training steps only.

Precision: training steps run under autocast (bf16 on CUDA, fp16 on MPS). Every forward pass whose numbers a user
reads (validation and test metrics, forecasts, every analysis) runs in float32, with TF32 off on CUDA: a head's
ablation delta or a patching effect can be smaller than bf16's rounding (~3 significant digits), and batching
variants together must not change a variant's answer.

Randomness: the ProbSparse key samples (and LSH's rotations) are drawn from a CPU generator (`key_generator`) and
moved to the model's device, so a seed draws the same sample on the CPU, on CUDA and on MPS, and a model gives the same
numbers on each, up to float32 rounding.
"""
from __future__ import annotations

import contextlib
import copy

import torch


def pick_device(preferred: str | None = None) -> torch.device:
    """`preferred` ("cuda", "mps", "cpu") wins when available; otherwise the fastest present."""
    if preferred:
        if preferred == "cuda" and not torch.cuda.is_available():
            raise ValueError("CUDA was asked for but torch sees no CUDA device")
        if preferred == "mps" and not torch.backends.mps.is_available():
            raise ValueError("MPS was asked for but torch sees no MPS device")
        return exact_float32(torch.device(preferred))
    if torch.cuda.is_available():
        return exact_float32(torch.device("cuda"))
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def autocast_context(device: torch.device):
    """A training step's mixed precision: bf16 on CUDA, fp16 on MPS, none on the CPU (analyses run float32)."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    if device.type == "mps":
        return torch.autocast("mps", dtype=torch.float16)
    return contextlib.nullcontext()


def exact_float32(device: torch.device) -> torch.device:
    """On CUDA, float32 stays float32: TF32 off for matrix products and cuDNN convolutions (PyTorch leaves it on for
    cuDNN, ~10 bits of mantissa: the token and distilling convolutions would round like bf16). Autocast's bf16
    training steps are not affected. → device."""
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    return device


def on_cpu(module: torch.nn.Module) -> torch.nn.Module:
    """The module itself where it is on the CPU, else a CPU copy (a shared model is never moved): for the analyses
    that rebuild a recorded pass from the model's own layers in float64 on the CPU."""
    if all(p.device.type == "cpu" for p in module.parameters()):
        return module
    return copy.deepcopy(module).cpu()


def key_generator(seed: int) -> torch.Generator:
    """The generator of the key samples, on the CPU whatever the model's device: the same seed, the same sample."""
    return torch.Generator().manual_seed(int(seed))
