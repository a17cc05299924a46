"""Head ablation studies: batched masks are the one-at-a-time loop, zero gates are zeroed weights,
mean ablation with its own window is a no-op, random and pruning studies obey their rules."""
import copy

import numpy as np
import pytest
import torch

from informer_lab.analysis.heads.ablation import (head_sweep, layer_masking, leave_one_in, n_to_mask, pruning_curve, random_head_sets,
                               random_masking, random_masking_summary, single_head_sweep)
from informer_lab.analysis.heads.mask_scoring import evaluate_masks, first_masked_site
from informer_lab.analysis.learning.windows import WindowDataset, limit_windows
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.heads.masking import all_heads, gates_with_heads_off, head_mask, masked_window_forecast, mean_contexts
from informer_lab.analysis.learning.training import evaluate
from informer_lab.model import HeadMask

WINDOWS = 96  # the first 96 test windows: several window batches, a few seconds per study


@pytest.fixture(scope="module")
def model(tiny_trained):
    return tiny_trained[0].model


@pytest.fixture(scope="module")
def subset(tiny_prepared):
    return limit_windows(tiny_prepared, "test", WINDOWS)


def assert_metrics_equal(ours, ref, atol=1e-6):
    assert ours.windows == ref.windows
    for field in ("mse", "mae", "mse_original", "mae_original"):
        a, b = getattr(ours, field), getattr(ref, field)
        assert abs(a - b) <= atol * max(1.0, abs(b)), (field, a, b)


def test_limit_windows_keeps_the_first_windows(tiny_prepared, subset):
    full, cut = WindowDataset(tiny_prepared, "test"), WindowDataset(subset, "test")
    assert len(cut) == WINDOWS and len(full) > 1000
    for i in (0, WINDOWS - 1):
        for a, b in zip(full[i], cut[i]):
            assert torch.equal(a, b)
    assert len(WindowDataset(subset, "val")) == len(WindowDataset(tiny_prepared, "val"))  # other splits untouched


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_batched_masks_equal_the_one_mask_at_a_time_loop(model, tiny_prepared, subset, mode):
    gen = torch.Generator().manual_seed(1)
    n = 7
    gates = (torch.rand(n, model.n_sites, 4, generator=gen) > 0.3).float()
    gates[0] = 1.0  # the baseline among them
    gates[1, :2] = 1.0  # touches only decoder sites: sorted after the encoder masks
    gates[2, 0, 1] = 0.5  # fractional gates are allowed too
    means = mean_contexts(model, tiny_prepared, "train", max_windows=16) if mode == "mean" else None
    # 32-window batches (3 of them: the generator runs on between batches) × 3 masks per call (3 chunks)
    together = evaluate_masks(model, subset, "test", gates, mode=mode, means=means, seed=5, batch_size=32,
                              max_variants_per_call=3)
    for k in range(n):
        alone = evaluate(model, subset, "test", seed=5, batch_size=32,
                         head_mask=HeadMask(gates[k:k + 1], None if means is None else means))
        assert_metrics_equal(together.metrics(k), alone)
    assert together.mse_per_step.shape == (n, 12)
    np.testing.assert_allclose(together.mse_per_step.mean(axis=1), together.mse, rtol=1e-12)


def test_masks_are_grouped_by_their_first_masked_site(model):
    gates = model.full_gates(4)
    gates[0, 3, 1] = 0.0
    gates[1, 0, 0] = 0.0
    gates[2, 2, 2], gates[2, 3, 3] = 0.0, 0.0
    assert first_masked_site(gates).tolist() == [3, 0, 2, model.n_sites]


def test_zero_gate_equals_zeroing_the_heads_out_projection_columns(model, subset):
    before = {k: v.clone() for k, v in model.state_dict().items()}
    sweep = single_head_sweep(model, subset, "test", seed=2)
    D = model.config.head_dim
    for site, head in [(0, 1), (1, 3), (2, 0), (3, 2)]:  # every kind of site (the tiny model has mix off)
        assert not model.attention_layer(model.sites[site]).mix
        edited = copy.deepcopy(model)
        with torch.no_grad():
            edited.attention_layer(edited.sites[site]).out_projection.weight[:, head * D:(head + 1) * D] = 0.0
        expected = evaluate(edited, subset, "test", seed=2)
        row = sweep[(sweep.site_index == site) & (sweep["head"] == head)].iloc[0]
        assert row.mse == pytest.approx(expected.mse, rel=1e-6, abs=1e-7)
        assert row.mae_original == pytest.approx(expected.mae_original, rel=1e-6, abs=1e-7)
    for k, v in model.state_dict().items():  # the fixture's model was not touched
        assert torch.equal(v, before[k]), k


