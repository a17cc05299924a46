"""Checkpoints: a folder of safetensors weights and JSON (config, data schema, metrics, manifest).

No pickle anywhere. Written to a temporary folder and renamed into place, so a crash never leaves a
half-written checkpoint. Loading checks the manifest's SHA-256 of every file, the config, and that
every tensor has the shape the config implies; anything else is refused with a CheckpointError.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_safetensors_bytes
from safetensors.torch import save_file

from model import Informer, InformerConfig

from .data import DataSpec, PreparedData, Scaler
from .errors import CheckpointError, ConfigError

FORMAT = "informer-lab/1"
FILES = ("weights.safetensors", "config.json", "schema.json", "metrics.json")


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
        try:
            schema = cls(DataSpec(**data["spec"]), Scaler.from_dict(data["scaler"]), tuple(data["target_columns"]),
                         str(data["datetime_column"]), str(data["freq"]))
        except (TypeError, KeyError, ValueError, ConfigError) as err:
            raise CheckpointError(f"schema.json is not a valid data schema: {err}") from None
        if schema.target_columns != schema.columns[len(schema.columns) - len(schema.target_columns):]:
            raise CheckpointError("schema.json: the target columns are not the last input columns")
        return schema


@dataclass
class Checkpoint:
    model: Informer
    schema: DataSchema
    metrics: dict = field(default_factory=dict)

    @property
    def config(self) -> InformerConfig:
        return self.model.config


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True))


def save_checkpoint(folder: str | Path, model: Informer, schema: DataSchema, metrics: dict | None = None) -> Path:
    """Write the checkpoint folder atomically (temporary sibling folder, then rename)."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        state = {k: v.detach().to("cpu").contiguous() for k, v in model.state_dict().items()}
        save_file(state, str(tmp / "weights.safetensors"), metadata={"format": FORMAT})
        _write_json(tmp / "config.json", asdict(model.config))
        _write_json(tmp / "schema.json", schema.to_dict())
        _write_json(tmp / "metrics.json", metrics or {})
        _write_json(tmp / "manifest.json", {"format": FORMAT, "sha256": {f: _sha256(tmp / f) for f in FILES}})
        for f in (*FILES, "manifest.json"):
            with open(tmp / f, "rb") as handle:
                os.fsync(handle.fileno())
        old = None
        if folder.exists():
            old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
            os.replace(folder, old)
        os.replace(tmp, folder)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def read_checkpoint_files(files: dict[str, bytes]) -> Checkpoint:
    """Validate and load a checkpoint given as {file name: bytes} (an upload or a folder's contents)."""
    missing = [f for f in (*FILES, "manifest.json") if f not in files]
    if missing:
        raise CheckpointError(f"checkpoint is missing {', '.join(missing)}")
    try:
        manifest = json.loads(files["manifest.json"])
        recorded = manifest["sha256"]
        assert manifest.get("format") == FORMAT, f"unknown format {manifest.get('format')!r}"
    except (ValueError, KeyError, TypeError, AssertionError) as err:
        raise CheckpointError(f"manifest.json is not a valid manifest: {err}") from None
    for name in FILES:
        if hashlib.sha256(files[name]).hexdigest() != recorded.get(name):
            raise CheckpointError(f"{name} does not match its SHA-256 in manifest.json: the file was changed or damaged")

    def json_of(name):
        try:
            data = json.loads(files[name])
        except (ValueError, UnicodeDecodeError) as err:
            raise CheckpointError(f"{name} is not readable JSON: {err}") from None
        if not isinstance(data, dict):
            raise CheckpointError(f"{name} must hold a JSON object")
        return data

    try:
        config = InformerConfig.from_dict(json_of("config.json"))
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"config.json is not a valid model config: {err}") from None
    schema = DataSchema.from_dict(json_of("schema.json"))
    metrics = json_of("metrics.json")
    try:
        state = load_safetensors_bytes(files["weights.safetensors"])
    except (SafetensorError, ValueError, RuntimeError) as err:
        raise CheckpointError(f"weights.safetensors is not a valid safetensors file: {err}") from None
    return Checkpoint(model=_model_from_state(config, state), schema=schema, metrics=metrics)


def _model_from_state(config: InformerConfig, state: dict[str, torch.Tensor]) -> Informer:
    model = Informer(config)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing or unexpected:
        raise CheckpointError(f"weights do not match the config: missing {missing[:3]}, unexpected {unexpected[:3]}")
    for name, tensor in expected.items():
        if state[name].shape != tensor.shape:
            raise CheckpointError(f"weight {name} has shape {list(state[name].shape)}, "
                                  f"the config implies {list(tensor.shape)}")
    model.load_state_dict(state, strict=True)
    return model.eval()


def load_checkpoint(folder: str | Path) -> Checkpoint:
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"checkpoint folder {folder} does not exist")
    files = {}
    for name in (*FILES, "manifest.json"):
        path = folder / name
        if path.is_file():
            files[name] = path.read_bytes()
    return read_checkpoint_files(files)
