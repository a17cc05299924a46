"""Every attention kind's forward time and peak extra memory against SDPA (full attention), over a sweep of lengths.

    python benchmarks/attention_kinds.py                    # L = 96, 1440, 8192; B 4, H 8, D 64, fp32, no_grad
    python benchmarks/attention_kinds.py --lengths 96 512 2048 --rounds 3 --threads 1

Time: the kinds run interleaved round by round at each length (a change of load between rounds moves every kind
alike), the median of the rounds, as a ratio to SDPA's median at that length (> 1: faster than SDPA). Memory: each
(kind, L) in a fresh child process that reads how far ru_maxrss rises over one call (the peak extra resident memory),
as a ratio to SDPA's. Encoder form (non-causal self-attention), each kind at its default parameters (model/attention/
dispatch.py DEFAULTS; ProbSparse factor 5). The pairs column is the query–key pairs one head scores.
Last lines: `kinds_speedup_vs_sdpa_L<max>_<kind>: X`.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from model.attention import SPARSE_KINDS, positional_table, sparse_attention  # noqa: E402

B, H, D = 4, 8, 64
KINDS = ("sdpa", "prob", *SPARSE_KINDS)


def inputs(L: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(B, H, L, D, generator=g) for _ in range(3))


def call(kind: str, Q, K, V):
    with torch.no_grad():
        if kind == "sdpa":
            return F.scaled_dot_product_attention(Q, K, V)
        if kind == "prob":
            from model.attention import probsparse_attention

            return probsparse_attention(Q, K, V, factor=5, causal=False, mean_divisor="U", decoder_lazy="cummean",
                                        sample_block=512, generator=torch.Generator().manual_seed(1)).context
        return sparse_attention(kind, Q, K, V, causal=False, generator=torch.Generator().manual_seed(1)).context


def pairs(kind: str, L: int) -> int:
    if kind in ("sdpa",):
        return L * L
    if kind == "prob":
        import math

        u = min(L, 5 * math.ceil(math.log(L)))
        return L * u + u * L  # sampled scoring (L_Q · U) plus the u full rows
    if kind == "lsh":
        return -1  # data-dependent: at most rounds · 2c per query (see tests/model/test_attention_kinds.py)
    table = positional_table(kind, L, 1, causal=False, options={})
    extra = 0
    if kind == "compressed":
        from model.attention.compressed import memory_visible

        extra = int(memory_visible(L, causal=False, block=16, stride=4).sum())
    return table.pairs() + extra


def child(kind: str, L: int) -> float:
    Q, K, V = inputs(16)
    call(kind, Q, K, V)
    Q, K, V = inputs(L)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    call(kind, Q, K, V)
    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024


def peak_mib(kind: str, L: int, threads: int) -> float:
    out = subprocess.run([sys.executable, __file__, "--child", kind, str(L), "--threads", str(threads)],
                         capture_output=True, text=True, cwd=ROOT)
    if out.returncode:
        return float("nan")
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[96, 1440, 8192])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.child:
        print(child(args.child[0], int(args.child[1])))
        return
    print(f"B {B}, H {H}, D {D}, fp32, no_grad, {args.threads} thread(s), {args.rounds} rounds interleaved")
    results: dict = {}
    for L in args.lengths:
        Q, K, V = inputs(L)
        for kind in KINDS:  # warm-up
            call(kind, Q, K, V)
        times: dict[str, list[float]] = {k: [] for k in KINDS}
        for _ in range(args.rounds):
            for kind in KINDS:
                started = time.perf_counter()
                call(kind, Q, K, V)
                times[kind].append(time.perf_counter() - started)
        sdpa = statistics.median(times["sdpa"])
        sdpa_mib = None if args.no_memory else peak_mib("sdpa", L, args.threads)
        print(f"\nL = {L}")
        print(f"{'kind':<11} {'ms':>9} {'× SDPA speed':>13} {'peak MiB':>9} {'× SDPA mem':>11} {'pairs/head':>12}")
        for kind in KINDS:
            ms = statistics.median(times[kind]) * 1000
            mib = None if args.no_memory else peak_mib(kind, L, args.threads)
            ratio = sdpa * 1000 / ms
            mem_ratio = (mib / sdpa_mib) if mib is not None and sdpa_mib else float("nan")
            n = pairs(kind, L)
            results[(kind, L)] = ratio
            print(f"{kind:<11} {ms:9.2f} {ratio:13.2f} {mib if mib is not None else float('nan'):9.1f} "
                  f"{mem_ratio:11.2f} {n if n >= 0 else 'data-dep.':>12}")
    top = max(args.lengths)
    for kind in KINDS[1:]:
        print(f"kinds_speedup_vs_sdpa_L{top}_{kind}: {results[(kind, top)]:.2f}")
    print(json.dumps({f"{k}@{L}": round(v, 3) for (k, L), v in results.items()}))


if __name__ == "__main__":
    main()
