"""`qk-map`: one head's queries and keys from many windows in one 2-D map (AttentionViz-normalised PCA), as CSV."""
from __future__ import annotations

from pathlib import Path


from ._common import seed_int, text, add_checkpoint_and_csv, HEAD, int_in, open_checkpoint_and_data, write_table


def register(sub) -> None:
    p = sub.add_parser("qk-map", help="one head's queries and keys of many windows projected jointly into 2-D")
    add_checkpoint_and_csv(p)
    p.add_argument("--site", required=True, type=text(200), help="attention site, e.g. encoder.0.0, decoder_self.0, cross.0")
    p.add_argument("--head", required=True, type=HEAD, help="head of the site, 0-based")
    p.add_argument("--out", required=True, type=Path,
                   help="CSV to write (- for standard output): kind (query/key), x, y, window, position, step, timestamp, selected, mbar")
    p.add_argument("--windows", type=int_in(1, 100_000), default=256,
                   help="windows evenly strided through the split (default 256; all when the split has fewer)")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--seed", type=seed_int, default=0, help="ProbSparse key-sample seed (every window uses it)")
    p.add_argument("--raw", action="store_true",
                   help="project the raw vectors (no AttentionViz scaling and key translation)")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.errors import count

    from informer_lab.analysis.instruments.qk_map import qk_map, qk_map_table

    from informer_lab.analysis.heads.names import head_name

    checkpoint, prepared = open_checkpoint_and_data(args)
    m = qk_map(checkpoint.model, prepared, args.split, args.site, args.head, windows=args.windows, seed=args.seed,
               normalise=not args.raw)
    write_table(qk_map_table(m), args.out)
    n_queries = int(m.is_query.sum())
    how = "raw vectors" if args.raw else (f"queries × {m.normalisation.scale:.4f}, keys ÷ it and translated onto the "
                                          f"queries' centroid")
    print(f"{head_name(m.site, m.head)} ({m.attention}), {count(len(m.windows), args.split + ' window')}: {n_queries} queries and "
          f"{m.n_points - n_queries} keys; {how}; PCA explains {m.explained[0]:.1%} + {m.explained[1]:.1%}; "
          f"written to {args.out}")
    return 0
