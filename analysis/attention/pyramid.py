"""The encoder pyramid of one window: lengths, what each distilled position covers, what max-pooling keeps.

Distilling (Zhou et al. 2021, §3.2) is Conv1d(k=3, circular padding 1) → BatchNorm → ELU →
MaxPool1d(k=3, s=2, p=1) between encoder layers: length L → ⌊(L − 1)/2⌋ + 1 (Time-Series-Library pads the
conv by 2: L + 2 conv outputs, L → ⌊(L + 1)/2⌋ + 1; `config.distil_padding`). Replica r of an encoder
stack reads the last enc_len // 2**r input steps. For every replica and level (the sequence that
layer `level` attends over, after `level` distilling steps) this module reports

- the analytic and the recorded length;
- the nominal span each position tiles (level 0: step i; position i covers positions 2i and 2i + 1 of
  the level below), and the local receptive field of the conv/pool path: max-pool output i reads
  pool inputs 2i − 1 .. 2i + 1, each of which the conv built from its neighbours ±1 (circular). Both
  are in the replica's input steps (0 = its first step). Attention mixes all positions, and the value
  embedding has its own k=3 circular conv: neither is counted here, so this is the reach of the
  distilling path alone;
- which pool input won the max, per channel (`kept`), and how often each input survived (`survival`);
- the L2 norm of each position of every layer's output, and each layer's attention rows.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from informer_lab.model import Informer

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.attention.positions import distilled_length, distilled_spans, replica_length
from informer_lab.analysis.attention.recording import SiteRows, record_forward, site_rows, window_batch


def distilled_lengths(length: int, steps: int, padding: int = 1) -> list[int]:
    """[length, then the length after each of `steps` distilling steps] (`positions.distilled_length`)."""
    out = [length]
    for _ in range(steps):
        out.append(distilled_length(out[-1], padding))
    return out


def receptive_fields(length: int, levels: int, padding: int = 1) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per level 0 .. levels − 1: (start [n], end [n], wraps [n]) of each position's conv/pool receptive field.

    Level 0: position i sees step i. Level l + 1 position i: max-pool inputs 2i − 1 .. 2i + 1 of the conv's
    n + 2p − 2 outputs (clipped to them: the pool's padding is −∞ and never wins), conv output j reading inputs
    j − p .. j − p + 2 of level l (circular). The unwrapped extent is clipped to [0, n − 1]; `wraps` is True
    where the circular padding reaches round to the other end (here or at a level below), which the clipped
    interval does not show.
    """
    start, end = np.arange(length), np.arange(length)
    wraps = np.zeros(length, dtype=bool)
    out = [(start, end, wraps)]
    for _ in range(levels - 1):
        n = len(start)
        n_conv = n + 2 * padding - 2
        i = np.arange(distilled_length(n, padding))
        lo = np.maximum(2 * i - 1, 0) - padding  # conv reach, unwrapped
        hi = np.minimum(2 * i + 1, n_conv - 1) - padding + 2
        a, b = np.maximum(lo, 0), np.minimum(hi, n - 1)
        wrapped_below = np.array([wraps[x:y + 1].any() for x, y in zip(a, b)])
        start, end, wraps = start[a], end[b], (lo < 0) | (hi > n - 1) | wrapped_below
        out.append((start, end, wraps))
    return out


@dataclass(frozen=True, eq=False)
class PyramidReport:
    """The encoder pyramid of one window (batch of 1).

    lengths:  per (replica, level): input_length (the replica's), analytic_length, recorded_length (the
              layer's output length), match
    lengths_match: every recorded length (layers, distilling outputs, kept indices, replica and stack
              outputs) equals the analytic one
    spans:    per (replica, level, position): span_start, span_end (nominal tile, replica input steps),
              receptive_start, receptive_end, wraps, timestamp_start, timestamp_end
    kept:     per (replica, step, position) of each distilling step's output: centre (the input position of
              the conv output 2i at offset 0: 2i − (p − 1), −1 meaning the wrapped last one) and the fraction of
              channels whose max came from conv output 2i − 1 / 2i / 2i + 1
              (offset_minus1, offset_0, offset_plus1; they sum to 1)
    survival: per (replica, step, input_position): survived (fraction of channels in which it won at
              least one pool window) and mean_wins (windows won per channel: 0, 1 or 2)
    norms:    per (replica, level, position): norm, the L2 norm over d_model of layer `level`'s output
    attention: the encoder sites' recorded attention rows and selected queries
    """

    split: str
    window: int
    seed: int
    lengths: pd.DataFrame
    lengths_match: bool
    spans: pd.DataFrame
    kept: pd.DataFrame
    survival: pd.DataFrame
    norms: pd.DataFrame
    attention: tuple[SiteRows, ...]
    encoder_output_length: tuple[int, int]  # (analytic, recorded) length of the joined stack output


