"""A `torch.save(model.state_dict())` file, read without running code, and renamed onto our Informer.

`read_state_dict` is the one way a .pth becomes tensors here (Informer2020 and Time-Series-Library imports):
before torch reads a byte of tensor data, `torch_file.inspect_torch_file` reads the archive's pickle without
running it (code to run is refused in plain words; storages must fit their records; tensors must not be expanded,
overlap or reach outside their storage); every weight must be floating point. Then
`torch.load(weights_only=True, mmap=True)` maps the file and every weight must be finite.

`map_state_dict` renames a foreign state_dict onto `Informer(config)`'s names and checks that nothing is missing,
nothing unknown and every shape right, each a CheckpointError naming the keys.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import torch

from informer_lab.model import Informer, InformerConfig

from informer_lab.analysis.checkpoints.checks import check_config
from informer_lab.analysis.errors import CheckpointError
from informer_lab.analysis.checkpoints.torch_file import FLOAT_DTYPES, TensorRef, code_message, inspect_torch_file
from informer_lab.analysis.checkpoints.weights import check_values

log = logging.getLogger(__name__)

SHOWN = 5  # keys listed in an error message
MAX_ENTRIES = 20_000  # tensors in a state_dict (the largest Informer the caps allow has about 4000)


def few(keys: list[str]) -> str:
    shown = ", ".join(keys[:SHOWN])
    return shown + (f" (and {len(keys) - SHOWN} more)" if len(keys) > SHOWN else "")


def strip_data_parallel(state_dict: Mapping[str, object]) -> dict[str, object]:
    """nn.DataParallel saves every name with a `module.` prefix; drop it (all or nothing)."""
    keys = list(state_dict)
    if keys and all(k.startswith("module.") for k in keys):
        return {k[len("module."):]: v for k, v in state_dict.items()}
    return dict(state_dict)


def count_layers(state_dict: Mapping[str, object], pattern: str) -> int:
    """Number of layers: 1 + the largest index captured by `pattern` (0 when none)."""
    found = [int(m.group(1)) for k in state_dict if (m := re.match(pattern, k))]
    return max(found) + 1 if found else 0


def read_state_dict(path: str | Path, label: str = "official checkpoint") -> dict[str, torch.Tensor]:
    """The state_dict of a .pth (bare, or under "model" / "state_dict"), checked as the module docstring says.
    `label` names the file's kind in the messages ("official checkpoint", "TSL checkpoint")."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{label} {str(path)!r} does not exist or is not a file", field=str(path)[:200])
    described = unwrap(inspect_torch_file(path), path)
    if len(described) > MAX_ENTRIES:
        raise CheckpointError(f"{path.name!r} holds {len(described):,} entries; an Informer has at most a few "
                              "thousand", field=path.name)
    for name, value in described.items():
        if isinstance(value, TensorRef) and value.dtype not in FLOAT_DTYPES and not (
                name.endswith("num_batches_tracked") and value.dtype != "bool" and len(value.shape) <= 1):
            raise CheckpointError(f"{path.name!r}: tensor {name} has dtype {value.dtype}; weights must be floating "
                                  "point", field=name)
    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception as err:  # not expected after the inspection; UnpicklingError, RuntimeError, ...
        raise CheckpointError(load_failure(path, err)) from err

    state_dict = unwrap(loaded, path)
    for name, value in state_dict.items():
        ref = described.get(name)
        if isinstance(value, torch.Tensor) != isinstance(ref, TensorRef) or (
                isinstance(value, torch.Tensor) and tuple(value.shape) != ref.shape):
            raise CheckpointError(f"{path.name!r}: torch.load gave {name} another form than the file describes",
                                  field=name)
    state_dict.update(check_values({k: v for k, v in state_dict.items() if isinstance(v, torch.Tensor)},
                                   source="tensor"))
    return state_dict


