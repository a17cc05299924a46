"""`evaluate`: test-split MSE and MAE of a checkpoint on a CSV."""
from __future__ import annotations


from ._common import seed_int, add_checkpoint_and_csv, open_checkpoint_and_data


def register(sub) -> None:
    p = sub.add_parser("evaluate", help="print test MSE and MAE of a checkpoint on a CSV")
    add_checkpoint_and_csv(p)
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--attention", choices=("prob", "full"), default=None,
                   help="run every site with this attention (default: as trained)")
    p.add_argument("--seed", type=seed_int, default=0, help="ProbSparse key-sample seed")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.learning.training import evaluate

    checkpoint, prepared = open_checkpoint_and_data(args)
    m = evaluate(checkpoint.model, prepared, args.split, seed=args.seed, attention=args.attention)
    windows = f"{m.windows:,} window{'s' if m.windows != 1 else ''}"
    print(f"{args.split} mse {m.mse:.6f} mae {m.mae:.6f} (standardised, the mean over columns); "
          f"{m.original_text(digits=6)}; every {args.split} window ({windows})")
    return 0
