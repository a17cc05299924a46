"""Importing Hugging Face transformers' InformerForPrediction: our forward reproduces HF's point output to 1e-5.

Tested against `transformers` itself (a test-only dependency): a randomly initialised InformerForPrediction, its
weights pushed away from their initial values, is saved with `save_pretrained` and imported. HF draws its key samples
from torch's global RNG (`torch.randint(0, L_K, (U,))` per ProbSparse call, encoder layers then decoder
self-attentions); our model draws the same numbers from a `torch.Generator` seeded alike, so no override is needed.
HF's point output is the mean of its output distribution for the teacher-forced forward (future_values given).
"""
import json

import pytest
import torch

transformers = pytest.importorskip("transformers")

from informer_lab.analysis.errors import CheckpointError  # noqa: E402
from informer_lab.analysis.checkpoints.imports.hf import load_hf_folder  # noqa: E402
from informer_lab.model import Batch, HeadMask  # noqa: E402

TOL = 1e-5
BASE = dict(prediction_length=6, context_length=24, input_size=2, lags_sequence=[1, 2, 5], num_time_features=3,
            d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
            encoder_ffn_dim=24, decoder_ffn_dim=24, sampling_factor=2)


def save_hf(folder, seed=0, **changes):
    """An InformerForPrediction with weights far from their initial values (LayerNorms, BatchNorm statistics
    included), saved with save_pretrained."""
    config = transformers.InformerConfig(**{**BASE, **changes})
    torch.manual_seed(seed)
    model = transformers.InformerForPrediction(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "embed_positions" not in name:  # a frozen sinusoid
                p.add_(torch.randn_like(p) * 0.3)
        for name, b in model.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(torch.randn_like(b) * 0.3)
            elif name.endswith("running_var"):
                b.copy_(torch.rand_like(b) + 0.5)
    model.save_pretrained(folder)
    return model


def inputs(hf_config, seq_len, B=3, seed=5):
    """(HF's keyword inputs, our Batch) for the same windows: x_dec is one label row, then HF's future values."""
    g = torch.Generator().manual_seed(seed)
    C, F, P = hf_config.input_size, hf_config.num_time_features, hf_config.prediction_length
    past, past_time = torch.randn(B, seq_len, C, generator=g) * 3 + 1, torch.randn(B, seq_len, F, generator=g)
    future, future_time = torch.randn(B, P, C, generator=g) * 3 + 1, torch.randn(B, P, F, generator=g)
    squeeze = (lambda t: t[..., 0]) if C == 1 else (lambda t: t)  # HF's univariate inputs have no channel axis
    hf = dict(past_values=squeeze(past), past_time_features=past_time,
              past_observed_mask=squeeze(torch.ones_like(past)), future_values=squeeze(future),
              future_time_features=future_time)
    batch = Batch(past, past_time, torch.cat([past[:, -1:], future], dim=1),
                  torch.cat([past_time[:, -1:], future_time], dim=1))
    return hf, batch


def hf_mean(model, hf_inputs, seed):
    torch.manual_seed(seed)
    with torch.no_grad():
        out = model(**hf_inputs)
        mean = model.output_distribution(out.params, loc=out.loc, scale=out.scale).mean
    return mean if mean.dim() == 3 else mean.unsqueeze(-1)


def ours(model, batch, seed, **kw):
    with torch.no_grad():
        return model(batch, generator=torch.Generator().manual_seed(seed), **kw)


def max_diff(a, b):
    return (a - b).abs().max().item()


CASES = [dict(), dict(input_size=1), dict(scaling="std"), dict(scaling=None), dict(distil=False, encoder_layers=3),
         dict(encoder_layers=3, decoder_layers=1), dict(attention_type="full"), dict(distribution_output="normal"),
         dict(encoder_attention_heads=1, decoder_attention_heads=1, d_model=8),
         dict(activation_function="relu", encoder_layers=1, decoder_layers=1), dict(lags_sequence=[0, 3, 12])]


# --------------------------------------------------------------------------------------------
# (a) same inputs, same key samples, same point forecast
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("changes", CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "base")
def test_imported_model_reproduces_hf_point_output(tmp_path, changes):
    hf = save_hf(tmp_path, **changes)
    model, config, info = load_hf_folder(tmp_path)
    assert config.seq_len == hf.config.context_length + max(hf.config.lags_sequence)
    hf_inputs, batch = inputs(hf.config, config.seq_len)
    for seed in (0, 3):
        expected = hf_mean(hf, hf_inputs, seed)
        actual = ours(model, batch, seed)
        assert actual.shape == expected.shape == (3, hf.config.prediction_length, hf.config.input_size)
        assert max_diff(actual, expected) < TOL
    assert "model.encoder.embed_positions.weight" in info["dropped"]


def test_the_key_draws_matter_and_match():
    """ProbSparse is sparse here (u = 8 of 24 encoder queries): another seed gives another forecast, in HF and ours."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        hf = save_hf(folder, seed=1)
        model, config, _ = load_hf_folder(folder)
    hf_inputs, batch = inputs(hf.config, config.seq_len)
    assert max_diff(hf_mean(hf, hf_inputs, 0), hf_mean(hf, hf_inputs, 1)) > 1e-3
    assert max_diff(ours(model, batch, 0), ours(model, batch, 1)) > 1e-3
    assert max_diff(ours(model, batch, 1), hf_mean(hf, hf_inputs, 1)) < TOL


def test_the_config_names_hfs_differences(tmp_path):
    save_hf(tmp_path)
    _, config, info = load_hf_folder(tmp_path)
    assert (config.embedding, config.lags, config.instance_scaling, config.final_norm) == ("lags", (1, 2, 5), "mean",
                                                                                           False)
    assert (config.active_counts, config.mean_divisor, config.decoder_lazy, config.mix) == ("hf", "L_K", "cumsum",
                                                                                         False)
    assert (config.cross_attention, config.causal_sampling, config.sample_block >= config.seq_len) == ("full", False,
                                                                                                      True)
    assert info["distribution_output"] == "student_t"
    assert info["dropped"] == ["model.decoder.embed_positions.weight", "model.encoder.embed_positions.weight",
                               "parameter_projection.proj.0.bias", "parameter_projection.proj.0.weight",
                               "parameter_projection.proj.2.bias", "parameter_projection.proj.2.weight"]


def test_head_mask_variants_equal_one_mask_at_a_time(tmp_path):
    """The variant path embeds the decoder from the window and maps each variant's forecast back by its window."""
    save_hf(tmp_path)
    model, config, _ = load_hf_folder(tmp_path)
    _, batch = inputs(transformers.InformerConfig(**BASE), config.seq_len, B=2)
    gates = model.full_gates(3)
    gates[1, 0, 1] = 0.0
    gates[2, model.n_sites - 1, 0] = 0.0
    together = ours(model, batch, 2, head_mask=HeadMask(gates, variants=True))
    one_by_one = torch.cat([ours(model, batch, 2, head_mask=HeadMask(gates[k:k + 1])) for k in range(3)])
    assert max_diff(together, one_by_one) < TOL


# --------------------------------------------------------------------------------------------
# (b) refusals, each naming the config field or tensor
# --------------------------------------------------------------------------------------------
def edit_config(folder, **changes):
    path = folder / "config.json"
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("changes, field", [
    (dict(distribution_output="negative_binomial"), "distribution_output"),
    (dict(num_static_categorical_features=1, cardinality=[3], embedding_dimension=[2]),
     "num_static_categorical_features"),
    (dict(num_static_real_features=2), "num_static_real_features"),
    (dict(num_dynamic_real_features=1), "num_dynamic_real_features"),
    (dict(decoder_attention_heads=4), "decoder_attention_heads"),
    (dict(activation_function="silu"), "activation_function"),
    (dict(minimum_scale=0.1), "minimum_scale"),
    (dict(model_type="time_series_transformer"), "model_type"),
    (dict(d_model=100_000), "d_model"),
    (dict(lags_sequence=[1, "2"]), "lags_sequence"),
    (dict(scaling="median"), "scaling"),
    (dict(num_time_features=0), "num_time_features"),
    (dict(feature_size=99), "feature_size"),
])
def test_an_unsupported_config_is_refused_naming_the_field(tmp_path, changes, field):
    save_hf(tmp_path)
    edit_config(tmp_path, **changes)
    with pytest.raises(CheckpointError, match=field) as info:
        load_hf_folder(tmp_path)
    assert info.value.field == field and len(str(info.value)) <= 300


def test_weights_that_do_not_match_the_config_are_refused_before_reading(tmp_path):
    save_hf(tmp_path)
    edit_config(tmp_path, encoder_ffn_dim=32, decoder_ffn_dim=32)
    with pytest.raises(CheckpointError, match=r"model\.safetensors|fc1\.weight.*\[32, 16\]") as info:
        load_hf_folder(tmp_path)
    assert "fc1" in info.value.field


def test_a_position_table_that_is_not_the_sinusoid_is_refused(tmp_path):
    from safetensors.torch import load_file, save_file

    save_hf(tmp_path)
    state = load_file(tmp_path / "model.safetensors")
    state["model.decoder.embed_positions.weight"] += 0.5
    save_file(state, tmp_path / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(CheckpointError, match="not HF's sinusoid"):
        load_hf_folder(tmp_path)


def test_a_folder_without_safetensors_is_refused(tmp_path):
    save_hf(tmp_path)
    (tmp_path / "model.safetensors").rename(tmp_path / "pytorch_model.bin")
    with pytest.raises(CheckpointError, match=r"no model\.safetensors.*pickle"):
        load_hf_folder(tmp_path)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_hf_folder(tmp_path / "nowhere")
