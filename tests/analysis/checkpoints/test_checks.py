"""The checks themselves: the analytic parameter count and shapes equal the real model's, every config field has a
rule, valid checkpoints in every allowed form still load (F16 weights, repair.json, a hand-crafted torch archive)."""
from __future__ import annotations

import json
from dataclasses import asdict, fields

import pytest
import torch

from informer_lab.analysis.checkpoints import checks
from informer_lab.analysis.checkpoints.folder import load_checkpoint, read_checkpoint_files, save_checkpoint
from informer_lab.analysis.errors import CheckpointError
from informer_lab.analysis.checkpoints.official import load_official_checkpoint
from informer_lab.model import Informer, InformerConfig

from .helpers import (OFFICIAL_SETTINGS, craft_pth, official_state, state_of, tiny_config, tiny_model, tiny_schema,
                      valid_files, with_state, write_folder)

CONFIGS = [
    tiny_config(),
    tiny_config(e_layers=(3, 2, 1), d_layers=2, distil=True),
    tiny_config(e_layers=(3,), distil=False, mark_bias=False, n_marks=5),
    tiny_config(enc_in=7, dec_in=5, c_out=2, d_model=12, n_heads=3, d_ff=20),
    tiny_config(enc_in=5, dec_in=5, c_out=1, revin=True),  # reversible instance normalisation's γ and β
    InformerConfig(enc_in=7, dec_in=7, c_out=7),  # the paper's defaults: d_model 512, 8 heads, d_ff 2048
    # imported models: Time-Series-Library's quirks, Hugging Face's lag embedding without closing norms
    tiny_config(value_bias=False, mark_bias=False, distil_padding=2, mix=True, mix_sites="all",
                single_head_union=True, cross_attention="prob"),
    tiny_config(label_len=2, embedding="lags", lags=(1, 2, 5), instance_scaling="mean", final_norm=False,
                active_counts="hf", sample_block=16, d_layers=2),
    tiny_config(enc_in=4, dec_in=4, c_out=1, embedding="lags", lags=(0, 3), instance_scaling="std",
                level_free=(0, 2)),  # two input-only channels whose level is not read
    tiny_config(enc_in=4, dec_in=4, c_out=2, embedding="lags", lags=(0, 3), instance_scaling="std",
                placeholders="last"),  # the decoder's forecast steps repeat the window's last value
    # the other attention kinds: learned spans, a learned compression, LSH across to the encoder
    tiny_config(encoder_attention="adaptive", decoder_attention="compressed", cross_attention="lsh",
                attention_options={"encoder": {"max_span": 16}, "decoder_self": {"stride": 3},
                                   "cross": {"buckets": 4}}),
    tiny_config(encoder_attention="window", decoder_attention="compressed",
                attention_options={"encoder": {"window": 4, "globals": [0, -1]}, "decoder_self": {"compress": "mean"}}),
]


@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_parameter_count_and_shapes_are_the_real_models(config):
    with torch.device("meta"):
        model = Informer(config)
    assert checks.count_parameters(config) == sum(p.numel() for p in model.parameters())
    assert checks.state_shapes(config) == {k: tuple(v.shape) for k, v in model.state_dict().items()}


def test_every_config_field_has_a_rule():
    ruled = set(checks.INT_RANGES) | set(checks.CHOICES) | set(checks.BOOLS) | {"dropout", "e_layers", "lags", "level_free",
                                                                                  "attention_options"}
    assert ruled == {f.name for f in fields(InformerConfig)}


@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_valid_configs_pass(config):
    data = json.loads(json.dumps(asdict(config)))
    assert checks.config_from_dict(data) == config
    checks.check_config(config)


@pytest.mark.parametrize("options, kind, fragment", [
    ({"encoder": {"window": 10 ** 12}}, "window", "window window must be a whole number"),
    ({"encoder": {"window": True}}, "window", "window window must be a whole number"),
    ({"encoder": {"globals": list(range(1000))}}, "window", "at most 64 positions"),
    ({"encoder": {"shell": "rm"}}, "window", "has no parameter 'shell'"),
    ({"encoder": {"compress": "exec"}}, "compressed", "compress must be one of mean, conv"),
    ({"encoder": {"window": 4}}, "prob", "prob attention takes no parameters"),
    ({"elsewhere": {"window": 4}}, "window", "attention_options must be a mapping"),
    ({"encoder": [1, 2]}, "window", "attention_options must be a mapping"),
    ("window=4", "window", "attention_options must be a mapping"),
])
def test_hostile_attention_options_are_refused_naming_the_parameter(options, kind, fragment):
    data = json.loads(json.dumps(asdict(tiny_config())))
    data.update(encoder_attention=kind, attention_options=options)
    with pytest.raises(CheckpointError, match=fragment):
        checks.config_from_dict(data)


