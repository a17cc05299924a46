"""How the screens' computations use the CPU: one torch thread while a screen computes.

A screen's computation is a few hundred small kernels (one window: a seq_len-1440 forward pass is 7 ms on one
thread). With torch's default of one thread per core, every kernel ends at a barrier that waits for the slowest
thread; on a shared two-core machine (the browser, other users, a study) the second thread is often descheduled,
and the barrier waits out its time slice: the same forward pass measured 7 ms on one thread and 60–790 ms on two
while another process was busy. One thread makes a screen's time its own work. Computations over many
windows run their independent parts side by side in Python threads instead (`analysis.compare.comparison`), which uses
both cores without a barrier between them.

`one_thread()` holds torch at INFORMER_LAB_TORCH_THREADS (default 1) threads while any screen computes (torch's
thread count is global to the process: the first to enter sets it, the last to leave restores it).
"""
from __future__ import annotations

import contextlib
import os
import threading
import torch

THREADS_ENV = "INFORMER_LAB_TORCH_THREADS"

_lock = threading.Lock()
_active = 0
_saved = 0


def threads() -> int:
    """The torch threads a screen's computation runs on: $INFORMER_LAB_TORCH_THREADS, else 1."""
    try:
        return max(1, int(os.environ.get(THREADS_ENV, "1")))
    except ValueError:
        return 1


@contextlib.contextmanager
def one_thread():
    """torch on `threads()` threads for the duration (nested and concurrent uses share one setting)."""
    global _active, _saved
    with _lock:
        if _active == 0:
            _saved = torch.get_num_threads()
            torch.set_num_threads(threads())
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                torch.set_num_threads(_saved)

