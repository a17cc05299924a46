"""`pyramid`: the encoder pyramid of one window (spans, receptive fields, feature norms), as CSV."""
from __future__ import annotations

from pathlib import Path


from ._common import seed_int, add_checkpoint_and_csv, non_negative_int, open_checkpoint_and_data, write_table


def register(sub) -> None:
    p = sub.add_parser("pyramid", help="what each distilled encoder position covers, with its feature norm")
    add_checkpoint_and_csv(p)
    p.add_argument("--out", required=True, type=Path, help="CSV to write (- for standard output): one row per replica, level, position")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--window", type=non_negative_int, default=0, help="window number of the split")
    p.add_argument("--seed", type=seed_int, default=0, help="ProbSparse key-sample seed")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.attention.pyramid import pyramid_report, spans_with_norms

    checkpoint, prepared = open_checkpoint_and_data(args)
    report = pyramid_report(checkpoint.model, prepared, args.split, args.window, seed=args.seed)
    table = spans_with_norms(report)
    write_table(table, args.out)
    lengths = "; ".join(f"replica {r}: " + " → ".join(str(n) for n in g["recorded_length"])
                        for r, g in report.lengths.groupby("replica"))
    print(f"{len(table)} positions written to {args.out} ({lengths}; lengths match the formula: "
          f"{'yes' if report.lengths_match else 'NO'})")
    return 0
