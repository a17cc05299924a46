"""The benchmark's metrics against a brute-force enumeration (sklearn is no dependency), removal scores against a linear
model whose answer is exact, and a quick benchmark run end to end."""
import numpy as np
import pandas as pd
import pytest
import torch

from informer_lab.analysis.circuits.benchmark import BenchmarkSettings, run_benchmark, train_run
from informer_lab.analysis.circuits.agreement import metric_agreement
from informer_lab.analysis.circuits.benchmark_files import write_benchmark
from informer_lab.analysis.circuits.horizon import TABLE_COLUMNS, horizon_table
from informer_lab.analysis.circuits.scores import (COLUMNS, HEAD_INSTRUMENTS, INPUT_INSTRUMENTS, INPUT_METRICS, aup, auprc, aur,
                                      head_rows, metric_tables, rank_of, removal_scores, top_cells)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def brute_force(scores, truth):
    """(AUP, AUR, AP) by enumeration: every distinct min–max scaled score τ a threshold, the cells with score ≥ τ
    selected; trapezoids over τ for AUP / AUR, Σ (R_n − R_{n−1}) P_n over τ decreasing for AP."""
    s = np.asarray(scores, dtype=float).ravel()
    t = np.asarray(truth, dtype=bool).ravel()
    s = (s - s.min()) / (s.max() - s.min()) if s.max() > s.min() else np.zeros_like(s)
    taus = sorted(set(s.tolist()))
    points = []
    for tau in taus:
        selected = s >= tau
        hits = (selected & t).sum()
        points.append((tau, hits / selected.sum(), hits / t.sum()))
    area = lambda k: sum((b[0] - a[0]) * (a[k] + b[k]) / 2 for a, b in zip(points, points[1:]))  # noqa: E731
    ap, previous = 0.0, 0.0
    for tau, precision, recall in reversed(points):
        ap += (recall - previous) * precision
        previous = recall
    return area(1), area(2), ap


def test_aup_aur_auprc_equal_a_brute_force_enumeration_ties_included():
    rng = np.random.default_rng(0)
    cases = [([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]),  # sklearn's own example: AP 0.8333
             ([1, 1, 0, 0], [1, 0, 1, 0]),  # a tie across a true and a false cell
             ([3, 3, 3, 1, 1, 0, 2], [1, 0, 1, 0, 1, 0, 0])]
    cases += [(rng.integers(0, 4, size=12), rng.random(12) < 0.3) for _ in range(30)]  # many ties
    cases += [(rng.random((6, 5)), rng.random((6, 5)) < 0.2) for _ in range(10)]
    for scores, truth in cases:
        if not np.any(truth):
            continue
        expected = brute_force(scores, truth)
        got = (aup(scores, truth), aur(scores, truth), auprc(scores, truth))
        assert np.allclose(got, expected, atol=1e-12), (scores, truth, got, expected)
    assert auprc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == pytest.approx(5 / 6)
    assert auprc([1, 1, 0, 0], [1, 0, 1, 0]) == pytest.approx(0.5)


def test_edge_cases_perfect_constant_and_rounding_maps():
    truth = np.array([1, 1, 0, 0, 0, 0, 0, 0], dtype=bool)
    perfect = truth.astype(float)
    assert aup(perfect, truth) == pytest.approx((0.25 + 1) / 2) and aur(perfect, truth) == 1.0
    assert auprc(perfect, truth) == 1.0
    constant = np.full(8, 0.3)
    assert aup(constant, truth) == 0.0 and aur(constant, truth) == 0.0 and auprc(constant, truth) == 0.25
    rounding = 0.0103 + 1e-10 * perfect  # float rounding of a flat map (flow) is no ranking
    assert aup(rounding, truth) == 0.0 and auprc(rounding, truth) == 0.25
    with pytest.raises(ValueError):
        auprc(perfect, np.zeros(8, dtype=bool))


def test_top_cells_break_ties_at_random_and_rank_of_averages_ties():
    rng = np.random.default_rng(1)
    scores = np.array([[5.0, 1.0], [3.0, 3.0], [3.0, 0.0]])
    picks = {tuple(np.flatnonzero(top_cells(scores, 2, rng))) for _ in range(40)}
    assert all(0 in p for p in picks) and len(picks) == 3  # 5 always; one of the three tied 3s
    assert rank_of(np.array([2.0, 5.0, 5.0, 1.0]), 1) == 1.5 and rank_of(np.array([2.0, 5.0, 1.0]), 1) == 1.0
    top1, rank = head_rows("k", 0, "direct_share", np.array([3.0, 1.0]), -1, "an encoder head: not ranked")
    assert top1["value"] == 0.0 and np.isnan(rank["value"])  # an instrument that cannot see the head misses it
    assert all(np.isnan(r["value"]) for r in head_rows("k", 0, "atp", None, 0, "skipped"))


