"""`attribute`: Integrated Gradients of one forecast value over its encoder window, written as CSV."""
from __future__ import annotations

from pathlib import Path


from ._choices import BASELINES
from ._common import seed_int, text, add_checkpoint_and_csv, int_in, non_negative_int, open_checkpoint_and_data, STEP, \
    write_table


def register(sub) -> None:
    p = sub.add_parser("attribute", help="Integrated Gradients of one forecast over its input window")
    add_checkpoint_and_csv(p)
    p.add_argument("--out", required=True, type=Path,
                   help="CSV to write (- for standard output): timestamp, position, feature, attribution (one row per input cell)")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--window", type=non_negative_int, default=0, help="window of the split, 0-based (default 0)")
    p.add_argument("--step", type=STEP, default=1, help="horizon step, 1 = first forecast step (default 1)")
    p.add_argument("--target", default=None, type=text(1000), help="forecast column to explain (default: the checkpoint's target)")
    p.add_argument("--baseline", choices=BASELINES, default="zeros",
                   help="zeros: every column at its training mean; window_mean: each feature's mean over the window")
    p.add_argument("--n-steps", type=int_in(2, 4096), default=64, help="integration points on the path (2 … 4096)")
    p.add_argument("--seed", type=seed_int, default=0, help="ProbSparse key-sample seed")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.instruments.attribution import input_attribution

    checkpoint, prepared = open_checkpoint_and_data(args)
    target = args.target or checkpoint.schema.spec.target
    a = input_attribution(checkpoint.model, prepared, args.split, args.window, step=args.step, target_column=target,
                          baseline=args.baseline, n_steps=args.n_steps, seed=args.seed)
    write_table(a.values, args.out)
    print(f"{args.split} window {args.window}, step {args.step}, {target}: forecast {a.forecast:.6f}, "
          f"{args.baseline} baseline {a.baseline_forecast:.6f} (standardised)")
    print(f"convergence delta {a.convergence_delta:.3e} (|gap| {a.completeness_gap:.3e} = "
          f"{a.relative_gap:.2%} of f(x) - f(baseline) = {a.difference:.6f}); "
          f"key selection changed on {a.path_selection_changes} of {a.n_steps} path intervals")
    top = a.values.reindex(a.values["attribution"].abs().sort_values(ascending=False).index).head(5)
    print("largest: " + "; ".join(f"{r.feature} @ {r.timestamp} {r.attribution:+.4f}" for r in top.itertuples()))
    print(f"{len(a.values)} attributions written to {args.out}")
    return 0
