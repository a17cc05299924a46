"""`sparsity`: sampled vs exact ProbSparse query sparsity of a checkpoint on some windows, as CSV."""
from __future__ import annotations

from pathlib import Path


from ._common import seed_int, add_checkpoint_and_csv, COUNT_MAX, int_in, int_list, open_checkpoint_and_data, write_table


def register(sub) -> None:
    p = sub.add_parser("sparsity", help="per-query sampled vs exact sparsity (M̄, M) and top-u agreement")
    add_checkpoint_and_csv(p)
    p.add_argument("--out", required=True, type=Path, help="CSV to write (- for standard output): one row per window, site, head, query")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--windows", type=int_list(0, COUNT_MAX, most=1024, what="window numbers"), default="0,1,2",
                   help="window numbers of the split, e.g. 0,1,2 (at most 1,024)")
    p.add_argument("--seeds", type=int_in(1, 1000), default=10,
                   help="key-sample seeds for the agreement spread (at most 1,000)")
    p.add_argument("--seed", type=seed_int, default=0, help="first key-sample seed")
    p.add_argument("--agreement-out", type=Path, default=None, help="also write the per-head agreement table")
    p.add_argument("--heads-out", type=Path, default=None, help="also write the per-head attention summary")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.errors import count

    from informer_lab.analysis.attention.sparsity import sparsity_report

    windows = list(args.windows)
    checkpoint, prepared = open_checkpoint_and_data(args)
    report = sparsity_report(checkpoint.model, prepared, args.split, windows, seed=args.seed, seeds=args.seeds)
    write_table(report.queries, args.out)
    written = [str(args.out)]
    if args.agreement_out is not None:
        write_table(report.agreement, args.agreement_out)
        written.append(str(args.agreement_out))
    if args.heads_out is not None:
        write_table(report.heads, args.heads_out)
        written.append(str(args.heads_out))
    print(f"{len(report.queries)} query rows over {len(report.rows)} sites and {count(len(windows), 'window')} "
          f"({args.seeds} seeds) written to {', '.join(written)}")
    if len(report.agreement):
        columns = ["overlap_at_u_mean", "spearman_mean", "overlap_at_u_all_keys_mean", "spearman_all_keys_mean",
                   "chance_overlap"]
        per_site = report.agreement.groupby(["site", "kind"], sort=False)[columns].mean()
        for (site, kind), row in per_site.iterrows():
            line = (f"  {site}: overlap@u {row['overlap_at_u_mean']:.3f} (chance {row['chance_overlap']:.3f})  "
                    f"spearman {row['spearman_mean']:.3f}")
            if kind == "decoder_self":  # causal: the sampled M̄ ignores the mask, the exact M does not
                line += (f"  [vs M over all keys: overlap@u {row['overlap_at_u_all_keys_mean']:.3f}  "
                         f"spearman {row['spearman_all_keys_mean']:.3f}]")
            print(line)
    return 0
