"""Import checkpoints written by the official Informer2020 code (zhouhaoyi/Informer2020).

The official `checkpoint.pth` is `torch.save(model.state_dict())` of its `Informer` or `InformerStack`.
This module maps those names onto ours, infers the shape of the model from the tensors, and loads the
weights strictly. The imported model runs with the official quirks switched on (DESIGN §2):
`mean_divisor="L_K"`, `decoder_lazy="cumsum"`, `mix=True` and `sample_block=1`, so that with the same
seed our forward draws the same key samples and reproduces the official forward.

    model, config = load_official_checkpoint("checkpoint.pth", seq_len=96, label_len=48, pred_len=24, n_heads=8)

Name map (official → ours; InformerStack has `encoder.encoders.{r}.` where Informer has `encoder.`):

    {enc,dec}_embedding.value_embedding.tokenConv.*     {enc,dec}_embedding.value_embedding.*
    {enc,dec}_embedding.temporal_embedding.embed.*      {enc,dec}_embedding.mark_embedding.*
    {enc,dec}_embedding.position_embedding.pe           (dropped: a fixed sinusoid we recompute)
    encoder.attn_layers.{l}.attention.*                 encoder.replicas.0.layers.{l}.attention.*
    encoder.attn_layers.{l}.conv1|conv2.*               encoder.replicas.0.layers.{l}.ffn.conv1|conv2.*
    encoder.attn_layers.{l}.norm1|norm2.*               encoder.replicas.0.layers.{l}.norm1|norm2.*
    encoder.conv_layers.{l}.downConv.*                  encoder.replicas.0.distils.{l}.conv.*
    encoder.conv_layers.{l}.norm.*                      encoder.replicas.0.distils.{l}.norm.*
    encoder.norm.*                                      encoder.replicas.0.norm.*
    decoder.layers.{l}.conv1|conv2.*                    decoder.layers.{l}.ffn.conv1|conv2.*
    decoder.* (everything else), projection.*           the same names
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import torch

from informer_lab.model import Informer, InformerConfig

from informer_lab.analysis.checkpoints.checks import MAX_REPLICAS
from informer_lab.analysis.errors import CheckpointError
from informer_lab.analysis.checkpoints.imports.pth import MAX_ENTRIES, config_from, few, import_pth, map_state_dict, strip_data_parallel
from informer_lab.analysis.checkpoints.imports.pth import count_layers as _count
from informer_lab.analysis.checkpoints.imports.pth import load_failure as _load_failure  # noqa: F401  (tests reword torch's refusal through it)

# Options that make our forward the official one (see InformerConfig for what each means).
OFFICIAL_QUIRKS = {"mean_divisor": "L_K", "decoder_lazy": "cumsum", "mix": True, "sample_block": 1,
                   "causal_sampling": False}

_IGNORED = re.compile(r"^(enc|dec)_embedding\.position_embedding\.pe$")
_NON_TIMEF = re.compile(r"^(enc|dec)_embedding\.temporal_embedding\.(?!embed\.(weight|bias)$)")
_STACK = re.compile(r"^encoder\.encoders\.(\d{1,9})\.")
_few, _strip_data_parallel = few, strip_data_parallel
__all__ = ["MAX_ENTRIES", "OFFICIAL_QUIRKS", "infer_official_config", "load_official_checkpoint",
           "official_state_dict_to_ours"]


# --------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------
def _is_stack(state_dict: Mapping[str, object]) -> bool:
    """InformerStack names its encoder replicas `encoder.encoders.{r}.`; the plain Informer has one, unnamed."""
    return any(_STACK.match(k) for k in state_dict)


def _official_name(ours: str, stack: bool) -> str:
    """Our parameter name → the official one."""
    name = re.sub(r"^(enc|dec)_embedding\.value_embedding\.", r"\1_embedding.value_embedding.tokenConv.", ours)
    name = re.sub(r"^(enc|dec)_embedding\.mark_embedding\.", r"\1_embedding.temporal_embedding.embed.", name)
    name = re.sub(r"\.ffn\.(conv[12])\.", r".\1.", name)  # FFN convs sit directly in the official layer
    m = re.match(r"^encoder\.replicas\.(\d+)\.(.*)$", name)
    if m:
        replica, rest = int(m.group(1)), m.group(2)
        rest = re.sub(r"^layers\.", "attn_layers.", rest)
        rest = re.sub(r"^distils\.(\d+)\.conv\.", r"conv_layers.\1.downConv.", rest)
        rest = re.sub(r"^distils\.", "conv_layers.", rest)
        if stack:
            name = f"encoder.encoders.{replica}.{rest}"
        elif replica == 0:
            name = f"encoder.{rest}"
        else:  # a plain Informer checkpoint cannot hold a second replica
            raise CheckpointError(f"an Informer (not InformerStack) checkpoint has one encoder, config asks for "
                                  f"replica {replica}")
    return name


def _check_timef(state_dict: Mapping[str, object]) -> None:
    other = sorted(k for k in state_dict if _NON_TIMEF.match(k))
    if other:
        raise CheckpointError(
            "only embed='timeF' official checkpoints are supported (time features through one Linear, "
            f"`temporal_embedding.embed`); this one has embed='fixed' or 'learned' tables: "
            f"{_few(sorted({k.split('.temporal_embedding.')[-1].split('.')[0] for k in other}))}")


def _shape(value: object) -> list[int]:
    return list(value.shape)  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------
def official_state_dict_to_ours(state_dict: Mapping[str, torch.Tensor],
                                config: InformerConfig) -> dict[str, torch.Tensor]:
    """Rename an official Informer/InformerStack state_dict to ours, for `Informer(config)`.

    Checks, each a CheckpointError naming the keys: every value is a tensor; embed='timeF';
    no key is missing and none is unknown (the sinusoid buffer `position_embedding.pe` is dropped);
    every tensor has the shape `Informer(config)` expects. A `module.` prefix is stripped.
    """
    state_dict = _strip_data_parallel(state_dict)
    not_tensors = sorted(k for k, v in state_dict.items() if not isinstance(v, torch.Tensor))
    if not_tensors:
        raise CheckpointError(f"checkpoint entries that are not tensors: {_few(not_tensors)}")
    _check_timef(state_dict)
    stack = _is_stack(state_dict)
    return map_state_dict(state_dict, config, lambda ours: _official_name(ours, stack), _IGNORED,
                          f"official {'InformerStack' if stack else 'Informer'}")


def infer_official_config(state_dict: Mapping[str, torch.Tensor], *, seq_len: int, label_len: int, pred_len: int,
                          factor: int = 5, n_heads: int | None = None, **overrides) -> InformerConfig:
    """The InformerConfig of an official checkpoint, read off its tensor shapes.

    Inferred: enc_in, dec_in (tokenConv [d_model, c_in, 3]), c_out (projection [c_out, d_model]), d_model,
    d_ff (FFN conv1 [d_ff, d_model, 1]), e_layers (layers per encoder replica: `(n,)` for Informer, e.g.
    `(3, 2, 1)` for InformerStack), d_layers, distil (distilling convs present), n_marks (time-feature
    Linear [d_model, n_marks]: 4 for freq 'h', 5 for 't') and mark_bias.

    Not inferable, so given here: seq_len, label_len, pred_len (the official run's --seq_len, --label_len,
    --pred_len) and factor (--factor, default 5). **n_heads cannot be read from the shapes** (the projections
    are d_model × d_model whatever the head count): pass the run's --n_heads; None means 8, the official
    default. A wrong head count loads without complaint and gives a different forecast.

    The official quirks are switched on (mean_divisor="L_K", decoder_lazy="cumsum", mix=True,
    sample_block=1). `overrides` replace any field afterwards, e.g. encoder_attention="full" and
    decoder_attention="full" for a run with --attn full, mix=False for one with --mix, activation="relu".
    """
    sd = _strip_data_parallel(state_dict)
    _check_timef(sd)

    def tensor(name: str) -> torch.Tensor:
        value = sd.get(name)
        if not isinstance(value, torch.Tensor):
            raise CheckpointError(f"not an official Informer checkpoint: tensor {name!r} is missing")
        return value

    def dims(name: str, ndim: int) -> list[int]:
        shape = _shape(tensor(name))
        if len(shape) != ndim:
            raise CheckpointError(f"{name}: expected a {ndim}-d tensor, got shape {shape}")
        return shape

    d_model, enc_in, _ = dims("enc_embedding.value_embedding.tokenConv.weight", 3)
    _, dec_in, _ = dims("dec_embedding.value_embedding.tokenConv.weight", 3)
    c_out, _ = dims("projection.weight", 2)
    _, n_marks = dims("enc_embedding.temporal_embedding.embed.weight", 2)
    _, dec_marks = dims("dec_embedding.temporal_embedding.embed.weight", 2)
    if dec_marks != n_marks:
        raise CheckpointError(f"encoder and decoder time features differ: {n_marks} vs {dec_marks} "
                              "(temporal_embedding.embed.weight)")
    biases = {p: f"{p}_embedding.temporal_embedding.embed.bias" in sd for p in ("enc", "dec")}
    if biases["enc"] != biases["dec"]:
        raise CheckpointError("only one of enc_embedding/dec_embedding.temporal_embedding.embed has a bias")

    if _is_stack(sd):
        replicas = sorted({int(_STACK.match(k).group(1)) for k in sd if _STACK.match(k)})
        if len(replicas) > MAX_REPLICAS:
            raise CheckpointError(f"an InformerStack of {len(replicas):,} encoder replicas (at most {MAX_REPLICAS})",
                                  field="e_layers")
        if replicas != list(range(len(replicas))):
            raise CheckpointError(f"InformerStack encoder replicas are not numbered 0..n-1: {replicas}")
        prefixes = [f"encoder.encoders.{r}." for r in replicas]
    else:
        prefixes = ["encoder."]
    e_layers = tuple(_count(sd, rf"^{re.escape(p)}attn_layers\.(\d{{1,9}})\.") for p in prefixes)
    n_convs = [_count(sd, rf"^{re.escape(p)}conv_layers\.(\d{{1,9}})\.") for p in prefixes]
    if 0 in e_layers:
        raise CheckpointError(f"an encoder replica without attention layers (layers per replica: {e_layers})")
    d_layers = _count(sd, r"^decoder\.layers\.(\d{1,9})\.")
    if d_layers == 0:
        raise CheckpointError("not an official Informer checkpoint: no decoder.layers.* tensors")
    d_ff, _, _ = dims(f"{prefixes[0]}attn_layers.0.conv1.weight", 3)
    distil = any(n_convs) or all(n == 1 for n in e_layers)

    settings = dict(enc_in=enc_in, dec_in=dec_in, c_out=c_out, seq_len=seq_len, label_len=label_len,
                    pred_len=pred_len, n_marks=n_marks, d_model=d_model, n_heads=8 if n_heads is None else n_heads,
                    e_layers=e_layers, d_layers=d_layers, d_ff=d_ff, factor=factor, distil=distil,
                    mark_bias=biases["enc"], **OFFICIAL_QUIRKS)
    return config_from(settings, overrides, "official checkpoint")


def load_official_checkpoint(path: str | Path, **settings) -> tuple[Informer, InformerConfig]:
    """Read an official `checkpoint.pth` and return our Informer (eval mode, on the CPU) and its config.

    `settings` go to `infer_official_config` (seq_len, label_len, pred_len required; factor, n_heads and
    config overrides optional). The file may be a bare state_dict or a dict holding one under "model" or
    "state_dict"; a `module.` prefix (nn.DataParallel) is stripped.

    Before torch reads a byte of tensor data, `torch_file.inspect_torch_file` reads the archive's pickle without
    running it: code to run (any class or function beyond tensors) is refused in plain words, storages must fit
    their records, tensors must not be expanded (zero strides), overlap or reach outside their storage; every
    weight must be floating point. Then `torch.load(weights_only=True, mmap=True)` maps the file, every weight
    must be finite, and the config read off the shapes must be inside the caps (`checkpoint_checks`) before the
    model is built. Anything else is a CheckpointError naming the file, key or field: a missing or unreadable
    file, missing or unknown keys, shapes that do not match.
    """
    return import_pth(path, "official checkpoint", infer_official_config, official_state_dict_to_ours, **settings)
