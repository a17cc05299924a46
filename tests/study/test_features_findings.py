"""The study's features analysis: each run's table holds its dictionary's figures and decoder directions; the
findings give the figures over seeds and match the dictionaries across runs against shuffled ones (no torch)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from informer_lab.analysis.features.run import study_table
from informer_lab.analysis.features.sae import SAESettings
from informer_lab.study.findings import summarise


def test_dictionaries_of_the_runs_are_summarised_and_matched(tiny_trained, tiny_prepared, tmp_path):
    model = tiny_trained[0].model
    tables = []
    for seed in (0, 1, 2):  # one model, three SAE seeds: the matching must find the same directions again
        table = study_table(model, tiny_prepared, seed=seed, windows=24,
                            settings=SAESettings(k=4, expansion=2, steps=200))
        tables.append(table.assign(run=f"s{seed}", seed=seed))
    first = tables[0]
    assert len(first) == 32 and first.site.iloc[0] == "encoder.out"
    weights = first[[f"w{i}" for i in range(16)]].to_numpy()
    assert np.allclose(np.linalg.norm(weights, axis=1), 1.0, atol=1e-5)
    joined = pd.concat(tables, ignore_index=True)
    (tmp_path / "tables").mkdir()
    joined[["run", "seed", *[c for c in joined.columns if c not in ("run", "seed")]]].to_csv(
        tmp_path / "tables" / "features.csv", index=False)
    findings = summarise(tmp_path)
    entry = findings["settings"]["all"]["features"]
    assert entry["fvu"]["seeds"] == 3 and np.isclose(entry["fvu"]["mean"], np.mean([t.fvu.iloc[0] for t in tables]))
    assert entry["site"] == "encoder.out"
    match = entry["matched_cosine"]
    assert match["mean"] > match["shuffled"] and isinstance(match["above_shuffled"], bool)
    table = pd.read_csv(tmp_path / "tables" / "findings_features.csv")
    assert set(table.figure) == {"fvu", "l0", "dead_fraction", "spliced_delta_mse", "relative_delta"}
    assert json.loads((tmp_path / "findings.json").read_text(), parse_constant=float)["settings"]["all"]["features"]
