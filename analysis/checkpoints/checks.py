"""What a checkpoint's JSON files may hold, checked before anything is allocated.

A checkpoint comes from outside (an upload, a folder someone copied), so nothing in it is trusted: every
JSON file has a size cap, a depth cap and no duplicate keys; the manifest lists exactly the files present
and their SHA-256s; config.json holds each InformerConfig field with its own type (an int is an int: not a
bool, not 8.0) inside a range, and the model it describes is counted analytically (`state_shapes`,
`count_parameters`) and capped *before* a tensor exists; schema.json's scaler is finite with std > 0.
Every refusal is a CheckpointError whose `field` names the file, config field or tensor at fault.

The caps are generous for real Informers (the paper's d_model 512 model has 11 M parameters):

    d_model ≤ 8192, 1 ≤ n_heads ≤ 256 dividing d_model, e_layers ≤ 8 replicas of ≤ 16 layers, d_layers ≤ 16,
    d_ff ≤ 65536, seq_len / label_len / pred_len ≤ 100 000, enc_in / dec_in / c_out ≤ 100 000,
    factor ≤ 1000, dropout in [0, 1); parameters ≤ 200 M; the two position tables ≤ 50 M numbers.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, fields

from informer_lab.model import InformerConfig
from informer_lab.model.config import ATTENTION_KINDS, SITE_TYPES
from informer_lab.model.attention import options_for

from informer_lab.analysis.errors import CheckpointError
from informer_lab.analysis.jsonfile import depth as _depth

FORMAT = "informer-lab/1"
WEIGHTS = "weights.safetensors"
MANIFEST = "manifest.json"
REPAIR = "repair.json"
REQUIRED = (WEIGHTS, "config.json", "schema.json", "metrics.json")  # hashed in the manifest
KNOWN = (*REQUIRED, MANIFEST, REPAIR)

MiB = 1 << 20
MAX_BYTES = {MANIFEST: 64 * 1024, "config.json": 64 * 1024, "schema.json": 16 * MiB, "metrics.json": 16 * MiB,
             REPAIR: 16 * MiB, WEIGHTS: 2048 * MiB}
MAX_JSON_DEPTH = 32
MAX_PARAMETERS = 200_000_000
MAX_POSITION_NUMBERS = 50_000_000  # the two sinusoid tables, 2 · max(seq_len, label_len + pred_len) · d_model
MAX_COLUMNS = 100_000

_SIZES = (1, 100_000)
INT_RANGES = {"enc_in": _SIZES, "dec_in": _SIZES, "c_out": _SIZES, "seq_len": _SIZES, "label_len": (0, 100_000),
              "pred_len": _SIZES, "n_marks": (1, 64), "d_model": (1, 8192), "n_heads": (1, 256),
              "d_layers": (1, 16), "d_ff": (1, 65536), "factor": (1, 1000), "sample_block": (1, 1_000_000),
              "distil_padding": (1, 2)}
CHOICES = {"activation": ("gelu", "relu"), "encoder_attention": ATTENTION_KINDS,
           "decoder_attention": ATTENTION_KINDS, "cross_attention": ATTENTION_KINDS, "mean_divisor": ("U", "L_K"),
           "decoder_lazy": ("cummean", "cumsum"), "mix_sites": ("decoder_self", "all"),
           "active_counts": ("paper", "hf"), "embedding": ("conv", "lags"), "instance_scaling": ("none", "mean", "std"),
           "placeholders": ("zero", "last")}
BOOLS = ("distil", "causal_sampling", "mix", "mark_bias", "value_bias", "single_head_union", "final_norm", "revin")
MAX_LAGS, MAX_LAG = 256, 100_000  # embedding="lags": how many lags, and how far back
MAX_REPLICAS, MAX_REPLICA_LAYERS = 8, 16
REQUIRED_FIELDS = ("enc_in", "dec_in", "c_out")  # the others have defaults (older checkpoints may lack new ones)


# --------------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------------
def no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        duplicate = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"the key {duplicate[:40]!r} appears twice")
    return dict(pairs)


def check_size(name: str, size: int) -> None:
    limit = MAX_BYTES.get(name)
    if limit is not None and size > limit:
        raise CheckpointError(f"{name} is {size:,} bytes, more than the {limit:,} a checkpoint's {name} may have",
                              field=name)


def parse_json(name: str, data: bytes) -> dict:
    """The JSON object of file `name`: size-capped, at most MAX_JSON_DEPTH deep, no duplicate keys."""
    check_size(name, len(data))
    try:
        value = json.loads(data, object_pairs_hook=no_duplicate_keys)
    except RecursionError:
        raise CheckpointError(f"{name} is nested too deeply to be a checkpoint file", field=name) from None
    except (ValueError, UnicodeDecodeError) as err:
        raise CheckpointError(f"{name} is not readable JSON: {err}", field=name) from None
    if not isinstance(value, dict):
        raise CheckpointError(f"{name} must hold a JSON object, not a {type(value).__name__}", field=name)
    if _depth(value) > MAX_JSON_DEPTH:
        raise CheckpointError(f"{name} is nested more than {MAX_JSON_DEPTH} levels deep", field=name)
    return value


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_manifest(files: Mapping[str, bytes]) -> dict[str, str]:
    """The manifest's {file: SHA-256}, after checking it lists exactly the files given (the four required ones,
    and repair.json when present) and that each file's bytes match."""
    missing = [f for f in (*REQUIRED, MANIFEST) if f not in files]
    if missing:
        raise CheckpointError(f"checkpoint is missing {', '.join(missing)}", field=missing[0])
    manifest = parse_json(MANIFEST, files[MANIFEST])
    if manifest.get("format") != FORMAT:
        raise CheckpointError(f"manifest.json: unknown format {str(manifest.get('format'))[:40]!r} "
                              f"(expected {FORMAT!r})", field=MANIFEST)
    recorded = manifest.get("sha256")
    unknown = sorted(set(manifest) - {"format", "sha256"})
    if not isinstance(recorded, dict) or unknown:
        raise CheckpointError("manifest.json must hold 'format' and a 'sha256' object of file → hash"
                              + (f", not {', '.join(k[:40] for k in unknown[:3])}" if unknown else ""), field=MANIFEST)
    expected = [*REQUIRED, *([REPAIR] if REPAIR in files else [])]
    extra = sorted(set(recorded) - set(expected))
    if extra:
        what = "a file that is missing" if extra[0] == REPAIR else "an unknown file"
        raise CheckpointError(f"manifest.json lists {what}: {extra[0][:60]!r}", field=extra[0][:60])
    for name in expected:
        if name not in recorded:
            raise CheckpointError(f"{name} is not listed in manifest.json, so it cannot be verified", field=name)
        if not isinstance(recorded[name], str) or sha256(files[name]) != recorded[name]:
            raise CheckpointError(f"{name} does not match its SHA-256 in manifest.json: the file was changed or "
                                  "damaged", field=name)
    return dict(recorded)


