"""The sparsity report of one window, a site at a time: what a screen shows, computed when it is shown.

`analysis.attention.sparsity.sparsity_report` scores every site of a window over several key-sample seeds at once (the CLI and
the HTML report want it all). A screen shows one site and head: at seq_len 5760 the exact M of every site over ten
seeds is seconds of work for a table nobody opened. Here the same numbers come in parts:

    record_window   one forward pass (the seed's key sample) recording every site: rows, selections, queries and
                    keys, sampled M̄; and the per-head row summary of every site (cheap: rows only)
    site_queries    one site's queries table (its exact M and M̄), from that recording
    site_agreement  one site's top-u agreement over `seeds` key-sample seeds (a forward pass per seed, recording only
                    that site; the exact M is reused while the site's queries and keys do not change)

Each part equals the matching rows of `sparsity_report` (same recording, same functions).
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch

from informer_lab.model import Informer

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.instruments.qk_map import find_site
from informer_lab.analysis.attention.recording import ATTENTION_PATTERNS, SiteRows, record_forward, record_until, site_rows, window_batch
from informer_lab.analysis.attention.sparsity import _agreement_rows, _exact_for_site, _exact_reused, _heads_table, _queries_table, \
    _summarise_agreement
from informer_lab.analysis.attention.positions import site_positions


@dataclass(frozen=True, eq=False)
class WindowRecord:
    """One window's forward pass under key-sample seed `seed`, every site recorded.

    records: hook-site name → tensor (queries, keys, scores, selected, rows of every site; read-only by convention)
    rows:    per site, the computed attention rows and selections (`SiteRows`)
    heads:   one row per (site, head): the row summary of `SparsityReport.heads`
    """

    split: str
    window: int
    seed: int
    records: dict[str, torch.Tensor]
    rows: tuple[SiteRows, ...]
    heads: pd.DataFrame

    def site_rows(self, name: str) -> SiteRows:
        for r in self.rows:
            if r.site == name:
                return r
        raise KeyError(f"no site {name!r}; sites are {', '.join(r.site for r in self.rows)}")


def record_window(model: Informer, prepared: PreparedData, split: str, window: int, *, seed: int = 0) -> WindowRecord:
    """One forward pass of window `window` of `split`, every attention site recorded (ValueError: a bad window)."""
    batch = window_batch(prepared, split, [window])
    records = record_forward(model, batch, seed, *ATTENTION_PATTERNS)
    rows = site_rows(model, records)
    return WindowRecord(split, int(window), int(seed), records, rows, _heads_table(model, rows, prepared.freq))


def site_exact(model: Informer, record: WindowRecord, site: str) -> dict:
    """The exact measures of one site of `record`: exact M, M̄ and M over every key, each [1, H, L_Q] (ConfigError for
    an unknown site). What `site_queries` shows and `site_agreement` compares with: compute it once, hand it to both."""
    return _exact_for_site(model, find_site(model, site), record.records)


def site_queries(model: Informer, prepared: PreparedData, record: WindowRecord, site: str, *,
                 exact: dict | None = None) -> pd.DataFrame:
    """`SparsityReport.queries` of one site (ConfigError for an unknown site): exact M, M̄ and M over every key of each
    query and head, beside the sampled M̄, the selection and both ranks. `exact`: `site_exact` of it, if known."""
    s = find_site(model, site)
    exact = _exact_for_site(model, s, record.records) if exact is None else exact
    return _queries_table(model, s, record.records, exact, [record.window], prepared.split(record.split).timestamps)


def site_agreement(model: Informer, prepared: PreparedData, split: str, window: int, site: str, *, seed: int = 0,
                   seeds: int = 10, record: WindowRecord | None = None, exact: dict | None = None) -> pd.DataFrame:
    """`SparsityReport.agreement` of one site: per head, the mean and standard deviation over key-sample seeds seed …
    seed + seeds − 1 of its top-u agreement with the exact measures. Empty for a full-attention site.

    record, exact: that window's recording under `seed` and its `site_exact`, when known: a seed whose pass gives the
    site the same queries and keys (every seed, at a first layer) takes that exact M instead of scoring it again."""
    if int(seeds) < 1:
        raise ValueError(f"seeds must be at least 1, got {seeds}")
    s = find_site(model, site)
    batch = window_batch(prepared, split, [window])
    names = [f"{s.name}.{suffix}" for suffix in ("queries", "keys", "scores", "selected")]
    pos = site_positions(model.config, s)
    known: dict[str, tuple] = {}
    if record is not None and exact is not None and (record.split, record.window) == (split, int(window)):
        known[s.name] = (record.records[names[0]], record.records[names[1]], exact)
    by_seed = []
    if model.attention_layer(s).kind != "prob":  # full attention: nothing is sampled
        return _summarise_agreement(pd.DataFrame(), [s.name])
    for k in range(int(seeds)):
        records = record_until(model, batch, seed + k, *names)  # the pass stops once the site has fired
        scores = records[names[2]]
        exact = _exact_reused(model, s, records, known)
        u = records[names[3]].shape[-1]
        by_seed.append(_agreement_rows(s, pos, scores.double().numpy(), exact, u, seed + k, [window]))
    return _summarise_agreement(pd.concat(by_seed, ignore_index=True), [s.name])


__all__ = ["WindowRecord", "record_window", "site_agreement", "site_exact", "site_queries"]