def pyramid_report(model: Informer, prepared: PreparedData, split: str, window: int, *, seed: int = 0
                   ) -> PyramidReport:
    """Lengths, spans, receptive fields, max-pool survival, feature norms and attention of one window."""
    c = model.config
    batch = window_batch(prepared, split, [window])
    records = record_forward(model, batch, seed, "encoder.*.out", "encoder.out", "encoder.*.kept",
                             "encoder.*.rows", "encoder.*.selected")
    timestamps = prepared.split(split).timestamps
    lengths, spans, kept, survival, norms = [], [], [], [], []
    match = True
    stack_length = 0
    for r, n_layers in enumerate(c.e_layers):
        L_r = replica_length(c, r)
        steps = n_layers - 1 if c.distil else 0
        pad = c.distil_padding
        lengths_r = distilled_lengths(L_r, steps, pad)
        analytic = lengths_r + [lengths_r[-1]] * (n_layers - 1 - steps)
        fields = receptive_fields(L_r, n_layers if c.distil else 1, pad)
        offset = window + c.seq_len - L_r  # split row of the replica's first input step
        for level in range(n_layers):
            out = records[f"encoder.{r}.layer{level}.out"][0]  # [L_level, d_model]
            recorded = out.shape[0]
            match &= recorded == analytic[level]
            lengths.append({"replica": r, "level": level, "input_length": L_r, "analytic_length": analytic[level],
                            "recorded_length": recorded, "match": recorded == analytic[level]})
            tile = distilled_spans(L_r, level if c.distil else 0, pad)  # [L_level, 2]
            start, end, wraps = fields[level if c.distil else 0]
            spans.append(pd.DataFrame({
                "replica": r, "level": level, "position": np.arange(len(tile)), "span_start": tile[:, 0],
                "span_end": tile[:, 1], "receptive_start": start, "receptive_end": end, "wraps": wraps,
                "timestamp_start": timestamps[offset + tile[:, 0]], "timestamp_end": timestamps[offset + tile[:, 1]]}))
            norms.append(pd.DataFrame({"replica": r, "level": level, "position": np.arange(recorded),
                                       "norm": out.double().norm(dim=-1).numpy()}))
        for step in range(steps):
            idx = records[f"encoder.{r}.distil{step}.kept"][0].numpy().astype(np.int64)  # [d_model, L_out]
            pooled = records[f"encoder.{r}.distil{step}.out"].shape[1]
            match &= idx.shape[1] == pooled == analytic[step + 1]
            kept.append(_kept_table(r, step, idx, pad))
            survival.append(_survival_table(r, step, idx, analytic[step], pad))
        final = records[f"encoder.{r}.out"].shape[1]
        match &= final == analytic[-1]
        stack_length += analytic[-1]
    recorded_stack = records["encoder.out"].shape[1]
    match &= recorded_stack == stack_length
    encoder_sites = [s for s in model.sites if s.kind == "encoder"]
    return PyramidReport(split=split, window=int(window), seed=seed, lengths=pd.DataFrame(lengths),
                         lengths_match=bool(match), spans=pd.concat(spans, ignore_index=True),
                         kept=_concat(kept, ["replica", "step", "position", "centre", "offset_minus1", "offset_0",
                                             "offset_plus1"]),
                         survival=_concat(survival, ["replica", "step", "input_position", "survived", "mean_wins"]),
                         norms=pd.concat(norms, ignore_index=True),
                         attention=site_rows(model, records, encoder_sites),
                         encoder_output_length=(stack_length, int(recorded_stack)))


def _concat(parts: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


def _kept_table(replica: int, step: int, idx: np.ndarray, padding: int = 1) -> pd.DataFrame:
    """idx: [d_model, L_out] conv output (pre-pool position) each channel's max came from."""
    C, L_out = idx.shape
    offsets = idx - 2 * np.arange(L_out)[None, :]  # [C, L_out] in {−1, 0, +1}
    if offsets.size and (offsets.min() < -1 or offsets.max() > 1):
        raise ValueError("max-pool indices outside the window 2i − 1 .. 2i + 1: not a k=3, s=2, p=1 pool")
    centre = 2 * np.arange(L_out) - (padding - 1)
    return pd.DataFrame({"replica": replica, "step": step, "position": np.arange(L_out), "centre": centre,
                         **{name: (offsets == o).mean(axis=0) for name, o in
                            (("offset_minus1", -1), ("offset_0", 0), ("offset_plus1", 1))}})


def _survival_table(replica: int, step: int, idx: np.ndarray, length: int, padding: int = 1) -> pd.DataFrame:
    """Per input position of the distilling step: the fraction of channels in which the conv output centred on it
    won ≥ 1 pool window, and wins per channel. With padding 2 the conv has two more outputs than inputs, centred
    on the wrapped neighbours −1 and L: their wins count for the positions they wrap to (L − 1 and 0)."""
    C = idx.shape[0]
    wins = np.zeros((C, length))
    centred_on = (idx.ravel() - (padding - 1)) % length
    np.add.at(wins, (np.repeat(np.arange(C), idx.shape[1]), centred_on), 1.0)
    return pd.DataFrame({"replica": replica, "step": step, "input_position": np.arange(length),
                         "survived": (wins > 0).mean(axis=0), "mean_wins": wins.mean(axis=0)})


def spans_with_norms(report: PyramidReport) -> pd.DataFrame:
    """The spans table with each position's feature norm joined on (replica, level, position)."""
    return report.spans.merge(report.norms, on=["replica", "level", "position"], how="left", validate="one_to_one")


__all__ = ["PyramidReport", "distilled_lengths", "pyramid_report", "receptive_fields", "spans_with_norms"]
