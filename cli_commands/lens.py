"""`lens`: the forecast lens (decoder layers, encoder early exit, tuned encoder lens) and each decoder head's direct
share of the forecast, as tidy CSVs."""
from __future__ import annotations

from pathlib import Path

from ._common import seed_int, add_checkpoint_and_csv, int_in, open_checkpoint_and_data, write_table


def register(sub) -> None:
    p = sub.add_parser("lens", help="the forecast each decoder layer and encoder depth would give, and each decoder "
                                    "head's direct share of the forecast")
    add_checkpoint_and_csv(p)
    p.add_argument("--out", required=True, type=Path,
                   help="CSV to write (- for standard output): lens, layer, step, mse, mse_low, mse_high, "
                        "mse_to_final (+ its interval), windows, reason; standardised units")
    p.add_argument("--heads", "--heads-out", dest="heads_out", type=Path, default=None,
                   help="also write each decoder head's direct share per window: window, step, column, part, value "
                        "(data units; per window, step and column the heads and the remainder sum to the forecast)")
    p.add_argument("--windows", type=int_in(1, 100_000), default=256,
                   help="windows spread evenly over the split, one in ⌈total / K⌉ (default 256; all when it has fewer)")
    p.add_argument("--fit-windows", type=int_in(1, 100_000), default=256,
                   help="train windows the tuned encoder lens is fitted on (default 256)")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--seed", type=seed_int, default=0, help="ProbSparse key-sample seed")
    p.set_defaults(func=run)


def _interval(row, name: str) -> str:
    low, high = getattr(row, f"{name}_low"), getattr(row, f"{name}_high")
    return f" [{low:.3f}, {high:.3f}]" if low == low else ""


def run(args) -> int:
    from informer_lab.analysis.errors import count

    from informer_lab.analysis.anatomy.direct import direct_shares, top_heads
    from informer_lab.analysis.anatomy.lens import forecast_lens

    checkpoint, prepared = open_checkpoint_and_data(args)
    model = checkpoint.model
    result = forecast_lens(model, prepared, args.split, windows=args.windows, seed=args.seed,
                           fit_windows=args.fit_windows)
    write_table(result.table, args.out)
    lines = [f"{len(result.windows)} of {count(result.total, args.split + ' window')} (one in {result.stride}); MSE over the "
             f"horizon against the truth, and against the model's forecast (standardised units):"]
    for row in result.overall.itertuples():
        lines.append(f"  {row.lens} {row.layer}: {row.mse:.4f}{_interval(row, 'mse')}, to the forecast "
                     f"{row.mse_to_final:.4f}{_interval(row, 'mse_to_final')}")
    reasons = sorted({r for r in result.overall.reason if r})
    if reasons:
        lines.append(f"  ({reasons[0]})")
    lines.append(f"{len(result.table):,} rows written to {args.out}")
    if args.heads_out is not None:
        shares = direct_shares(model, prepared, args.split, windows=args.windows, seed=args.seed)
        write_table(shares.table, args.heads_out)
        top = top_heads(shares, k=3)
        for column, part in top.groupby("column", sort=False):
            lines.append(f"largest direct shares ({column}, mean |share|): "
                         + "; ".join(f"{r.part} {r.mean_abs:.3g}" for r in part.itertuples()))
        lines.append(f"{len(shares.table):,} rows written to {args.heads_out}")
    print("\n".join(lines))
    return 0
