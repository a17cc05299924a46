"""Every attention kind's forward time and peak extra memory against SDPA (full attention), over a sweep of lengths.

    python benchmarks/attention_kinds.py                    # L = 96, 1440, 8192; B 4, H 8, D 64, fp32, no_grad
    python benchmarks/attention_kinds.py --lengths 96 512 2048 --rounds 3 --threads 1

Time: the kinds run interleaved round by round at each length (a change of load between rounds moves every kind
alike), the median of the rounds, as a ratio to SDPA's median at that length (> 1: faster than SDPA). Memory: each
(kind, L) in a fresh child process that reads the resident high-water mark over one call (the peak extra memory),
as a ratio to SDPA's (analysis.instruments.attention_cost: the same calls the Variants screen times). Encoder form (non-causal self-attention), each kind at its default parameters (model/attention/
dispatch.py DEFAULTS; ProbSparse factor 5). The pairs column is the query–key pairs one head scores.
Last lines: `kinds_speedup_vs_sdpa_L<max>_<kind>: X`.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from informer_lab.analysis.instruments.attention_cost import pairs, peak_mibs, time_kinds  # noqa: E402
from informer_lab.model.attention import SPARSE_KINDS  # noqa: E402

B, H, D = 4, 8, 64
KINDS = ("prob", *SPARSE_KINDS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[96, 1440, 8192])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--no-memory", action="store_true")
    args = parser.parse_args()
    print(f"B {B}, H {H}, D {D}, fp32, no_grad, {args.threads} thread(s), {args.rounds} rounds interleaved")
    results: dict = {}
    for L in args.lengths:
        table = time_kinds(KINDS, heads=H, head_dim=D, length=L, rounds=args.rounds, batch=B, threads=args.threads)
        memory = {} if args.no_memory else dict(zip(("sdpa", *KINDS), peak_mibs(
            ["sdpa", *KINDS], heads=H, head_dim=D, lengths=[L], batch=B, threads=args.threads)))
        print(f"\nL = {L}")
        print(f"{'kind':<11} {'ms':>9} {'× SDPA speed':>13} {'peak MiB':>9} {'× SDPA mem':>11} {'pairs/head':>12}")
        rows = [("sdpa", table["sdpa_ms"].iloc[0])] + list(zip(table["kind"], table["ms"]))
        for kind, ms in rows:
            mib = memory.get(kind, float("nan"))
            ratio = table["sdpa_ms"].iloc[0] / ms
            mem_ratio = mib / memory["sdpa"] if memory.get("sdpa") else float("nan")
            results[(kind, L)] = ratio
            print(f"{kind:<11} {ms:9.2f} {ratio:13.2f} {mib:9.1f} {mem_ratio:11.2f} {pairs(kind, 1, L):>12}")
    top = max(args.lengths)
    for kind in KINDS:
        print(f"kinds_speedup_vs_sdpa_L{top}_{kind}: {results[(kind, top)]:.2f}")
    print(json.dumps({f"{k}@{L}": round(v, 3) for (k, L), v in results.items()}))


if __name__ == "__main__":
    main()
