"""What a torch `.pth` file holds, read without running it and without allocating what it claims.

`torch.load(weights_only=True)` refuses arbitrary classes, but it believes the pickle's sizes: a storage that
claims 4·10⁹ elements is allocated (`numel · itemsize` bytes) before its record is read, and a tensor that is a
zero-stride view of one number (`torch.zeros(1).expand(10**5, 10**5)`) is a 20-KB file that becomes gigabytes
as soon as it is copied. So before torch sees the file, `inspect_torch_file` reads the zip archive that
`torch.save` writes (data.pkl, and one record `data/KEY` per storage) with its own unpickler:

* globals are looked up in a short allow-list (OrderedDict, torch's tensor rebuilders and storage types);
  anything else — `os.system`, a class of the training script — means the file carries Python code to run when
  opened, and is refused in plain words;
* storages are not loaded: each persistent id ('storage', type, key, location, numel) is checked against the
  size of its zip record (which must lie inside the file), so nothing can ask for more memory than the file has;
* each tensor becomes a `TensorRef` (storage, offset, size, stride), refused when its strides are zero or
  negative on a dimension of size > 1 (an expanded tensor), overlap, or reach outside its storage.

Only then may `torch.load(..., weights_only=True, mmap=True)` read it. Files in torch's pre-1.6 (non-zip) format
are refused: their sizes cannot be checked before torch allocates them.
"""
from __future__ import annotations

import io
import pickle
import zipfile
from collections import OrderedDict
from pathlib import Path

from informer_lab.analysis.errors import CheckpointError

MAX_FILE_BYTES = 4 << 30
MAX_PICKLE_BYTES = 8 << 20
MAX_TENSOR_NUMBERS = 200_000_000
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
STORAGE_TYPES = {"FloatStorage": ("float32", 4), "DoubleStorage": ("float64", 8), "HalfStorage": ("float16", 2),
                 "BFloat16Storage": ("bfloat16", 2), "LongStorage": ("int64", 8), "IntStorage": ("int32", 4),
                 "ShortStorage": ("int16", 2), "CharStorage": ("int8", 1), "ByteStorage": ("uint8", 1),
                 "BoolStorage": ("bool", 1), "UntypedStorage": ("uint8", 1)}
FLOAT_DTYPES = ("float32", "float64", "float16", "bfloat16")


class StorageRef:
    """One storage of the file: its zip record key, element dtype and size, and its claimed element count."""

    __slots__ = ("key", "dtype", "itemsize", "numel")

    def __init__(self, key: str, dtype: str, itemsize: int, numel: int):
        self.key, self.dtype, self.itemsize, self.numel = key, dtype, itemsize, numel


class TensorRef:
    """A tensor of the file, described and not loaded: a view (offset, size, stride) of a storage."""

    __slots__ = ("storage", "offset", "size", "stride")

    def __init__(self, storage: StorageRef, offset: int, size: tuple, stride: tuple):
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride

    @property
    def shape(self) -> tuple:
        return self.size

    @property
    def dtype(self) -> str:
        return self.storage.dtype


class _StorageType:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


class _Code(Exception):
    """The pickle names a global outside the allow-list: loading it would run that code."""


def _rebuild_tensor(storage, offset, size, stride, requires_grad=False, hooks=None, metadata=None):
    if not isinstance(storage, StorageRef):
        raise ValueError("a tensor without a storage")
    return TensorRef(storage, offset, tuple(size), tuple(stride))


def _rebuild_parameter(data, requires_grad=False, hooks=None, state=None):
    if not isinstance(data, TensorRef):
        raise ValueError("a parameter without a tensor")
    return data


_ALLOWED = {("collections", "OrderedDict"): OrderedDict, ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
            ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
            ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter}