def test_a_positional_kind_at_cross_attention_is_refused():
    data = json.loads(json.dumps(asdict(tiny_config())))
    data.update(cross_attention="logsparse")
    with pytest.raises(CheckpointError, match="positional"):
        checks.config_from_dict(data)


def test_config_without_newer_fields_still_loads():
    data = asdict(tiny_config())
    for name in ("causal_sampling", "sample_block", "mark_bias"):
        del data[name]
    assert checks.config_from_dict(json.loads(json.dumps(data))).causal_sampling is True


def test_a_lags_config_saved_before_placeholders_existed_keeps_its_zero_placeholders():
    """Its weights were trained reading zeros at the forecast steps: loading it as "last" would change its forecast."""
    data = asdict(tiny_config(enc_in=4, dec_in=4, c_out=1, embedding="lags", lags=(0, 3), instance_scaling="std"))
    del data["placeholders"]
    assert checks.config_from_dict(json.loads(json.dumps(data))).placeholders == "zero"
    data["placeholders"] = "median"
    with pytest.raises(CheckpointError, match="placeholders"):
        checks.config_from_dict(json.loads(json.dumps(data)))


def test_a_model_outside_the_caps_is_not_saved(tmp_path):
    model = tiny_model()
    object.__setattr__(model.config, "factor", 5000)
    with pytest.raises(CheckpointError, match="factor must be a whole number in 1..1,000"):
        save_checkpoint(tmp_path / "ck", model, tiny_schema())
    assert not (tmp_path / "ck").exists() and list(tmp_path.iterdir()) == []


def test_a_nan_model_is_not_saved(tmp_path):
    model = tiny_model()
    with torch.no_grad():
        model.projection.bias[0] = float("nan")
    with pytest.raises(CheckpointError, match="projection.bias holds 1 NaN"):
        save_checkpoint(tmp_path / "ck", model, tiny_schema())
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_float_weights_of_other_widths_load_as_float32(dtype):
    files = valid_files()
    state = {k: (v.to(dtype) if v.dtype.is_floating_point else v) for k, v in state_of(files).items()}
    loaded = read_checkpoint_files(with_state(files, state))
    assert loaded.model.projection.weight.dtype == torch.float32
    assert torch.allclose(loaded.model.projection.weight, state["projection.weight"].float())


def test_repair_report_round_trips_and_is_hashed(tmp_path):
    model, schema = tiny_model(), tiny_schema()
    report = {"filled": {"b": 2}, "rows": [3, 4], "method": "interpolate"}
    save_checkpoint(tmp_path / "with", model, schema, {"n": 1}, repair=report)
    save_checkpoint(tmp_path / "without", model, schema, {"n": 1})
    assert load_checkpoint(tmp_path / "with").repair == report
    assert load_checkpoint(tmp_path / "without").repair is None
    assert not (tmp_path / "without" / "repair.json").exists()
    manifest = json.loads((tmp_path / "with" / "manifest.json").read_text())
    assert set(manifest["sha256"]) == {"weights.safetensors", "config.json", "schema.json", "metrics.json",
                                       "repair.json"}
    files = {p.name: p.read_bytes() for p in (tmp_path / "with").iterdir()}
    assert read_checkpoint_files(files).repair == report
    with pytest.raises(TypeError):
        save_checkpoint(tmp_path / "bad", model, schema, repair=["not", "a", "dict"])


def test_a_checkpoint_folder_written_as_before_still_loads(tmp_path):
    """The format is unchanged: five files, the manifest listing four (what older versions wrote)."""
    files = valid_files()
    assert set(files) == {"weights.safetensors", "config.json", "schema.json", "metrics.json", "manifest.json"}
    loaded = load_checkpoint(write_folder(tmp_path / "ck", files))
    assert loaded.metrics["seed"] == 0 and loaded.config == tiny_config()


def test_the_crafted_torch_archive_of_valid_tensors_loads(tmp_path):
    """The corpus's hand-made archives are realistic: untampered, one loads like torch.save's own file."""
    state = official_state()
    model, config = load_official_checkpoint(craft_pth(tmp_path / "c.pth", state), **OFFICIAL_SETTINGS)
    torch.save(state, tmp_path / "t.pth")
    reference, _ = load_official_checkpoint(tmp_path / "t.pth", **OFFICIAL_SETTINGS)
    for (name, a), b in zip(model.state_dict().items(), reference.state_dict().values()):
        assert torch.equal(a, b), name
    assert config.d_model == 8