# --------------------------------------------------------------------------------------------
# config.json
# --------------------------------------------------------------------------------------------
def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: object) -> str:
    return repr(value)[:40]


def check_config_fields(data: Mapping[str, object], where: str = "config.json") -> None:
    """Each field's type and range (CheckpointError naming the field); unknown and missing fields refused."""
    known = {f.name for f in fields(InformerConfig)}
    unknown = sorted(k for k in data if k not in known)
    if unknown:
        raise CheckpointError(f"{where}: unknown config fields: {', '.join(k[:40] for k in unknown[:5])}",
                              field=unknown[0][:60])
    for name in REQUIRED_FIELDS:
        if name not in data:
            raise CheckpointError(f"{where}: the field {name!r} is missing", field=name)

    def refuse(name: str, what: str) -> None:
        raise CheckpointError(f"{where}: {name} must be {what}, got {_shown(data[name])}", field=name)

    for name, value in data.items():
        if name in INT_RANGES:
            low, high = INT_RANGES[name]
            if not _is_int(value) or not low <= value <= high:
                refuse(name, f"a whole number in {low}..{high:,}")
        elif name in CHOICES:
            if not isinstance(value, str) or value not in CHOICES[name]:
                refuse(name, "one of " + ", ".join(map(repr, CHOICES[name])))
        elif name in BOOLS:
            if not isinstance(value, bool):
                refuse(name, "true or false")
        elif name == "dropout":
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= value < 1.0:
                refuse(name, "a number in [0, 1)")
        elif name == "e_layers":
            if (not isinstance(value, (list, tuple)) or not 1 <= len(value) <= MAX_REPLICAS
                    or not all(_is_int(n) and 1 <= n <= MAX_REPLICA_LAYERS for n in value)):
                refuse(name, f"a list of 1..{MAX_REPLICAS} layer counts, each in 1..{MAX_REPLICA_LAYERS}")
        elif name == "attention_options":  # the kinds' parameters are checked by the config itself (typed, capped)
            if (not isinstance(value, dict) or not set(value) <= set(SITE_TYPES)
                    or not all(isinstance(v, dict) and len(v) <= 16 for v in value.values())):
                refuse(name, f"a mapping of {', '.join(SITE_TYPES)} to attention parameters")
        elif name == "lags":
            if (not isinstance(value, (list, tuple)) or len(value) > MAX_LAGS
                    or not all(_is_int(n) and 0 <= n <= MAX_LAG for n in value)):
                refuse(name, f"a list of at most {MAX_LAGS} lags, each in 0..{MAX_LAG:,}")
        elif name == "level_free":  # the channels' range is the config's own check (input-only, increasing)
            if (not isinstance(value, (list, tuple)) or len(value) > _SIZES[1]
                    or not all(_is_int(n) and 0 <= n < _SIZES[1] for n in value)):
                refuse(name, f"a list of input channels, each in 0..{_SIZES[1] - 1:,}")
        else:  # a field of InformerConfig without a rule: refuse rather than trust it (tests keep rules complete)
            raise CheckpointError(f"{where}: no check is known for the field {name!r}", field=name)
    d_model, n_heads = data.get("d_model", 512), data.get("n_heads", 8)
    if d_model % n_heads:
        raise CheckpointError(f"{where}: n_heads={n_heads} does not divide d_model={d_model}", field="n_heads")
    seq_len, label_len = data.get("seq_len", 96), data.get("label_len", 48)
    if label_len > seq_len:
        raise CheckpointError(f"{where}: label_len={label_len} is larger than seq_len={seq_len}", field="label_len")