def test_baseline_row_is_plain_evaluate_and_the_table_is_complete(model, subset):
    result = head_sweep(model, subset, "test", seed=4, batch_size=40)
    table, per_step = result.table, result.per_step
    assert len(table) == 1 + model.n_sites * 4
    base = table.iloc[0]
    assert (base["site"], base["head"]) == ("baseline", -1)
    assert base.delta_mse == base.delta_mae == base.delta_mse_original == 0
    plain = evaluate(model, subset, "test", seed=4, batch_size=40)
    assert base.mse == pytest.approx(plain.mse, rel=1e-6) and base.mae == pytest.approx(plain.mae, rel=1e-6)
    assert base.mse_original == pytest.approx(plain.mse_original, rel=1e-6)
    assert {"site", "kind", "layer", "replica", "head", "mse", "mae", "delta_mse", "delta_mae", "mse_original",
            "mae_original", "delta_mse_original"} <= set(table.columns)
    np.testing.assert_allclose(table.mse - table.delta_mse, base.mse, rtol=1e-12)
    assert list(table.site.iloc[1:5]) == ["encoder.0.0"] * 4 and list(table["head"].iloc[1:5]) == [0, 1, 2, 3]
    # per-step table: 12 steps per mask, averaging back to the mask's MSE
    assert len(per_step) == len(table) * 12
    means = per_step.groupby(["site", "head"], sort=False)["mse"].mean().to_numpy()
    np.testing.assert_allclose(means, table.mse.to_numpy(), rtol=1e-10)
    assert (per_step[per_step.site == "baseline"].delta_mse == 0).all()
    # removing heads changes the forecast: some delta is clearly non-zero
    assert table.delta_mse.abs().max() > 1e-4


def test_mean_ablation_with_the_evaluated_window_as_reference_changes_nothing(model, tiny_prepared):
    one = limit_windows(tiny_prepared, "test", 1)
    means = mean_contexts(model, one, "test", max_windows=1, seed=0)  # the context of window 0 itself
    sweep = single_head_sweep(model, one, "test", mode="mean", means=means, seed=0)
    assert sweep.delta_mse.abs().max() < 1e-6 and sweep.delta_mae.abs().max() < 1e-6  # float32 rounding only
    every = evaluate_masks(model, one, "test", torch.zeros(1, model.n_sites, 4), mode="mean", means=means, seed=0)
    assert every.mse[0] == pytest.approx(sweep.mse.iloc[0], rel=1e-5)
    zero = layer_masking(model, one, "test", mode="zero", seed=0)
    assert zero.delta_mse.iloc[1:].abs().max() > 1e-4  # while zeroing them does change it


def test_mean_ablation_matches_the_masked_window_forecast(model, tiny_prepared):
    """A second code path (analysis.heads.masking, one window, original units) gives the same error."""
    means = mean_contexts(model, tiny_prepared, "train", max_windows=8)
    off = [(0, 1), (2, 3), (3, 0)]
    one = limit_windows(tiny_prepared, "test", 1)
    ours = evaluate_masks(model, one, "test", gates_with_heads_off(model, off), mode="mean", means=means, seed=0)
    table = masked_window_forecast(model, tiny_prepared, "test", 0, head_mask(model, off, "mean", means)).table
    assert ours.mse_original[0] == pytest.approx(float(((table.masked - table.truth) ** 2).mean()), rel=1e-5)
    assert ours.mae_original[0] == pytest.approx(float(table.masked_error.mean()), rel=1e-5)


def test_leave_one_in_and_layer_masking_are_the_masks_they_say(model, subset):
    lo = leave_one_in(model, subset, "test", seed=1)
    layers = layer_masking(model, subset, "test", seed=1)
    assert len(lo) == 1 + model.n_sites * 4 and len(layers) == 1 + model.n_sites
    assert list(layers.site.iloc[1:]) == ["encoder.0.0", "encoder.0.1", "decoder_self.0", "cross.0"]
    kept = evaluate(model, subset, "test", seed=1,
                    head_mask=HeadMask(gates_with_heads_off(model, [(1, 0), (1, 1), (1, 3)])))
    row = lo[(lo.site_index == 1) & (lo["head"] == 2)].iloc[0]
    assert row.mse == pytest.approx(kept.mse, rel=1e-6)
    whole = evaluate(model, subset, "test", seed=1,
                     head_mask=HeadMask(gates_with_heads_off(model, [(2, h) for h in range(4)])))
    assert layers.iloc[3].mse == pytest.approx(whole.mse, rel=1e-6) and layers.iloc[3].n_masked == 4
    # the two sweeps batch their masks differently, and ProbSparse picks its kernels by a call's size: float rounding
    assert lo.mse.iloc[0] == pytest.approx(layers.mse.iloc[0], rel=1e-9)


