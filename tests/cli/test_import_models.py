"""`python cli.py import --tsl FILE.pth` and `--hf FOLDER`: checkpoint folders that reproduce the source model, and
one-line refusals (exit 2) for a missing file, a file that is not a TSL state_dict, a pickle that runs code, and an HF
config we do not support."""
import json

import pytest
import torch

from informer_lab.analysis.checkpoints.folder import load_checkpoint
from tests.analysis.checkpoints.cases import RunsCode
from tests.analysis.checkpoints.official_reference import make_official_state_dict
from tests.analysis.checkpoints.tsl_reference import make_tsl_state_dict, tsl_forward
from tests.cli.helpers import cli
from tests.conftest import SAMPLE_CSV

LENGTHS = ("--seq-len", 48, "--label-len", 24, "--pred-len", 12)


def one_error_line(run, *fragments):
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and len(lines[0]) <= 310, run.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def window(checkpoint_config, B=2, label_len=24):
    g = torch.Generator().manual_seed(0)
    c = checkpoint_config
    x_enc = torch.randn(B, c.seq_len, c.enc_in, generator=g)
    x_dec = torch.cat([x_enc[:, c.seq_len - label_len:], torch.zeros(B, c.pred_len, c.dec_in)], dim=1)
    return x_enc, torch.rand(B, c.seq_len, c.n_marks, generator=g) - 0.5, x_dec, \
        torch.rand(B, label_len + c.pred_len, c.n_marks, generator=g) - 0.5


def test_import_a_tsl_checkpoint_then_evaluate(tmp_path):
    from informer_lab.model import Batch

    sd = make_tsl_state_dict(4, 4, 4, 16, 2, 32, 2, 1, 4, seed=0)
    torch.save(sd, tmp_path / "checkpoint.pth")
    out = tmp_path / "tsl"
    run = cli("import", "--tsl", tmp_path / "checkpoint.pth", "--csv", SAMPLE_CSV, "--target", "load", *LENGTHS,
              "--n-heads", 2, "--factor", 3, "--out", out)
    assert run.returncode == 0, run.stderr
    checkpoint = load_checkpoint(out)
    c = checkpoint.config
    assert (c.mix_sites, c.distil_padding, c.cross_attention, c.value_bias, c.factor) == ("all", 2, "prob", False, 3)
    assert checkpoint.metrics["source"] == "tsl"
    x = window(c)
    torch.manual_seed(4)
    expected = tsl_forward(sd, *x, n_heads=2, factor=3, pred_len=12)
    with torch.no_grad():
        actual = checkpoint.model(Batch(*x), generator=torch.Generator().manual_seed(4))
    assert (actual - expected).abs().max().item() < 1e-5
    assert cli("evaluate", "--checkpoint", out, "--csv", SAMPLE_CSV).returncode == 0


def test_import_an_hf_folder_then_evaluate(tmp_path):
    transformers = pytest.importorskip("transformers")
    from informer_lab.model import Batch

    config = transformers.InformerConfig(prediction_length=12, context_length=24, input_size=4,
                                         lags_sequence=[1, 2, 3], num_time_features=4, d_model=16, encoder_layers=2,
                                         decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2,
                                         encoder_ffn_dim=16, decoder_ffn_dim=16)
    torch.manual_seed(0)
    hf = transformers.InformerForPrediction(config).eval()
    hf.save_pretrained(tmp_path / "hf")
    out = tmp_path / "imported"
    run = cli("import", "--hf", tmp_path / "hf", "--csv", SAMPLE_CSV, "--target", "load", "--out", out)
    assert run.returncode == 0, run.stderr
    checkpoint = load_checkpoint(out)
    c = checkpoint.config
    assert (c.seq_len, c.pred_len, c.embedding, c.instance_scaling) == (27, 12, "lags", "mean")
    assert list(checkpoint.schema.scaler.std) == [1.0] * 4  # HF reads raw values and scales each window itself
    assert checkpoint.metrics["distribution_output"] == "student_t"
    x_enc, mark_enc, x_dec, mark_dec = window(c, label_len=1)
    x_dec[:, 1:] = torch.randn(2, 12, 4)
    torch.manual_seed(2)
    with torch.no_grad():
        outputs = hf(past_values=x_enc, past_time_features=mark_enc, past_observed_mask=torch.ones_like(x_enc),
                     future_values=x_dec[:, 1:], future_time_features=mark_dec[:, 1:])
        expected = hf.output_distribution(outputs.params, loc=outputs.loc, scale=outputs.scale).mean
        actual = checkpoint.model(Batch(x_enc, mark_enc, x_dec, mark_dec), generator=torch.Generator().manual_seed(2))
    assert (actual - expected).abs().max().item() < 1e-5
    assert cli("evaluate", "--checkpoint", out, "--csv", SAMPLE_CSV).returncode == 0

    (tmp_path / "hf" / "config.json").write_text(json.dumps({
        **json.loads((tmp_path / "hf" / "config.json").read_text()), "num_static_real_features": 1}))
    unsupported = cli("import", "--hf", tmp_path / "hf", "--csv", SAMPLE_CSV, "--target", "load", "--out",
                      tmp_path / "bad")
    one_error_line(unsupported, "num_static_real_features")


def test_refusals_are_one_line(tmp_path):
    marker = tmp_path / "ran"
    torch.save({"model": make_tsl_state_dict(4, 4, 4, 8, 2, 8, 2, 1, 4, seed=0), "args": RunsCode(marker)},
               tmp_path / "code.pth")
    torch.save([torch.zeros(3)], tmp_path / "list.pth")
    torch.save(make_official_state_dict(4, 4, 4, 8, 2, 8, 2, 1, 4, seed=0), tmp_path / "official.pth")
    common = ("--csv", SAMPLE_CSV, "--target", "load", *LENGTHS, "--out", tmp_path / "x")
    one_error_line(cli("import", "--tsl", tmp_path / "no.pth", *common), "no.pth", "does not exist")
    one_error_line(cli("import", "--tsl", tmp_path / "list.pth", *common), "not a state_dict")
    one_error_line(cli("import", "--tsl", tmp_path / "official.pth", *common), "not a TSL Informer", "--official")
    one_error_line(cli("import", "--tsl", tmp_path / "code.pth", *common), "contains Python code to run",
                   "posix.system")
    assert not marker.exists()
    one_error_line(cli("import", "--hf", tmp_path / "nowhere", *common), "nowhere", "does not exist")