def state_shapes(config: InformerConfig) -> dict[str, tuple[int, ...]]:
    """The shape of every entry of `Informer(config).state_dict()`, by name, computed without building it.

    (tests/analysis/checkpoints/test_checks.py compares it with the real model on several configs.)
    """
    c, d = config, config.d_model
    shapes: dict[str, tuple[int, ...]] = {}

    def linear(prefix: str, n_in: int, n_out: int, bias: bool = True) -> None:
        shapes[f"{prefix}.weight"] = (n_out, n_in)
        if bias:
            shapes[f"{prefix}.bias"] = (n_out,)

    def conv(prefix: str, n_in: int, n_out: int, k: int) -> None:
        shapes[f"{prefix}.weight"] = (n_out, n_in, k)
        shapes[f"{prefix}.bias"] = (n_out,)

    def norm(prefix: str) -> None:
        shapes[f"{prefix}.weight"] = shapes[f"{prefix}.bias"] = (d,)

    def attention(prefix: str, site_type: str) -> None:
        for p in ("query", "key", "value", "out"):
            linear(f"{prefix}.{p}_projection", d, d)
        kind = getattr(c, SITE_TYPES[site_type])
        if kind == "adaptive":  # each head's learned span
            shapes[f"{prefix}.span"] = (c.n_heads,)
        elif kind == "compressed" and options_for(kind, c.site_options(site_type))["compress"] == "conv":
            conv(f"{prefix}.compress_conv", c.head_dim, c.head_dim,
                 options_for(kind, c.site_options(site_type))["stride"])

    def ffn(prefix: str) -> None:
        conv(f"{prefix}.ffn.conv1", d, c.d_ff, 1)
        conv(f"{prefix}.ffn.conv2", c.d_ff, d, 1)

    for side, c_in in (("enc", c.enc_in), ("dec", c.dec_in)):
        if c.embedding == "lags":  # model/lags.py: a Linear over lags, scale and time features; a LayerNorm
            linear(f"{side}_embedding.value_projection", c_in * len(c.lags) + 2 * c_in + c.n_marks, d, bias=False)
            norm(f"{side}_embedding.norm")
            continue
        conv(f"{side}_embedding.value_embedding", c_in, d, 3)
        if not c.value_bias:
            del shapes[f"{side}_embedding.value_embedding.bias"]
        linear(f"{side}_embedding.mark_embedding", c.n_marks, d, bias=c.mark_bias)
    for r, n_layers in enumerate(c.e_layers):
        replica = f"encoder.replicas.{r}"
        for l in range(n_layers):
            attention(f"{replica}.layers.{l}.attention", "encoder")
            ffn(f"{replica}.layers.{l}")
            norm(f"{replica}.layers.{l}.norm1")
            norm(f"{replica}.layers.{l}.norm2")
        for l in range(n_layers - 1 if c.distil else 0):
            conv(f"{replica}.distils.{l}.conv", d, d, 3)
            norm(f"{replica}.distils.{l}.norm")
            for stat in ("running_mean", "running_var"):
                shapes[f"{replica}.distils.{l}.norm.{stat}"] = (d,)
            shapes[f"{replica}.distils.{l}.norm.num_batches_tracked"] = ()
        if c.final_norm:
            norm(f"{replica}.norm")
    for l in range(c.d_layers):
        attention(f"decoder.layers.{l}.self_attention", "decoder_self")
        attention(f"decoder.layers.{l}.cross_attention", "cross")
        ffn(f"decoder.layers.{l}")
        for k in (1, 2, 3):
            norm(f"decoder.layers.{l}.norm{k}")
    if c.final_norm:
        norm("decoder.norm")
    linear("projection", d, c.c_out)
    if c.revin:  # model/revin.py: γ and β, one a channel
        shapes["revin.weight"] = shapes["revin.bias"] = (c.enc_in,)
    return shapes


