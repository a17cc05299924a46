"""Forward time and peak extra memory of the Informer's attentions against PyTorch's SDPA.

Methods, all on [B, H, L, D] = [4, 8, L, 64] fp32 inputs under torch.no_grad():

* ProbSparse, encoder form (non-causal, factor 5, mean_divisor "U"), with the config's default
  `sample_block` and with sample_block=1 (the official per-query key sample);
* our full attention with explicit rows (`full_attention(..., need_rows=True)`: builds QKᵀ and the
  softmax rows, the path taken when a hook records them);
* `torch.nn.functional.scaled_dot_product_attention`, the baseline.

Timing runs in this process: one warm-up call, then the median of several repeats.
Peak memory runs each (method, L) in a fresh child process (this script with a hidden flag): the child
builds the inputs, warms the method up at L=16, reads ru_maxrss, calls the method once at L and reports
how far ru_maxrss rose (the peak extra resident memory of the call).

    python benchmarks/attention.py            # L = 96, 512, 2048, 8192 (a few minutes on 2 cores)
    python benchmarks/attention.py --quick    # L = 96, 512, one repeat (smoke run)
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # `python benchmarks/attention.py` puts benchmarks/ first, not the root
    sys.path.insert(0, str(REPO_ROOT))

from model.attention import full_attention, probsparse_attention  # noqa: E402
from model.config import InformerConfig  # noqa: E402

B, H, D = 4, 8, 64
FACTOR = 5
MEAN_DIVISOR = "U"
DEFAULT_BLOCK = InformerConfig.__dataclass_fields__["sample_block"].default
LENGTHS = (96, 512, 2048, 8192)
QUICK_LENGTHS = (96, 512)
WARMUP_LENGTH = 16
INPUT_SEED = 0
SAMPLE_SEED = 1234
MAX_EXPLICIT_GIB = 6.0  # skip the explicit full-attention path above this estimated footprint
SPEEDUP_LENGTH = 8192


@dataclass(frozen=True)
class Method:
    key: str
    label: str


def methods() -> list[Method]:
    found = [Method(f"prob_b{DEFAULT_BLOCK}", f"ProbSparse block={DEFAULT_BLOCK} (default)")]
    if DEFAULT_BLOCK != 1:
        found.append(Method("prob_b1", "ProbSparse block=1 (official)"))
    found += [Method("full_rows", "full, explicit rows"), Method("sdpa", "SDPA (baseline)")]
    return found


def default_repeats(L: int) -> int:
    if L <= 512:
        return 20
    if L <= 2048:
        return 5
    return 2  # SDPA takes seconds per call at L=8192 on 2 CPU cores


def make_inputs(L: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(INPUT_SEED + L)
    return tuple(torch.randn(B, H, L, D, generator=gen) for _ in range(3))  # type: ignore[return-value]


def explicit_bytes(L: int) -> int:
    """The explicit path holds two [B, H, L, L] fp32 tensors at its peak (scores and rows)."""
    return 2 * B * H * L * L * 4


def explicit_skipped(key: str, L: int, max_gib: float) -> bool:
    return key == "full_rows" and explicit_bytes(L) > max_gib * 2**30


def call(key: str, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    if key.startswith("prob_b"):
        return probsparse_attention(Q, K, V, factor=FACTOR, causal=False, mean_divisor=MEAN_DIVISOR,
                                    decoder_lazy="cummean", sample_block=int(key[len("prob_b"):]),
                                    generator=gen).context
    if key == "full_rows":
        return full_attention(Q, K, V, causal=False, need_rows=True).context
    if key == "sdpa":
        return F.scaled_dot_product_attention(Q, K, V)
    raise ValueError(f"unknown method {key!r}")


def time_ms(key: str, L: int, repeats: int) -> float:
    """Median forward time in ms after one warm-up call."""
    Q, K, V = make_inputs(L)
    gen = torch.Generator().manual_seed(SAMPLE_SEED)
    with torch.no_grad():
        call(key, Q, K, V, gen)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            call(key, Q, K, V, gen)
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def maxrss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def own_hwm_kib() -> int | None:
    """This process's own RSS high-water mark (VmHWM), which, unlike ru_maxrss, nothing inherits."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    return int(found.group(1)) if found else None


def memory_child(key: str, L: int) -> dict:
    """Runs in a fresh process: the rise of ru_maxrss over one call at L."""
    gen = torch.Generator().manual_seed(SAMPLE_SEED)
    with torch.no_grad():
        call(key, *make_inputs(WARMUP_LENGTH), gen)  # load kernels, touch the allocator
        Q, K, V = make_inputs(L)
        before, hwm = maxrss_kib(), own_hwm_kib()
        out = call(key, Q, K, V, gen)
        after = maxrss_kib()
    del out
    # A baseline above our own high-water mark came from the parent: the rise would read too low.
    inherited = hwm is not None and before > hwm + 1024
    return {"method": key, "L": L, "before_kib": before, "after_kib": after, "own_hwm_kib": hwm,
            "inherited_baseline": inherited, "extra_mib": (after - before) / 1024}


