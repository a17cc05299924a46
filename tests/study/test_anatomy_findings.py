"""A study's findings gain the forecast lens per layer and the largest direct shares across seeds, from the tables the
study's `lens` and `shares` analyses write (study.tasks), joined as the runner joins them."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from informer_lab.analysis.anatomy.direct import direct_shares, top_heads
from informer_lab.analysis.anatomy.lens import forecast_lens
from informer_lab.analysis.data import load_csv
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from informer_lab.study.findings import summarise
from tests.conftest import SAMPLE_CSV


def test_lens_and_shares_findings_over_seeds(tiny_trained, tmp_path):
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    from informer_lab.analysis.circuits.composition import composition_scores

    lens, shares, composition = [], [], []
    for seed in (0, 1, 2):  # three key-sample seeds stand in for three runs: the same tables, other values
        front = {"run": f"seed{seed}", "seed": seed}
        lens.append(forecast_lens(checkpoint.model, prepared, "test", windows=64, seed=seed, fit_windows=64)
                    .overall.assign(**front))
        table = top_heads(direct_shares(checkpoint.model, prepared, "test", windows=32, seed=seed), k=8)
        shares.append(table.assign(**front))
        composition.append(composition_scores(checkpoint.model, draws=50, seed=seed).table[
            ["sender", "receiver", "kind", "score", "random_mean", "random_q95", "above_q95"]].assign(**front))
    (tmp_path / "tables").mkdir()
    pd.concat(lens).to_csv(tmp_path / "tables" / "lens.csv", index=False)
    pd.concat(shares).to_csv(tmp_path / "tables" / "shares.csv", index=False)
    pd.concat(composition).to_csv(tmp_path / "tables" / "composition.csv", index=False)
    findings = summarise(tmp_path)

    table = pd.read_csv(tmp_path / "tables" / "findings_lens.csv")
    assert set(table["lens"]) == {"decoder", "encoder", "encoder_tuned"} and (table["seeds"] == 3).all()
    assert (table["mse_seeds_lo"] <= table["mse_mean"] + 1e-12).all()
    assert (table["mse_mean"] <= table["mse_seeds_hi"] + 1e-12).all()
    joined = pd.concat(lens)
    decoder = joined[(joined["lens"] == "decoder") & (joined["layer"] == 0)]["mse"]
    row = table[(table["lens"] == "decoder") & (table["layer"] == 0)].iloc[0]
    assert np.isclose(row["mse_mean"], decoder.mean())
    top = pd.read_csv(tmp_path / "tables" / "findings_shares.csv")
    assert set(top["rank"]) == {1, 2, 3} and set(top["column"]) == set(prepared.target_columns)
    for _, part in top.groupby("column"):  # the largest head's share is at least the second's, seed by seed
        assert part.sort_values("rank")["mean_abs_mean"].is_monotonic_decreasing
    assert top["largest_head_sites"].str.contains("decoder_self.0|cross.0").all()
    entry = json.loads((tmp_path / "findings.json").read_text(), parse_constant=float)["settings"]["all"]
    assert "decoder 0" in entry["lens_mse"] and entry["lens_mse"]["decoder 0"]["seeds"] == 3
    assert any(key.endswith("rank 1") for key in entry["top_direct_shares"])
    assert findings["settings"]["all"]["lens_mse"]["encoder 1"]["mean"] == row["mse_mean"]
    matched = pd.read_csv(tmp_path / "tables" / "findings_composition.csv")
    first = composition[0]
    assert len(matched) == len(first) and (matched["seeds"] == 3).all()
    assert matched["matched_by"].str.startswith("head index").all()  # no roles analysis: said so
    one = matched[(matched["sender"] == first["sender"].iloc[0]) & (matched["receiver"] == first["receiver"].iloc[0])
                  & (matched["kind"] == first["kind"].iloc[0])].iloc[0]
    assert np.isclose(one["score_mean"], first["score"].iloc[0])  # the weights' score does not depend on the seed
    assert entry["composition"]["pairs"] == len(first)
