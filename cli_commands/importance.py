"""`importance`: gradient head importance (Michel et al. 2019) and its rank agreement with ablation."""
from __future__ import annotations

from pathlib import Path


from ._common import seed_int, add_checkpoint_and_csv, open_checkpoint_and_data, positive_int, write_table


def register(sub) -> None:
    p = sub.add_parser("importance", help="gradient importance of every head, compared with single-head ablation")
    add_checkpoint_and_csv(p)
    p.add_argument("--out", required=True, type=Path, help="CSV to write (- for standard output): one row per (site, head)")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--method", choices=("saliency", "integrated_gradients"), default="saliency",
                   help="saliency: E|dL/dgate| at gate 1; integrated_gradients: gates 0 → 1")
    p.add_argument("--mode", choices=("zero", "mean"), default="zero", help="ablation the sweep compares with")
    p.add_argument("--max-windows", type=positive_int, default=None,
                   help="use only the first N windows of the split (default: all)")
    p.add_argument("--seed", type=seed_int, default=0, help="ProbSparse key-sample seed")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.errors import count

    from informer_lab.analysis.heads.ablation import single_head_sweep
    from informer_lab.analysis.heads.importance import head_importance, rank_correlation

    checkpoint, prepared = open_checkpoint_and_data(args)
    model = checkpoint.model
    common = dict(mode=args.mode, seed=args.seed, max_windows=args.max_windows)
    result = head_importance(model, prepared, args.split, method=args.method, **common)
    sweep = single_head_sweep(model, prepared, args.split, **common)
    table = result.table.merge(sweep[["site", "head", "delta_mse"]], on=["site", "head"], how="left")
    write_table(table, args.out)
    rho = rank_correlation(result.table, sweep)
    extra = "" if result.convergence_delta is None else f"; IG convergence delta {result.convergence_delta:.3g}"
    print(f"spearman rank correlation of importance with single-head delta_mse: {rho:.4f} "
          f"({len(table)} heads, {count(result.windows, args.split + ' window')}{extra}); written to {args.out}")
    tested = int(result.table["excess_p"].notna().sum())
    if tested:
        print(f"above the null reference (the same head against the errors of windows half the split away): "
              f"{int(result.table['above_null'].sum())} of {len(table)} heads after Benjamini-Hochberg at q = 0.05 "
              f"across {tested} heads (raw, the interval alone: {int(result.table['above_null_raw'].sum())})")
    else:
        print(f"above the null reference: no head can be listed, {result.table['interval'].iloc[0]}")
    return 0
