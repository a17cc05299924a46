"""Threads for attention kernels that must not wait at barriers: on a busy two-core machine a torch kernel split
between two threads waits for whichever the OS has descheduled (ProbSparse at seq_len 96, 73 ms where one
thread takes 0.9 ms). The kernels run on one torch thread (`one_torch_thread`); a large call shares its chunks between
Python threads that take the next chunk nobody has taken (`run_chunks`)."""
from __future__ import annotations

import contextlib
import itertools
import threading
from concurrent.futures import ThreadPoolExecutor

import torch

_lock = threading.Lock()
_depth = 0
_outside = 1  # torch's threads outside `one_torch_thread`: the Python threads a call may share its chunks with
_pool: ThreadPoolExecutor | None = None


@contextlib.contextmanager
def one_torch_thread():
    """torch's kernels on one thread for the duration, restored after (concurrent and nested uses share one setting;
    torch's thread count is the process's). Yields the thread count outside."""
    global _depth, _outside
    with _lock:
        if _depth == 0:
            _outside = torch.get_num_threads()
            if _outside > 1:
                torch.set_num_threads(1)
        _depth += 1
        outside = _outside
    try:
        yield outside
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _outside > 1:
                torch.set_num_threads(_outside)


def _workers(n: int) -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None or _pool._max_workers < n:
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="probsparse")
        return _pool


def run_chunks(n: int, work, workers: int) -> None:
    """work(i) for i in 0 … n − 1, shared by the calling thread and workers − 1 pool threads, each taking the next
    chunk nobody has taken: a thread the OS deschedules on a busy machine delays only the chunk it holds (the caller
    returns once every chunk is done, not when every thread has run), and no kernel waits at a barrier."""
    if workers <= 1 or n <= 1:
        for i in range(n):
            work(i)
        return
    taken, done, errors = itertools.count(), threading.Semaphore(0), []

    def take() -> None:
        while (i := next(taken)) < n:  # next() on a count is atomic under the GIL
            try:
                work(i)
            except BaseException as error:  # noqa: BLE001 (re-raised by the caller)
                errors.append(error)
            finally:
                done.release()

    pool = _workers(workers - 1)
    for _ in range(workers - 1):
        pool.submit(take)
    take()
    for _ in range(n):
        done.acquire()
    if errors:
        raise errors[0]