BUFFERS = ("running_mean", "running_var", "num_batches_tracked")


def is_buffer(name: str) -> bool:
    return name.rsplit(".", 1)[-1] in BUFFERS


def count_parameters(config: InformerConfig) -> int:
    """sum(p.numel() for p in Informer(config).parameters()), analytically (no tensor is made)."""
    return sum(math.prod(shape) for name, shape in state_shapes(config).items() if not is_buffer(name))


def check_model_size(config: InformerConfig, where: str = "config.json") -> None:
    """Refuse a config whose model would not fit the caps: parameters and the sinusoid position tables."""
    n = count_parameters(config)
    if n > MAX_PARAMETERS:
        raise CheckpointError(f"{where} describes a model of {n:,} parameters, more than the {MAX_PARAMETERS:,} "
                              "a checkpoint may have", field="d_model")
    positions = 2 * max(config.seq_len, config.dec_len) * config.d_model
    if config.embedding == "lags":  # two tables of up to enc_len + pred_len positions (model/lags.py)
        positions = 2 * (config.enc_len + config.pred_len) * config.d_model
    if positions > MAX_POSITION_NUMBERS:
        raise CheckpointError(f"{where}: seq_len={config.seq_len}, label_len + pred_len={config.dec_len} and "
                              f"d_model={config.d_model} need position tables of {positions:,} numbers, more than "
                              f"{MAX_POSITION_NUMBERS:,}", field="seq_len")


def config_from_dict(data: Mapping[str, object], where: str = "config.json") -> InformerConfig:
    """A checked InformerConfig from config.json's object (types, ranges, then the model's size)."""
    check_config_fields(data, where)
    try:
        config = InformerConfig(**data)
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"{where} is not a valid model config: {err}") from None
    check_model_size(config, where)
    return config


