"""What one attention call costs, per kind, against `scaled_dot_product_attention` timed in the same process.

    time_kinds(kinds, heads=4, head_dim=16, length=1440)        → ms per call, SDPA's, their ratio (interleaved rounds)
    peak_mib(kind, heads=4, head_dim=16, length=1440)           → peak extra resident memory of one call (a child process)
    peak_mibs(kinds, lengths=(1440,))                           → the same for many calls, one child on Linux
    cost_sweep(kinds, lengths=(96, …, 8192))                    → both for every kind and length, and the pairs scored

A call is one inner attention on [1, H, L, D] random queries, keys and values (non-causal, the encoder's form), on
one torch thread. Kinds and SDPA run round by round, interleaved, so a machine that slows down slows both; the
median of the rounds is reported. Memory: a fresh child process (python -m analysis.instruments.attention_cost) reads how far
ru_maxrss rises over one call: the resident peak of everything the call allocates, SDPA's for comparison.
"""
from __future__ import annotations

import json
import math
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pandas as pd
import torch
import torch.nn.functional as F

from informer_lab.model.attention import probsparse_attention
from informer_lab.model.attention import SPARSE_KINDS, positional_table, sparse_attention
from informer_lab.model.attention.compressed import memory_visible
from informer_lab.source import child_env

LENGTHS = (96, 384, 1440, 4096, 8192)


def inputs(heads: int, head_dim: int, length: int, seed: int = 0, batch: int = 1):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(batch, heads, length, head_dim, generator=g) for _ in range(3))


def call(kind: str, Q, K, V, options: dict | None = None) -> torch.Tensor:
    """One non-causal attention call of `kind` ("sdpa" and "full" are SDPA; "prob" ProbSparse's encoder form)."""
    if kind in ("sdpa", "full"):
        return F.scaled_dot_product_attention(Q, K, V)
    if kind == "prob":
        return probsparse_attention(Q, K, V, factor=5, causal=False, mean_divisor="U", decoder_lazy="cummean",
                                    sample_block=512, generator=torch.Generator().manual_seed(0),
                                    need_scores=False).context
    return sparse_attention(kind, Q, K, V, causal=False, options=options,
                            generator=torch.Generator().manual_seed(0)).context


def pairs(kind: str, heads: int, length: int, options: dict | None = None) -> int:
    """Query–key pairs one head scores (ProbSparse: its U sampled keys per query and u full rows; LSH: at most
    2·chunk per query and round, fewer where buckets differ; compressed: its block plus the summaries it reads)."""
    if kind in ("sdpa", "full"):
        return length * length
    if kind == "prob":
        U = u = min(length, 5 * math.ceil(math.log(max(2, length))))
        return length * U + u * length
    if kind == "lsh":
        o = {"chunk": 32, "rounds": 2, **(options or {})}
        return min(length * length, length * min(length, 2 * int(o["chunk"])) * int(o["rounds"]))
    table = positional_table(kind, length, heads, causal=False, options=options or {})
    extra = 0
    if kind == "compressed":
        o = {"block": 16, "stride": 4, **(options or {})}
        extra = int(memory_visible(length, causal=False, block=int(o["block"]), stride=int(o["stride"])).sum())
    return table.pairs() + extra


@torch.no_grad()
def time_kinds(kinds, *, heads: int = 4, head_dim: int = 16, length: int = 1440, rounds: int = 5,
               options: dict | None = None, batch: int = 1, threads: int = 1) -> pd.DataFrame:
    """kind, length, ms, sdpa_ms, ratio (ms / sdpa_ms), pairs, pairs_share (of L²): medians of interleaved rounds,
    on `threads` torch threads (restored after)."""
    Q, K, V = inputs(heads, head_dim, length, batch=batch)
    kinds = list(kinds)
    times: dict[str, list[float]] = {k: [] for k in ["sdpa", *kinds]}
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for k in times:  # one warm-up call each (tables and plans are built and cached once)
            call(k, Q, K, V, (options or {}).get(k))
        for _ in range(rounds):
            for k in times:
                start = time.perf_counter()
                call(k, Q, K, V, (options or {}).get(k))
                times[k].append(time.perf_counter() - start)
    finally:
        torch.set_num_threads(before)
    sdpa = statistics.median(times["sdpa"]) * 1e3
    rows = []
    for k in kinds:
        ms = statistics.median(times[k]) * 1e3
        n = pairs(k, heads, length, (options or {}).get(k))
        rows.append({"kind": k, "length": length, "ms": ms, "sdpa_ms": sdpa, "ratio": ms / sdpa, "pairs": n,
                     "pairs_share": n / (length * length)})
    return pd.DataFrame(rows)


