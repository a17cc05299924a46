"""Attention rollout (Abnar & Zuidema 2020) through the Informer: decoder, cross-attention, the distilling pyramid.

Every attention layer is the token map Â = α·A + (1 − α)·I (A the heads' mean of the rows the model used, or one
head's; `true_rows`), rows renormalised: the residual keeps a share 1 − α of each position (post-norm: the FFN and the
LayerNorms act per position and move nothing between positions). A distilling step has no residual: its map is P
(`transfer`). Replica r of the stack reads the last L/2^r steps; its output positions are joined with the others' as
the model joins them. The decoder: its causal self-attention, then the cross-attention C into the joined memory (a
share 1 − α stays on the decoder position, α goes through C), as Chefer et al. (ICCV 2021) keep the two token sets.

The relevance is pushed top-down, from a forecast row to every node: a [T × nodes] product of row-stochastic maps,
so at every level the shares sum to 1. What reaches the decoder's own input tokens is the `label` share: the
label_len known steps (the known tail) and the placeholders, which carry only calendar marks and positions (both are
reported apart too). Abnar & Zuidema roll out from the input up to a classifier token; the lab pushes down from a
forecast row, which is the same product read from the other end.

Not in the graph: the value embedding's own k = 3 conv (it mixes neighbouring steps before the first layer) and
the "lags" embedding's reads of earlier steps.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Batch, Informer

from informer_lab.analysis.attention.recording import record_forward
from informer_lab.analysis.attention.positions import replica_length
from informer_lab.analysis.anatomy.transfer import FORMS, transfer_matrix
from informer_lab.analysis.anatomy.true_rows import ROW_PATTERNS, TrueRows, all_true_rows, token_rows

PIECE_PATTERNS = ROW_PATTERNS + ("encoder.*.distil*.kept", "encoder.*.layer*.out")
METHODS = ("rollout", "flow")


@dataclass(frozen=True, eq=False)
class Pieces:
    """One recorded forward pass of a batch: the true rows of every site, each distilling step's pool winners
    ([B, C, L_out]) and input ([B, L, d_model]), by hook name."""

    true: dict[str, TrueRows]
    kept: dict[str, np.ndarray]
    distil_inputs: dict[str, torch.Tensor]
    batch_size: int


def record_pieces(model: Informer, batch: Batch, seed: int) -> Pieces:
    """Record what rollout and flow read, with the key sample drawn from `seed`."""
    records = record_forward(model, batch, seed, *PIECE_PATTERNS)
    kept = {name[:-len(".kept")]: t.numpy() for name, t in records.items() if name.endswith(".kept")}
    inputs = {}
    for r, replica in enumerate(model.encoder.replicas):
        for l in range(len(replica.distils)):
            inputs[f"encoder.{r}.distil{l}"] = records[f"encoder.{r}.layer{l}.out"]
    return Pieces(all_true_rows(model, records), kept, inputs, int(batch.x_enc.shape[0]))


def attention_map(rows: np.ndarray, alpha: float) -> np.ndarray:
    """Â = α·A + (1 − α)·I on a square token map, rows renormalised (Abnar & Zuidema)."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    out = alpha * rows
    out[np.diag_indices_from(out)] += 1.0 - alpha
    sums = out.sum(axis=1, keepdims=True)
    return np.divide(out, sums, out=np.zeros_like(out), where=sums > 0)


@dataclass(frozen=True, eq=False)
class Graph:
    """One window's maps, ready to push relevance through.

    encoder[r]: per layer l of replica r, (Â_l [L_l × L_l], P_l [L_{l+1} × L_l] or None after the last layer);
    steps[r]: [L_r] the input step (0 = the window's first) of replica r's first-level positions;
    decoder: per decoder layer, (Â_self [L_dec × L_dec], C [L_dec × L_mem]); memory_sizes: each replica's output
    length; label_len, pred_len, seq_len."""

    encoder: list[list[tuple[np.ndarray, np.ndarray | None]]]
    steps: list[np.ndarray]
    decoder: list[tuple[np.ndarray, np.ndarray]]
    memory_sizes: list[int]
    label_len: int
    pred_len: int
    seq_len: int
    alpha: float

    @property
    def dec_len(self) -> int:
        return self.decoder[0][0].shape[0] if self.decoder else self.label_len + self.pred_len


