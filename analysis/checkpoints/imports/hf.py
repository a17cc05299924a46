"""Import Hugging Face transformers' `InformerForPrediction` (a `save_pretrained` folder: config.json +
model.safetensors) into our Informer.

HF's Informer reads its inputs differently; each difference is a named InformerConfig option, set here:

    inputs        embedding="lags", lags=lags_sequence: each step is a Linear (no bias) over its lagged values, the
                  window's scale features (log(1 + |loc|), log scale) and its time features, plus HF's sinusoid
                  (sines, then cosines; the decoder's positions continue after the encoder's), then a LayerNorm
                  (`layernorm_embedding`). Our window holds max(lags) steps of history: seq_len = context_length +
                  max(lags_sequence); HF's decoder reads the prediction_length steps only, so x_dec's label_len
                  known rows (1 by default; our windows need at least one) are not read.
    scaling       instance_scaling=scaling ("mean", "std" or "none"): HF's scaler over the encoder's positions of each
                  window; the forecast is mapped back as HF's distribution is (AffineTransformed: loc + scale·y).
    norms         final_norm=False: no LayerNorm closes the encoder or the decoder.
    ProbSparse    active_counts="hf" (u = c·⌈ln(1 + L_Q)⌉, U = c·L_Q·⌈ln(1 + L_K)⌉, capped), sample_block ≥ every
                  L_Q (one key sample, `torch.randint(0, L_K, (U,))`, shared by all queries), mean_divisor="L_K",
                  decoder_lazy="cumsum", causal_sampling=False, mix=False; cross-attention full, as HF's.
    FFN           fc1 / fc2 Linear weights [out, in] become our 1×1 convolutions [out, in, 1] (the same map).

Point output: our forecast is the mean of HF's output distribution for the same inputs and the same key samples
(HF draws them from torch's global RNG; a Generator seeded alike gives ours): with `past_values` = x_enc,
`past_time_features` = mark_enc, `past_observed_mask` all ones, `future_values` = x_dec[:, label_len:] and
`future_time_features` = mark_dec[:, label_len:], HF's `InformerForPrediction(...).params` through
`output_distribution(params, loc, scale).mean`. student_t and normal heads are supported: their mean is
loc + scale·(the `loc` parameter's Linear), which becomes our `projection`; the df / scale parameters' Linears are
dropped (listed in `dropped`).
Not reproduced: `generate` (autoregressive sampling, num_parallel_samples): our decoder reads x_dec in one pass,
so where a lag reaches into the forecast steps it sees x_dec's placeholders (zeros), not HF's samples. Missing
values (past_observed_mask 0) do not occur in our windows. HF's time features are whatever its user built (often
gluonts' features plus an "age"); through `cli.py import` they are our timeF features, so the import asks only that
num_time_features equal the CSV's.

Refused, naming the config.json field: another model_type; distribution_output negative_binomial; static
categorical or real features and dynamic real features (num_static_categorical_features,
num_static_real_features, num_dynamic_real_features ≠ 0); num_time_features 0; different encoder and decoder
heads or FFN widths; scaling options we do not reproduce (scaling_dim, keepdim, minimum_scale, default_scale);
an activation other than gelu or relu; sharded or pickled (pytorch_model.bin) weights.
"""
from __future__ import annotations

import logging
import re
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_safetensors_bytes

from informer_lab.model import Informer, InformerConfig
from informer_lab.model.lags import hf_sinusoid_table

from informer_lab.analysis.checkpoints.checks import MAX_BYTES, MAX_LAG, MAX_LAGS, WEIGHTS, check_config, parse_json
from informer_lab.analysis.errors import CheckpointError
from informer_lab.analysis.checkpoints.weights import check_header, check_values
from informer_lab.analysis.checkpoints.imports.pth import load_into

log = logging.getLogger(__name__)

CONFIG, SAFETENSORS = "config.json", "model.safetensors"
HEADS = {"student_t": ("df", "loc", "scale"), "normal": ("loc", "scale")}  # ParameterProjection's order
UNSUPPORTED_SCALER_FIELDS = ("scaling_dim", "keepdim", "minimum_scale", "default_scale")
_SIZES = {"prediction_length": (1, 100_000), "context_length": (1, 100_000), "input_size": (1, 100_000),
          "d_model": (1, 8192), "encoder_layers": (1, 16), "decoder_layers": (1, 16),
          "encoder_attention_heads": (1, 256), "decoder_attention_heads": (1, 256), "encoder_ffn_dim": (1, 65536),
          "decoder_ffn_dim": (1, 65536), "num_time_features": (1, 64), "sampling_factor": (1, 1000)}