class Linear(torch.nn.Module):
    """y_h = Σ w·x over the planted cells of step h (lag `lag` of the target column and lag 2 of a driver column)."""

    def __init__(self, L, C, pred_len, lag=6):
        super().__init__()
        W = torch.zeros(pred_len, L, C)
        for h in range(1, pred_len + 1):
            W[h - 1, L - 1 + h - lag, C - 1] = 0.9
            if L - 1 + h - 2 < L:
                W[h - 1, L - 1 + h - 2, 0] = 0.5
        self.register_buffer("W", W)

    def forward(self, x):  # [N, L, C] → [N, pred_len]
        return torch.einsum("nlc,hlc->nh", x.float(), self.W)


def test_an_oracle_attribution_is_the_most_comprehensive_and_sufficient_on_a_linear_model():
    L, C, P = 24, 4, 6
    model = Linear(L, C, P)
    rng = np.random.default_rng(2)
    x = rng.uniform(0.5, 1.5, size=(L, C)).astype(np.float32)  # positive inputs and weights: no cancellation
    truth = model(torch.as_tensor(x)[None])[0].double().numpy()  # the model is the process: its error is 0
    steps = [1, 2]
    W = model.W.numpy()
    oracle = np.stack([np.abs(W[h - 1] * x) for h in steps])
    maps = {"oracle": oracle, "anti": -oracle, "random": rng.random((2, L, C))}
    draws = [rng.random((2, L, C)) for _ in range(100)]
    maps.update({f"draw{k}": d for k, d in enumerate(draws)})
    out = removal_scores(model, x, truth, steps, maps, share=0.2, draws=8, rng=rng)
    best = float(np.mean(truth[[h - 1 for h in steps]] ** 2))  # every planted cell removed: the forecast drops to 0
    assert out["oracle"]["comprehensiveness"] == pytest.approx(best, rel=1e-5)
    assert out["oracle"]["sufficiency"] == pytest.approx(0.0, abs=1e-9)  # kept alone, they make the whole forecast
    others = [v for k, v in out.items() if k != "oracle"]
    assert all(out["oracle"]["comprehensiveness"] >= o["comprehensiveness"] - 1e-9 for o in others)
    assert all(out["oracle"]["sufficiency"] <= o["sufficiency"] + 1e-9 for o in others)
    assert out["anti"]["comprehensiveness"] == pytest.approx(0.0, abs=1e-9)
    assert out["anti"]["sufficiency"] == pytest.approx(best, rel=1e-5)
    assert out["oracle"]["comprehensiveness_excess"] > 0 > out["oracle"]["sufficiency_excess"]
    assert out["oracle"]["comprehensiveness_random"] == out["anti"]["comprehensiveness_random"]  # one shared draw


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    result = run_benchmark(BenchmarkSettings.quick())
    folder = tmp_path_factory.mktemp("bench")
    return result, write_benchmark(result, folder)