def distil_transfers(model: Informer, pieces: Pieces, window: int, distil: str = "routed"
                     ) -> dict[tuple[int, int], np.ndarray]:
    """P of every distilling step (replica r, step l) of batch row `window` in form `distil`: what a graph's P's are,
    whatever its α and head (a screen that re-slices those keeps them)."""
    if distil not in FORMS:
        raise ValueError(f"distil form must be one of {', '.join(FORMS)}, got {distil!r}")
    out = {}
    for r, replica in enumerate(model.encoder.replicas):
        for l, step in enumerate(replica.distils):
            name = f"encoder.{r}.distil{l}"
            kept = pieces.kept[name][window] if name in pieces.kept else None
            x = pieces.distil_inputs[name][window]
            out[r, l] = transfer_matrix(distil, step, x, kept, x.shape[0])
    return out


def window_graph(model: Informer, pieces: Pieces, window: int, *, alpha: float = 0.5, head: int | None = None,
                 distil: str = "routed", transfers: dict[tuple[int, int], np.ndarray] | None = None) -> Graph:
    """The maps of batch row `window` of `pieces` (see Graph). transfers: `distil_transfers` of the same row and
    form, when already computed."""
    c = model.config
    if head is not None and not 0 <= head < c.n_heads:
        raise ValueError(f"head must be in 0 … {c.n_heads - 1}, got {head}")
    transfers = distil_transfers(model, pieces, window, distil) if transfers is None else transfers
    encoder, steps, sizes = [], [], []
    for r, replica in enumerate(model.encoder.replicas):
        layers = []
        L_r = replica_length(c, r)
        for l in range(len(replica.layers)):
            A = attention_map(token_rows(pieces.true[f"encoder.{r}.{l}"], window, head), alpha)
            layers.append((A, transfers[r, l] if l < len(replica.distils) else None))
        encoder.append(layers)
        steps.append(np.arange(L_r) + (c.seq_len - L_r))
        sizes.append(layers[-1][0].shape[0])
    decoder = []
    for l in range(len(model.decoder.layers)):
        S = attention_map(token_rows(pieces.true[f"decoder_self.{l}"], window, head), alpha)
        C = token_rows(pieces.true[f"cross.{l}"], window, head)
        decoder.append((S, C))
    label = c.label_len if c.embedding != "lags" else 0
    return Graph(encoder, steps, decoder, sizes, label, c.pred_len, c.seq_len, float(alpha))


def with_transfers(graph: Graph, transfers: dict[tuple[int, int], np.ndarray]) -> Graph:
    """The same graph (its attention maps shared, not copied) with other distilling P's: another form of the same
    window, α and head."""
    encoder = [[(A, None if P is None else transfers[r, l]) for l, (A, P) in enumerate(layers)]
               for r, layers in enumerate(graph.encoder)]
    return replace(graph, encoder=encoder)


@dataclass(frozen=True, eq=False)
class Relevance:
    """Relevance of the forecast rows `targets` (horizon steps, 1-based) of one window.

    inputs [T, seq_len]: per input step (column s = step s of the window; lag = seq_len − s); label [T] the decoder's
    own tokens (known [T] the label_len known steps, placeholders [T] the rest); inputs + label sum to 1 per row.
    levels: per (target, replica, level, position) the relevance at each encoder layer's output positions (a
    replica's rows sum to its share of the memory)."""

    targets: np.ndarray
    inputs: np.ndarray
    label: np.ndarray
    known: np.ndarray
    placeholders: np.ndarray
    levels: pd.DataFrame


