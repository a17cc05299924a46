"""Checkpoints: a folder of safetensors weights and JSON (config, data schema, metrics, manifest).

    weights.safetensors  config.json  schema.json  metrics.json  manifest.json  [repair.json]

No pickle anywhere. `save_checkpoint` puts the folder in place atomically (`checkpoint_store`: a kill at any
instant leaves a complete checkpoint at the path, old or new; leftovers are recovered or deleted by the next
load or save). `repair.json`, optional, is the repair report of the CSV the model was trained on.

Loading trusts nothing and allocates nothing before the checks pass (`checkpoint_checks`, `weights_checks`):
size caps on every file, the manifest's SHA-256 of every file, config.json's field types and ranges and the
model's size counted from it, schema.json's scaler finite with std > 0 and matching the config, then the
safetensors header (names, float dtypes, shapes, byte ranges); only then are tensors read, and every weight
must be finite. Anything else is refused with a CheckpointError whose `field` names the file, config field or
tensor at fault.
"""
from __future__ import annotations

import json
import os
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_safetensors_bytes
from safetensors.torch import save as safetensors_bytes

from informer_lab.model import Informer, InformerConfig

from informer_lab.analysis.checkpoints.checks import (FORMAT, KNOWN, MANIFEST, REPAIR, REQUIRED, WEIGHTS, check_config, check_manifest,
                                check_schema_dict, check_schema_matches, check_size, config_from_dict, parse_json,
                                sha256, state_shapes)
from informer_lab.analysis.checkpoints.store import recover, wait_for, write_folder
from informer_lab.analysis.data import DataSpec, PreparedData, Scaler
from informer_lab.analysis.errors import CheckpointError, ConfigError
from informer_lab.analysis.checkpoints.weights import check_header, check_values

FILES = REQUIRED  # the four files the manifest always hashes (kept for callers of the old name)


@dataclass(frozen=True)
class DataSchema:
    """What the model expects of a CSV and how its numbers were scaled."""

    spec: DataSpec
    scaler: Scaler  # fitted on the train rows; its columns are the model's inputs, target last
    target_columns: tuple[str, ...]  # the model's outputs, in order
    datetime_column: str
    freq: str

    @property
    def columns(self) -> tuple[str, ...]:
        return self.scaler.columns

    @classmethod
    def of(cls, prepared: PreparedData, datetime_column: str) -> "DataSchema":
        return cls(prepared.spec, prepared.scaler, tuple(prepared.target_columns), datetime_column, prepared.freq)

    def to_dict(self) -> dict:
        return {"spec": asdict(self.spec), "scaler": self.scaler.to_dict(),
                "target_columns": list(self.target_columns), "datetime_column": self.datetime_column,
                "freq": self.freq}

    @classmethod
    def from_dict(cls, data: dict) -> "DataSchema":
        """The schema of schema.json's object; CheckpointError unless it is well-formed (finite scaler, std > 0)."""
        check_schema_dict(data)
        try:
            schema = cls(DataSpec(**data["spec"]), Scaler.from_dict(data["scaler"]), tuple(data["target_columns"]),
                         data["datetime_column"], data["freq"])
        except (TypeError, KeyError, ValueError, ConfigError) as err:
            raise CheckpointError(f"schema.json is not a valid data schema: {err}", field="schema.json") from None
        if schema.target_columns != schema.columns[len(schema.columns) - len(schema.target_columns):]:
            raise CheckpointError("schema.json: the target columns are not the last input columns",
                                  field="target_columns")
        return schema


@dataclass
class Checkpoint:
    model: Informer
    schema: DataSchema
    metrics: dict = field(default_factory=dict)
    repair: dict | None = None  # the repair report of the training CSV (repair.json), when saved with one

    @property
    def config(self) -> InformerConfig:
        return self.model.config


def _json_bytes(data: dict) -> bytes:
    return json.dumps(data, indent=2, sort_keys=True).encode()


def checkpoint_files(model: Informer, schema: DataSchema, metrics: dict | None = None, *,
                     repair: dict | None = None) -> dict[str, bytes]:
    """The checkpoint's files as bytes, manifest included. CheckpointError for a model that loading would refuse
    (a config outside the caps, a NaN weight), so that nothing unloadable is ever written."""
    if repair is not None and not isinstance(repair, dict):
        raise TypeError(f"repair must be a dict (the repair report), not {type(repair).__name__}")
    check_config(model.config)
    state = {k: v.detach().to("cpu").contiguous() for k, v in model.state_dict().items()}
    check_values(state)
    files = {WEIGHTS: safetensors_bytes(state, metadata={"format": FORMAT}),
             "config.json": _json_bytes(asdict(model.config)), "schema.json": _json_bytes(schema.to_dict()),
             "metrics.json": _json_bytes(metrics or {})}
    if repair is not None:
        files[REPAIR] = _json_bytes(repair)
    files[MANIFEST] = _json_bytes({"format": FORMAT, "sha256": {name: sha256(data) for name, data in files.items()}})
    return files


def save_checkpoint(folder: str | Path, model: Informer, schema: DataSchema, metrics: dict | None = None, *,
                    repair: dict | None = None) -> Path:
    """Write the checkpoint folder atomically (see `checkpoint_store`): afterwards, and at every instant before,
    `folder` holds a complete checkpoint (the old one until the new one is complete). `repair`, when given, is
    written as repair.json and hashed in the manifest. A folder that is not a checkpoint is never replaced."""
    return write_folder(folder, checkpoint_files(model, schema, metrics, repair=repair))