def map_state_dict(state_dict: Mapping[str, torch.Tensor], config: InformerConfig, name_of: Callable[[str], str],
                   ignored: re.Pattern, what: str) -> dict[str, torch.Tensor]:
    """`state_dict` (foreign names) → ours for `Informer(config)`. name_of(ours) gives the foreign name; keys
    matching `ignored` are dropped (buffers we recompute). `what` names the checkpoint's kind in the messages."""
    not_tensors = sorted(k for k, v in state_dict.items() if not isinstance(v, torch.Tensor))
    if not_tensors:
        raise CheckpointError(f"checkpoint entries that are not tensors: {few(not_tensors)}")
    with torch.device("meta"):  # shapes only: no memory, no initialisation cost
        expected = Informer(config).state_dict()
    names = {name_of(ours): ours for ours in expected}  # foreign → ours
    given = {k for k in state_dict if not ignored.match(k)}
    missing = sorted(set(names) - given)
    unknown = sorted(given - set(names))
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"{len(missing)} missing key(s): {few(missing)}")
        if unknown:
            parts.append(f"{len(unknown)} unknown key(s): {few(unknown)}")
        raise CheckpointError(f"{what} checkpoint does not match e_layers={config.e_layers}, "
                              f"d_layers={config.d_layers}, distil={config.distil}: " + "; ".join(parts))
    ours: dict[str, torch.Tensor] = {}
    wrong = []
    for foreign, name in names.items():
        tensor = state_dict[foreign]
        if tuple(tensor.shape) != tuple(expected[name].shape):
            wrong.append(f"{foreign}: expected {list(expected[name].shape)}, got {list(tensor.shape)}")
        ours[name] = tensor
    if wrong:
        raise CheckpointError(f"{len(wrong)} tensor(s) with the wrong shape: " + "; ".join(wrong[:SHOWN])
                              + (f" (and {len(wrong) - SHOWN} more)" if len(wrong) > SHOWN else ""))
    return ours


def load_into(config: InformerConfig, ours: dict[str, torch.Tensor], source: str) -> Informer:
    """Informer(config) with `ours` loaded strictly, in eval mode on the CPU."""
    model = Informer(config)
    try:
        model.load_state_dict(ours, strict=True)
    except RuntimeError as err:  # cannot happen after map_state_dict's checks, unless our model changes
        raise CheckpointError(f"{source!r} does not load into Informer({config}): {err}") from err
    return model.eval()


def unwrap(loaded: object, path: Path) -> dict[str, torch.Tensor]:
    if isinstance(loaded, Mapping):
        for key in ("model", "state_dict"):
            if isinstance(loaded.get(key), Mapping):
                loaded = loaded[key]
                break
    if not isinstance(loaded, Mapping) or not loaded:
        kind = "tensor" if isinstance(loaded, (TensorRef, torch.Tensor)) else type(loaded).__name__
        raise CheckpointError(f"{str(path)!r} holds a {kind}, not a state_dict "
                              "(a dict of parameter name → tensor, or one under 'model' / 'state_dict')")
    if not all(isinstance(k, str) for k in loaded):
        raise CheckpointError(f"{str(path)!r} holds a dict whose keys are not all parameter names")
    return dict(loaded)


def load_failure(path: Path, err: Exception) -> str:
    """Why `torch.load(weights_only=True)` refused, in plain words: never torch's advice to retry with
    weights_only=False (which would run whatever code the file carries)."""
    text = " ".join(str(err).split("If you are seeing")[0].split())
    if re.search(r"unsupported global|weights[ _]only load failed|WeightsUnpickler", text, re.IGNORECASE):
        found = re.search(r"GLOBAL (\S+)", text)
        return code_message(path, found.group(1) if found else "an object that is not a tensor")
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if "weights_only" not in s]
    detail = " ".join(sentences)[:160] or "(no message)"
    return f"{path.name!r} is not a torch checkpoint file: torch.load failed with {type(err).__name__}: {detail}"


__all__ = ["MAX_ENTRIES", "count_layers", "few", "load_into", "map_state_dict", "read_state_dict",
           "strip_data_parallel", "unwrap"]


def config_from(settings: dict, overrides: Mapping, source: str) -> InformerConfig:
    """The InformerConfig read off a checkpoint's tensors (`settings`) with the caller's `overrides`: a
    CheckpointError naming `source` when they make none, and sizes capped (`check_config`) before any model exists."""
    try:
        config = InformerConfig(**{**settings, **overrides})
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"cannot build a config for this {source}: {err}") from err
    check_config(config, f"the {source}")
    return config


def import_pth(path: str | Path, label: str, infer: Callable[..., InformerConfig],
               convert: Callable[[dict, InformerConfig], dict], **settings) -> tuple[Informer, InformerConfig]:
    """A .pth of another codebase as our Informer: read safely (`read_state_dict`), its config inferred from the
    tensors (`infer(state_dict, **settings)`), its names and shapes converted (`convert`), loaded strictly."""
    state_dict = read_state_dict(path, label)
    config = infer(state_dict, **settings)
    model = load_into(config, convert(state_dict, config), str(path))
    log.info("imported %s %s: e_layers=%s d_layers=%d d_model=%d", label, path, config.e_layers, config.d_layers,
             config.d_model)
    return model, config

