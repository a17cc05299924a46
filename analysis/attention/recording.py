"""One forward pass recorded into arrays: the batch of chosen windows, the hook sites, each site's attention rows.

Every key sample is drawn from a seeded generator, so a recording is a pure function of (model, batch, seed);
the model must be in eval mode and is never changed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from informer_lab.model import Batch, Informer, Site, key_generator, recording

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.attention.positions import LAZY_ROWS, lazy_rule, site_positions
from informer_lab.analysis.learning.windows import WindowDataset, collate


def window_batch(prepared: PreparedData, split: str, windows: Sequence[int]) -> Batch:
    """The Batch of the given windows of a split (row b is windows[b]). ValueError for a bad window list."""
    dataset = WindowDataset(prepared, split)
    windows = [int(w) for w in windows]
    if not windows:
        raise ValueError("choose at least one window")
    if len(set(windows)) != len(windows):
        raise ValueError(f"windows must be distinct, got {windows}")
    bad = [w for w in windows if not 0 <= w < len(dataset)]
    if bad:
        raise ValueError(f"window {bad[0]} is outside the {split} split's {len(dataset)} windows")
    batch, _ = collate([dataset[w] for w in windows])
    return batch


def _check_eval(model: Informer) -> None:
    if model.training:
        raise ValueError("the model is in training mode (dropout on, batch-norm statistics updating); "
                         "analyse a model in eval mode (checkpoints load that way)")


@torch.no_grad()
def record_forward(model: Informer, batch: Batch, seed: int, *patterns: str) -> dict[str, torch.Tensor]:
    """One forward pass with the key sample drawn from `seed`, recording the hook sites matching `patterns`."""
    _check_eval(model)
    device = next(model.parameters()).device
    generator = key_generator(int(seed))
    with recording(*patterns) as rec:
        model(batch.to(device), generator=generator)
    return {name: t.cpu() for name, t in rec.records.items()}


class _AllRecorded(Exception):
    """Ends a forward pass early: every hook site it was run for has been recorded."""


@torch.no_grad()
def record_until(model: Informer, batch: Batch, seed: int, *names: str) -> dict[str, torch.Tensor]:
    """`record_forward` of the exact hook sites `names`, the forward pass stopped as soon as all have fired: the
    layers after them (most of the model for a first-layer site) are never computed. Each site records what it
    would in the whole pass (the key sample draws up to it happen in the same order). A name that never fires (a
    full-attention site's scores) leaves the pass to run to its end."""
    _check_eval(model)
    device = next(model.parameters()).device
    generator = key_generator(int(seed))
    wanted = set(names)
    with recording(*names) as rec:
        plain = rec.record

        def record(name: str, tensor: torch.Tensor) -> None:
            plain(name, tensor)
            if wanted <= rec.records.keys():
                raise _AllRecorded
        rec.record = record  # this recorder only (it lives for this call)
        try:
            model(batch.to(device), generator=generator)
        except _AllRecorded:
            pass
    return {name: t.cpu() for name, t in rec.records.items()}


@dataclass(frozen=True, eq=False)
class SiteRows:
    """The attention rows one site computed, for heatmaps.

    rows:      [B, H, u, L_K] softmax rows of the selected queries (full attention: every query, u = L_Q)
    selected:  [B, H, u] which query each row belongs to
    query_steps / key_steps: [L_Q] / [L_K] input step (start of the span) of each query / key
    lazy_rule: what the unselected queries return; `lazy_rows` says it in words. Lazy rows are NOT in `rows`.
    attention: the site's attention kind (prob, full, or one of model/attention's efficient kinds, whose rows are zero
    outside the keys its pattern lets a query read)
    """

    site: str
    kind: str
    layer: int
    replica: int
    level: int
    rows: np.ndarray
    selected: np.ndarray
    query_steps: np.ndarray
    key_steps: np.ndarray
    lazy_rule: str
    lazy_rows: str
    attention: str = "full"


def site_rows(model: Informer, records: dict[str, torch.Tensor], sites: Sequence[Site] | None = None
              ) -> tuple[SiteRows, ...]:
    """SiteRows for every site (or `sites`) from a recording holding "<site>.rows" and "<site>.selected"."""
    out = []
    for site in sites if sites is not None else model.sites:
        pos = site_positions(model.config, site)
        rule = lazy_rule(model, site)
        out.append(SiteRows(site.name, site.kind, site.layer, site.replica, pos.level,
                            records[f"{site.name}.rows"].double().numpy(),
                            records[f"{site.name}.selected"].numpy().astype(np.int64),
                            pos.query_start, pos.key_start, rule, LAZY_ROWS[rule], model.attention_layer(site).kind))
    return tuple(out)


ATTENTION_PATTERNS = ("*.queries", "*.keys", "*.scores", "*.selected", "*.rows")


__all__ = ["ATTENTION_PATTERNS", "SiteRows", "record_forward", "record_until", "site_rows", "window_batch"]