class _Scanner(pickle.Unpickler):
    """Unpickles the structure only: allow-listed globals, storages as StorageRef (nothing read or allocated)."""

    def __init__(self, data: bytes):
        super().__init__(io.BytesIO(data))
        self.storages: dict[str, StorageRef] = {}

    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return _ALLOWED[(module, name)]
        if module == "torch" and name in STORAGE_TYPES:
            return _StorageType(name)
        raise _Code(f"{str(module)[:60]}.{str(name)[:60]}")

    def persistent_load(self, pid):
        if (not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage"
                or not isinstance(pid[1], _StorageType) or not isinstance(pid[2], str) or not pid[2].isalnum()
                or not isinstance(pid[4], int) or isinstance(pid[4], bool) or pid[4] < 0):
            raise ValueError("a storage reference that torch.save does not write")
        _, kind, key, _, numel = pid
        dtype, itemsize = STORAGE_TYPES[kind.name]
        known = self.storages.get(key)
        if known is not None and (known.dtype, known.numel) != (dtype, numel):
            raise ValueError(f"storage {key} is described twice, differently")
        self.storages[key] = known or StorageRef(key, dtype, itemsize, numel)
        return self.storages[key]


def code_message(path: Path, name: str) -> str:
    return (f"{path.name!r} contains Python code to run when it is opened (a pickle of objects, not only "
            f"tensors: {name}); it was refused for safety. Save only the model's state_dict (tensors) and import "
            "that.")


def _scan(path: Path, data: bytes) -> tuple[object, dict[str, StorageRef]]:
    scanner = _Scanner(data)
    try:
        obj = scanner.load()
    except _Code as err:
        raise CheckpointError(code_message(path, str(err)), field=path.name) from None
    except Exception as err:  # truncated or malformed pickle: UnpicklingError, EOFError, ValueError, ...
        raise CheckpointError(f"{path.name!r} is not a torch checkpoint file: its pickle is damaged "
                              f"({type(err).__name__})", field=path.name) from None
    return obj, scanner.storages


def _refuse_legacy(path: Path) -> None:
    with open(path, "rb") as handle:
        head = handle.read(MAX_PICKLE_BYTES)
    obj, _ = _scan(path, head)  # a plain pickle of code is refused here, in the same words
    if obj == LEGACY_MAGIC:
        raise CheckpointError(f"{path.name!r} is in torch's legacy (pre-1.6) format, whose sizes cannot be checked "
                              "before loading; save the state_dict again with torch ≥ 1.6", field=path.name)
    raise CheckpointError(f"{path.name!r} is not a torch checkpoint file (a zip archive written by torch.save)",
                          field=path.name)


def inspect_torch_file(path: str | Path) -> object:
    """The object a torch.save file holds, with a TensorRef for each tensor; CheckpointError (naming the file or
    the tensor) for code to run, storages larger than their records, and expanded, overlapping or out-of-bounds
    tensors. Reads the pickle (at most MAX_PICKLE_BYTES) and the zip directory; no tensor data."""
    path = Path(path)
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise CheckpointError(f"{path.name!r} is {size:,} bytes, more than the {MAX_FILE_BYTES:,} an official "
                              "checkpoint may have", field=path.name)
    if not zipfile.is_zipfile(path):
        _refuse_legacy(path)
    try:
        with zipfile.ZipFile(path) as archive:
            records = {info.filename: info for info in archive.infolist()}
            pickles = [n for n in records if n.endswith("/data.pkl") and n.count("/") == 1]
            if len(pickles) != 1:
                raise CheckpointError(f"{path.name!r} is a zip archive but not a torch checkpoint (no single "
                                      "data.pkl)", field=path.name)
            info = records[pickles[0]]
            if info.file_size > MAX_PICKLE_BYTES:
                raise CheckpointError(f"{path.name!r}: its pickle is {info.file_size:,} bytes, more than a "
                                      "state_dict needs", field=path.name)
            with archive.open(info) as handle:
                data = handle.read(MAX_PICKLE_BYTES + 1)
    except CheckpointError:
        raise
    except Exception as err:  # BadZipFile, bad CRC, names that are not UTF-8, unsupported compression, ...
        raise CheckpointError(f"{path.name!r} is a damaged zip archive: {str(err)[:80]}", field=path.name) from None
    obj, storages = _scan(path, data)
    prefix = pickles[0][: -len("data.pkl")]
    for key, storage in storages.items():
        record = records.get(f"{prefix}data/{key}")
        need = storage.numel * storage.itemsize
        if record is None:
            raise CheckpointError(f"{path.name!r} has no data for storage {key}", field=path.name)
        if record.compress_type != zipfile.ZIP_STORED or record.header_offset + record.file_size > size:
            raise CheckpointError(f"{path.name!r}: the record of storage {key} is compressed or lies outside the "
                                  "file", field=path.name)
        if record.file_size < need:
            raise CheckpointError(f"{path.name!r}: storage {key} claims {need:,} bytes but its record holds "
                                  f"{record.file_size:,}", field=path.name)
    for name, tensor in tensors_of(obj):
        check_tensor_ref(name, tensor, path)
    _check_crcs(path, [records[f"{prefix}data/{key}"] for key in storages])
    return obj


