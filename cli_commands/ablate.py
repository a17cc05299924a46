"""`ablate`: head-ablation studies of a checkpoint on a CSV, written as one tidy CSV."""
from __future__ import annotations

from pathlib import Path


from ._common import seed_int, add_checkpoint_and_csv, int_in, number_in, open_checkpoint_and_data, positive_int, \
    write_table

STUDIES = ("single", "layers", "leave-one-in", "random", "prune")


fraction = number_in(0, 1)


def register(sub) -> None:
    p = sub.add_parser("ablate", help="switch attention heads off and measure the forecast error")
    add_checkpoint_and_csv(p)
    p.add_argument("--out", required=True, type=Path, help="CSV to write (- for standard output; one row per mask)")
    p.add_argument("--study", choices=STUDIES, default="single",
                   help="single: one head off at a time; layers: one whole site off; leave-one-in: one head on "
                        "per site; random: --fraction of all heads off, --repeats times; prune: iterative "
                        "pruning chosen on val, reported on --split")
    p.add_argument("--mode", choices=("zero", "mean"), default="zero",
                   help="zero: silence the head; mean: replace it by its mean context over train windows")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--fraction", type=fraction, default=0.2, help="random: share of all heads masked")
    p.add_argument("--repeats", type=int_in(1, 10_000), default=20, help="random: how many random masks (≤ 10,000)")
    p.add_argument("--step-fraction", type=fraction, default=0.1, help="prune: share of all heads per step")
    p.add_argument("--tolerance", type=number_in(0, 1000), default=0.10,
                   help="prune: stop once val MSE exceeds (1 + tolerance) × its baseline")
    p.add_argument("--importance", choices=("ablation", "gradient"), default="ablation",
                   help="prune: how heads are scored each step")
    p.add_argument("--max-windows", type=positive_int, default=None,
                   help="score only the first N windows of the split (default: all)")
    p.add_argument("--seed", type=seed_int, default=0,
                   help="ProbSparse key-sample seed shared by every mask (random: also draws the masks)")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.heads import ablation

    checkpoint, prepared = open_checkpoint_and_data(args)
    model = checkpoint.model
    common = dict(mode=args.mode, seed=args.seed, max_windows=args.max_windows)
    if args.study == "single":
        table = ablation.single_head_sweep(model, prepared, args.split, **common)
    elif args.study == "layers":
        table = ablation.layer_masking(model, prepared, args.split, **common)
    elif args.study == "leave-one-in":
        table = ablation.leave_one_in(model, prepared, args.split, **common)
    elif args.study == "random":
        table = ablation.random_masking(model, prepared, args.split, fraction=args.fraction, repeats=args.repeats,
                                        seed=args.seed, eval_seed=args.seed, mode=args.mode,
                                        max_windows=args.max_windows)
    else:
        table = ablation.pruning_curve(model, prepared, step_fraction=args.step_fraction, tolerance=args.tolerance,
                                       importance=args.importance, report_split=args.split, **common)
    write_table(table, args.out)
    print(summary(args, table, model.n_sites * model.config.n_heads))
    return 0


def summary(args, table, n_heads_total: int) -> str:
    """One line: what was measured and the headline number."""
    import pandas as pd
    from informer_lab.analysis.heads.lists import head_lists

    if args.study == "random":
        return (f"{len(table)} random masks of {int(table['n_masked'].iloc[0])} heads ({args.mode}) on {args.split}: "
                f"median delta_mse {table['delta_mse'].median():+.6f}; written to {args.out}")
    if args.study == "prune":
        last = table[table["within_tolerance"]].iloc[-1]
        return (f"pruned {int(last['n_removed'])} of {n_heads_total} heads within tolerance "
                f"({last['fraction_removed']:.0%}, chosen on val); {args.split} mse "
                f"{table['mse'].iloc[0]:.6f} → {last['mse']:.6f}; written to {args.out}")
    base, rows = table.iloc[0], table.iloc[1:]
    worst = rows.loc[rows["delta_mse"].idxmax()]
    what = f"{worst['site']}:{int(worst['head'])}" if worst["head"] >= 0 else worst["site"]
    interval = ("no interval" if pd.isna(worst["delta_mse_lo"]) else
                f"[{worst['delta_mse_lo']:+.6f}, {worst['delta_mse_hi']:+.6f}]")
    line = (f"{args.study} ({args.mode}) on {args.split}: baseline mse {base['mse']:.6f}; largest delta_mse "
            f"{worst['delta_mse']:+.6f} {interval} ({what})")
    if args.study == "single":
        line += "; " + head_lists(table).summary()
    elif pd.isna(rows["delta_mse_lo"]).all():
        line += "; " + str(rows["interval"].iloc[0] or "no interval")
    return f"{line}; {len(rows)} masks written to {args.out}"
