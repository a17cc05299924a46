"""Forecast passes over every window of a split, run side by side in threads.

A pass with ProbSparse sites draws its key samples from one generator, batch after batch, so it runs in order in
one thread (the same batches and draws as `analysis.learning.training.predict`). A pass without any sampled site (full
attention everywhere: the counterfactual, a full-attention twin) is a pure function of each batch: its batches are
shared out between the threads in runs of whole batches, the same batches the pass would make in order, and put
back in order. Each thread runs torch's kernels with the GIL released, so `workers` threads use that many cores
without torch's intra-op barriers (see ui/compute.py for why that matters on a shared machine).

Progress is counted in windows and reported from the calling thread only (a Streamlit element may not be touched
from another thread).
"""
from __future__ import annotations

import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from informer_lab.model import Informer

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.learning.training import predict
from informer_lab.analysis.learning.windows import WindowDataset


@dataclass(frozen=True)
class Pass:
    """One model's forecasts of every window: `attention` overrides every site's ("full": the counterfactual)."""

    name: str
    model: Informer
    attention: str | None = None

    def sampled(self) -> bool:
        """Whether any site draws a key sample in this pass (then its batches must run in order)."""
        if self.attention == "full":
            return False
        return any(self.model.attention_layer(site).kind == "prob" for site in self.model.sites)


def window_range(prepared: PreparedData, split: str, start: int, stop: int) -> PreparedData:
    """The same data with `split` cut to its windows start … stop − 1 (window i of the cut is window start + i)."""
    part = prepared.split(split)
    rows = slice(start, stop + prepared.spec.seq_len + prepared.spec.pred_len - 1)
    cut = replace(part, start=part.start + start, stop=part.start + rows.stop, values=part.values[rows],
                  marks=part.marks[rows], timestamps=part.timestamps[rows])
    return replace(prepared, **{split: cut})


def run_passes(passes: list[Pass], prepared: PreparedData, split: str, *, seed: int, batch_size: int = 64,
               workers: int = 1, extra: dict[str, Callable[[], object]] | None = None,
               progress: Callable[[int, int], None] | None = None) -> tuple[dict[str, np.ndarray], np.ndarray,
                                                                            dict[str, object]]:
    """({pass name: [N, pred_len, c_out] forecasts}, truths [N, pred_len, c_out], {extra name: its result}).

    extra: more work for the same threads (e.g. fitting a baseline), each a callable run once.
    progress(done, total): windows forecast so far over all passes, from the calling thread.
    workers = 1 runs everything in the calling thread, in order.
    """
    n = len(WindowDataset(prepared, split))
    total = n * len(passes)
    done = [0]
    lock = threading.Lock()

    def counted(pass_: Pass, data: PreparedData) -> tuple[np.ndarray, np.ndarray]:
        last = [0]

        def tick(so_far: int, _: int) -> None:
            with lock:
                done[0] += so_far - last[0]
            last[0] = so_far
        return predict(pass_.model, data, split, batch_size=batch_size, seed=seed, attention=pass_.attention,
                       progress=tick)

    jobs: list[tuple[str, int, Callable[[], object]]] = []  # (pass or extra name, part, work)
    step = batch_size * max(1, -(-n // (batch_size * 4 * max(1, workers))))  # a few runs of whole batches a thread
    for pass_ in passes:
        if pass_.sampled() or workers == 1:
            jobs.append((pass_.name, 0, lambda p=pass_: counted(p, prepared)))
        else:
            for start in range(0, n, step):
                jobs.append((pass_.name, start, lambda p=pass_, a=start: counted(
                    p, window_range(prepared, split, a, min(n, a + step)))))
    for name, work in (extra or {}).items():
        jobs.append((name, 0, work))

    results: dict[tuple[str, int], object] = {}
    if workers == 1:
        for name, part, work in jobs:
            results[(name, part)] = work()
            if progress is not None:
                progress(done[0], total)
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="passes") as pool:
            pending: dict[Future, tuple[str, int]] = {pool.submit(work): (name, part) for name, part, work in jobs}
            while pending:
                finished, _ = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
                for future in finished:
                    results[pending.pop(future)] = future.result()  # re-raises a worker's error here
                if progress is not None:
                    progress(done[0], total)

    forecasts, truth = {}, None
    for pass_ in passes:
        parts = sorted(((part, value) for (name, part), value in results.items() if name == pass_.name),
                       key=lambda item: item[0])
        forecasts[pass_.name] = np.concatenate([value[0] for _, value in parts])
        if truth is None:
            truth = np.concatenate([value[1] for _, value in parts])
    return forecasts, truth, {name: results[(name, 0)] for name in (extra or {})}


__all__ = ["Pass", "run_passes", "window_range"]