def test_a_quick_benchmark_writes_every_instruments_scores_and_the_report(quick):
    result, files = quick
    scores_path, html_path = files["scores.csv"], files["report.html"]
    scores = pd.read_csv(scores_path)
    assert list(scores.columns) == list(COLUMNS)
    for instrument in ("model", *INPUT_INSTRUMENTS, "lag_profile", *HEAD_INSTRUMENTS):
        rows = scores[scores["instrument"] == instrument]
        assert len(rows), instrument
        skipped = rows["note"].fillna("").str.contains("skipped").all()
        assert skipped or np.isfinite(rows["value"]).any(), (instrument, rows)
    for instrument in INPUT_INSTRUMENTS:
        rows = scores[scores["instrument"] == instrument].set_index("metric")
        assert set(INPUT_METRICS) <= set(rows.index) and np.isfinite(rows.loc[list(INPUT_METRICS), "value"]).all()
        areas = rows.loc[["aup", "aur", "auprc"], "value"]
        assert ((areas >= 0) & (areas <= 1)).all()
    heads = scores[(scores["metric"] == "top1") & (scores["instrument"] != "random")]
    assert heads["value"].dropna().isin([0.0, 1.0]).all()
    control = scores[scores["instrument"] == "random"].set_index("metric")["value"]
    if "top1" in control:  # a planted head was found: the random ranking's expectations over every head
        heads_scored = round(1 / control["top1"])
        assert control["rank"] == pytest.approx((heads_scored + 1) / 2)
    verdicts = pd.read_csv(files["instruments.csv"])
    assert list(verdicts.columns) == ["instrument", "evidence", "metric", "value", "low", "high", "random", "models",
                                      "verdict"]
    assert set(verdicts["instrument"]) >= {"integrated_gradients", "flow", "attention", "ablation"}
    agreement = pd.read_csv(files["agreement.csv"])
    assert list(agreement.columns) == ["perturbation_metric", "planted_metric", "tau", "p_value", "instruments"]
    every = metric_agreement(result.scores, {("seasonal_ar", 0)})  # the quick model need not learn: count it anyway
    assert "degradation_excess" in set(every["perturbation_metric"])
    assert list(pd.read_csv(files["horizon.csv"]).columns) == list(TABLE_COLUMNS)
    curve = horizon_table(result.curves, {("seasonal_ar", 0)})
    assert set(curve["step"]) == set(range(1, result.settings.pred_len + 1)) and curve["models"].eq(1).all()
    assert set(curve["instrument"]) == set(INPUT_INSTRUMENTS) - {"random"} and len(result.curves)
    assert set(result.curves["instrument"]) == set(INPUT_INSTRUMENTS)
    models = pd.read_csv(files["models.csv"])
    assert list(models.columns) == ["kind", "seed", "mse", "bayes_mse", "learned"] and len(models) == 1
    assert models["mse"].iloc[0] > 0 and models["bayes_mse"].iloc[0] > 0
    page = html_path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "auprc" in page and "comprehensiveness_excess" in page
    assert page.index("Degradation per horizon step") < page.index("Every score")  # before the notes and scores
    assert "https://" not in page.split("<script>", 1)[0]  # nothing fetched (the page's head links nothing)
    tables = metric_tables(result.scores)
    assert list(tables["aup"].columns) == ["instrument", "seasonal_ar"]


def test_units_in_processes_give_the_one_process_table(quick, tmp_path, monkeypatch):
    import sys
    import types

    script = tmp_path / "host.py"  # a host whose __main__ must not run again in a child (Streamlit's app script)
    script.write_text("raise SystemExit('the host script ran in a child')\n")
    host = types.ModuleType("__main__")
    host.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", host)
    alone = quick[0]
    ticks = []
    both = run_benchmark(BenchmarkSettings.quick(seeds=(0, 1)), processes=2, progress=lambda d, t: ticks.append((d, t)))
    assert list(both.scores.drop_duplicates(["kind", "seed"])["seed"]) == [0, 1]  # the units' order, not completion's
    first = both.scores[both.scores["seed"] == 0].reset_index(drop=True)
    pd.testing.assert_frame_equal(first.drop(columns="note"), alone.scores.drop(columns="note"), rtol=1e-6)
    assert len(both.models) == 2 and len(both.curves) == 2 * len(alone.curves)
    assert ticks[-1][0] == ticks[-1][1] and [d for d, _ in ticks] == sorted(d for d, _ in ticks)
    assert sys.modules["__main__"] is host


def test_settings_refuse_unknown_kinds():
    with pytest.raises(ValueError, match="kinds"):
        BenchmarkSettings(kinds=("seasonal",))


def test_the_multivariate_kind_forecasts_every_column_and_explains_the_target():
    result = run_benchmark(BenchmarkSettings.quick(kinds=("multivariate",)))
    scores = result.scores
    fit = scores[scores["instrument"] == "model"]["note"].iloc[0]
    assert "Bayes" in fit and len(result.models) == 1
    quick = BenchmarkSettings.quick()
    model, prepared, _, answer = train_run("multivariate", 0, quick)
    assert model.config.c_out == prepared.enc_in > 1 and answer.target in prepared.target_columns
    assert train_run("driver", 0, quick)[0].config.c_out == 1  # the same series, the target alone (MS)
    for instrument in INPUT_INSTRUMENTS:
        rows = scores[scores["instrument"] == instrument].set_index("metric")
        assert np.isfinite(rows.loc[list(INPUT_METRICS), "value"]).all(), instrument