def peak_mib(kind: str, *, heads: int = 4, head_dim: int = 16, length: int = 1440, batch: int = 1,
             threads: int = 1, timeout: float = 300) -> float:
    """Peak extra resident memory (MiB) of one call in a fresh child process; NaN if the child fails."""
    return peak_mibs([kind], heads=heads, head_dim=head_dim, lengths=[length], batch=batch, threads=threads,
                     timeout=timeout)[0]


def peak_mibs(kinds, *, heads: int = 4, head_dim: int = 16, lengths=(1440,), batch: int = 1, threads: int = 1,
              timeout: float = 300) -> list[float]:
    """peak_mib of each (kind, length) pair (kinds and lengths zipped; one length: every kind at it). On Linux one
    child measures them all, one after another: the high-water mark is reset before each call (clear_refs 5) and
    glibc is told to hand every block over 128 KiB back to the system when it is freed (a fixed mmap threshold), so
    one call's peak cannot hide in memory an earlier call left resident. A child costs an interpreter and torch
    (about 4 s of CPU): the Variants screen's ten kinds took 41 s in ten children. Elsewhere ru_maxrss cannot be
    reset: a fresh child per call. NaN where a child fails."""
    kinds = list(kinds)
    lengths = list(lengths) * len(kinds) if len(lengths) == 1 else list(lengths)
    if len(lengths) != len(kinds):
        raise ValueError(f"{len(kinds)} kinds and {len(lengths)} lengths: give one length or one per kind")
    specs = [f"{k}:{L}" for k, L in zip(kinds, lengths)]
    groups = [specs] if Path("/proc/self/clear_refs").exists() else [[spec] for spec in specs]
    found: dict[str, float] = {}
    for group in groups:
        try:
            out = subprocess.run([sys.executable, "-P", "-m", "informer_lab.analysis.instruments.attention_cost",
                                  ",".join(group), str(heads), str(head_dim), str(batch), str(threads)],
                                 env={**child_env(), "MALLOC_MMAP_THRESHOLD_": str(128 * 1024)}, capture_output=True,
                                 text=True, timeout=timeout * len(group), check=True)
            found.update({k: float(v) for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()})
        except (subprocess.SubprocessError, OSError, ValueError, KeyError, IndexError, AttributeError):
            pass
    return [found.get(spec, float("nan")) for spec in specs]


def cost_sweep(kinds=("prob", *SPARSE_KINDS), *, lengths=LENGTHS, heads: int = 4, head_dim: int = 16,
               rounds: int = 3, memory: bool = False,
               progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """time_kinds at every length (and peak_mib of every kind and SDPA when memory=True)."""
    parts = []
    for i, L in enumerate(lengths):
        part = time_kinds(kinds, heads=heads, head_dim=head_dim, length=L, rounds=rounds)
        if memory:
            peaks = peak_mibs(["sdpa", *part["kind"]], heads=heads, head_dim=head_dim, lengths=[L])
            part["peak_mib"], part["sdpa_peak_mib"] = peaks[1:], peaks[0]
        parts.append(part)
        if progress is not None:
            progress(i + 1, len(lengths))
    return pd.concat(parts, ignore_index=True)


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def _peak(kind: str, heads: int, head_dim: int, length: int, batch: int) -> float:
    """Linux: the resident high-water mark is reset (clear_refs 5) after the inputs exist, so neither the import's
    peak nor an earlier call's hides this one's; elsewhere ru_maxrss's rise (0 when the call stays under the peak
    before it)."""
    Q, K, V = inputs(heads, head_dim, length, batch=batch)
    with torch.no_grad():
        call(kind, Q[..., :8, :], K[..., :8, :], V[..., :8, :])  # code paths loaded before the mark
    try:
        Path("/proc/self/clear_refs").write_text("5")
        before = _status_kib("VmRSS")
        with torch.no_grad():
            call(kind, Q, K, V)
        peak = (_status_kib("VmHWM") - before) / 1024
    except OSError:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with torch.no_grad():
            call(kind, Q, K, V)
        peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    return max(0.0, peak)


def _child(specs: str, heads: int, head_dim: int, batch: int, threads: int) -> None:
    """Each `kind:length` of the comma-separated specs, one after another (see peak_mibs)."""
    torch.set_num_threads(threads)
    out = {}
    for spec in specs.split(","):
        kind, length = spec.rsplit(":", 1)
        out[spec] = _peak(kind, heads, head_dim, int(length), batch)
    print(json.dumps(out))


if __name__ == "__main__":  # the child of peak_mibs
    _child(sys.argv[1], *(int(a) for a in sys.argv[2:6]))

__all__ = ["LENGTHS", "cost_sweep", "pairs", "peak_mib", "peak_mibs", "time_kinds"]
