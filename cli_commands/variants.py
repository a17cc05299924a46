"""`variants`: one trained model with every attention kind, same weights: accuracy with paired intervals, the share
of full attention's weight each kind keeps, and what a call costs against SDPA (analysis.instruments.variants); `--sweep` adds
the cost of every kind at L = 96 … 8192 (analysis.instruments.attention_cost).

    python cli.py variants --checkpoint runs/mine --csv ETTh1.csv --out variants.csv
    python cli.py variants --checkpoint runs/mine --csv ETTh1.csv --kinds prob,logsparse,lsh --heads-out heads.csv
    python cli.py variants --checkpoint runs/mine --csv ETTh1.csv --out variants.csv --sweep sweep.csv
"""
from __future__ import annotations

from pathlib import Path

from ._choices import COST_LENGTHS, VARIANT_KINDS, VARIANT_WINDOWS
from ._common import choice_list, seed_int, add_checkpoint_and_csv, open_checkpoint_and_data, positive_int, step_bar, \
    write_table


kinds_list = choice_list(VARIANT_KINDS, "kinds")


def register(sub) -> None:
    p = sub.add_parser("variants", help="every attention kind with the same weights: accuracy, mass kept, cost")
    add_checkpoint_and_csv(p)
    p.add_argument("--out", required=True, type=Path, help="CSV to write (- for standard output): one row per kind")
    p.add_argument("--kinds", type=kinds_list, default=list(VARIANT_KINDS),
                   help=f"default: {','.join(VARIANT_KINDS)}")
    p.add_argument("--heads-out", type=Path, default=None, help="also write mass_kept per kind, site and head")
    p.add_argument("--sweep", type=Path, default=None,
                   help="also write each kind's time and memory against SDPA at L = "
                        f"{', '.join(map(str, COST_LENGTHS))}")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--max-windows", type=positive_int, default=VARIANT_WINDOWS,
                   help=f"windows spread over the split (default {VARIANT_WINDOWS})")
    p.add_argument("--seed", type=seed_int, default=0, help="ProbSparse key-sample seed")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.instruments.attention_cost import cost_sweep
    from informer_lab.analysis.instruments.variants import compare_kinds

    checkpoint, prepared = open_checkpoint_and_data(args)
    result = compare_kinds(checkpoint.model, prepared, kinds=args.kinds, split=args.split, seed=args.seed,
                           max_windows=args.max_windows, progress=step_bar("variants"))
    where = write_table(result.table, args.out)
    print(f"{len(result.table)} kinds on {result.notes[0]}; the model's own attention: {result.own}")
    for r in result.table.itertuples():
        interval = ("no interval" if r.delta_mse_lo != r.delta_mse_lo else  # NaN: too few windows
                    f"[{r.delta_mse_lo:+.4f}, {r.delta_mse_hi:+.4f}]")
        print(f"  {r.kind:<10} MSE {r.mse:.4f}  ΔMSE {r.delta_mse:+.4f} {interval}"
              f"  mass kept {r.mass_kept:.3f}  top-u mass kept {r.topu_overlap:.3f}"
              + (f"  {r.ms:.2f} ms ({r.ratio:.2f}× SDPA)" if "ms" in result.table else ""))
    print(f"written to {where}")
    if args.heads_out is not None:
        print(f"per head: written to {write_table(result.heads, args.heads_out)}")
    if args.sweep is not None:
        c = checkpoint.model.config
        sweep = cost_sweep([k for k in args.kinds if k != "full"], heads=c.n_heads, head_dim=c.head_dim,
                           memory=True, progress=step_bar("cost sweep"))
        print(f"cost sweep: written to {write_table(sweep, args.sweep)}")
    return 0
