"""Self-test rows for attention rollout and flow (analysis.anatomy): does the relevance of the input steps sit on the
planted lags?

Per (window, probe step): the share of the input steps' relevance (the label share left out) within the value
embedding's reach (± 1 step) of the planted lags, against the share of as many random lags (64 seeded draws of the
same number of positions, each widened the same way). The figure is the ratio of the two means over windows, with the
delta-method interval of `analysis.intervals.ratio_interval`; it passes at 2× or more (on its point estimate, as every
self-test row).

Role "heuristic": rollout and flow assume that attention is what moves information between steps (the FFNs and the
embedding's convolution are not in their graph). A failure on a model that learned says that assumption does not hold
for this model, not that the code is wrong; the verdict reports it beside the instruments, not among them.
"""
from __future__ import annotations

import numpy as np

from informer_lab.model import Informer

from informer_lab.analysis.anatomy.flow import flow, flow_edges
from informer_lab.analysis.anatomy.rollout import record_pieces, rollout, window_graph
from informer_lab.analysis.attention.recording import window_batch
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.intervals import ratio_interval
from informer_lab.analysis.row_memory import data_span
from informer_lab.analysis.planted.known_answer import planted_cells, probe_steps, receptive_radius
from informer_lab.analysis.planted.selftest_heads import not_applicable, row
from informer_lab.analysis.planted.synth import Answer
from informer_lab.analysis.learning.windows import WindowDataset

RATIO = 2.0
DRAWS = 64
FLOW_EDGES = 400_000  # flow is scored where one window's graph has at most this many edges


def _near(positions, radius: int, L: int) -> np.ndarray:
    mask = np.zeros(L, dtype=bool)
    for p in positions:
        mask[max(0, p - radius):p + radius + 1] = True
    return mask


def _random_share(relevance: np.ndarray, count: int, radius: int, rng: np.random.Generator) -> float:
    L = len(relevance)
    shares = [relevance[_near(rng.choice(L, size=count, replace=False), radius, L)].sum() for _ in range(DRAWS)]
    return float(np.mean(shares))


def rollout_rows(model: Informer, prepared: PreparedData, answer: Answer, *, seed: int, windows: int = 8
                 ) -> list[dict]:
    """The rows rollout_mass and flow_mass (see the module docstring)."""
    names = ("rollout_mass", "flow_mass")
    spec = prepared.spec
    steps = probe_steps(answer, spec.pred_len)
    total = len(WindowDataset(prepared, "test"))
    candidates = np.unique(np.linspace(0, total - 1, min(total, 4 * windows)).round().astype(int))
    usable = [int(w) for w in candidates if all(planted_cells(answer, prepared, "test", int(w), h) is not None
                                                for h in steps)]
    chosen = usable[::max(1, len(usable) // windows)][:windows]
    if not chosen:
        return [not_applicable(n, n.split("_")[0], "no test window reads every planted lag", "heuristic")
                for n in names]
    radius = receptive_radius(model.config)
    rng = np.random.default_rng(seed)
    planted = {n: [] for n in names}
    random = {n: [] for n in names}
    flow_skipped = ""
    for w in chosen:
        pieces = record_pieces(model, window_batch(prepared, "test", [w]), seed)
        graph = window_graph(model, pieces, 0)
        score_flow = flow_edges(graph) <= FLOW_EDGES
        if not score_flow:
            flow_skipped = f"the flow graph has {flow_edges(graph):,} edges (over {FLOW_EDGES:,}): not scored"
        for name in names if score_flow else names[:1]:
            rel = rollout(graph, steps) if name == "rollout_mass" else flow(graph, steps)[0]
            mine = theirs = 0.0
            for t, h in enumerate(steps):
                inputs = rel.inputs[t] / max(rel.inputs[t].sum(), 1e-300)
                cells = planted_cells(answer, prepared, "test", w, h)
                positions = sorted(set(cells.positions))
                mine += float(inputs[_near(positions, radius, spec.seq_len)].sum())
                theirs += _random_share(inputs, len(positions), radius, rng)
            planted[name].append(mine / len(steps))
            random[name].append(theirs / len(steps))
    gaps = np.diff(chosen)
    span = data_span(prepared, "test", int(gaps.min()) if len(gaps) else spec.seq_len + spec.pred_len)
    rows = []
    for name in names:
        method = name.split("_")[0]
        if not planted[name]:
            rows.append(not_applicable(name, method, flow_skipped, "heuristic"))
            continue
        interval = ratio_interval(planted[name], random[name], span=span)
        rows.append(row(name, method, interval.estimate, interval.lo, interval.hi,
                        f"≥ {RATIO:g}× the share of as many random lags", bool(interval.estimate >= RATIO),
                        f"{len(planted[name])} test windows × steps {', '.join(map(str, steps))}, α = ½, P routed, "
                        f"mean of the heads; share of the input steps' relevance within ± {radius} of the planted "
                        f"lags {np.mean(planted[name]):.3f}, of {DRAWS} random draws of as many lags "
                        f"{np.mean(random[name]):.3f}" + (f"; {interval.reason}" if interval.reason else ""),
                        "heuristic"))
    return rows


__all__ = ["RATIO", "rollout_rows"]
