"""`forecast`: the pred_len steps after a CSV's last row, written as CSV."""
from __future__ import annotations

from pathlib import Path

from ._common import seed_int, AFTER, add_checkpoint_and_csv, baseline_check_note, open_checkpoint, open_csv, \
    write_table


def register(sub) -> None:
    p = sub.add_parser("forecast", help="forecast beyond the CSV's last row")
    add_checkpoint_and_csv(p)
    p.add_argument("--out", required=True, type=Path,
                   help="CSV to write (- for standard output): timestamp column, then forecasts")
    p.add_argument("--seed", type=seed_int, default=0, help="ProbSparse key-sample seed")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.learning.forecasting import forecast_future

    from informer_lab.analysis.learning.workflow import prepare_for_checkpoint

    checkpoint = open_checkpoint(args.checkpoint)
    frame = open_csv(args, checkpoint)
    table = forecast_future(checkpoint, frame, seed=args.seed)
    write_table(table, args.out)
    print(f"{len(table)} steps from {table.iloc[0, 0]} to {table.iloc[-1, 0]} written to {args.out}")
    if args.baseline_check:  # what a forecast is worth: the model against the baselines on this file's test split
        AFTER.append(lambda: baseline_check_note(checkpoint, prepare_for_checkpoint(checkpoint, frame)))
    return 0
