"""A tiny valid checkpoint (no training: a seeded Informer and a hand-made schema) and ways to tamper with it.

Every helper returns new bytes; `rehashed` updates manifest.json so that a tampered file gets past the SHA-256
check and reaches the check it is meant for.
"""
from __future__ import annotations

import collections
import hashlib
import io
import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save as safetensors_bytes

from informer_lab.analysis.checkpoints.folder import DataSchema, checkpoint_files
from informer_lab.analysis.data import DataSpec, Scaler
from informer_lab.model import Informer, InformerConfig

COLUMNS = ("a", "b", "y")
LENGTHS = dict(seq_len=16, label_len=8, pred_len=4)
OFFICIAL_SETTINGS = dict(**LENGTHS, n_heads=2)


def tiny_config(**changes) -> InformerConfig:
    return InformerConfig(enc_in=3, dec_in=3, c_out=3, n_marks=4, d_model=8, n_heads=2, e_layers=(2,), d_layers=1,
                          d_ff=8, dropout=0.0, **LENGTHS).replace(**changes)


def tiny_schema() -> DataSchema:
    scaler = Scaler(np.array([1.0, -2.0, 3.0]), np.array([0.5, 1.0, 2.0]), COLUMNS)
    return DataSchema(DataSpec(target="y", features="M", **LENGTHS), scaler, COLUMNS, "date", "h")


def tiny_model(seed: int = 0, **changes) -> Informer:
    torch.manual_seed(seed)
    return Informer(tiny_config(**changes)).eval()


def valid_files(seed: int = 0, repair: dict | None = None) -> dict[str, bytes]:
    return checkpoint_files(tiny_model(seed), tiny_schema(), {"test": {"mse": 0.5}, "seed": seed}, repair=repair)


def write_folder(folder: Path, files: dict[str, bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def rehashed(files: dict[str, bytes], **replaced: bytes) -> dict[str, bytes]:
    """`files` with some files replaced (keyword names use _ for . : config_json=...) and the manifest updated."""
    files = dict(files)
    for key, data in replaced.items():
        files[_name(key)] = data
    manifest = json.loads(files["manifest.json"])
    manifest["sha256"] = {n: hashlib.sha256(files[n]).hexdigest() for n in manifest["sha256"] if n in files}
    files["manifest.json"] = json.dumps(manifest).encode()
    return files


def _name(key: str) -> str:
    return {"weights": "weights.safetensors", "config": "config.json", "schema": "schema.json",
            "metrics": "metrics.json", "manifest": "manifest.json", "repair": "repair.json"}[key]


def edit_json(files: dict[str, bytes], key: str, edit) -> dict[str, bytes]:
    """Apply `edit(dict)` (in place, or returning the new value) to a JSON file and rehash."""
    data = json.loads(files[_name(key)])
    result = edit(data)
    return rehashed(files, **{key: json.dumps(data if result is None else result).encode()})


def state_of(files: dict[str, bytes]) -> dict[str, torch.Tensor]:
    from safetensors.torch import load

    return dict(load(files["weights.safetensors"]))


def with_state(files: dict[str, bytes], state: dict[str, torch.Tensor]) -> dict[str, bytes]:
    return rehashed(files, weights=safetensors_bytes(state))


def header_parts(data: bytes) -> tuple[dict, bytes]:
    n = int.from_bytes(data[:8], "little")
    return json.loads(data[8:8 + n]), data[8 + n:]


def with_header(files: dict[str, bytes], edit) -> dict[str, bytes]:
    """Rewrite the safetensors header (`edit(header)` in place), keeping the data bytes, and rehash."""
    header, body = header_parts(files["weights.safetensors"])
    edit(header)
    raw = json.dumps(header).encode()
    return rehashed(files, weights=len(raw).to_bytes(8, "little") + raw + body)


# --------------------------------------------------------------------------------------------
# Official .pth files
# --------------------------------------------------------------------------------------------
def official_state(seed: int = 0) -> dict[str, torch.Tensor]:
    from tests.analysis.checkpoints.official_reference import make_official_state_dict

    return make_official_state_dict(3, 3, 3, 8, 2, 8, 2, 1, 4, seed=seed)


class FakeStorage:
    def __init__(self, key: str, type_name: str, numel: int):
        self.key, self.type_name, self.numel = key, type_name, numel


class FakeTensor:
    """Pickles exactly as torch.save pickles a tensor, with whatever storage, offset, size and stride we say."""

    def __init__(self, storage: FakeStorage, offset: int, size: tuple, stride: tuple):
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2,
                (self.storage, self.offset, self.size, self.stride, False, collections.OrderedDict()))


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, FakeStorage):
            return ("storage", getattr(torch, obj.type_name), obj.key, "cpu", obj.numel)
        return None


_TYPE_NAMES = {torch.float32: "FloatStorage", torch.int64: "LongStorage", torch.float16: "HalfStorage"}


def craft_pth(path: Path, state: dict, records: dict[str, bytes] | None = None) -> Path:
    """A torch.save-style zip of `state`, whose values may be tensors (stored as they are) or FakeTensors
    (with their storages' bytes in `records`)."""
    records = dict(records or {})
    obj = collections.OrderedDict()
    for i, (name, value) in enumerate(state.items()):
        if isinstance(value, torch.Tensor):
            t = value.contiguous()
            key = f"t{i}"
            records[key] = t.numpy().tobytes() if t.numel() else b""
            value = FakeTensor(FakeStorage(key, _TYPE_NAMES[t.dtype], t.numel()), 0, tuple(t.shape), t.stride())
        obj[name] = value
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=2).dump(obj)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("archive/data.pkl", buffer.getvalue())
        archive.writestr("archive/byteorder", "little")
        for key, data in records.items():
            archive.writestr(f"archive/data/{key}", data)
        archive.writestr("archive/version", "3\n")
    return path