def check_config(config: InformerConfig, where: str = "the model's config") -> None:
    """The same checks on a built InformerConfig (an imported or a trained model's)."""
    check_config_fields(asdict(config), where)
    check_model_size(config, where)


# --------------------------------------------------------------------------------------------
# schema.json
# --------------------------------------------------------------------------------------------
SCHEMA_FIELDS = ("spec", "scaler", "target_columns", "datetime_column", "freq")


def check_schema_dict(data: Mapping[str, object]) -> None:
    """Types, lengths and finiteness of schema.json before DataSchema.from_dict builds anything from it."""
    def refuse(message: str, field: str) -> None:
        raise CheckpointError(f"schema.json: {message}", field=field)

    unknown = sorted(k for k in data if k not in SCHEMA_FIELDS)
    if unknown:
        refuse(f"unknown fields: {', '.join(k[:40] for k in unknown[:5])}", unknown[0][:60])
    for name in SCHEMA_FIELDS:
        if name not in data:
            refuse(f"the field {name!r} is missing", name)
    if not isinstance(data["spec"], dict):
        refuse("spec must be an object", "spec")
    for name in ("datetime_column", "freq"):
        if not isinstance(data[name], str) or len(data[name]) > 200:
            refuse(f"{name} must be a short string, got {_shown(data[name])}", name)
    scaler = data["scaler"]
    if not isinstance(scaler, dict) or sorted(scaler) != ["columns", "mean", "std"]:
        refuse("scaler must be an object of columns, mean and std", "scaler")
    columns = scaler["columns"]
    if (not isinstance(columns, list) or not 1 <= len(columns) <= MAX_COLUMNS
            or not all(isinstance(c, str) and c for c in columns)):
        refuse(f"scaler.columns must be a list of 1..{MAX_COLUMNS:,} column names", "scaler.columns")
    if len(set(columns)) != len(columns):
        refuse("scaler.columns names a column twice", "scaler.columns")
    for name in ("mean", "std"):
        values = scaler[name]
        if not isinstance(values, list) or len(values) != len(columns):
            refuse(f"scaler.{name} must be a list of {len(columns)} numbers, one per column", f"scaler.{name}")
        for column, value in zip(columns, values):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                refuse(f"scaler.{name} of column {column[:60]!r} is {_shown(value)}, not a finite number",
                       f"scaler.{name}")
            if name == "std" and value <= 0:
                refuse(f"scaler.std of column {column[:60]!r} is {value}; a standard deviation must be > 0",
                       "scaler.std")
    targets = data["target_columns"]
    if not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets):
        refuse("target_columns must be a list of column names", "target_columns")


def check_schema_matches(schema, config: InformerConfig) -> None:
    """The data schema and the model agree: window lengths, input and output columns."""
    spec = schema.spec
    for name in ("seq_len", "label_len", "pred_len"):
        if getattr(spec, name) != getattr(config, name):
            raise CheckpointError(f"schema.json says {name}={getattr(spec, name)}, config.json "
                                  f"{name}={getattr(config, name)}", field=name)
    for name in ("enc_in", "dec_in"):
        if getattr(config, name) != len(schema.columns):
            raise CheckpointError(f"config.json says {name}={getattr(config, name)}, schema.json has "
                                  f"{len(schema.columns)} input columns", field=name)
    if config.c_out != len(schema.target_columns):
        raise CheckpointError(f"config.json says c_out={config.c_out}, schema.json has "
                              f"{len(schema.target_columns)} target columns", field="c_out")


__all__ = ["FORMAT", "KNOWN", "MANIFEST", "MAX_BYTES", "MAX_PARAMETERS",
           "REPAIR", "REQUIRED", "WEIGHTS", "check_config", "check_manifest", "check_model_size",
           "check_schema_dict", "check_schema_matches", "check_size", "config_from_dict", "count_parameters",
           "is_buffer", "parse_json", "sha256", "state_shapes"]
