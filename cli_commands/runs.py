"""`runs`: the runs in the lab's home (or --root), newest first: data, shape, training, test MSE, and how each
did against seasonal naive and the linear baseline when it was trained. Read from the runs' JSON files only."""
from __future__ import annotations

from pathlib import Path

COLUMNS = ["run", "data", "target", "features", "seq_len", "label_len", "pred_len", "attention (enc/dec/cross)",
           "epochs", "test MSE", "seasonal naive MSE", "linear MSE", "against the baselines", "problem"]


def register(sub) -> None:
    p = sub.add_parser("runs", help="list the runs in the lab's home: data, settings, test MSE against the baselines")
    p.add_argument("--root", type=Path, default=None, help="a runs folder other than the lab's home's")
    p.set_defaults(func=run)


def run(args) -> int:
    import pandas as pd

    from informer_lab.analysis.learning.runs import read_runs, runs_table
    from informer_lab.home import runs_dir
    from informer_lab.source import command

    root = args.root or runs_dir()
    table = runs_table(read_runs(root))
    if table.empty:
        print(f"No runs in {root} yet: `{command('train --csv FILE')}` trains one.")
        return 0
    shown = table[COLUMNS].copy()
    if not shown["problem"].astype(bool).any():
        shown = shown.drop(columns="problem")
    with pd.option_context("display.max_columns", None, "display.width", 250, "display.max_colwidth", 60,
                           "display.float_format", "{:.4g}".format):
        print(f"{len(table)} run{'s' if len(table) != 1 else ''} in {root} (MSE standardised, test split):")
        print(shown.to_string(index=False, na_rep="–"))
    return 0
