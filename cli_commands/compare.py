"""`compare`: a checkpoint's test forecasts against its full-attention counterfactual and baselines."""
from __future__ import annotations

import sys
from pathlib import Path


from ._common import (seed_int, ConsoleProgress, add_checkpoint_and_csv, open_checkpoint_and_data,
                      int_in, number_in, positive_int, write_table)


def register(sub) -> None:
    p = sub.add_parser("compare", help="test metrics of the Informer, its full-attention counterfactual and baselines")
    add_checkpoint_and_csv(p)
    p.add_argument("--out", required=True, type=Path, help="CSV to write (- for standard output): model, scale, mse, mae, windows")
    p.add_argument("--per-step-out", type=Path, default=None, help="CSV of per-horizon-step errors")
    p.add_argument("--seed", type=seed_int, default=0, help="ProbSparse key-sample seed")
    p.add_argument("--period", type=int_in(1, 100_000), default=None,
                   help="seasonal-naive season in steps (default: from the frequency, e.g. 24 for hourly)")
    p.add_argument("--train-full-twin", action="store_true",
                   help="also train a same-size model with full self-attention and compare it")
    p.add_argument("--epochs", type=int_in(1, 100_000), default=6, help="twin training epochs")
    p.add_argument("--max-steps", type=positive_int, default=None, help="twin: cap on steps per epoch")
    p.add_argument("--batch-size", type=int_in(1, 65_536), default=32, help="twin: batch size")
    p.add_argument("--learning-rate", type=number_in(0, 10, low_open=True), default=1e-4, help="twin: learning rate")
    p.add_argument("--device", choices=("cuda", "mps", "cpu"), default=None, help="twin: training device")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.compare.comparison import compare_forecasts, train_full_attention_twin
    from informer_lab.analysis.learning.training import TrainSettings

    checkpoint, prepared = open_checkpoint_and_data(args)
    twin = None
    if args.train_full_twin:
        settings = TrainSettings(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
                                 seed=args.seed, device=args.device, max_steps_per_epoch=args.max_steps)
        progress = ConsoleProgress(sys.stderr)  # today's stderr, not the one bound at import time
        twin = train_full_attention_twin(prepared, checkpoint.config, settings, progress=progress)
    result = compare_forecasts(checkpoint.model, prepared, full_model=twin, seed=args.seed, period=args.period)
    write_table(result.metrics, args.out)
    if args.per_step_out is not None:
        write_table(result.per_step, args.per_step_out)
    table = result.metrics.pivot(index="model", columns="scale", values=["mse", "mae"])
    table = table[[("mse", "standardised"), ("mae", "standardised"), ("mse", "original"), ("mae", "original")]]
    table = table.reindex(list(result.forecasts))
    table.columns = ["mse", "mae", "mse_original", "mae_original"]
    print(f"{result.split} split, {int(result.metrics['windows'].iloc[0])} windows, seed {result.seed}")
    print(table.to_string(float_format=lambda v: f"{v:.6f}"))
    print(f"epsilon (|Y_prob - Y_full|_F / |Y_full|_F) = {result.epsilon:.6f}")
    for note in result.notes:
        print(f"note: {note}")
    print(f"metrics written to {args.out}" + (f", per-step errors to {args.per_step_out}" if args.per_step_out else ""))
    return 0