_ZERO = ("num_static_categorical_features", "num_static_real_features", "num_dynamic_real_features")
_DEFAULTS = {"context_length": None, "input_size": 1, "lags_sequence": None, "scaling": "mean", "d_model": 64,
             "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 2, "decoder_attention_heads": 2,
             "encoder_ffn_dim": 32, "decoder_ffn_dim": 32, "num_time_features": 0, "sampling_factor": 5,
             "attention_type": "prob", "distil": True, "activation_function": "gelu", "dropout": 0.05,
             "distribution_output": "student_t"}


def _refuse(field: str, message: str) -> CheckpointError:
    return CheckpointError(f"{CONFIG}: {field} {message}", field=field)


def _int(data: dict, name: str) -> int:
    value = data.get(name, _DEFAULTS.get(name, 0))
    low, high = _SIZES[name]
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise _refuse(name, f"must be a whole number in {low}..{high:,}, got {repr(value)[:40]}")
    return value


def _choice(data: dict, name: str, allowed: tuple, why: str = "") -> object:
    value = data.get(name, _DEFAULTS[name])
    if value not in allowed or type(value) not in {type(a) for a in allowed}:
        raise _refuse(name, f"{repr(value)[:40]} is not supported (one of {', '.join(map(repr, allowed))}){why}")
    return value


def hf_settings(data: dict) -> dict:
    """The InformerConfig fields of HF's config.json object, each checked (type, range, support) before use."""
    if data.get("model_type") != "informer":
        raise _refuse("model_type", f"is {repr(data.get('model_type'))[:40]}, not 'informer'")
    architectures = data.get("architectures") or ["InformerForPrediction"]
    if "InformerForPrediction" not in architectures:
        raise _refuse("architectures", f"{repr(architectures)[:60]}: only InformerForPrediction has an output head")
    for name in _ZERO:
        if data.get(name, 0) != 0:
            raise _refuse(name, f"is {repr(data[name])[:20]}; static and dynamic covariates are not supported (our "
                                "windows carry the series and its time features only)")
    for name in UNSUPPORTED_SCALER_FIELDS:
        if name in data:
            raise _refuse(name, "changes HF's scaler and is not reproduced")
    sizes = {name: _int(data, name) for name in _SIZES if name != "context_length"}
    context = data.get("context_length") or sizes["prediction_length"]
    context = _int({"context_length": context}, "context_length")
    for a, b in (("encoder_attention_heads", "decoder_attention_heads"), ("encoder_ffn_dim", "decoder_ffn_dim")):
        if sizes[a] != sizes[b]:
            raise _refuse(b, f"{sizes[b]} differs from {a} {sizes[a]}; our layers share one value")
    lags = data.get("lags_sequence") or [1, 2, 3, 4, 5, 6, 7]
    if (not isinstance(lags, list) or not 1 <= len(lags) <= MAX_LAGS
            or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_LAG for v in lags)):
        raise _refuse("lags_sequence", f"must be a list of 1..{MAX_LAGS} lags in 0..{MAX_LAG:,}, "
                                       f"got {repr(lags)[:40]}")
    scaling = data.get("scaling", "mean")
    if scaling not in ("mean", "std", True, False, None):
        raise _refuse("scaling", f"{repr(scaling)[:40]} is not supported ('mean', 'std', true, false or null)")
    distribution = _choice(data, "distribution_output", tuple(HEADS),
                           " (negative_binomial's mean needs two parameters)")
    dropout = data.get("dropout", 0.05)
    if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) or not 0 <= dropout < 1:
        raise _refuse("dropout", f"must be a number in [0, 1), got {repr(dropout)[:40]}")
    distil = _choice(data, "distil", (True, False))
    kind = _choice(data, "attention_type", ("prob", "full"))
    seq_len = context + max(lags)
    return dict(enc_in=sizes["input_size"], dec_in=sizes["input_size"], c_out=sizes["input_size"], seq_len=seq_len,
                label_len=1, pred_len=sizes["prediction_length"], n_marks=sizes["num_time_features"],
                d_model=sizes["d_model"], n_heads=sizes["encoder_attention_heads"],
                e_layers=(sizes["encoder_layers"],), d_layers=sizes["decoder_layers"], d_ff=sizes["encoder_ffn_dim"],
                factor=sizes["sampling_factor"], dropout=float(dropout),
                activation=_choice(data, "activation_function", ("gelu", "relu")), distil=distil,
                encoder_attention=kind, decoder_attention=kind, cross_attention="full", mean_divisor="L_K",
                decoder_lazy="cumsum", causal_sampling=False, mix=False,
                sample_block=max(seq_len, sizes["prediction_length"]), active_counts="hf", embedding="lags",
                lags=tuple(lags), final_norm=False,
                instance_scaling={True: "mean", False: "none", None: "none"}.get(scaling, scaling),
                distribution=distribution)


