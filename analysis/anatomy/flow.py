"""Attention flow (Abnar & Zuidema 2020): the maximum flow from a forecast position to each input step through the
layered graph whose edge capacities are the rollout's maps (Â of every attention layer, P of every distilling step,
the cross-attention's α·C and its residual 1 − α).

Nodes: the decoder's positions after each self- and cross-attention and its input tokens; per encoder replica and
layer the output and input positions; one node per input step (every replica's first-level position that reads it
feeds it) and one `label` node fed by the decoder's input tokens (the known tail and the placeholders). Capacities are
scaled to integers (`SCALE`) for `scipy.sparse.csgraph.maximum_flow` (Dinic's algorithm); a capacity below 1/SCALE
rounds to nothing. Abnar & Zuidema report raw flow values; the lab divides them by their sum over the input steps and
the label node, so that flow and rollout read on the same scale (shares summing to 1), and keeps the raw values.

What it can say. A step's maximum flow is the capacity of the smallest cut between the forecast row and that step.
Each position keeps (1 − α) of itself on its residual edge, so with α = ½ the residual path alone carries as much as
attention lets leave the forecast row (α · the cross-attention's row): once one layer's attention gathers onto a
position, every input step can take that whole flow, and every step gets the same value (0.5 on the sample model).
The max-flow is computed correctly; the same number for every step says the cut lies at the forecast row, not which
steps matter. `uniform` tells such a result apart (flows within two capacity units of each other), and the screens
then show the value and this reason instead of a chart of equal bars; the benchmark scores flow as it is (no better
than random cells on planted answers).

Cost: one max-flow per sink (seq_len + 1 of them) on a graph of Σ L_l² edges; `flow_edges` says the size before any
is run so that a caller can bound the work (`MAX_EDGES`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

from informer_lab.analysis.anatomy.rollout import Graph, Relevance, forecast_rows

SCALE = 1_000_000
SAME = 2.0 / SCALE  # raw flows closer than this are one value (capacities are integers of 1/SCALE)
MAX_EDGES = 400_000  # a screen computes flow without asking below this many edges (~1 s on two cores at seq 96)


@dataclass
class _Builder:
    n: int = 0

    def __post_init__(self):
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.caps: list[np.ndarray] = []

    def nodes(self, k: int) -> np.ndarray:
        out = np.arange(self.n, self.n + k)
        self.n += k
        return out

    def dense(self, tail: np.ndarray, head: np.ndarray, weights: np.ndarray) -> None:
        """Edges tail[i] → head[j] with capacity weights[i, j] (those that round to zero dropped)."""
        caps = np.rint(weights * SCALE).astype(np.int64)
        i, j = np.nonzero(caps)
        self.rows.append(tail[i])
        self.cols.append(head[j])
        self.caps.append(caps[i, j])

    def matrix(self) -> csr_matrix:
        rows, cols, caps = (np.concatenate(a) for a in (self.rows, self.cols, self.caps))
        return csr_matrix((caps.astype(np.int32), (rows, cols)), shape=(self.n, self.n))


def flow_edges(graph: Graph) -> int:
    """How many edges the flow graph of `graph` has at most (dense maps)."""
    encoder = sum(A.size + (0 if P is None else P.size) for layers in graph.encoder for A, P in layers)
    decoder = sum(S.size + C.size + S.shape[0] for S, C in graph.decoder)
    return encoder + decoder + graph.dec_len + sum(len(s) for s in graph.steps)


def _build(graph: Graph, target_rows: np.ndarray):
    b = _Builder()
    steps = b.nodes(graph.seq_len)
    label = b.nodes(1)
    BIG = np.full((1, 1), 4.0)  # more than any flow (≤ 1) can use
    dec_in = b.nodes(graph.dec_len)
    b.dense(dec_in, label, np.ones((graph.dec_len, 1)) * BIG[0, 0])
    memory_nodes = []
    for r, layers in enumerate(graph.encoder):
        below = None  # the input nodes of the previous layer
        first_in = None
        for l, (A, P) in enumerate(layers):
            inp, out = b.nodes(A.shape[1]), b.nodes(A.shape[0])
            b.dense(out, inp, A)
            if below is not None:  # this layer's inputs → the outputs below: P of the distilling step between them, or
                # the identity where there is none (a model without distilling: each layer reads the one below)
                step = below[0] if below[0] is not None else np.eye(A.shape[1], len(below[1]))
                b.dense(inp, below[1], step)
            else:
                first_in = inp
            below = (P, out)
        memory_nodes.append(below[1])
        edge = np.zeros((len(first_in), graph.seq_len))
        edge[np.arange(len(first_in)), graph.steps[r]] = BIG[0, 0]
        b.dense(first_in, steps, edge)
    memory = np.concatenate(memory_nodes)
    prev = dec_in
    for S, C in graph.decoder:
        after_self, after_cross = b.nodes(graph.dec_len), b.nodes(graph.dec_len)
        b.dense(after_self, prev, S)
        b.dense(after_cross, after_self, np.eye(graph.dec_len) * (1.0 - graph.alpha))
        b.dense(after_cross, memory, graph.alpha * C)
        prev = after_cross
    return b.matrix(), prev[target_rows], steps, int(label[0])


def flow(graph: Graph, targets) -> tuple[Relevance, np.ndarray]:
    """(Relevance as shares, raw [T, seq_len + 1] maximum flows to every input step and the label node) from the
    forecast rows of horizon steps `targets` (1-based). `Relevance.levels` is empty: flow has no per-level shares."""
    targets = np.asarray(list(targets), dtype=np.int64)
    if len(targets) == 0 or targets.min() < 1 or targets.max() > graph.pred_len:
        raise ValueError(f"target steps must be in 1 … pred_len = {graph.pred_len}")
    rows = np.argmax(forecast_rows(graph, targets), axis=1)
    matrix, sources, steps, label = _build(graph, rows)
    raw = np.zeros((len(targets), graph.seq_len + 1))
    sinks = list(steps) + [label]
    for t, source in enumerate(sources):
        for k, sink in enumerate(sinks):
            raw[t, k] = maximum_flow(matrix, int(source), int(sink), method="dinic").flow_value / SCALE
    total = raw.sum(axis=1, keepdims=True)
    shares = np.divide(raw, total, out=np.zeros_like(raw), where=total > 0)
    empty = pd.DataFrame(columns=["target_step", "replica", "level", "position", "relevance"])
    # the label node takes the decoder's input tokens whole: known and placeholders are not told apart by flow
    return Relevance(targets, shares[:, :-1], shares[:, -1], shares[:, -1], np.zeros(len(targets)), empty), raw


def uniform(raw: np.ndarray) -> bool:
    """Whether every input step got the same maximum flow, per target row (raw [T, seq_len + 1], the label last)."""
    steps = np.asarray(raw)[:, :-1]
    return bool(steps.size) and bool((np.ptp(steps, axis=1) <= SAME).all())


def uniform_reason(raw: np.ndarray, alpha: float) -> str:
    """Why every input step has the same flow, with the value (for a screen or a table that shows it instead)."""
    value = float(np.asarray(raw)[:, :-1].mean())
    return (f"every input step takes the same maximum flow, {value:.3f}: each position keeps 1 − α = {1 - alpha:g} of "
            f"itself on its residual edge, as much as the α = {alpha:g} attention lets leave the forecast row, so the "
            "smallest cut lies at the forecast row for every step. Flow measures how much could reach a step, and "
            "here that is the same for all: it does not tell which steps matter.")


__all__ = ["MAX_EDGES", "SAME", "SCALE", "flow", "flow_edges", "uniform", "uniform_reason"]
