"""Counterfactual windows: edit one encoder window, run the original and the edited window, compare.

Both runs draw their ProbSparse key samples from a generator freshly seeded with the same `seed` (draws depend
on lengths only), so every difference comes from the edit, never from the sampling. Edits are made in original
units (`analysis.instruments.window_edits`); the decoder's known part follows the edited window. An optional `head_mask`
applies to both runs (e.g. to ask what an edit does once some heads are off).

What comes back (`Counterfactual`):
- the forecast side by side per step and column, in original units, with the truth and the difference;
- the input window before and after (original units) and which cells changed;
- per site and head: the sampled M̄ of every query in both runs and the top-u sets, their Jaccard index and
  the queries that entered and left the set (full-attention sites: no selection, Jaccard NaN);
- the attention rows of both runs (when `rows=True`), sliceable per site, head and query (`attention_row`);
  a lazy query's row is the one its stand-in implies (uniform 1/L_K; causal: 1/(i+1) or 1 over keys j ≤ i).
  Recording rows makes the model compute the selected queries' softmax explicitly instead of by SDPA: the same
  maths, but the forecasts then differ from a plain forward in the last float bits (~1e-7 relative). Both runs
  record alike, so their difference is unaffected; `rows=False` reproduces the plain forward bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Batch, HeadMask, Informer, Site, key_generator, recording

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.attention.positions import lazy_rule, site_positions, steps_or_unknown
from informer_lab.analysis.instruments.window_edits import Edit, edited_batches, parse_edit


@dataclass(frozen=True, eq=False)
class SiteAttention:
    """One site in both runs. H heads, L_Q queries, L_K keys, u selected queries per head.

    mbar_original / mbar_edited:         [H, L_Q] sampled M̄ (q·k/√D scale); NaN at a full-attention site
    selected_original / selected_edited: [H, u] the top-u queries, by M̄ (full attention: every query, u = L_Q;
                                         None when a full-attention site's rows were not recorded)
    rows_original / rows_edited:         [H, u, L_K] softmax rows of the selected queries (None: rows=False)
    query_steps / key_steps:             [L_Q] / [L_K] input step of each query / key (−1: not placed, see
                                         analysis.attention.positions.steps_or_unknown)
    lazy_rule:                           what an unselected query returns (analysis.attention.positions.LAZY_RULES)
    """

    site: str
    kind: str
    attention: str
    lazy_rule: str
    query_steps: np.ndarray
    key_steps: np.ndarray
    mbar_original: np.ndarray
    mbar_edited: np.ndarray
    selected_original: np.ndarray | None
    selected_edited: np.ndarray | None
    rows_original: np.ndarray | None
    rows_edited: np.ndarray | None

    def row(self, head: int, query: int, edited: bool = False) -> tuple[np.ndarray, bool]:
        """(weights [L_K], computed): query `query`'s attention row in one run; computed=False: a lazy row,
        the weights its stand-in implies. ConfigError when the rows were not recorded."""
        rows = self.rows_edited if edited else self.rows_original
        selected = self.selected_edited if edited else self.selected_original
        if rows is None or selected is None:
            raise ConfigError(f"the attention rows of {self.site} were not recorded (run with rows=True)")
        L_Q, L_K = len(self.query_steps), len(self.key_steps)
        if not 0 <= head < rows.shape[0] or not 0 <= query < L_Q:
            raise ConfigError(f"no head {head} / query {query} at {self.site} ({rows.shape[0]} heads, {L_Q} queries)")
        hit = np.flatnonzero(selected[head] == query)
        if len(hit):
            return rows[head, hit[0]], True
        weights = np.full(L_K, 1.0 / L_K)
        if self.lazy_rule != "mean(V)":  # causal: keys j ≤ i
            weights = np.where(np.arange(L_K) <= query, 1.0 / (query + 1) if self.lazy_rule == "running mean(V)"
                               else 1.0, 0.0)
        return weights, False


@dataclass(frozen=True, eq=False)
class Counterfactual:
    """One window and its edited twin, run with the same key sample (module docstring).

    forecast:  one row per (step, column): step (1 … pred_len), timestamp, column, truth, original, edited,
               difference (edited − original); original units
    inputs:    one row per (position, column) of the encoder window: position, timestamp, column, original, edited,
               changed; original units
    selection: one row per (site, head): site, attention ("prob" | "full"), head, u, jaccard, n_entered, n_left,
               entered, left (query positions joined by ";", in M̄ order of the run they belong to)
    scores:    one row per (ProbSparse site, head, query): site, head, position, step, mbar_original, mbar_edited,
               selected_original, selected_edited
    sites:     SiteAttention per site, in model.sites order
    """

    split: str
    window: int
    seed: int
    edit: str
    forecast: pd.DataFrame
    inputs: pd.DataFrame
    selection: pd.DataFrame
    scores: pd.DataFrame
    sites: tuple[SiteAttention, ...]

    @property
    def max_abs_difference(self) -> float:
        """Largest |edited − original| forecast, original units."""
        return float(self.forecast["difference"].abs().max())

    def site(self, name: str) -> SiteAttention:
        for s in self.sites:
            if s.site == name:
                return s
        raise ConfigError(f"no attention site {name!r}; choose {', '.join(s.site for s in self.sites)}")

    def attention_row(self, site: str, head: int, query: int) -> pd.DataFrame:
        """Query `query`'s attention row at `site`, head `head`, in both runs: one row per key with key, step,
        original, edited (weights) and computed_original, computed_edited (False: a lazy query's implied row)."""
        s = self.site(site)
        (w0, c0), (w1, c1) = s.row(head, query), s.row(head, query, edited=True)
        return pd.DataFrame({"key": np.arange(len(s.key_steps)), "step": s.key_steps, "original": w0, "edited": w1,
                             "computed_original": c0, "computed_edited": c1})


@torch.no_grad()
def _run(model: Informer, batch: Batch, seed: int, head_mask: HeadMask | None, patterns: tuple[str, ...]):
    device = next(model.parameters()).device
    generator = key_generator(int(seed))
    if head_mask is not None:
        head_mask = HeadMask(head_mask.gates.to(device), None if head_mask.means is None else
                             tuple(None if m is None else m.to(device) for m in head_mask.means))
    with recording(*patterns) as rec:
        out = model(batch.to(device), head_mask=head_mask, generator=generator)
    return out[0].float().cpu().numpy().astype(np.float64), {name: t[0].cpu() for name, t in rec.records.items()}


def counterfactual(model: Informer, prepared: PreparedData, split: str, window: int, edit: Edit | str, seed: int = 0,
                   *, head_mask: HeadMask | None = None, rows: bool = True) -> Counterfactual:
    """Run window `window` of `split` as it is and with `edit` (an Edit or its CLI text), same key-sample seed.

    rows=False skips the attention rows (then only M̄ and the top-u sets are recorded: lighter for long inputs).
    head_mask: applied to both runs (one window: gates [1, n_sites, H]).
    Raises ConfigError for a bad edit or window, ValueError for a model in train mode.
    """
    if model.training:
        raise ValueError("the model is in training mode; analyse a model in eval mode (checkpoints load that way)")
    edit = parse_edit(edit) if isinstance(edit, str) else edit
    batch, edited_batch, e = edited_batches(prepared, split, window, edit)
    patterns = ("*.scores", "*.selected") + (("*.rows",) if rows else ())
    f0, rec0 = _run(model, batch, seed, head_mask, patterns)
    # an edit that changes no cell feeds the model the same batch: its run is the first one (bit for bit, and once)
    f1, rec1 = (f0, rec0) if not e.changed.any() else _run(model, edited_batch, seed, head_mask, patterns)

    targets = list(prepared.target_columns)
    inv = lambda a: prepared.scaler.inverse_transform(a, targets)  # noqa: E731
    f0, f1 = inv(f0), inv(f1)
    pred_len, seq_len = prepared.spec.pred_len, prepared.spec.seq_len
    truth = prepared.split(split).original[window + seq_len:window + seq_len + pred_len, -len(targets):]  # as read
    stamps = prepared.split(split).timestamps
    forecast = pd.DataFrame({
        "step": np.repeat(np.arange(1, pred_len + 1), len(targets)),
        "timestamp": np.repeat(np.asarray(stamps[window + seq_len:window + seq_len + pred_len]), len(targets)),
        "column": np.tile(targets, pred_len), "truth": truth.reshape(-1), "original": f0.reshape(-1),
        "edited": f1.reshape(-1), "difference": (f1 - f0).reshape(-1)})
    columns = list(prepared.columns)
    inputs = pd.DataFrame({
        "position": np.repeat(np.arange(seq_len), len(columns)),
        "timestamp": np.repeat(np.asarray(stamps[window:window + seq_len]), len(columns)),
        "column": np.tile(columns, seq_len), "original": e.original.reshape(-1), "edited": e.edited.reshape(-1),
        "changed": e.changed.reshape(-1)})
    sites = tuple(_site_attention(model, site, rec0, rec1) for site in model.sites)
    return Counterfactual(split, int(window), int(seed), edit.describe(), forecast, inputs, selection_table(sites),
                          scores_table(sites), sites)


def _site_attention(model: Informer, site: Site, rec0: dict, rec1: dict) -> SiteAttention:
    pos = site_positions(model.config, site)
    layer = model.attention_layer(site)
    L_Q, L_K, H = len(pos.query_start), len(pos.key_start), model.config.n_heads

    def get(rec: dict, suffix: str, dtype) -> np.ndarray | None:
        t = rec.get(f"{site.name}.{suffix}")
        return None if t is None else t.numpy().astype(dtype)

    m0, m1 = get(rec0, "scores", np.float64), get(rec1, "scores", np.float64)
    r0 = get(rec0, "rows", np.float64)
    L_Q = m0.shape[-1] if m0 is not None else L_Q  # the recorded lengths win (imported embeddings: see positions)
    L_K = r0.shape[-1] if r0 is not None else L_K
    nan = np.full((H, L_Q), np.nan)
    return SiteAttention(site.name, site.kind, layer.kind, lazy_rule(model, site),
                         steps_or_unknown(pos.query_start, L_Q), steps_or_unknown(pos.key_start, L_K),
                         nan if m0 is None else m0, nan if m1 is None else m1,
                         get(rec0, "selected", np.int64), get(rec1, "selected", np.int64),
                         r0, get(rec1, "rows", np.float64))


def _positions(values) -> str:
    return ";".join(str(int(v)) for v in values)


def selection_table(sites: tuple[SiteAttention, ...]) -> pd.DataFrame:
    """One row per (site, head): how the top-u query set moved (see Counterfactual.selection)."""
    rows = []
    for s in sites:
        H = s.mbar_original.shape[0]
        for h in range(H):
            row = {"site": s.site, "attention": s.attention, "head": h, "u": len(s.query_steps), "jaccard": np.nan,
                   "n_entered": 0, "n_left": 0, "entered": "", "left": ""}
            if s.attention == "prob" and s.selected_original is not None and s.selected_edited is not None:
                a, b = s.selected_original[h], s.selected_edited[h]
                entered, left = [q for q in b if q not in set(a)], [q for q in a if q not in set(b)]
                union = len(set(a) | set(b))
                row.update(u=len(a), jaccard=len(set(a) & set(b)) / union if union else 1.0,
                           n_entered=len(entered), n_left=len(left), entered=_positions(entered),
                           left=_positions(left))
            rows.append(row)
    return pd.DataFrame(rows, columns=["site", "attention", "head", "u", "jaccard", "n_entered", "n_left", "entered",
                                       "left"])


def scores_table(sites: tuple[SiteAttention, ...]) -> pd.DataFrame:
    """One row per (ProbSparse site, head, query): M̄ and membership of the top-u in both runs."""
    parts = []
    for s in sites:
        if s.attention != "prob" or s.selected_original is None or s.selected_edited is None:
            continue
        H, L_Q = s.mbar_original.shape
        chosen = []
        for selected in (s.selected_original, s.selected_edited):
            mask = np.zeros((H, L_Q), dtype=bool)
            np.put_along_axis(mask, selected, True, axis=1)
            chosen.append(mask.reshape(-1))
        parts.append(pd.DataFrame({
            "site": s.site, "head": np.repeat(np.arange(H), L_Q), "position": np.tile(np.arange(L_Q), H),
            "step": np.tile(s.query_steps, H), "mbar_original": s.mbar_original.reshape(-1),
            "mbar_edited": s.mbar_edited.reshape(-1), "selected_original": chosen[0], "selected_edited": chosen[1]}))
    columns = ["site", "head", "position", "step", "mbar_original", "mbar_edited", "selected_original",
               "selected_edited"]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


__all__ = ["Counterfactual", "Edit", "SiteAttention", "counterfactual", "parse_edit", "scores_table",
           "selection_table"]
