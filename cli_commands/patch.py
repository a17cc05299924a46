"""`patch`: activation patching of every head from a clean window into a corrupted one, as a tidy CSV."""
from __future__ import annotations

from pathlib import Path


from ._choices import PATCH_POINTS
from ._common import seed_int, add_checkpoint_and_csv, bounded_text, non_negative_int, open_checkpoint_and_data, write_table


def register(sub) -> None:
    p = sub.add_parser("patch", help="share of the clean forecast each head's context restores in a corrupted run")
    add_checkpoint_and_csv(p)
    p.add_argument("--clean", required=True, type=non_negative_int, help="clean window of the split, 0-based")
    p.add_argument("--corrupt", required=True, type=non_negative_int, help="corrupted window of the split, 0-based")
    p.add_argument("--corrupt-edit", default=None, type=bounded_text(chars=1000),
                   help="an edit applied to the corrupted window (the `counterfactual` syntax, e.g. shift:t=0,size=2)")
    p.add_argument("--patch", choices=PATCH_POINTS, default="heads",
                   help="heads: every head one at a time, and all at once (site 'all'); embeddings / memory: "
                        "everything the forecast reads (gives the clean forecast: a check)")
    p.add_argument("--out", required=True, type=Path,
                   help="CSV to write (- for standard output): one row per site, head and horizon step with the share restored")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--seed", type=seed_int, default=0, help="ProbSparse key-sample seed, shared by every run")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.instruments.patching import activation_patching

    checkpoint, prepared = open_checkpoint_and_data(args)
    r = activation_patching(checkpoint.model, prepared, args.split, args.clean, args.corrupt,
                            corrupt_edit=args.corrupt_edit, seed=args.seed, patch=args.patch)
    write_table(r.table, args.out)
    heads = r.summary[r.summary["head"] >= 0].sort_values("restored", ascending=False, na_position="last")
    edit = "" if r.corrupt_edit == "none" else f" ({r.corrupt_edit})"
    lines = [f"clean {args.split} window {r.clean_window} into corrupted window {r.corrupt_window}{edit}, {args.patch}"]
    if len(heads):
        lines.append("most restored: " + "; ".join(f"{row.site}:{row.head} {row.restored:+.3f}"
                                                   for row in heads.head(3).itertuples()))
        every = r.summary[r.summary["head"] < 0]["restored"].iloc[0]
        lines.append(f"every head at once restores {every:+.3f}; its distance to the clean forecast is "
                     f"{r.all_heads_distance:.3f} × the corrupted one's "
                     f"({'it reaches' if r.all_heads_reach_clean else 'it does not reach'} the clean forecast: "
                     "residual paths)")
    else:
        lines.append(f"restored {r.summary['restored'].iloc[0]:+.6f}")
    print("\n".join(lines) + f"\n{len(r.table)} rows written to {args.out}")
    return 0
