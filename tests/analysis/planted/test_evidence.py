"""Each instrument's kind of evidence, and its verdict against planted answers: the paired difference from the random
control over the models that learned, with a t interval over models (checked against scipy on scripted scores)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from informer_lab.analysis.circuits.scores import INPUT_INSTRUMENTS, HEAD_INSTRUMENTS
from informer_lab.analysis.planted.evidence import (INSTRUMENTS, KINDS, VERDICT_COLUMNS, evidence_line,
                                                    instrument_verdicts, read_verdicts)


def scores_of(values: dict[str, list[float]], learned: list[bool], metric: str = "auprc") -> pd.DataFrame:
    """A benchmark's scores: one (kind, seed) model per position of the lists."""
    rows = []
    for i, ok in enumerate(learned):
        kind, seed = ("seasonal_ar", "driver")[i % 2], i
        rows.append({"kind": kind, "seed": seed, "instrument": "model", "metric": "mse_over_bayes",
                     "value": 1.2 if ok else 2.0})
        for name, vals in values.items():
            rows.append({"kind": kind, "seed": seed, "instrument": name, "metric": metric, "value": vals[i]})
    return pd.DataFrame(rows)


def test_every_benchmarked_instrument_has_a_kind_and_every_kind_is_named():
    assert {i.kind for i in INSTRUMENTS.values()} <= set(KINDS) - {"validated"}
    benchmarked = {i.benchmark for i in INSTRUMENTS.values() if i.benchmark}
    assert benchmarked == (set(INPUT_INSTRUMENTS) | set(HEAD_INSTRUMENTS)) - {"random"}


def test_the_verdict_is_the_paired_t_interval_over_the_models_that_learned():
    flow = [0.010, 0.012, 0.009, 0.011, 0.5]
    random = [0.040, 0.020, 0.041, 0.038, 0.1]
    ig = [0.64, 0.55, 0.61, 0.60, 0.0]
    table, learned, total = instrument_verdicts(scores_of({"flow": flow, "random": random,
                                                           "integrated_gradients": ig}, [True] * 4 + [False]))
    assert (learned, total) == (4, 5) and list(table.columns) == list(VERDICT_COLUMNS)
    row = table.set_index("instrument").loc["flow"]
    difference = np.subtract(flow[:4], random[:4])  # the fifth model did not learn: left out
    half = stats.t.ppf(0.975, 3) * difference.std(ddof=1) / 2
    assert row["models"] == 4 and row["value"] == pytest.approx(np.mean(flow[:4]))
    assert row["random"] == pytest.approx(np.mean(random[:4]))
    assert row["verdict"].startswith("worse than random")
    assert f"[{difference.mean() - half:+.3g}, {difference.mean() + half:+.3g}]" in row["verdict"]
    assert table.set_index("instrument").loc["integrated_gradients", "verdict"].startswith("better than random")


def test_an_interval_that_holds_zero_is_no_better_than_random_and_too_few_models_are_not_judged():
    table, _, _ = instrument_verdicts(scores_of({"rollout": [0.05, 0.03, 0.06], "random": [0.04, 0.04, 0.04]},
                                                [True] * 3))
    assert table.iloc[0]["verdict"].startswith("no better than random")
    table, _, _ = instrument_verdicts(scores_of({"rollout": [0.5, 0.6, 0.7], "random": [0.04, 0.04, 0.04]},
                                                [True, True, False]))
    assert table.iloc[0]["verdict"].startswith("not judged") and math.isnan(table.iloc[0]["low"])


def test_a_lower_rank_is_better():
    table, _, _ = instrument_verdicts(scores_of({"ablation": [1, 1, 2, 1], "random": [8.5, 8.5, 8.5, 8.5]},
                                                [True] * 4, metric="rank"))
    assert table.iloc[0]["verdict"].startswith("better than random")


def test_less_error_from_the_top_cells_alone_is_more_sufficient():
    # sufficiency: the error added when only the top cells are kept (ERASER): IG adding none beats random cells
    table, _, _ = instrument_verdicts(scores_of({"integrated_gradients": [0.0, 0.01, -0.01, 0.0],
                                                 "random": [0.6, 0.55, 0.7, 0.62]}, [True] * 4, metric="sufficiency"))
    assert table.iloc[0]["verdict"].startswith("better than random")


def test_an_interval_of_a_share_stays_within_0_and_1():
    table, _, _ = instrument_verdicts(scores_of({"ablation": [1, 0, 1, 1, 0], "random": [0.0625] * 5},
                                                [True] * 5, metric="top1"))
    assert table.iloc[0]["low"] >= 0 and table.iloc[0]["high"] <= 1


def test_the_line_says_the_kind_and_the_score_beside_the_control(tmp_path):
    table, _, _ = instrument_verdicts(scores_of({"flow": [0.010, 0.012, 0.009], "random": [0.04, 0.02, 0.041]},
                                                [True] * 3))
    path = tmp_path / "instruments.csv"
    table.to_csv(path, index=False)
    line = evidence_line("flow", read_verdicts(path))
    assert line.startswith("Attention flow — descriptive evidence") and "against 0.0337 for random cells" in line
    assert "than random" in line
    assert evidence_line("composition").endswith("Not scored against planted answers.")
    assert "has not been run" in evidence_line("rollout", table.iloc[0:0])


def test_the_lab_ships_a_measured_verdict_for_every_benchmarked_instrument():
    shipped = read_verdicts()  # analysis/planted/measured/instruments.csv, written by `cli.py benchmark`
    assert shipped is not None, "the measured table is missing or unreadable"
    for inst in INSTRUMENTS.values():
        if inst.benchmark is None:
            continue
        row = shipped[(shipped["instrument"] == inst.name) & (shipped["metric"] == inst.metric)]
        assert len(row) == 1, inst.name
        verdict = row["verdict"].iloc[0]
        assert verdict.startswith(("better than random", "no better than random", "worse than random",
                                   "not judged")), verdict
        if not verdict.startswith("not judged"):  # a verdict is a paired interval over at least MIN_MODELS models
            assert row["models"].iloc[0] >= 3 and np.isfinite(row["low"].iloc[0])


def test_a_share_of_models_gets_the_exact_binomial_interval_against_chance():
    # 3 of 5 models rank the planted head first, chance 1/16: Clopper–Pearson bounds are Beta quantiles
    table, _, _ = instrument_verdicts(scores_of({"ablation": [1, 0, 1, 1, 0], "random": [0.0625] * 5},
                                                [True] * 5, metric="top1"))
    row = table.iloc[0]
    assert row["low"] == pytest.approx(stats.beta.ppf(0.025, 3, 3)) and row["high"] == pytest.approx(
        stats.beta.ppf(0.975, 4, 2))
    assert row["verdict"].startswith("better than random")
    none, _, _ = instrument_verdicts(scores_of({"ablation": [0, 0, 0, 0, 0], "random": [0.0625] * 5},
                                               [True] * 5, metric="top1"))
    assert none.iloc[0]["verdict"].startswith("no better than random")  # 0 of 5 cannot exclude 1/16
