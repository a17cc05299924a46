"""Import Time-Series-Library's Informer (thuml/Time-Series-Library, `models/Informer.py`).

TSL saves `torch.save(model.state_dict())` to `checkpoints/<setting>/checkpoint.pth`. Its Informer is Informer2020's
code with changes; each difference is a named InformerConfig option, switched on here (`TSL_QUIRKS`):

    Informer2020 quirks kept     mean_divisor="L_K" (÷L_K, issue #582), decoder_lazy="cumsum" (issue #633),
                                 sample_block=1 (an independent sample per query, `torch.randint(L_K, (L_Q, U))`
                                 per ProbAttention call in forward order), causal_sampling=False
    ProbSparse cross-attention   cross_attention="prob": its decoder → encoder attention is a ProbAttention too (the
                                 official code's is full); its lazy rows are mean(V) of the encoder output
    mixing at every site         mix=True, mix_sites="all": TSL's inner attentions return [B, H, L, D] (ProbAttention)
                                 and its AttentionLayer views every output as [B, L, H·D] — encoder, decoder self and
                                 cross alike (the official code mixes only the decoder self-attention)
    distilling conv padding 2    distil_padding=2: ConvLayer's Conv1d(k=3, circular) pads 2, so each distilling step
                                 gives ⌊(L + 1)/2⌋ + 1 (96 → 49 → 26); the encoder keeps those extra steps
    no value-embedding bias      value_bias=False (TokenEmbedding's Conv1d), mark_bias=False (timeF Linear)
    one head squeezed            single_head_union=True: with n_heads = 1 its `.squeeze()` of the sampled scores
                                 makes every window compute full rows for the union of its batch's top-u queries
    projection inside decoder    `decoder.projection.*` (ours: `projection.*`); the forecast is its last pred_len
                                 rows, the decoder input is label_len known steps then pred_len zeros, as ours

Supported: task_name long_term_forecast (the default) with embed='timeF' (its default). Refused, naming the key:
imputation / anomaly_detection / classification checkpoints (a top-level `projection`), embed='fixed' or 'learned'
(temporal embedding tables). Not in the file and so given here, as TSL's run.py flags: seq_len, label_len, pred_len,
n_heads (default 8), factor (run.py default 1; its Informer scripts pass 3), activation (default gelu).
TSL's short_term_forecast normalises each encoder window by its own mean and std and maps the output back; the
weights cannot tell it from long_term_forecast, and it is not reproduced here. At length 1 (seq_len or
label_len + pred_len) TSL's ProbAttention selects no query (u = c·⌈ln 1⌉ = 0): refused.

Name map (TSL → ours): Informer2020's (`analysis.checkpoints.official`), plus `decoder.projection.*` → `projection.*`;
`{enc,dec}_embedding.position_embedding.pe` (a fixed sinusoid) is dropped.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import torch

from informer_lab.model import Informer, InformerConfig

from informer_lab.analysis.errors import CheckpointError
from informer_lab.analysis.checkpoints.official import _official_name as informer2020_name
from informer_lab.analysis.checkpoints.imports.pth import config_from, count_layers, few, import_pth, map_state_dict, strip_data_parallel


TSL_QUIRKS = {"mean_divisor": "L_K", "decoder_lazy": "cumsum", "sample_block": 1, "causal_sampling": False,
              "cross_attention": "prob", "mix": True, "mix_sites": "all", "distil_padding": 2,
              "single_head_union": True}

_IGNORED = re.compile(r"^(enc|dec)_embedding\.position_embedding\.pe$")
_NON_TIMEF = re.compile(r"^(enc|dec)_embedding\.temporal_embedding\.(?!embed\.(weight|bias)$)")


def tsl_name(ours: str) -> str:
    """Our parameter name → TSL's."""
    name = informer2020_name(ours, False)
    return "decoder." + name if name.startswith("projection.") else name


def _check_task(state_dict: Mapping[str, object]) -> None:
    stray = sorted(k for k in state_dict if k.startswith("projection."))
    if stray and "decoder.projection.weight" not in state_dict:
        raise CheckpointError(f"not a TSL Informer: {stray[0]} lies outside the decoder, as in Informer2020's "
                              "checkpoints (import those with --official)", field=stray[0])
    if stray:
        raise CheckpointError("a TSL Informer for imputation, anomaly_detection or classification (a top-level "
                              f"{stray[0]}); only the forecasting tasks decode a forecast", field=stray[0])
    other = sorted(k for k in state_dict if _NON_TIMEF.match(k))
    if other:
        raise CheckpointError("only embed='timeF' TSL checkpoints are supported (time features through one Linear, "
                              f"`temporal_embedding.embed`); this one has embed='fixed' or 'learned' tables: "
                              f"{few(other)}", field=other[0])


