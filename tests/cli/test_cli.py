"""The headless CLI: real runs end to end, and one-line errors with exit code 2 and no traceback."""

import pandas as pd
import pytest

from tests.cli.helpers import cli
from tests.conftest import SAMPLE_CSV




def test_train_evaluate_forecast_end_to_end(tmp_path):
    """`python cli.py` itself, in processes of its own, as a user runs it (the other tests call its main in-process)."""
    out = tmp_path / "ck"
    run = cli("train", "--csv", SAMPLE_CSV, "--target", "load", "--seq-len", 48, "--label-len", 24, "--pred-len",
              12, "--epochs", 1, "--max-steps", 10, "--d-model", 16, "--n-heads", 2, "--d-ff", 16, "--out", out,
              process=True)
    assert run.returncode == 0, run.stderr
    assert "test mse" in run.stdout and (out / "weights.safetensors").is_file()
    assert "epoch 1/1" in run.stderr  # the console progress bar
    ev = cli("evaluate", "--checkpoint", out, "--csv", SAMPLE_CSV, process=True)
    assert ev.returncode == 0, ev.stderr
    assert ev.stdout.startswith("test mse ")
    fc = cli("forecast", "--checkpoint", out, "--csv", SAMPLE_CSV, "--out", tmp_path / "f.csv", process=True)
    assert fc.returncode == 0, fc.stderr
    table = pd.read_csv(tmp_path / "f.csv")
    assert list(table.columns) == ["date", "temperature", "humidity", "price", "load"] and len(table) == 12
    for printed in (ev.stdout, fc.stdout):  # the model against the baselines, its window set named
        assert "Test MSE (standardised): model" in printed and "seasonal naive" in printed and "test windows" in printed
    assert "every test window (" in ev.stdout  # the evaluation's own MSE is named with its windows


def test_train_withholds_the_level_of_a_unit_root_input_and_says_which(tmp_path):
    """The sample's temperature has a unit root in its training split: `--unit-roots withhold` (features MS) names it,
    the checkpoint records it, and the model forecasts; the default reads every level and prints no such line."""
    import json

    base = ("train", "--csv", SAMPLE_CSV, "--target", "load", "--features", "MS", "--seq-len", 48, "--label-len", 24,
            "--pred-len", 12, "--epochs", 1, "--max-steps", 2, "--d-model", 16, "--n-heads", 2, "--d-ff", 16)
    run = cli(*base, "--unit-roots", "withhold", "--out", tmp_path / "withheld")
    assert run.returncode == 0, run.stderr
    assert "levels withheld (a unit root in the training split): temperature" in run.stdout
    assert json.loads((tmp_path / "withheld" / "config.json").read_text())["level_free"] == [0]
    fc = cli("forecast", "--checkpoint", tmp_path / "withheld", "--csv", SAMPLE_CSV, "--out", tmp_path / "f.csv")
    assert fc.returncode == 0, fc.stderr
    assert pd.read_csv(tmp_path / "f.csv")["load"].notna().all()
    kept = cli(*base, "--out", tmp_path / "kept")
    assert kept.returncode == 0 and "levels withheld" not in kept.stdout
    assert json.loads((tmp_path / "kept" / "config.json").read_text())["level_free"] == []


def test_a_checkpoint_trained_on_repaired_data_reads_its_data_the_same_way(tmp_path):
    """Trained with --repair ffill (a file with gaps), `evaluate` reads the same file the same way without being told
    (the checkpoint's repair.json), and says so; --repair none still refuses it."""
    gappy = tmp_path / "gaps.csv"
    frame = pd.read_csv(SAMPLE_CSV).head(3000)
    frame.drop(index=[100, 101, 2500]).to_csv(gappy, index=False)
    out = tmp_path / "ck"
    run = cli("train", "--csv", gappy, "--target", "load", "--repair", "ffill", "--seq-len", 24, "--label-len", 12,
              "--pred-len", 6, "--epochs", 1, "--max-steps", 3, "--d-model", 8, "--n-heads", 2, "--d-ff", 8,
              "--out", out)
    assert run.returncode == 0, run.stderr
    ev = cli("evaluate", "--checkpoint", out, "--csv", gappy, "--no-baseline-check")
    assert ev.returncode == 0, ev.stderr
    assert "read with --repair ffill" in ev.stderr and "repair.json" in ev.stderr
    refused = cli("evaluate", "--checkpoint", out, "--csv", gappy, "--repair", "none", "--no-baseline-check")
    assert refused.returncode == 2 and "irregular spacing" in refused.stderr