def push_encoder(graph: Graph, memory: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, pd.DataFrame]:
    """Relevance over the memory [T, L_mem] pushed down every replica to the input steps → ([T, seq_len], levels)."""
    T = memory.shape[0]
    inputs = np.zeros((T, graph.seq_len))
    frames, start = [], 0
    for r, layers in enumerate(graph.encoder):
        R = memory[:, start:start + graph.memory_sizes[r]]
        start += graph.memory_sizes[r]
        for l in range(len(layers) - 1, -1, -1):
            A, P = layers[l]
            if P is not None:
                R = R @ P  # distilled positions → layer l's output positions
            frames.append(_level_frame(targets, r, l, R))
            R = R @ A  # layer l's output positions → its input positions
        np.add.at(inputs, (slice(None), graph.steps[r]), R)
    return inputs, pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _level_frame(targets: np.ndarray, replica: int, level: int, R: np.ndarray) -> pd.DataFrame:
    T, n = R.shape
    return pd.DataFrame({"target_step": np.repeat(targets, n), "replica": replica, "level": level,
                         "position": np.tile(np.arange(n), T), "relevance": R.reshape(-1)})


def forecast_rows(graph: Graph, targets: np.ndarray) -> np.ndarray:
    """[T, L_dec] one-hot rows of the forecast positions of horizon steps `targets` (1-based)."""
    rows = np.zeros((len(targets), graph.dec_len))
    rows[np.arange(len(targets)), graph.dec_len - graph.pred_len + np.asarray(targets) - 1] = 1.0
    return rows


def rollout(graph: Graph, targets) -> Relevance:
    """Attention rollout from the forecast rows of horizon steps `targets` (1-based) to the input steps and the
    decoder's own tokens (module docstring)."""
    targets = np.asarray(list(targets), dtype=np.int64)
    if len(targets) == 0 or targets.min() < 1 or targets.max() > graph.pred_len:
        raise ValueError(f"target steps must be in 1 … pred_len = {graph.pred_len}")
    R = forecast_rows(graph, targets)  # [T, L_dec]
    memory = np.zeros((len(targets), sum(graph.memory_sizes)))
    for S, C in reversed(graph.decoder):
        memory += graph.alpha * (R @ C)  # the cross-attention's share α into the memory …
        R = (1.0 - graph.alpha) * R  # … and 1 − α on its residual
        R = R @ S  # the causal self-attention
    inputs, levels = push_encoder(graph, memory, targets)
    known = R[:, :graph.label_len].sum(axis=1)
    placeholders = R[:, graph.label_len:].sum(axis=1)
    return Relevance(targets, inputs, known + placeholders, known, placeholders, levels)


def relevance_table(relevance: Relevance, *, window: int, method: str, distil: str) -> pd.DataFrame:
    """Tidy rows: window, method, distil, target_step, source ("input" | "label"), lag (1 = the last input step;
    empty for the label share), relevance. Per (window, method, distil, target_step) relevance sums to 1."""
    T, L = relevance.inputs.shape
    lags = L - np.arange(L)
    inputs = pd.DataFrame({"target_step": np.repeat(relevance.targets, L), "source": "input",
                           "lag": np.tile(lags, T), "relevance": relevance.inputs.reshape(-1)})
    label = pd.DataFrame({"target_step": relevance.targets, "source": "label", "lag": pd.NA,
                          "relevance": relevance.label})
    out = pd.concat([inputs, label], ignore_index=True)
    out.insert(0, "distil", distil)
    out.insert(0, "method", method)
    out.insert(0, "window", window)
    out["lag"] = out["lag"].astype("Int64")
    return out.sort_values(["target_step", "source", "lag"], ignore_index=True)


__all__ = ["Graph", "METHODS", "PIECE_PATTERNS", "Pieces", "Relevance", "attention_map", "distil_transfers",
           "forecast_rows", "push_encoder", "record_pieces", "relevance_table", "rollout", "window_graph",
           "with_transfers"]
