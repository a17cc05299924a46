"""`faithfulness`: every head's attention rows replaced by uniform rows (Wiegreffe & Pinter 2019) and by permuted rows
(Jain & Wallace 2019), the forecast change against the key-sample noise (analysis.heads.faithfulness). Any model, any
data.

    python cli.py faithfulness --checkpoint runs/mine --csv ETTh1.csv --out faithfulness.csv
"""
from __future__ import annotations

from pathlib import Path


from ._choices import FAITHFULNESS_WINDOWS
from ._common import seed_int, add_checkpoint_and_csv, int_in, open_checkpoint_and_data, positive_int, \
    step_bar, write_table


def register(sub) -> None:
    p = sub.add_parser("faithfulness", help="uniform and permuted attention rows for every head, against key-sample "
                                            "noise")
    add_checkpoint_and_csv(p)
    p.add_argument("--out", required=True, type=Path, help="CSV to write (- for standard output): one row per head")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--max-windows", type=positive_int, default=FAITHFULNESS_WINDOWS,
                   help=f"windows spread over the split (default {FAITHFULNESS_WINDOWS})")
    p.add_argument("--draws", type=int_in(1, 100), default=5, help="permutation draws per head (at most 100)")
    p.add_argument("--key-seeds", type=int_in(1, 50), default=3,
                   help="other key-sample seeds for the noise floor (at most 50)")
    p.add_argument("--seed", type=seed_int, default=0, help="ProbSparse key-sample seed")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.heads.faithfulness import attention_baselines

    checkpoint, prepared = open_checkpoint_and_data(args)
    result = attention_baselines(checkpoint.model, prepared, split=args.split, seed=args.seed,
                                 max_windows=args.max_windows, draws=args.draws, key_seeds=args.key_seeds,
                                 progress=step_bar("passes"))
    where = write_table(result.table, args.out)
    t = result.table
    moved = t["reading"].str.startswith("its weights matter").sum()
    print(f"{len(t)} heads on {result.notes[0]}; unchanged test MSE {result.mse:.4f}; key-sample floor "
          f"{result.floor:.3g} (upper {result.floor_hi:.3g})")
    if t["uniform_beyond_p"].notna().any():
        print(f"{moved} head(s) whose forecast moves beyond the floor under both uniform and permuted rows "
              f"(Benjamini-Hochberg at q = 0.05 across {2 * len(t)} tests; raw: "
              f"{int((t['uniform_beyond_raw'] & t['permuted_beyond_raw']).sum())}); "
              f"{(t['reading'].str.startswith('no more')).sum()} within it")
    else:
        print(f"no head is listed beyond the floor: {t['interval'].iloc[0]}")
    print(f"written to {where}")
    return 0