def read_checkpoint_files(files: dict[str, bytes]) -> Checkpoint:
    """Validate and load a checkpoint given as {file name: bytes} (an upload or a folder's contents).

    Order: sizes, manifest and hashes, config.json (types, ranges, the model's size against the cap and the weights
    file), schema.json and its agreement with the config, metrics.json and repair.json, the safetensors header
    against the shapes the config implies; then the tensors are read and checked finite."""
    for name, data in files.items():
        check_size(name, len(data))
    check_manifest(files)
    config = config_from_dict(parse_json("config.json", files["config.json"]))
    shapes = state_shapes(config)
    numbers = sum(int(torch.Size(s).numel()) for s in shapes.values())
    if len(files[WEIGHTS]) < 2 * numbers:
        raise CheckpointError(f"config.json describes {numbers:,} weights, but {WEIGHTS} has only "
                              f"{len(files[WEIGHTS]):,} bytes", field=WEIGHTS)
    schema = DataSchema.from_dict(parse_json("schema.json", files["schema.json"]))
    check_schema_matches(schema, config)
    metrics = parse_json("metrics.json", files["metrics.json"])
    repair = parse_json(REPAIR, files[REPAIR]) if REPAIR in files else None
    check_header(files[WEIGHTS], shapes)
    try:
        state = load_safetensors_bytes(files[WEIGHTS])
    except (SafetensorError, ValueError, RuntimeError) as err:  # not expected after check_header
        raise CheckpointError(f"{WEIGHTS} is not a valid safetensors file: {str(err)[:120]}", field=WEIGHTS) from None
    return Checkpoint(model=_model_from_state(config, check_values(state)), schema=schema, metrics=metrics,
                      repair=repair)


def _model_from_state(config: InformerConfig, state: dict[str, torch.Tensor]) -> Informer:
    model = Informer(config)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing or unexpected:  # state_shapes and the model disagree: a bug, caught by the tests
        raise CheckpointError(f"weights do not match the config: missing {missing[:3]}, unexpected {unexpected[:3]}")
    for name, tensor in expected.items():
        if state[name].shape != tensor.shape:
            raise CheckpointError(f"weight {name} has shape {list(state[name].shape)}, "
                                  f"the config implies {list(tensor.shape)}", field=name)
    model.load_state_dict(state, strict=True)
    return model.eval()


def _read_each(folder: Path, dir_fd: int | None) -> dict[str, bytes]:
    files = {}
    for name in KNOWN:
        where = name if dir_fd is not None else folder / name
        try:
            st = os.stat(where, dir_fd=dir_fd)
        except FileNotFoundError:
            continue
        except OSError as err:
            raise CheckpointError(f"cannot read {name} in {folder}: {err.strerror}", field=name) from None
        if not stat.S_ISREG(st.st_mode):
            raise CheckpointError(f"{name} in {folder} is not a regular file", field=name)
        check_size(name, st.st_size)
        fd = os.open(where, os.O_RDONLY, dir_fd=dir_fd)
        with os.fdopen(fd, "rb") as handle:
            files[name] = handle.read(st.st_size + 1)
        check_size(name, len(files[name]))  # it grew since stat
    return files


def _read_files(folder: Path) -> dict[str, bytes]:
    """The checkpoint's files, all from one folder: read through a handle on the folder, and read again when a save
    swapped another folder in meanwhile (so a reader never mixes the files of two checkpoints)."""
    if os.open not in os.supports_dir_fd or not hasattr(os, "O_DIRECTORY"):
        return _read_each(folder, None)
    for _ in range(5):
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as err:
            raise CheckpointError(f"cannot open the checkpoint folder {folder}: {err.strerror}",
                                  field=str(folder)) from None
        try:
            try:
                files = _read_each(folder, fd)
            except FileNotFoundError:  # a save swapped the folder out between a file's stat and its open: again
                files, same = None, False
            else:
                try:
                    same = os.path.samestat(os.fstat(fd), os.stat(folder))
                except FileNotFoundError:
                    same = False
        finally:
            os.close(fd)
        if same:
            break
    if files is None:
        raise CheckpointError(f"the checkpoint folder {folder} kept changing while it was read; try again",
                              field=str(folder))
    return files


def checkpoint_folder_files(folder: str | Path) -> dict[str, bytes]:
    """The files of the checkpoint folder `folder`, read consistently, after checking their sizes and that they match
    the manifest's SHA-256s: a complete, unchanged checkpoint (its config and weights are checked when loaded).
    CheckpointError otherwise, naming the file at fault."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"checkpoint folder {folder} does not exist", field=str(folder))
    files = _read_files(folder)
    check_manifest(files)
    return files


def load_checkpoint(folder: str | Path) -> Checkpoint:
    """Load and validate the checkpoint folder `folder` (see `read_checkpoint_files`).

    First recovers from an interrupted save (`checkpoint_store.recover`): a missing folder is restored from a
    complete leftover copy, stale leftovers are deleted."""
    folder = Path(folder)
    try:
        recover(folder)
        wait_for(folder)
    except OSError:  # a read-only parent: load what is there
        pass
    if not os.path.lexists(folder):
        raise CheckpointError(f"checkpoint folder {folder} does not exist", field=str(folder))
    if not folder.is_dir():
        raise CheckpointError(f"{folder} is not a checkpoint folder (it is a file)", field=str(folder))
    return read_checkpoint_files(_read_files(folder))
