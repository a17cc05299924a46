"""The Anatomy screen's cached calls: one recorded forward pass per (model, data, split, window, seed), kept in a
`ui.lru.SharedLRU`; every re-slice (target step, head, α, P form) builds its maps from it. The last slice's maps and
recent rollouts are kept too (at seq_len 1440 the three forms' maps and rollouts cost about 0.3 s of every rerun).
Flow is cached per slice: it costs one max-flow per input step."""
from __future__ import annotations

import numpy as np
import streamlit as st

from informer_lab.analysis.anatomy.flow import flow
from informer_lab.analysis.anatomy.rollout import (Graph, Pieces, Relevance, distil_transfers, record_pieces, rollout,
                                                   window_graph, with_transfers)
from informer_lab.analysis.attention.recording import window_batch
from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.data import PreparedData
from informer_lab.ui.compute import one_thread
from informer_lab.ui.lru import SharedLRU

_PIECES: SharedLRU[Pieces] = SharedLRU(8)
# a slice's maps are seq_len² per layer (33 MB a form at seq_len 1440, ~0.5 GB at 5760): one slice's three forms are
# kept, which a change of forecast step or form re-uses; its rollouts are small (1 MB at 1440)
_GRAPHS: SharedLRU[Graph] = SharedLRU(3)
_ROLLOUTS: SharedLRU[Relevance] = SharedLRU(24)
# one window's P's in each form (a form's P's at seq_len 1440: ~10 MB; the graphs above share them)
_TRANSFERS: SharedLRU[dict] = SharedLRU(3)
_FLOWS: SharedLRU[Relevance] = SharedLRU(64)


def pieces(model_key: str, data_key: str, split: str, window: int, seed: int, _checkpoint: Checkpoint,
           _prepared: PreparedData) -> Pieces:
    def make() -> Pieces:
        with st.spinner("Recording the window's attention rows and distilling steps…"), one_thread():
            return record_pieces(_checkpoint.model, window_batch(_prepared, split, [window]), seed)
    return _PIECES.get_or_make((model_key, data_key, split, window, seed), make)


def graphs(key: tuple, _checkpoint: Checkpoint, _pieces: Pieces, *, alpha: float, head: int | None,
           forms: tuple[str, ...]) -> dict[str, Graph]:
    """The maps of one slice of the window recorded under `key` (model, data, split, window, seed), in each P form.
    The forms share their attention maps, and each form's P's (whatever the α and head) are kept per window: a new α
    or head builds the attention maps once."""
    out: dict[str, Graph] = {}
    for form in forms:
        def make(form=form) -> Graph:
            transfers = _TRANSFERS.get_or_make((*key, form), lambda: distil_transfers(_checkpoint.model, _pieces, 0,
                                                                                      form))
            if out:
                return with_transfers(next(iter(out.values())), transfers)
            return window_graph(_checkpoint.model, _pieces, 0, alpha=alpha, head=head, distil=form,
                                transfers=transfers)
        out[form] = _GRAPHS.get_or_make((*key, alpha, head, form), make)
    return out


def relevance(key: tuple, _graph: Graph, *, alpha: float, head: int | None, form: str,
              targets: tuple[int, ...]) -> Relevance:
    """The rollout of one slice to the forecast steps `targets`."""
    return _ROLLOUTS.get_or_make((*key, alpha, head, form, targets), lambda: rollout(_graph, targets))


def flow_relevance(key: tuple, _graph: Graph, *, alpha: float, head: int | None, form: str,
                   targets: tuple[int, ...]) -> tuple[Relevance, np.ndarray]:
    """(flow's shares, the raw maximum flows [T, seq_len + 1], the label node last)."""
    def make() -> tuple[Relevance, np.ndarray]:
        with st.spinner(f"Maximum flow to each input step ({len(targets)} forecast step(s))…"), one_thread():
            return flow(_graph, targets)
    return _FLOWS.get_or_make((*key, alpha, head, form, targets), make)