def test_random_masking_masks_round_k_n_heads_and_is_reproducible(model, subset):
    N = model.n_sites * 4  # 16
    assert [n_to_mask(k, N) for k in (0.0, 0.2, 0.25, 0.3, 1 / 32, 1.0)] == [0, 3, 4, 5, 1, 16]  # 3.2, 4.8, 0.5 → up
    sets = random_head_sets(model, 0.3, 6, seed=7)
    assert all(len(s) == 5 == len(set(s)) for s in sets) and len({tuple(s) for s in sets}) > 1
    assert sets == random_head_sets(model, 0.3, 6, seed=7) and sets != random_head_sets(model, 0.3, 6, seed=8)
    a = random_masking(model, subset, "test", fraction=0.3, repeats=4, seed=7)
    b = random_masking(model, subset, "test", fraction=0.3, repeats=4, seed=7)
    assert a.equals(b)
    assert list(a.repeat) == [0, 1, 2, 3] and (a.n_masked == 5).all()
    assert all(len(m.split(";")) == 5 for m in a.masked_heads)
    np.testing.assert_allclose(a.mse - a.delta_mse, (a.mse - a.delta_mse).iloc[0], rtol=1e-12)  # one baseline
    # each row is the evaluation of the heads it names, paired with the baseline's key samples
    labels = {f"{model.sites[s].name}:{h}": (s, h) for s, h in all_heads(model)}
    off = [labels[x] for x in a.masked_heads.iloc[2].split(";")]
    assert off == sets[2]
    alone = evaluate(model, subset, "test", head_mask=HeadMask(gates_with_heads_off(model, off)))
    assert a.mse.iloc[2] == pytest.approx(alone.mse, rel=1e-6)
    summary = random_masking_summary(a)
    assert summary[summary["quantile"] == 0.5].delta_mse.iloc[0] == pytest.approx(a.delta_mse.median())
    assert summary[summary["quantile"] == "mean"].delta_mae.iloc[0] == pytest.approx(a.delta_mae.mean())


@pytest.mark.parametrize("importance", ["ablation", "gradient"])
def test_pruning_curve_is_monotone_and_stops_by_the_tolerance_rule(model, tiny_prepared, importance):
    tolerance = 0.05
    curve = pruning_curve(model, tiny_prepared, step_fraction=0.25, tolerance=tolerance, importance=importance,
                          max_windows=32)
    N = model.n_sites * 4
    assert curve.step.tolist() == list(range(len(curve))) and curve.n_removed.iloc[0] == 0
    assert (np.diff(curve.n_removed) == 4).all()  # round(0.25 · 16) per step
    np.testing.assert_allclose(curve.fraction_removed, curve.n_removed / N)
    limit = (1 + tolerance) * curve.val_mse.iloc[0]
    assert (curve.val_mse.iloc[:-1] <= limit).all() and curve.within_tolerance.iloc[:-1].all()
    last = curve.iloc[-1]
    assert (last.val_mse > limit and not last.within_tolerance) or (last.n_removed == N and last.within_tolerance)
    for prev, nxt in zip(curve.removed_heads, curve.removed_heads.iloc[1:]):  # cumulative: each extends the last
        assert nxt.startswith(prev)
    # step 0 is the unmasked model, reported on the test split's first 32 windows
    test32 = limit_windows(tiny_prepared, "test", 32)
    assert curve.mse.iloc[0] == pytest.approx(evaluate(model, test32, "test").mse, rel=1e-6)
    assert curve.val_mse.iloc[0] == pytest.approx(evaluate(model, limit_windows(tiny_prepared, "val", 32), "val").mse,
                                                  rel=1e-6)
    if importance == "ablation" and len(curve) > 1:  # step 1 removes the 4 heads with the lowest val ΔMSE
        sweep = single_head_sweep(model, tiny_prepared, "val", max_windows=32).iloc[1:]
        lowest = sweep.sort_values("delta_mse", kind="stable").iloc[:4]
        assert set(curve.newly_removed.iloc[1].split(";")) == {f"{r.site}:{r.head}" for r in lowest.itertuples()}


def test_bad_arguments_are_refused(model, subset):
    with pytest.raises(ValueError, match="expected"):
        evaluate_masks(model, subset, "test", torch.ones(2, 3, 4))
    with pytest.raises(ConfigError, match="fraction"):
        random_masking(model, subset, fraction=1.5, repeats=2)
    with pytest.raises(ConfigError, match="mode"):
        single_head_sweep(model, subset, mode="resample")