def infer_hf_config(data: dict, **overrides) -> tuple[InformerConfig, str]:
    """(our InformerConfig, HF's distribution_output) of HF's config.json object; the model's size is checked
    against our caps (`check_config`) before anything is built. `overrides` replace fields afterwards."""
    settings = hf_settings(data)
    distribution = settings.pop("distribution")
    settings.update(overrides)
    try:
        config = InformerConfig(**settings)
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"cannot build a config for this HF model: {err}") from err
    check_config(config, "the HF config.json")
    feature_size = data.get("feature_size")
    expected = config.enc_in * (len(config.lags) + 2) + config.n_marks
    if feature_size is not None and feature_size != expected:
        raise _refuse("feature_size", f"is {repr(feature_size)[:20]}, its other fields give {expected}")
    return config, distribution


# --------------------------------------------------------------------------------------------
# Names: ours → HF's
# --------------------------------------------------------------------------------------------
_LAYER_PARTS = {
    "encoder": {"attention": "self_attn", "norm1": "self_attn_layer_norm", "norm2": "final_layer_norm",
                "ffn.conv1": "fc1", "ffn.conv2": "fc2"},
    "decoder": {"self_attention": "self_attn", "cross_attention": "encoder_attn", "norm1": "self_attn_layer_norm",
                "norm2": "encoder_attn_layer_norm", "norm3": "final_layer_norm", "ffn.conv1": "fc1",
                "ffn.conv2": "fc2"},
}
_PROJECTIONS = {"query_projection": "q_proj", "key_projection": "k_proj", "value_projection": "v_proj",
                "out_projection": "out_proj"}


def hf_name(ours: str, distribution: str) -> str:
    """Our parameter name → HF's (InformerForPrediction's state_dict)."""
    if ours.startswith("projection."):  # the mean's parameter: HF's `loc` Linear of its ParameterProjection
        return f"parameter_projection.proj.{HEADS[distribution].index('loc')}.{ours.split('.', 1)[1]}"
    m = re.match(r"^(enc|dec)_embedding\.(value_projection|norm)\.(\w+)$", ours)
    if m:
        part = "value_embedding.value_projection" if m[2] == "value_projection" else "layernorm_embedding"
        return f"model.{m[1]}oder.{part}.{m[3]}"
    m = re.match(r"^encoder\.replicas\.0\.distils\.(\d+)\.(conv|norm)\.(\w+)$", ours)
    if m:
        return f"model.encoder.conv_layers.{m[1]}.{'downConv' if m[2] == 'conv' else 'norm'}.{m[3]}"
    m = re.match(r"^(encoder\.replicas\.0|decoder)\.layers\.(\d+)\.(.+)\.(weight|bias)$", ours)
    if m:
        side, part = ("encoder" if m[1] != "decoder" else "decoder"), m[3]
        head, _, inner = part.partition(".")
        if head == "ffn":
            head, inner = part, ""
        if head in _LAYER_PARTS[side] and (not inner or inner in _PROJECTIONS):
            part = _LAYER_PARTS[side][head] + ("." + _PROJECTIONS[inner] if inner else "")
            return f"model.{side}.layers.{m[2]}.{part}.{m[4]}"
    raise CheckpointError(f"no HF name for our parameter {ours}")  # a model change this map does not know