# Linux carries the RSS high-water mark of the process that forks across execve into the child's
# ru_maxrss, so a child started straight from this (large) process would start with our peak as its
# baseline. A torch-free launcher in between forks it from a ~10 MiB process instead.
LAUNCHER = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"


def peak_extra_mib(key: str, L: int) -> float:
    child = [sys.executable, str(Path(__file__).resolve()), "--_memory-child", key, str(L)]
    cmd = [sys.executable, "-c", LAUNCHER, *child]
    done = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy(), check=False)
    if done.returncode != 0:
        raise RuntimeError(f"memory child for {key} at L={L} failed ({done.returncode}):\n{done.stderr}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if report["inherited_baseline"]:
        raise RuntimeError(f"memory child for {key} at L={L} inherited its ru_maxrss baseline: {report}")
    return float(report["extra_mib"])


def fmt(value: float | None, spec: str) -> str:
    return "n/a" if value is None or math.isnan(value) else format(value, spec)


def ratio(num: float | None, den: float | None) -> float | None:
    if num is None or den is None or den <= 0:
        return None
    return num / den


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="L in 96, 512 only, 1 repeat (smoke run)")
    parser.add_argument("--lengths", type=int, nargs="+", help="sequence lengths (default 96 512 2048 8192)")
    parser.add_argument("--repeats", type=int, help="timed repeats per cell (default: 20, 5 at 2048, 2 at 8192)")
    parser.add_argument("--max-explicit-gib", type=float, default=MAX_EXPLICIT_GIB,
                        help="skip the explicit full path when its two LxL tensors exceed this (default 6)")
    parser.add_argument("--no-memory", action="store_true", help="time only; skip the memory child processes")
    parser.add_argument("--_memory-child", nargs=2, metavar=("METHOD", "L"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args._memory_child:
        key, L = args._memory_child
        print(json.dumps(memory_child(key, int(L))))
        return 0

    lengths = tuple(args.lengths) if args.lengths else (QUICK_LENGTHS if args.quick else LENGTHS)
    repeats = (lambda L: args.repeats) if args.repeats else ((lambda L: 1) if args.quick else default_repeats)
    meths = methods()

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; B={B} H={H} D={D} fp32, no_grad; "
          f"ProbSparse non-causal, factor={FACTOR}, mean_divisor={MEAN_DIVISOR!r}, "
          f"default sample_block={DEFAULT_BLOCK}")
    print("ms: median forward time after 1 warm-up; MiB: rise of ru_maxrss over one call in a fresh process")
    print("speed x: sdpa_ms / ms (>1 faster than SDPA); mem x: MiB / sdpa_MiB (<1 less memory than SDPA)")
    print(flush=True)

    results: dict[tuple[str, int], tuple[float | None, float | None]] = {}
    for L in lengths:
        for m in meths:
            if explicit_skipped(m.key, L, args.max_explicit_gib):
                results[(m.key, L)] = (None, None)
                continue
            ms = time_ms(m.key, L, repeats(L))
            mib = None if args.no_memory else peak_extra_mib(m.key, L)
            results[(m.key, L)] = (ms, mib)
            print(f"  measured L={L:<5} {m.label:<32} {ms:10.2f} ms  ({repeats(L)} repeats)", flush=True)
    print()

    header = f"{'L':>5}  {'method':<32} {'ms':>10} {'MiB':>9} {'speed x':>8} {'mem x':>7}"
    print(header)
    print("-" * len(header))
    for L in lengths:
        sdpa_ms, sdpa_mib = results[("sdpa", L)]
        for m in meths:
            ms, mib = results[(m.key, L)]
            if ms is None:
                gib = explicit_bytes(L) / 2**30
                print(f"{L:>5}  {m.label:<32} {'skipped (memory)':>20}   (needs ~{gib:.0f} GiB)")
                continue
            print(f"{L:>5}  {m.label:<32} {ms:>10.2f} {fmt(mib, '.1f'):>9} "
                  f"{fmt(ratio(sdpa_ms, ms), '.2f'):>8} {fmt(ratio(mib, sdpa_mib), '.2f'):>7}")
        print()

    prob_ms = results.get((meths[0].key, SPEEDUP_LENGTH), (None, None))[0]
    sdpa_ms = results.get(("sdpa", SPEEDUP_LENGTH), (None, None))[0]
    print(f"probsparse_vs_sdpa_speedup_L{SPEEDUP_LENGTH}: {fmt(ratio(sdpa_ms, prob_ms), '.1f')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