def test_sweep_intervals_are_those_of_each_windows_paired_difference(model, tiny_prepared):
    """delta_mse_lo/hi recomputed by hand: per-window MSE of the plain forward and of the forward with one head off
    (`predict`, one mask at a time), their per-window difference, its mean's interval (analysis.intervals)."""
    from informer_lab.analysis.intervals import mean_intervals
    from informer_lab.analysis.row_memory import data_span
    from informer_lab.analysis.learning.training import predict

    subset = tiny_prepared  # the whole test split: 1,741 windows, 29 spans of 60 (head (1, 2) has an interval there)

    table = head_sweep(model, subset, "test", seed=0).table
    row = table[(table["site_index"] == 1) & (table["head"] == 2)].iloc[0]
    base, truth = predict(model, subset, "test", seed=0)
    off, _ = predict(model, subset, "test", seed=0, head_mask=HeadMask(gates_with_heads_off(model, [(1, 2)])))
    diff = ((off - truth) ** 2).mean(axis=(1, 2)) - ((base - truth) ** 2).mean(axis=(1, 2))  # [windows]
    est, lo, hi = mean_intervals(diff[:, None], span=data_span(subset, "test"))  # the overlap and the rows' memory
    assert np.isfinite(lo[0])
    assert row["delta_mse"] == pytest.approx(est[0], abs=1e-7)
    assert (row["delta_mse_lo"], row["delta_mse_hi"]) == pytest.approx((lo[0], hi[0]), abs=1e-7)  # float32 forecasts
    assert row["delta_mse_lo"] <= row["delta_mse"] <= row["delta_mse_hi"]
    baseline = table.iloc[0]
    assert baseline["delta_mse_lo"] == baseline["delta_mse_hi"] == 0.0  # the baseline against itself
    short = head_sweep(model, limit_windows(tiny_prepared, "test", 300), "test").table  # 5 spans: too few
    heads = short.iloc[1:]
    assert heads["delta_mse_lo"].isna().all() and heads["delta_mse_hi"].isna().all()  # unknown, not zero-width
    assert heads["delta_mse_p"].isna().all() and heads["interval"].str.startswith("no interval").all()


def test_removable_heads_are_the_bh_rejections_of_a_one_sided_test_under_the_threshold(model, tiny_prepared):
    """Removable: H0 ΔMSE ≥ 5 % of the baseline against ΔMSE below it, the one-sided t p-value from the same standard
    error and degrees of freedom as the interval, Benjamini–Hochberg across the heads. Never more heads than the raw
    interval (upper bound under the threshold) or the point estimates allow; none without an interval."""
    from scipy import stats

    from informer_lab.analysis.heads.ablation import REMOVABLE, removable_heads
    from informer_lab.analysis.heads.lists import head_lists

    table = head_sweep(model, tiny_prepared, "test").table
    lists = head_lists(table)
    heads, baseline = lists.table, table["mse"].iloc[0]
    limit = REMOVABLE * baseline
    tested = heads["delta_mse_se"].notna().to_numpy()
    assert 3 <= tested.sum() == lists.tested
    p = stats.t.cdf((heads["delta_mse"] - limit) / heads["delta_mse_se"], heads["delta_mse_dof"])
    np.testing.assert_allclose(heads["removable_p"], p, rtol=1e-9)  # NaN where there is no interval
    np.testing.assert_allclose(heads["removable_p_bh"][tested], stats.false_discovery_control(p[tested]), rtol=1e-9)
    assert (heads["removable"] == (heads["removable_p_bh"] <= 0.05)).all()
    kept = removable_heads(table)
    assert list(kept["head"]) == list(heads.loc[heads["removable"], "head"])
    assert set(kept.index) <= set(heads.index[heads["removable_raw"]])  # BH never lists more than the raw rule
    assert (kept["delta_mse"] < limit).all()
    two = np.where(tested, stats.t.sf(np.abs(heads["delta_mse"] / heads["delta_mse_se"]), heads["delta_mse_dof"]) * 2,
                   np.nan)
    np.testing.assert_allclose(heads["delta_mse_p"], two, rtol=1e-9)
    assert (heads["important"] <= (heads["delta_mse"] > 0)).all()
    assert (heads["helpful"] <= (heads["delta_mse"] < 0)).all()
    assert not heads.loc[~tested, ["important", "helpful", "removable"]].any().any()
    few = head_lists(head_sweep(model, limit_windows(tiny_prepared, "test", 120), "test").table)
    assert few.tested == 0 and not few.table[["important", "helpful", "removable"]].any().any()
    assert "no interval" in few.summary()
