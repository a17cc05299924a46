"""`train`: fit an Informer on a CSV and write a checkpoint folder."""
from __future__ import annotations

from pathlib import Path


from ._common import (seed_int, ConsoleProgress, add_csv_options, add_training_options, open_csv,
                      threads_int, training_choices)


def register(sub) -> None:
    p = sub.add_parser("train", help="train on a CSV, write a checkpoint folder")
    add_csv_options(p)
    add_training_options(p)
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--threads", type=threads_int(), default=1,
                   help="torch threads on the CPU (default 1: on a busy two-core machine a second thread makes every "
                        "kernel wait for a descheduled core; a training step measured 216 ms on one thread and "
                        "4,100 ms on two while other work ran; on an idle machine 2 may be faster; at most the CPUs "
                        "this process may use)")
    p.add_argument("--out", required=True, type=Path, help="checkpoint folder to write")
    p.set_defaults(func=run)


def say_budget(frame, spec, batch_size: int) -> None:
    """Notes on stderr when the sizes leave few training steps (with sizes that fit) or too few test windows for an
    interval; training goes on either way (a split with no window at all is refused when the data is prepared)."""
    import sys

    from informer_lab.analysis.data import ett_steps_per_hour, fitting_sizes, window_budget

    ett = ett_steps_per_hour(frame)
    budget = window_budget(frame.n_rows, spec, batch_size, ett_steps_per_hour=ett)
    if budget.problems and min(budget.windows.values()) >= 1:
        fit = fitting_sizes(frame.n_rows, spec, batch_size, freq=frame.freq, ett_steps_per_hour=ett)
        way = f"; sizes that fit: {fit.flags(batch_size)}" if fit is not None else ""
        print(f"note: {budget.problems[0]}{way}", file=sys.stderr)
    for note in budget.notes:
        print(f"note: {note}", file=sys.stderr)


def run(args) -> int:
    import torch
    from informer_lab.analysis.learning.workflow import train_on_frame

    spec, size, settings = training_choices(args)
    torch.set_num_threads(args.threads)
    frame = open_csv(args)
    say_budget(frame, spec, settings.batch_size)
    checkpoint, result = train_on_frame(frame, spec, size, settings, out=args.out, progress=ConsoleProgress())
    t = result.test
    print(f"device {result.device}, {len(result.history)} epochs ({result.stopped}), {result.steps} steps in "
          f"{result.seconds:.0f} s, {result.train_seconds_per_epoch:.1f} s/epoch training "
          f"({result.seconds_per_epoch:.1f} with validation)")
    print(f"trained with {settings.describe()}" + (f"; range test chose lr {result.learning_rate:.2g}"
                                                    if result.range_test is not None else ""))
    print(f"test mse {t.mse:.4f} mae {t.mae:.4f} (standardised, the mean over columns); {t.original_text()}")
    print(f"checkpoint written to {args.out}")
    return 0
