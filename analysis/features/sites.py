"""The residual sites a dictionary can be trained on, their activations over a split's windows, and the input span
each of their positions reads.

Residual sites are the hook sites whose tensor is the residual stream itself, [B, L, d_model] (docs/python-api.md):

    encoder.{r}.layer{l}.out   replica r's encoder layer l, before its distilling step (if one follows)
    encoder.{r}.distil{l}.out  after distilling step l (half as many positions)
    encoder.{r}.out            replica r's output after its closing norm (listed only with several replicas: with one
                               it is the same tensor as encoder.out)
    encoder.out                the memory the decoder's cross-attention reads, the replicas joined along time (the
                               default site)
    decoder.layer{l}.out       decoder layer l's output (label tokens, then the forecast placeholders)

Spans. Position i of an encoder site after `level` distilling steps tiles input steps (first, last) of the window
(`analysis.attention.positions.distilled_spans`, the replica's offset added: replica r reads the last enc_len // 2^r
steps); its receptive field through the conv and pool is wider (analysis.attention.pyramid). A decoder position p
sits at step seq_len − label_len + p: label tokens at known steps, placeholders at the forecast steps (≥ seq_len),
which the model reads only through their timestamps.

Key samples: every batch is recorded with a generator freshly seeded with `seed` (`record_until`); draws depend on
lengths only, so a window's activations do not depend on the windows batched with it, and a spliced or patched pass
seeded the same way sees the same sample.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Informer, Site

from informer_lab.analysis.anatomy.lens import BATCH, check_eval, spread_windows, window_batches
from informer_lab.analysis.attention.positions import distilled_spans, replica_length, site_positions
from informer_lab.analysis.attention.recording import record_until
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import ConfigError

DEFAULT_SITE = "encoder.out"


def residual_sites(model: Informer) -> tuple[str, ...]:
    """Every residual site of `model`, in the order the forward pass reaches them (module docstring)."""
    c = model.config
    names = []
    for r, n_layers in enumerate(c.e_layers):
        for l in range(n_layers):
            names.append(f"encoder.{r}.layer{l}.out")
            if c.distil and l < n_layers - 1:
                names.append(f"encoder.{r}.distil{l}.out")
        if len(c.e_layers) > 1:
            names.append(f"encoder.{r}.out")
    names.append("encoder.out")
    names += [f"decoder.layer{l}.out" for l in range(c.d_layers)]
    return tuple(names)


def check_site(model: Informer, site: str) -> str:
    """`site` when it is one of the model's residual sites, else a ConfigError listing them."""
    sites = residual_sites(model)
    if site not in sites:
        raise ConfigError(f"{site!r} is not a residual site of this model; choose one of {', '.join(sites)}")
    return site


def _encoder_level(model: Informer, site: str) -> tuple[int, int]:
    """(replica, distilling steps before it) of an encoder site encoder.{r}.layer{l}.out / distil{l}.out / out."""
    c = model.config
    parts = site.split(".")
    r = int(parts[1])
    if parts[2] == "out":
        return r, (c.e_layers[r] - 1) if c.distil else 0
    l = int(parts[2].removeprefix("layer").removeprefix("distil"))
    return r, (l + (1 if parts[2].startswith("distil") else 0)) if c.distil else 0


def position_spans(model: Informer, site: str) -> np.ndarray:
    """[L, 2] the (first, last) window step each position of `site` reads (module docstring)."""
    c = model.config
    check_site(model, site)
    if site.startswith("decoder."):
        steps = site_positions(c, Site("decoder_self", 0, 0, 0)).query_start
        return np.stack([steps, steps], axis=1).astype(np.int64)
    replicas = range(len(c.e_layers)) if site == "encoder.out" else [_encoder_level(model, site)[0]]
    spans = []
    for r in replicas:
        level = _encoder_level(model, f"encoder.{r}.out")[1] if site == "encoder.out" else _encoder_level(model, site)[1]
        L_r = replica_length(c, r)
        spans.append(distilled_spans(L_r, level, c.distil_padding) + (c.seq_len - L_r))
    return np.concatenate(spans).astype(np.int64)


def replica_of_position(model: Informer, site: str) -> np.ndarray:
    """[L] the encoder replica each position of `site` belongs to (0 for single-replica and decoder sites)."""
    c = model.config
    if site != "encoder.out":
        r = _encoder_level(model, site)[0] if site.startswith("encoder.") else 0
        return np.full(len(position_spans(model, site)), r, dtype=np.int64)
    return np.concatenate([np.full(len(distilled_spans(replica_length(c, r), _encoder_level(model, f"encoder.{r}.out")[1],
                                                       c.distil_padding)), r) for r in range(len(c.e_layers))])


@dataclass(frozen=True, eq=False)
class SiteActivations:
    """One site's activations over windows of a split. n windows, L positions, d = d_model.

    values: [n, L, d] float32; windows: [n] the split's window indices (one in `stride`, from the first);
    spans: [L, 2] each position's (first, last) window step; total: the split's windows."""

    site: str
    split: str
    windows: np.ndarray
    stride: int
    total: int
    values: torch.Tensor
    spans: np.ndarray
    seed: int

    @property
    def positions(self) -> int:
        return int(self.values.shape[1])


def collect(model: Informer, prepared: PreparedData, split: str, site: str, *, windows: int = 1024, seed: int = 0,
            batch_size: int = BATCH, progress: Callable[[int, int], None] | None = None) -> SiteActivations:
    """`site`'s activations on at most `windows` windows spread evenly over `split` (analysis.anatomy.lens's
    spread_windows), each batch recorded up to the site and no further."""
    check_eval(model)
    check_site(model, site)
    indices, stride, total = spread_windows(prepared, split, windows)
    parts = []
    for batch, _ in window_batches(prepared, split, indices, batch_size):
        parts.append(record_until(model, batch, seed, site)[site].float())
        if progress is not None:
            progress(min(len(indices), len(parts) * batch_size), len(indices))
    values = torch.cat(parts)  # [n, L, d]
    spans = position_spans(model, site)
    if len(spans) != values.shape[1]:  # a model whose lengths positions.py does not describe
        spans = np.full((values.shape[1], 2), -1, dtype=np.int64)
    return SiteActivations(site, split, indices, stride, total, values, spans, int(seed))


def position_times(prepared: PreparedData, split: str, window: int, spans: np.ndarray) -> pd.DataFrame:
    """position, first, last (window steps) and their timestamps, first_time / last_time, for one window."""
    times = prepared.split(split).timestamps
    first, last = spans[:, 0], spans[:, 1]
    ok = (first >= 0) & (window + last < len(times))

    def at(steps):
        return pd.Series([times[window + s] if good else pd.NaT for s, good in zip(steps, ok)])
    return pd.DataFrame({"position": np.arange(len(spans)), "first": first, "last": last,
                         "first_time": at(first), "last_time": at(last)})


__all__ = ["DEFAULT_SITE", "SiteActivations", "check_site", "collect", "position_spans", "position_times",
           "replica_of_position", "residual_sites"]
