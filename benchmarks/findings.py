"""The analyses' headline numbers for one checkpoint: what the "findings" on the analyses issue report.

    python benchmarks/findings.py --checkpoint runs/sample --csv sample_data/sample.csv
    python benchmarks/findings.py --checkpoint /tmp/etth1 --csv ../shared/data/ETT/ETTh1.csv --seeds 20

Prints, on the test split unless said otherwise:
  1. the baseline MSE/MAE (standardised);
  2. the single-head sweep (zero and mean ablation): how many heads cost < 5% MSE when removed alone,
     the most important heads, and the sweep's cost against one plain evaluation (same process);
  3. random masking of 20% of all heads (R repeats): the distribution of ΔMSE/MSE;
  4. iterative pruning (10% of the heads per step, chosen on val, stop at +10% val MSE);
  5. gradient head importance (captum Saliency on val) against the measured single-head ΔMSE (Spearman ρ);
  6. sampled vs exact top-u agreement per attention site, over `--seeds` key-sample seeds and `--windows`
     windows, with the chance level u / L_Q;
  7. the ProbSparse-vs-full counterfactual gap ε and every model's and baseline's MSE.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from informer_lab.analysis.heads import ablation  # noqa: E402
from informer_lab.analysis.checkpoints.folder import load_checkpoint  # noqa: E402
from informer_lab.analysis.compare.comparison import compare_forecasts  # noqa: E402
from informer_lab.analysis.data import load_csv  # noqa: E402
from informer_lab.analysis.heads.importance import head_importance, rank_correlation  # noqa: E402
from informer_lab.analysis.attention.sparsity import sparsity_report  # noqa: E402
from informer_lab.analysis.learning.training import evaluate  # noqa: E402
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint  # noqa: E402

REMOVABLE = 0.05  # a head is "removable" when knocking it out alone costs less than 5% MSE


def _timed(fn, *args, **kwargs):
    started = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - started


def sweep_findings(model, prepared, split: str, seed: int) -> dict:
    plain, t_plain = _timed(evaluate, model, prepared, split, seed=seed)
    found = {"baseline": plain}
    print(f"\n1. baseline ({split}, {plain.windows} windows): MSE {plain.mse:.4f}  MAE {plain.mae:.4f} "
          f"(original units: MSE {plain.mse_original:.4g}, MAE {plain.mae_original:.4g})")
    for mode in ("zero", "mean"):
        table, t_sweep = _timed(ablation.single_head_sweep, model, prepared, split, mode=mode, seed=seed)
        heads = table[table["site"] != "baseline"].copy()
        heads["relative"] = heads["delta_mse"] / plain.mse
        removable = int((heads["relative"] < REMOVABLE).sum())
        n = len(heads)
        found[mode] = heads
        top = heads.sort_values("delta_mse", ascending=False).head(3)
        print(f"2. single-head sweep, {mode} ablation: {removable} of {n} heads ({removable / n:.0%}) cost < "
              f"{REMOVABLE:.0%} MSE alone; ΔMSE/MSE median {heads['relative'].median():+.2%}, "
              f"max {heads['relative'].max():+.2%}, min {heads['relative'].min():+.2%}")
        print("   most important: " + ", ".join(f"{r.site} h{r.head} ({r.relative:+.1%})" for r in top.itertuples()))
        print(f"   sweep {t_sweep:.2f}s vs one evaluation {t_plain:.2f}s: cost ratio "
              f"{t_sweep / ((n + 1) * t_plain):.3f} of (heads + 1) evaluations")
    return found


def random_findings(model, prepared, split: str, seed: int, repeats: int, baseline_mse: float) -> None:
    table = ablation.random_masking(model, prepared, split, fraction=0.2, repeats=repeats, seed=seed, eval_seed=seed)
    rel = table["delta_mse"] / baseline_mse
    q = np.quantile(rel, [0.05, 0.5, 0.95])
    print(f"3. random 20% masking ({int(table['n_masked'].iloc[0])} heads, {repeats} repeats, zero ablation): "
          f"ΔMSE/MSE 5% {q[0]:+.1%}, median {q[1]:+.1%}, 95% {q[2]:+.1%}; "
          f"{int((rel < REMOVABLE).sum())} of {repeats} draws cost < {REMOVABLE:.0%}")


def pruning_findings(model, prepared, seed: int) -> None:
    curve = ablation.pruning_curve(model, prepared, seed=seed)
    kept = curve[curve["within_tolerance"]]
    last = kept.iloc[-1]
    print(f"4. pruning (ablation importance, 10% per step, chosen on val, stop at +10% val MSE): "
          f"{int(last['n_removed'])} heads ({last['fraction_removed']:.0%}) removed within tolerance; "
          f"test MSE {curve['mse'].iloc[0]:.4f} → {last['mse']:.4f}")
    print("   curve (removed: test MSE / val MSE): " + ", ".join(
        f"{int(r.n_removed)}: {r.mse:.3f}/{r.val_mse:.3f}" for r in curve.itertuples()))


def importance_findings(model, prepared, seed: int, sweeps: dict) -> None:
    imp = head_importance(model, prepared, "val", method="saliency", seed=seed)
    for mode in ("zero", "mean"):
        rho = rank_correlation(imp, sweeps[mode])
        per_site = []
        for site, part in sweeps[mode].groupby("site", sort=False):
            r = rank_correlation(imp.table[imp.table["site"] == site], part)
            per_site.append(f"{site} {r:+.2f}")
        print(f"5. gradient importance (Saliency on val, {imp.windows} windows) vs {mode}-ablation ΔMSE on test: "
              f"Spearman ρ {rho:+.3f} over all heads; per site: {', '.join(per_site)}")


def sparsity_findings(model, prepared, split: str, seed: int, seeds: int, windows: int) -> None:
    report = sparsity_report(model, prepared, split, list(range(windows)), seed=seed, seeds=seeds)
    agg = report.agreement.groupby("site", sort=False).agg(
        u=("u", "first"), L_Q=("L_Q", "first"), chance=("chance_overlap", "first"),
        overlap=("overlap_at_u_mean", "mean"), overlap_sd=("overlap_at_u_std", "mean"),
        spearman=("spearman_mean", "mean"), overlap_mbar=("overlap_at_u_mbar_mean", "mean"))
    print(f"6. sampled vs exact top-u ({seeds} seeds × {windows} windows of {split}, mean over heads):")
    for site, r in agg.iterrows():
        print(f"   {site:16s} u {int(r.u):3d} of L_Q {int(r.L_Q):3d}: overlap@u vs exact M {r.overlap:.3f} "
              f"(± {r.overlap_sd:.3f} over seeds; chance {r.chance:.3f}), vs exact M̄ {r.overlap_mbar:.3f}, "
              f"Spearman {r.spearman:+.3f}")
    heads = report.heads
    flagged = heads[heads["previous_step"] | heads["seasonal_lag"]]
    print("   heads with a previous-step or seasonal dominant lag: " + (", ".join(
        f"{r.site} h{r.head} (lag {r.dominant_lag_steps:g})" for r in flagged.itertuples()) or "none"))


def comparison_findings(model, prepared, split: str, seed: int) -> None:
    comparison = compare_forecasts(model, prepared, seed=seed, split=split)
    m = comparison.metrics[comparison.metrics["scale"] == "standardised"]
    print(f"7. counterfactual gap ε = ‖Y_prob − Y_full‖/‖Y_full‖ = {comparison.epsilon:.4f}; MSE on {split}: " +
          ", ".join(f"{r.model} {r.mse:.4f}" for r in m.itertuples()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--csv", type=Path, required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=10, help="key-sample seeds for the top-u agreement")
    parser.add_argument("--windows", type=int, default=8, help="windows for the top-u agreement")
    parser.add_argument("--repeats", type=int, default=50, help="random-masking repeats")
    args = parser.parse_args()

    checkpoint = load_checkpoint(args.checkpoint)
    model = checkpoint.model.eval()
    prepared = prepare_for_checkpoint(checkpoint, load_csv(args.csv))
    c = model.config
    print(f"{args.checkpoint}: d_model {c.d_model}, {c.n_heads} heads, e_layers {c.e_layers}, d_layers {c.d_layers}, "
          f"{len(model.sites)} attention sites, {len(model.sites) * c.n_heads} heads; data {args.csv.name}")
    started = time.perf_counter()
    sweeps = sweep_findings(model, prepared, args.split, args.seed)
    random_findings(model, prepared, args.split, args.seed, args.repeats, sweeps["baseline"].mse)
    pruning_findings(model, prepared, args.seed)
    importance_findings(model, prepared, args.seed, sweeps)
    sparsity_findings(model, prepared, args.split, args.seed, args.seeds, args.windows)
    comparison_findings(model, prepared, args.split, args.seed)
    print(f"\n({time.perf_counter() - started:.0f}s)")


if __name__ == "__main__":
    main()
