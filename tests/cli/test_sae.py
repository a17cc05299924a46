"""`python cli.py sae` on the tiny trained checkpoint: metrics.json with the issue's keys and the settings,
features.csv with one row per feature, concepts.csv with --concepts; bad arguments are one line, exit 2, nothing
written."""
import json

import numpy as np
import pandas as pd
import pytest

from tests.conftest import SAMPLE_CSV

QUICK = ["--k", "4", "--expansion", "2", "--steps", "60", "--train-windows", "64", "--test-windows", "32",
         "--effect-windows", "8", "--ablation-windows", "4", "--no-baseline-check"]


def test_sae_writes_metrics_features_and_concepts(tiny_trained, tmp_path, capsys):
    from informer_lab.analysis.features.sites import DEFAULT_SITE
    from informer_lab.cli import main
    from informer_lab.cli_commands._choices import FEATURE_SITE

    assert FEATURE_SITE == DEFAULT_SITE
    _, _, folder = tiny_trained
    dates = pd.read_csv(SAMPLE_CSV, usecols=["date"])["date"]
    hours = pd.to_datetime(dates).dt.hour
    concepts = tmp_path / "concepts.csv"
    pd.DataFrame({"date": dates, "part": np.where(hours < 6, "night", "day"),
                  "holiday": np.where(np.arange(len(dates)) % 500 < 24, "yes", "")}).to_csv(concepts, index=False)
    out = tmp_path / "sae"
    code = main(["sae", "--checkpoint", str(folder), "--csv", str(SAMPLE_CSV), "--concepts", str(concepts),
                 "--out", str(out), *QUICK])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    metrics = json.loads((out / "metrics.json").read_text())
    assert {"fvu", "l0", "dead_fraction", "spliced_delta_mse", "spliced_delta_mse_low", "spliced_delta_mse_high",
            "model_mse"} <= set(metrics)
    assert metrics["settings"]["site"] == "encoder.out" and metrics["settings"]["k"] == 4
    assert metrics["l0"] <= 4 and 0 <= metrics["dead_fraction"] <= 1
    features = pd.read_csv(out / "features.csv")
    assert list(features.columns[:2]) == ["feature", "density"] and len(features) == 32
    table = pd.read_csv(out / "concepts.csv", keep_default_na=False)
    assert list(table.columns[:9]) == ["concept", "value", "level", "feature", "auroc", "auroc_low", "auroc_high",
                                       "neuron", "neuron_auroc"]
    assert set(table.concept) == {"part", "holiday"} and set(table.level) == {"position", "window"}
    assert "FVU" in printed.out and "written to" in printed.out


@pytest.mark.parametrize("bad, word", [(["--site", "cross.0"], "residual site"), (["--k", "0"], "--k"),
                                       (["--k", "65"], "--k must be in 1 … 64"), (["--expansion", "65"], "--expansion")])
def test_bad_arguments_are_one_line_exit_2(tiny_trained, tmp_path, capsys, bad, word):
    from informer_lab.cli import main

    _, _, folder = tiny_trained
    code = main(["sae", "--checkpoint", str(folder), "--csv", str(SAMPLE_CSV), "--out", str(tmp_path / "o"),
                 "--no-baseline-check", *bad])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and word in lines[0], lines
    assert not (tmp_path / "o" / "metrics.json").exists()