def expected_hf_shapes(config: InformerConfig, distribution: str) -> tuple[dict[str, str], dict[str, tuple]]:
    """({HF name: our name} for the weights we load, {HF name: shape} for every tensor the file must hold)."""
    with torch.device("meta"):
        ours = Informer(config).state_dict()
    names, shapes = {}, {}
    for name, tensor in ours.items():
        hf = hf_name(name, distribution)
        names[hf] = name
        shape = tuple(tensor.shape)
        shapes[hf] = shape[:2] if re.search(r"\.fc[12]\.weight$", hf) else shape
    positions = (config.enc_len + config.pred_len, config.d_model)
    for side in ("encoder", "decoder"):
        shapes[f"model.{side}.embed_positions.weight"] = positions
    for i, parameter in enumerate(HEADS[distribution]):
        if parameter != "loc":
            shapes[f"parameter_projection.proj.{i}.weight"] = (config.c_out, config.d_model)
            shapes[f"parameter_projection.proj.{i}.bias"] = (config.c_out,)
    return names, shapes


# --------------------------------------------------------------------------------------------
# The folder
# --------------------------------------------------------------------------------------------
def _read(folder: Path, name: str, limit: int) -> bytes:
    path = folder / name
    if not path.is_file():
        others = sorted(p.name for p in folder.iterdir())[:6] if folder.is_dir() else []
        hint = " (its weights are a pickle: save_pretrained with safe_serialization)" if name == SAFETENSORS and \
            "pytorch_model.bin" in others else (" (sharded weights are not supported)" if any(
                o.startswith("model.safetensors.index") for o in others) else "")
        raise CheckpointError(f"HF folder {str(folder)!r} has no {name}{hint}", field=name)
    size = path.stat().st_size
    if size > limit:
        raise CheckpointError(f"{name} is {size:,} bytes, more than the {limit:,} allowed", field=name)
    return path.read_bytes()


def load_hf_folder(folder: str | Path, **overrides) -> tuple[Informer, InformerConfig, dict]:
    """Read a `save_pretrained` folder of InformerForPrediction and return our Informer (eval mode, CPU), its config
    and what the import left out ({"distribution_output": ..., "dropped": [HF tensor names]}).

    Order: config.json (size cap, JSON without duplicate keys, every field checked, the model counted against our
    caps), then model.safetensors' header (names, float dtypes, shapes and byte ranges against what the config
    implies) before any tensor is read; then the weights must be finite and HF's sinusoid tables equal to the
    formula (they are dropped: we recompute them)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"HF folder {str(folder)!r} does not exist or is not a folder", field=str(folder)[:200])
    config, distribution = infer_hf_config(parse_json("config.json", _read(folder, CONFIG, MAX_BYTES["config.json"])),
                                           **overrides)
    names, shapes = expected_hf_shapes(config, distribution)
    data = _read(folder, SAFETENSORS, MAX_BYTES[WEIGHTS])
    try:
        check_header(data, shapes)
    except CheckpointError as err:
        raise CheckpointError(str(err).replace(WEIGHTS, SAFETENSORS), field=err.field) from None
    try:
        state = check_values(load_safetensors_bytes(data))
    except (SafetensorError, ValueError, RuntimeError) as err:  # not expected after check_header
        raise CheckpointError(f"{SAFETENSORS} is not a valid safetensors file: {str(err)[:120]}",
                              field=SAFETENSORS) from None
    table = hf_sinusoid_table(config.enc_len + config.pred_len, config.d_model)
    for side in ("encoder", "decoder"):
        name = f"model.{side}.embed_positions.weight"
        if not torch.allclose(state[name], table, atol=1e-5, rtol=0):
            raise CheckpointError(f"{name} is not HF's sinusoid table (it is frozen in InformerForPrediction)",
                                  field=name)
    ours = {name: state[hf].reshape(_our_shape(hf, state[hf])) for hf, name in names.items()}
    model = load_into(config, ours, str(folder))
    dropped = sorted(set(shapes) - set(names))
    log.info("imported HF InformerForPrediction %s (%s head; dropped %s)", folder, distribution, ", ".join(dropped))
    return model, config, {"distribution_output": distribution, "dropped": dropped}


def _our_shape(hf: str, tensor: torch.Tensor) -> tuple[int, ...]:
    """HF's FFN Linear weight [out, in] is our 1×1 convolution [out, in, 1]; every other tensor keeps its shape."""
    return (*tensor.shape, 1) if re.search(r"\.fc[12]\.weight$", hf) else tuple(tensor.shape)


__all__ = ["HEADS", "expected_hf_shapes", "hf_name", "hf_settings", "infer_hf_config", "load_hf_folder"]