def tsl_state_dict_to_ours(state_dict: Mapping[str, torch.Tensor], config: InformerConfig) -> dict[str, torch.Tensor]:
    """Rename a TSL Informer state_dict to ours for `Informer(config)`: missing, unknown and misshapen keys are
    refused by name (the sinusoid buffer `position_embedding.pe` is dropped). A `module.` prefix is stripped."""
    state_dict = strip_data_parallel(state_dict)
    _check_task(state_dict)
    return map_state_dict(state_dict, config, tsl_name, _IGNORED, "TSL Informer")


def infer_tsl_config(state_dict: Mapping[str, torch.Tensor], *, seq_len: int, label_len: int, pred_len: int,
                     factor: int = 1, n_heads: int | None = None, **overrides) -> InformerConfig:
    """The InformerConfig of a TSL checkpoint: enc_in, dec_in, d_model (tokenConv [d_model, c_in, 3]), c_out
    (decoder.projection), d_ff, e_layers, d_layers, distil, n_marks and the biases read off the tensors; the lengths,
    factor (TSL default 1) and n_heads (None: 8, TSL's default; not readable from the shapes) given; TSL_QUIRKS on.
    `overrides` replace any field afterwards (e.g. activation="relu")."""
    sd = strip_data_parallel(state_dict)
    _check_task(sd)

    def dims(name: str, ndim: int) -> list[int]:
        value = sd.get(name)
        if not isinstance(value, torch.Tensor):
            raise CheckpointError(f"not a TSL Informer checkpoint: tensor {name!r} is missing", field=name)
        if value.dim() != ndim:
            raise CheckpointError(f"{name}: expected a {ndim}-d tensor, got shape {list(value.shape)}", field=name)
        return list(value.shape)

    d_model, enc_in, _ = dims("enc_embedding.value_embedding.tokenConv.weight", 3)
    _, dec_in, _ = dims("dec_embedding.value_embedding.tokenConv.weight", 3)
    c_out, _ = dims("decoder.projection.weight", 2)
    _, n_marks = dims("enc_embedding.temporal_embedding.embed.weight", 2)
    if any(k.startswith("encoder.encoders.") for k in sd):
        raise CheckpointError("an InformerStack checkpoint (encoder.encoders.*): TSL has none; import it with "
                              "--official", field="encoder.encoders")
    e_layers = count_layers(sd, r"^encoder\.attn_layers\.(\d{1,9})\.")
    d_layers = count_layers(sd, r"^decoder\.layers\.(\d{1,9})\.")
    if not e_layers or not d_layers:
        raise CheckpointError("not a TSL Informer checkpoint: no encoder.attn_layers.* or decoder.layers.* tensors")
    d_ff, _, _ = dims("encoder.attn_layers.0.conv1.weight", 3)
    if min(seq_len, label_len + pred_len) < 2:
        raise CheckpointError(f"seq_len={seq_len}, label_len + pred_len={label_len + pred_len}: at length 1 TSL's "
                              "ProbAttention selects no query (u = c·⌈ln 1⌉ = 0), which is not reproduced",
                              field="seq_len" if seq_len < 2 else "pred_len")
    settings = dict(enc_in=enc_in, dec_in=dec_in, c_out=c_out, seq_len=seq_len, label_len=label_len,
                    pred_len=pred_len, n_marks=n_marks, d_model=d_model, n_heads=8 if n_heads is None else n_heads,
                    e_layers=(e_layers,), d_layers=d_layers, d_ff=d_ff, factor=factor,
                    distil=count_layers(sd, r"^encoder\.conv_layers\.(\d{1,9})\.") > 0 or e_layers == 1,
                    value_bias="enc_embedding.value_embedding.tokenConv.bias" in sd,
                    mark_bias="enc_embedding.temporal_embedding.embed.bias" in sd, **TSL_QUIRKS)
    return config_from(settings, overrides, "TSL checkpoint")


def load_tsl_checkpoint(path: str | Path, **settings) -> tuple[Informer, InformerConfig]:
    """Read a TSL Informer `checkpoint.pth` safely (`pth.read_state_dict`: no pickle code runs, sizes checked before
    torch allocates, weights finite) and return our Informer (eval mode, CPU) and its config. `settings` go to
    `infer_tsl_config` (seq_len, label_len, pred_len required; factor, n_heads and config overrides optional)."""
    return import_pth(path, "TSL checkpoint", infer_tsl_config, tsl_state_dict_to_ours, **settings)


__all__ = ["TSL_QUIRKS", "infer_tsl_config", "load_tsl_checkpoint", "tsl_name", "tsl_state_dict_to_ours"]