@pytest.mark.parametrize("args,message", [
    (("train", "--csv", "missing.csv", "--target", "load", "--out", "x"), "missing.csv"),
    (("train", "--csv", SAMPLE_CSV, "--target", "nope", "--out", "x"), "nope"),
    (("evaluate", "--checkpoint", "no_such_folder", "--csv", SAMPLE_CSV), "no_such_folder"),
    (("import", "--official", "no.pth", "--csv", SAMPLE_CSV, "--target", "load", "--out", "x"), "no.pth"),
    (("train", "--csv", SAMPLE_CSV, "--target", "load", "--seq-len", 10, "--label-len", 20, "--out", "x"),
     "label_len"),
])
def test_errors_are_one_line_exit_2_without_traceback(args, message, tmp_path):
    run = cli(*args)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_bad_csv_error_names_the_row(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("date,a,b\n2024-01-01 00:00,1,2\n2024-01-01 01:00,x,3\n2024-01-01 02:00,1,4\n")
    run = cli("train", "--csv", bad, "--target", "b", "--out", tmp_path / "o")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "'a'" in run.stderr and "'x'" in run.stderr


def test_import_an_official_checkpoint_then_evaluate_and_forecast(tmp_path):
    """An official-layout checkpoint.pth (4 columns, hourly timeF) becomes a checkpoint folder that works."""
    import torch

    from informer_lab.analysis.checkpoints.folder import load_checkpoint
    from tests.analysis.checkpoints.official_reference import make_official_state_dict

    pth = tmp_path / "checkpoint.pth"
    torch.save(make_official_state_dict(4, 4, 4, 16, 2, 32, 2, 1, 4, seed=0), pth)
    out = tmp_path / "imported"
    run = cli("import", "--official", pth, "--csv", SAMPLE_CSV, "--target", "load", "--seq-len", 48,
              "--label-len", 24, "--pred-len", 12, "--n-heads", 2, "--out", out)
    assert run.returncode == 0, run.stderr
    config = load_checkpoint(out).config
    assert (config.mean_divisor, config.decoder_lazy, config.mix, config.sample_block) == ("L_K", "cumsum", True, 1)
    assert cli("evaluate", "--checkpoint", out, "--csv", SAMPLE_CSV).returncode == 0
    mismatch = cli("import", "--official", pth, "--csv", SAMPLE_CSV, "--target", "load", "--features", "S",
                   "--seq-len", 48, "--label-len", 24, "--pred-len", 12, "--out", tmp_path / "bad")
    assert mismatch.returncode == 2 and "expects 4 inputs" in mismatch.stderr


HEAVY = ("torch", "pandas", "numpy", "scipy", "ray", "captum", "streamlit", "plotly")


def test_help_and_argument_errors_import_nothing_heavy():
    """`--help` and an argument error answer before torch, pandas or the analyses load (they cost ~10 s of CPU a
    call): the modules a fresh interpreter holds after parsing are checked, not the time it took."""
    import subprocess
    import sys

    from tests.cli.helpers import ROOT

    probe = ("import sys, cli\n"
             "code = cli.main(sys.argv[1:])\n"
             "loaded = sorted({m.split('.')[0] for m in sys.modules} & set(%r))\n"
             "print('LOADED', ','.join(loaded), code, file=sys.stderr)\n") % (HEAVY,)
    for args in (["--help"], ["train", "--help"], ["train", "--csv", "x.csv"], ["study", "--seeds"],
                 ["ablate", "--study", "nope"], ["synth", "--coefs", "nan", "--out", "x.csv"]):
        out = subprocess.run([sys.executable, "-c", probe, *args], cwd=ROOT, capture_output=True, text=True,
                             timeout=60)
        line = next(l for l in out.stderr.splitlines() if l.startswith("LOADED"))
        assert line.split()[1:] in (["0"], ["2"]), (args, out.stderr[-500:])  # nothing heavy loaded, then exit code


def test_the_parsers_choices_are_the_ones_the_lab_defines():
    from informer_lab.analysis.data import FILLS
    from informer_lab.analysis.heads.faithfulness import MAX_WINDOWS as FAITHFULNESS
    from informer_lab.analysis.anatomy.transfer import FORMS
    from informer_lab.analysis.instruments.attention_cost import LENGTHS
    from informer_lab.analysis.instruments.attribution import BASELINES
    from informer_lab.analysis.instruments.patching import PATCH_POINTS
    from informer_lab.analysis.instruments.variants import KINDS, MAX_WINDOWS
    from informer_lab.analysis.instruments.window_edits import EDIT_KINDS
    from informer_lab.analysis.learning.schedules import SCHEDULES
    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.circuits.benchmark import ALL_KINDS
    from informer_lab.analysis.planted.synth import KINDS as SYNTH
    from informer_lab.cli_commands import _choices as c
    from informer_lab.model.config import ATTENTION_KINDS
    from informer_lab.study.plan import ANALYSES

    assert c.ATTENTION_KINDS == ATTENTION_KINDS and c.SCHEDULES == SCHEDULES and c.FILLS == FILLS
    assert c.BASELINES == BASELINES and c.EDIT_KINDS == tuple(EDIT_KINDS) and c.PATCH_POINTS == PATCH_POINTS
    assert c.ANALYSES == ANALYSES and c.FAITHFULNESS_WINDOWS == FAITHFULNESS and c.VARIANT_KINDS == KINDS
    assert c.VARIANT_WINDOWS == MAX_WINDOWS and c.COST_LENGTHS == LENGTHS and c.SYNTH_KINDS == SYNTH
    assert c.DISTIL_FORMS == FORMS and c.BENCH_KINDS == ALL_KINDS
    from informer_lab.analysis.learning.unit_root import UNIT_ROOTS

    assert c.UNIT_ROOTS == UNIT_ROOTS
    from informer_lab.analysis.learning.embedding import EMBEDDINGS

    assert c.EMBEDDINGS == EMBEDDINGS
    from informer_lab.analysis.checkpoints import checks
    from informer_lab.analysis.planted import synth
    from informer_lab.study import plan

    assert c.SIZE_RANGES == {k: checks.INT_RANGES[k] for k in c.SIZE_RANGES}
    assert (c.MAX_REPLICAS, c.MAX_REPLICA_LAYERS) == (checks.MAX_REPLICAS, checks.MAX_REPLICA_LAYERS)
    assert c.STUDY_MAX_RUNS == plan.MAX_RUNS and c.GRID_KEYS == tuple(plan.GRID_KEYS)
    assert c.SYNTH_LIMITS == {"rows": synth.MAX_ROWS, "irrelevant": synth.MAX_IRRELEVANT, "decoys": synth.MAX_DECOYS}
    defaults = TrainSettings()
    assert c.TRAIN_DEFAULTS == {k: getattr(defaults, k) for k in c.TRAIN_DEFAULTS}
    from informer_lab.analysis.learning import settings as learning_settings

    assert (c.AUTO_STEPS, c.AUTO_EPOCHS) == (learning_settings.AUTO_STEPS, learning_settings.AUTO_EPOCHS)
    from informer_lab.analysis.learning.settings import ModelSize

    size = ModelSize()
    assert c.SIZE_DEFAULTS == {k: getattr(size, k) for k in c.SIZE_DEFAULTS}


def test_an_error_line_is_at_most_300_characters_and_a_full_disk_names_the_cause(capsys, monkeypatch):
    import errno

    from informer_lab import cli
    from informer_lab.analysis.errors import DataError
    from informer_lab.analysis.outputs import describe_os_error

    def fail(args):
        raise DataError("column 'x' " + "holds a very long cell " * 40 + "; fix it with --repair ffill")

    monkeypatch.setattr("informer_lab.cli.run_command", fail)
    assert cli.main(["evaluate", "--checkpoint", "c", "--csv", "d.csv"]) == 2
    line = capsys.readouterr().err.rstrip("\n")
    assert "\n" not in line and len(line) <= 300 and line.startswith("error: column 'x'")
    assert line.endswith("--repair ffill")
    full = OSError(errno.ENOSPC, "No space left on device")  # no file name: as a flush may raise it
    assert describe_os_error(full) == ("cannot write the output (the file system did not say which file): no space "
                                       "left on the device")


def test_the_papers_recipe_is_one_option_and_a_later_option_wins():
    from informer_lab.cli import build_parser
    from informer_lab.cli_commands._common import training_choices

    parser = build_parser()
    base = ["train", "--csv", "x.csv", "--target", "load"]
    lab = training_choices(parser.parse_args(base))[2]
    assert (lab.batch_size, lab.learning_rate, lab.schedule) == (16, 3e-3, "cosine")  # the lab's defaults
    size = training_choices(parser.parse_args(base))[1]
    assert (size.factor, size.embedding, size.revin) == (8, "auto", False)  # auto: lags where it fits, else RevIN
    lags = training_choices(parser.parse_args(base + ["--embedding", "lags"]))[1]
    assert lags.embedding == "lags" and size.unit_roots == "keep"
    assert training_choices(parser.parse_args(base + ["--unit-roots", "withhold"]))[1].unit_roots == "withhold"
    paper_size, paper = training_choices(parser.parse_args(base + ["--paper-recipe"]))[1:]
    assert (paper.batch_size, paper.learning_rate, paper.schedule, paper.epochs, paper.average) == \
        (32, 1e-4, "paper", 6, 0.0)
    assert lab.average == 0.98 and training_choices(parser.parse_args(base + ["--average", "0"]))[2].average == 0
    assert (paper_size.factor, paper_size.embedding, paper_size.revin) == (5, "conv", False)
    later = training_choices(parser.parse_args(base + ["--paper-recipe", "--batch-size", "64"]))[2]
    assert (later.batch_size, later.learning_rate) == (64, 1e-4)
