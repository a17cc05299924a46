"""`counterfactual`: edit one encoder window, run both with the same key sample, write the forecasts and selections."""
from __future__ import annotations

from pathlib import Path


from ._choices import EDIT_KINDS
from ._common import seed_int, add_checkpoint_and_csv, bounded_text, non_negative_int, open_checkpoint_and_data


def register(sub) -> None:
    p = sub.add_parser("counterfactual", help="edit one window (spike, shift, ...) and compare forecast and top-u")
    add_checkpoint_and_csv(p)
    p.add_argument("--window", required=True, type=non_negative_int, help="window of the split, 0-based")
    p.add_argument("--edit", required=True, type=bounded_text(chars=1000),
                   help=f"one of {', '.join(EDIT_KINDS)}, e.g. none, spike:t=40,size=3, shift:t=60,size=-1, "
                        "scale:factor=1.5, trend:slope=0.1, zero:column=NAME, shuffle:column=NAME,seed=0, "
                        "paste:window=N,t=10,length=20 (t: step in the window; size and slope in training stds of "
                        "the column, default the target; units=abs for the column's own units)")
    p.add_argument("--out", required=True, type=Path,
                   help="folder to write forecast.csv, selection.csv, scores.csv and inputs.csv into")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--seed", type=seed_int, default=0, help="ProbSparse key-sample seed, the same for both runs")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.instruments.counterfactual import counterfactual

    checkpoint, prepared = open_checkpoint_and_data(args)
    c = counterfactual(checkpoint.model, prepared, args.split, args.window, args.edit, args.seed, rows=False)
    from informer_lab.analysis.outputs import write_folder

    write_folder(args.out, {f"{name}.csv": table.to_csv(index=False).encode("utf-8") for name, table in
                            (("forecast", c.forecast), ("selection", c.selection), ("scores", c.scores),
                             ("inputs", c.inputs))})  # put in place whole: never files of two runs
    prob = c.selection[c.selection["attention"] == "prob"]
    changed = int(c.inputs["changed"].sum())
    moved = (f"top-u Jaccard {prob['jaccard'].min():.3f} … {prob['jaccard'].max():.3f} over {len(prob)} ProbSparse heads"
             if len(prob) else "no ProbSparse site")
    print(f"{args.split} window {c.window}, edit {c.edit} ({changed} input cells changed): largest forecast change "
          f"{c.max_abs_difference:.6g} (original units); {moved}; written to {args.out}")
    return 0