def _check_crcs(path: Path, records: list[zipfile.ZipInfo]) -> None:
    """Read every storage record through once, so that zipfile checks its CRC-32 (torch does not): a damaged
    weight is refused here instead of loading as a different number."""
    try:
        with zipfile.ZipFile(path) as archive:
            for record in records:
                with archive.open(record) as handle:
                    while handle.read(1 << 20):
                        pass
    except Exception as err:  # BadZipFile: Bad CRC-32, a truncated record, ...
        raise CheckpointError(f"{path.name!r} is a damaged zip archive: {str(err)[:80]}", field=path.name) from None


def tensors_of(obj: object, limit: int = 100_000) -> list[tuple[str, TensorRef]]:
    """Every TensorRef in `obj` (dicts, lists, tuples), named by its path ("model.encoder.norm.weight")."""
    found, seen, stack = [], set(), [("", obj)]
    while stack:
        name, item = stack.pop()
        if isinstance(item, TensorRef):
            found.append((name or "(top level)", item))
            continue
        if id(item) in seen or not isinstance(item, (dict, list, tuple)):
            continue
        seen.add(id(item))
        if len(seen) > limit:
            raise CheckpointError(f"the checkpoint holds more than {limit:,} containers")
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        stack.extend((f"{name}.{key}" if name else str(key), value) for key, value in pairs)
    return found


def check_tensor_ref(name: str, tensor: TensorRef, path: Path) -> None:
    """Refuse a tensor view that is expanded (stride ≤ 0 on a dimension of size > 1), overlaps itself, reaches
    outside its storage, or is absurdly large."""
    def refuse(what: str) -> None:
        raise CheckpointError(f"{path.name!r}: tensor {name[:100]} {what}", field=name[:200])

    size, stride, offset = tensor.size, tensor.stride, tensor.offset
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in (*size, *stride, offset))
    if not ints or len(size) != len(stride) or len(size) > 8 or min(size, default=0) < 0 or offset < 0:
        refuse("has a malformed shape, stride or offset")
    numel = 1
    for s in size:
        numel *= s
    if numel > MAX_TENSOR_NUMBERS:
        refuse(f"has {numel:,} elements, more than {MAX_TENSOR_NUMBERS:,}")
    if numel == 0:
        return
    dims = sorted((st, s) for s, st in zip(size, stride) if s > 1)
    if any(st <= 0 for st, _ in dims):
        refuse(f"has shape {list(size)} with stride {list(stride)}: an expanded (zero- or negative-stride) "
               "view, not stored weights")
    for (st0, s0), (st1, _) in zip(dims, dims[1:]):
        if st1 < st0 * s0:
            refuse(f"has shape {list(size)} with overlapping strides {list(stride)}")
    last = offset + sum((s - 1) * st for st, s in dims)
    if last >= tensor.storage.numel:
        refuse(f"needs {last + 1:,} elements of a storage that holds {tensor.storage.numel:,}")


__all__ = ["FLOAT_DTYPES", "StorageRef", "TensorRef", "check_tensor_ref", "code_message", "inspect_torch_file",
           "tensors_of"]
