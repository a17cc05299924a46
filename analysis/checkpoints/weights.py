"""weights.safetensors, checked from its own header before a tensor is made, and its values after.

The safetensors layout is an 8-byte little-endian header length N, N bytes of JSON, then the data. The
header is parsed here from the bytes (not by the library), with a size cap, and every entry is checked
against the shapes the (already checked) config implies: the names, a floating-point dtype (F32, F16, BF16,
F64; integer and bool weights are refused, save BatchNorm's int64 step counter), the shape, and a byte
range that is exactly as long as dtype and shape need, the ranges tiling the data with no gap or overlap.
Only then are the tensors read; after that every weight must be finite (NaN or ±inf weights forecast NaN)
and every BatchNorm running variance ≥ 0.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping

import torch

from informer_lab.analysis.checkpoints.checks import WEIGHTS, no_duplicate_keys
from informer_lab.analysis.errors import CheckpointError

MAX_HEADER_BYTES = 16 << 20
FLOAT_DTYPES = {"F16": 2, "BF16": 2, "F32": 4, "F64": 8}
COUNTER_DTYPES = {"I64": 8}  # BatchNorm's num_batches_tracked, a scalar
_SHOWN = 3
_NON_NEGATIVE = ("running_var", "num_batches_tracked")


def _refuse(message: str, field: str | None = WEIGHTS) -> CheckpointError:
    return CheckpointError(f"{WEIGHTS}: {message}", field=field)


def _few(names: list[str]) -> str:
    return ", ".join(n[:80] for n in names[:_SHOWN]) + (f" (and {len(names) - _SHOWN} more)" if len(names) > _SHOWN
                                                          else "")


def read_header(data: bytes) -> tuple[dict[str, dict], int]:
    """(the header's tensor entries by name, the offset where the data starts); metadata is dropped."""
    if len(data) < 8:
        raise _refuse(f"the file is {len(data)} bytes, too short to hold a header (truncated)")
    n = int.from_bytes(data[:8], "little")
    if n > MAX_HEADER_BYTES:
        raise _refuse(f"the header claims {n:,} bytes, more than the {MAX_HEADER_BYTES:,} allowed")
    if 8 + n > len(data):
        raise _refuse(f"the header claims {n:,} bytes but the file has only {len(data) - 8:,} after its length "
                      "(truncated)")
    try:
        header = json.loads(data[8:8 + n], object_pairs_hook=no_duplicate_keys)
    except (ValueError, UnicodeDecodeError, RecursionError) as err:
        raise _refuse(f"the header is not valid JSON ({str(err)[:80]})") from None
    if not isinstance(header, dict):
        raise _refuse("the header must be a JSON object")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise _refuse("the header's __metadata__ must map names to strings")
    return header, 8 + n


def _dims(value: object) -> bool:
    return isinstance(value, list) and len(value) <= 8 and all(
        isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= 1 << 40 for s in value)


def check_header(data: bytes, expected: Mapping[str, tuple[int, ...]]) -> None:
    """Refuse weights.safetensors unless its header describes exactly `expected` (name → shape), in allowed
    dtypes, with byte ranges that tile the data. Nothing is allocated but the header's JSON."""
    header, start = read_header(data)
    missing = sorted(set(expected) - set(header))
    unexpected = sorted(set(header) - set(expected))
    if missing or unexpected:
        first = (missing or unexpected)[0]
        raise _refuse(f"the weights do not match the config: missing [{_few(missing)}], unexpected "
                      f"[{_few(unexpected)}]", field=first[:120])
    size = len(data) - start
    spans = []
    for name, shape in expected.items():
        entry = header[name]
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise _refuse(f"the header entry of {name} must hold dtype, shape and data_offsets", field=name)
        dtype, dims, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        allowed = COUNTER_DTYPES if name.endswith("num_batches_tracked") else FLOAT_DTYPES
        if dtype not in allowed:
            raise _refuse(f"weight {name} has dtype {str(dtype)[:20]}; weights must be floating point "
                          f"({', '.join(allowed)})", field=name)
        if not _dims(dims):
            raise _refuse(f"weight {name} has a shape that is not a list of sizes: {str(dims)[:40]}", field=name)
        if tuple(dims) != tuple(shape):
            raise CheckpointError(f"weight {name} has shape {list(dims)}, the config implies {list(shape)}",
                                  field=name)
        if (not isinstance(offsets, list) or len(offsets) != 2
                or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1] <= size):
            raise _refuse(f"weight {name} has data_offsets {str(offsets)[:60]} outside the {size:,} bytes of "
                          "data", field=name)
        need = math.prod(shape) * allowed[dtype]
        if offsets[1] - offsets[0] != need:
            raise _refuse(f"weight {name}: data_offsets {offsets} span {offsets[1] - offsets[0]:,} bytes, its "
                          f"dtype and shape need {need:,}", field=name)
        spans.append((offsets[0], offsets[1], name))
    position = 0
    for begin, end, name in sorted(spans):
        if begin != position:
            raise _refuse(f"the header's data_offsets {'overlap' if begin < position else 'leave a gap'} at "
                          f"weight {name}", field=name)
        position = end
    if position != size:
        raise _refuse(f"the header's tensors cover {position:,} bytes of the {size:,} of data")


def check_values(state: Mapping[str, torch.Tensor], source: str = "weight") -> dict[str, torch.Tensor]:
    """Every weight finite once stored as float32, every BatchNorm running variance and step count ≥ 0.

    Returns the state with floating tensors as float32 (what the model holds)."""
    checked = {}
    for name, tensor in state.items():
        if tensor.dtype.is_floating_point:
            tensor = tensor.to(torch.float32)
            bad = int((~torch.isfinite(tensor)).sum())
            if bad:
                raise CheckpointError(f"{source} {name} holds {bad:,} NaN or infinite value(s) of "
                                      f"{tensor.numel():,}", field=name)
        elif not name.endswith("num_batches_tracked") or tensor.dtype == torch.bool:
            raise CheckpointError(f"{source} {name} has dtype {str(tensor.dtype).removeprefix('torch.')}; "
                                  "weights must be floating point", field=name)
        if name.endswith(_NON_NEGATIVE) and bool((tensor < 0).any()):
            raise CheckpointError(f"{source} {name} holds negative values (a variance or a count)", field=name)
        checked[name] = tensor
    return checked


__all__ = ["FLOAT_DTYPES", "MAX_HEADER_BYTES", "check_header", "check_values", "read_header"]
