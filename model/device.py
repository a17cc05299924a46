"""Where the model runs: CUDA (bf16 autocast), else Apple MPS, else the CPU (fp32)."""
from __future__ import annotations

import contextlib

import torch


def pick_device(preferred: str | None = None) -> torch.device:
    """`preferred` ("cuda", "mps", "cpu") wins when available; otherwise the fastest present."""
    if preferred:
        if preferred == "cuda" and not torch.cuda.is_available():
            raise ValueError("CUDA was asked for but torch sees no CUDA device")
        if preferred == "mps" and not torch.backends.mps.is_available():
            raise ValueError("MPS was asked for but torch sees no MPS device")
        return torch.device(preferred)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def autocast_context(device: torch.device):
    """Mixed precision where it pays: bf16 on CUDA, fp16 on MPS, none on the CPU."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    if device.type == "mps":
        return torch.autocast("mps", dtype=torch.float16)
    return contextlib.nullcontext()
