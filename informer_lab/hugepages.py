"""Large CPU tensors on transparent huge pages, in every process of the lab: the app's server, the CLI, a study's Ray
workers and the benchmarks that speak for them.

The first write to each 4 KB page of fresh memory is a page fault, and on the reference machine (2-core AMD EPYC VM)
those faults were most of the cost of making a large tensor: a fresh 64 MiB tensor filled once took 34-38 ms, the same
writes to memory already touched 5.7 ms. With torch's `THP_MEM_ALLOC_ENABLE=1` its CPU allocator aligns tensors of 2 MB
or more to 2 MB and asks the kernel for huge pages (madvise MADV_HUGEPAGE): 7 ms. ProbSparse at L = 8192,
whose output is such a tensor, took 158-181 ms on one thread against 199 without (benchmarks/attention.py); the
Compare page's 512 windows at seq_len 1440 spent 1.7 s of system time against 4.0, their wall time within the noise.

Torch reads the variable once, at the process's first tensor, so `prefer_huge_pages` runs before anything imports
torch. A value already set (0 turns it off) is kept. Where the kernel's huge pages are off, nothing changes.
"""
from __future__ import annotations

import os

VARIABLE = "THP_MEM_ALLOC_ENABLE"


def prefer_huge_pages() -> str:
    """Sets THP_MEM_ALLOC_ENABLE=1 unless set already; returns the value in force."""
    return os.environ.setdefault(VARIABLE, "1")


def worker_setting() -> dict[str, str]:
    """The variable for another process's environment (a Ray worker's): this one's value, or 1."""
    return {VARIABLE: os.environ.get(VARIABLE, "1")}
