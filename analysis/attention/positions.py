"""Where each query and key of an attention site lies in the window, and what its lazy queries return.

Positions. Every query and key is placed on the window's input-step axis ("steps", 0 = the first
step of the window; decoder position p is step seq_len − label_len + p). An encoder layer after l
distilling steps sees position i as the span of input steps it tiles (`distilled_spans`); its step is
the START of that span. Replica r of an encoder stack reads the last enc_len // 2**r steps. Models from
elsewhere shift this: Hugging Face's "lags" embedding spends the window's first max(lags) steps on lags only
(the encoder reads the last enc_len = seq_len − max(lags)) and its decoder reads the pred_len forecast steps
alone; Time-Series-Library's distilling conv pads 2, not 1 (`distil_padding`).

Lazy queries. ProbSparse gives only the top u queries a softmax row; every other ("lazy") query returns a
cheap stand-in, named by `lazy_rule` and described as a row by `LAZY_ROWS`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from informer_lab.model import Informer, InformerConfig, Site

LAZY_RULES = {"mean": "mean(V)", "cummean": "running mean(V)", "cumsum": "running sum(V)", "full": "full attention"}
LAZY_ROWS = {
    "mean(V)": "every unselected query i returns mean_j v_j: a uniform row 1/L_K over all keys",
    "running mean(V)": "unselected query i returns (1/(i+1))·Σ_{j≤i} v_j: a uniform row 1/(i+1) over keys j ≤ i",
    "running sum(V)": "unselected query i returns Σ_{j≤i} v_j: weight 1 on every key j ≤ i (not a distribution)",
    "full attention": "no lazy rows: every query has its softmax row",
}


def distilled_length(length: int, padding: int = 1) -> int:
    """The length after one distilling step: the conv (k=3, circular padding p) gives L + 2p − 2 positions,
    the max-pool (k=3, s=2, p=1) ⌊(L + 2p − 3)/2⌋ + 1 of them: ⌊(L − 1)/2⌋ + 1 for the paper's p = 1
    (96 → 48), ⌊(L + 1)/2⌋ + 1 for TSL's p = 2 (96 → 49)."""
    return (length + 2 * padding - 3) // 2 + 1


def distilled_spans(length: int, level: int, padding: int = 1) -> np.ndarray:
    """[n, 2] (first, last) input step of each position after `level` distilling steps of a length-`length` input.

    Level 0: position i is step i. After a distilling step, position i is the pool window centred on conv
    output 2i, which is centred on input c = 2i − (p − 1): it covers positions c and c + 1 of the level below,
    clipped to the level. With p = 1 the spans of every level tile 0 .. length − 1 exactly; with
    p = 2 the first and last positions cover one step each (their other neighbour is circular padding), and on an
    odd length the last two positions share a step.
    """
    if length < 1 or level < 0:
        raise ValueError(f"need length ≥ 1 and level ≥ 0, got {length} and {level}")
    spans = np.stack([np.arange(length), np.arange(length)], axis=1)  # [L, 2]
    shift = padding - 1
    for _ in range(level):
        n = len(spans)
        centre = 2 * np.arange(distilled_length(n, padding)) - shift
        first = spans[np.clip(centre, 0, n - 1), 0]
        last = spans[np.clip(centre + 1, 0, n - 1), 1]
        spans = np.stack([first, last], axis=1)
    return spans


@dataclass(frozen=True, eq=False)
class SitePositions:
    """A site's queries and keys on the window's input-step axis (0 = first encoder input step).

    query_start/query_end: [L_Q] first/last input step each query summarises (equal unless distilled)
    key_start:             [L_K] first input step of each key
    level:                 distilling steps before this layer (0 for decoder sites)
    lag_unit:              input steps per unit of the lag the heads table reports in "layer steps"
    query_layer / key_layer: [L_Q] / [L_K] positions in the layer's own steps (cross: input steps)
    segment:               [L_Q] "history" (encoder), "label" or "future" (decoder)
    """

    query_start: np.ndarray
    query_end: np.ndarray
    key_start: np.ndarray
    level: int
    lag_unit: int
    query_layer: np.ndarray
    key_layer: np.ndarray
    segment: np.ndarray


def replica_length(config: InformerConfig, replica: int) -> int:
    """Replica r of the encoder stack reads the last enc_len // 2**r input steps (enc_len = seq_len but for the
    "lags" embedding)."""
    return config.enc_len // 2 ** replica


def site_positions(config: InformerConfig, site: Site) -> SitePositions:
    """Where the queries and keys of `site` lie in the window (see SitePositions)."""
    c = config
    if c.embedding == "lags":  # Hugging Face: the decoder reads the forecast steps only
        dec_steps, dec_segment = c.seq_len + np.arange(c.pred_len), np.full(c.pred_len, "future")
    else:
        dec_steps = c.seq_len - c.label_len + np.arange(c.dec_len)  # [L_dec]
        dec_segment = np.where(np.arange(c.dec_len) < c.label_len, "label", "future")
    if site.kind == "encoder":
        L_r = replica_length(c, site.replica)
        level = site.layer if c.distil else 0
        spans = distilled_spans(L_r, level, c.distil_padding) + (c.seq_len - L_r)  # [L_l, 2]
        positions = np.arange(len(spans))
        return SitePositions(spans[:, 0], spans[:, 1], spans[:, 0], level, 2 ** level, positions, positions,
                             np.full(len(spans), "history"))
    if site.kind == "decoder_self":
        positions = np.arange(len(dec_steps))  # the lags embedding's decoder: pred_len positions, not dec_len
        return SitePositions(dec_steps, dec_steps, dec_steps, 0, 1, positions, positions, dec_segment)
    keys = []
    for r, n_layers in enumerate(c.e_layers):
        L_r = replica_length(c, r)
        keys.append(distilled_spans(L_r, n_layers - 1 if c.distil else 0, c.distil_padding)[:, 0] + (c.seq_len - L_r))
    key_start = np.concatenate(keys)  # [L_enc'] the joined encoder output, replica by replica
    return SitePositions(dec_steps, dec_steps, key_start, 0, 1, dec_steps, key_start, dec_segment)


def steps_or_unknown(steps: np.ndarray, length: int) -> np.ndarray:
    """`steps` (from `site_positions`) when it has the `length` recorded, else −1 at every position: a model whose
    lengths `site_positions` does not describe (e.g. an imported embedding that reads history before its positions)."""
    return np.asarray(steps) if len(steps) == length else np.full(length, -1, dtype=np.int64)


def lazy_rule(model: Informer, site: Site) -> str:
    """What an unselected query returns at `site`: "mean(V)", "running mean(V)", "running sum(V)", or
    "full attention" (no lazy rows)."""
    layer = model.attention_layer(site)
    if layer.kind != "prob":
        return LAZY_RULES["full"]
    if layer.causal:
        return LAZY_RULES[layer.decoder_lazy]
    return LAZY_RULES["mean"]


__all__ = ["LAZY_ROWS", "LAZY_RULES", "SitePositions", "distilled_length", "distilled_spans", "lazy_rule",
           "replica_length", "site_positions", "steps_or_unknown"]
