"""`train`: fit an Informer on a data file and write a checkpoint folder: into the lab's home as a new run (the
place the app's Train writes to, where the Runs page, the app's model picker and `--checkpoint NAME` find it), or
to --out."""
from __future__ import annotations

import time
from pathlib import Path

from ._common import (ConsoleProgress, add_csv_options, add_training_options, open_csv, seed_int, threads_int,
                      training_choices)


def register(sub) -> None:
    p = sub.add_parser("train", help="train on a data file, write a run into the lab's home (or --out)")
    add_csv_options(p)
    add_training_options(p, target_required=False)
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--threads", type=threads_int(), default=1,
                   help="torch threads on the CPU (default 1: on a busy two-core machine a second thread makes every "
                        "kernel wait for a descheduled core; a training step measured 216 ms on one thread and "
                        "4,100 ms on two while other work ran; on an idle machine 2 may be faster; at most the CPUs "
                        "this process may use)")
    p.add_argument("--out", type=Path, default=None,
                   help="checkpoint folder to write (default: a new run in the lab's home, named after the file and "
                        "the time, e.g. runs/sales-20260101-120000)")
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


def choose_target(frame, target: str | None) -> str:
    """--target as given; without it, the file's only numeric column, or an error that lists them."""
    from informer_lab.analysis.errors import ConfigError

    if target is not None:
        return target
    columns = list(frame.columns)
    if len(columns) == 1:
        return columns[0]
    shown = ", ".join(map(repr, columns[:12])) + (f" and {len(columns) - 12} more" if len(columns) > 12 else "")
    raise ConfigError(f"{frame.name} has {len(columns)} numeric columns ({shown}): choose the one to forecast with "
                      "--target COLUMN")


def run_folder(args, frame) -> tuple[Path, str | None]:
    """Where the checkpoint goes: --out, or a new run in the lab's home (its name returned too)."""
    if args.out is not None:
        return args.out, None
    from informer_lab.analysis.learning.runs import free_run_name, run_name_from
    from informer_lab.home import runs_dir

    root = runs_dir()
    name = free_run_name(root, run_name_from(f"{Path(frame.name).stem}-{time.strftime('%Y%m%d-%H%M%S')}"))
    return root / name, name


def run(args) -> int:
    import torch
    from informer_lab.analysis.learning.embedding import describe_withheld
    from informer_lab.analysis.learning.workflow import train_on_frame
    from informer_lab.source import command

    torch.set_num_threads(args.threads)
    frame = open_csv(args)
    args.target = choose_target(frame, args.target)
    spec, size, settings = training_choices(args)
    say_budget(frame, spec, settings.batch_size)
    out, name = run_folder(args, frame)
    checkpoint, result = train_on_frame(frame, spec, size, settings, out=out, progress=ConsoleProgress(),
                                        check_baselines=True)
    t = result.test
    print(f"device {result.device}, {len(result.history)} epochs ({result.stopped}), {result.steps} steps in "
          f"{result.seconds:.0f} s, {result.train_seconds_per_epoch:.1f} s/epoch training "
          f"({result.seconds_per_epoch:.1f} with validation)")
    print(f"trained with {settings.describe()}" + (f"; range test chose lr {result.learning_rate:.2g}"
                                                    if result.range_test is not None else ""))
    withheld = describe_withheld(checkpoint.model.config.level_free, checkpoint.schema.columns)
    if withheld:
        print(withheld)
    print(f"test mse {t.mse:.4f} mae {t.mae:.4f} (standardised, the mean over columns); {t.original_text()}")
    baselines = checkpoint.metrics.get("baselines") or {}
    if baselines.get("warning"):
        print(f"warning: {baselines['warning']}")
    if name is None:
        print(f"checkpoint written to {out}")
    else:
        print(f"run {name!r} written to {out} (`{command('runs')}` lists the runs; --checkpoint {name} opens it)")
    return 0
