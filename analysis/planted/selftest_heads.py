"""The self-test's rows about heads and queries (analysis.planted.selftest): a head whose lag profile peaks at a planted lag,
what knocking it out costs against the other heads, top-u queries at planted events, and gradient importance
against ablation. Each returns one row (a dict) of the self-test table."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Informer

from informer_lab.analysis.heads.ablation import _site_columns
from informer_lab.analysis.attention.agreement import strided_windows
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.heads.importance import head_importance, rank_correlation
from informer_lab.analysis.intervals import mean_interval, ratio_interval, window_means
from informer_lab.analysis.row_memory import data_span
from informer_lab.analysis.heads.mask_scoring import evaluate_masks
from informer_lab.analysis.heads.masking import all_heads, gates_with_sets_off, head_label
from informer_lab.analysis.attention.positions import site_positions
from informer_lab.analysis.attention.recording import record_forward, window_batch
from informer_lab.analysis.planted.known_answer import receptive_radius
from informer_lab.analysis.learning.windows import WindowDataset


def row(check: str, instrument: str, figure: float, lo: float, hi: float, criterion: str, passed: bool | None,
        detail: str, role: str = "model") -> dict:
    """One self-test row. role: "learned" (the model), "instrument" (fails: the instrument is wrong), "model"
    (fails: this model may simply not work that way) or "agreement" (two instruments against each other)."""
    return {"check": check, "instrument": instrument, "figure": float(figure), "lo": float(lo), "hi": float(hi),
            "criterion": criterion, "passed": passed, "role": role, "detail": detail}


def not_applicable(check: str, instrument: str, why: str, role: str = "model") -> dict:
    return row(check, instrument, math.nan, math.nan, math.nan, "—", None, why, role)


@torch.no_grad()
def lag_masses(model: Informer, prepared: PreparedData, split: str, windows: np.ndarray, lags: list[int], *,
               seed: int = 0, batch_size: int = 32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per window and head, the attention mass its computed rows put within one layer step of the planted lags,
    the mass uniform rows would put there, and the whole lag profile.

    → (mass [n_windows, n_sites, H], chance [n_sites, H], profile [n_sites, H, 2·span + 1] summed over windows;
    profile index = lag + span, lag = query step − key step in input steps)."""
    c = model.config
    span = c.seq_len + c.dec_len
    H, S = c.n_heads, model.n_sites
    mass = np.zeros((len(windows), S, H))
    chance = np.zeros((S, H))
    profile = np.zeros((S, H, 2 * span + 1))
    positions = {s.name: site_positions(c, s) for s in model.sites}
    for start in range(0, len(windows), batch_size):
        part = windows[start:start + batch_size]
        records = record_forward(model, window_batch(prepared, split, part), seed, "*.rows", "*.selected")
        for site in model.sites:
            pos = positions[site.name]
            rows = records[f"{site.name}.rows"].double()  # [B, H, u, L_K]
            selected = records[f"{site.name}.selected"]  # [B, H, u]
            q = torch.as_tensor(pos.query_start)[selected]  # [B, H, u]
            k = torch.as_tensor(pos.key_start)  # [L_K]
            lag = q.unsqueeze(-1) - k  # [B, H, u, L_K]
            near = torch.zeros_like(lag, dtype=torch.bool)
            for planted in lags:
                near |= (lag - planted).abs() < pos.lag_unit
            mass[start:start + len(part), site.index] = (rows * near).sum(-1).mean(-1).numpy()
            allowed = lag >= 0 if site.kind == "decoder_self" else torch.ones_like(near)
            chance[site.index] += ((near & allowed).sum(-1) / allowed.sum(-1).clamp(min=1)).double().mean(-1).sum(0).numpy()
            for h in range(H):
                profile[site.index, h] += np.bincount((lag[:, h] + span).reshape(-1).numpy(),
                                                      weights=rows[:, h].reshape(-1).numpy(), minlength=2 * span + 1)
    return mass, chance / max(1, len(windows)), profile


def head_at_lag(model: Informer, prepared: PreparedData, lags: list[int], *, seed: int, windows: int
                ) -> tuple[dict, tuple[int, int] | None]:
    """The head whose rows put the most mass (over uniform) at a planted lag, chosen on half the windows and
    measured on the other half (no selection bias). → (row, (site, head) or None)."""
    chosen, stride = strided_windows(prepared, "test", windows)
    if len(chosen) < 4:
        return not_applicable("head_lag", "lag profiles", "fewer than 4 test windows"), None
    mass, chance, _ = lag_masses(model, prepared, "test", chosen[0::2], lags, seed=seed)
    score = mass.mean(0) / np.maximum(chance, 1e-12)  # [S, H]
    s, h = np.unravel_index(int(np.argmax(score)), score.shape)
    held, chance_held, profile = lag_masses(model, prepared, "test", chosen[1::2], lags, seed=seed)
    span = (len(profile[s, h]) - 1) // 2
    dominant = int(np.argmax(profile[s, h])) - span
    unit = site_positions(model.config, model.sites[s]).lag_unit
    interval = mean_interval(held[:, s, h], span=data_span(prepared, "test", 2 * stride))
    est, lo, hi = interval.estimate, interval.lo, interval.hi
    radius = receptive_radius(model.config)
    peaks = any(abs(dominant - lag) < unit + radius for lag in lags)
    base = float(chance_held[s, h])
    passed = None if np.isnan(lo) else bool(peaks and lo > base)
    label = head_label(model, int(s), int(h))
    detail = (f"head {label} (chosen on {len(chosen[0::2])} windows, measured on {len(chosen[1::2])} others): "
              f"dominant lag {dominant} input steps (a planted lag ± {unit + radius - 1}: the layer's step and the value "
              f"embedding's reach); mass within {unit - 1} step(s) of lag(s) {', '.join(map(str, lags))}: "
              f"{float(est):.3f} against {base:.3f} for uniform rows")
    if passed is None:
        detail += f"; {interval.reason}"
    return row("head_lag", "lag profiles", float(est), float(lo), float(hi),
               "its dominant lag is a planted lag, and its mass there exceeds uniform rows'", passed, detail), \
        (int(s), int(h))


def knockout(model: Informer, prepared: PreparedData, head: tuple[int, int] | None, *, seed: int, windows: int
             ) -> tuple[dict, pd.DataFrame]:
    """ΔMSE of removing `head` minus the mean ΔMSE of removing each other head, paired over test windows (zero
    ablation). → (row, the sweep table: site, head, delta_mse per head, baseline row first)."""
    heads = all_heads(model)
    gates = gates_with_sets_off(model, [[]] + [[sh] for sh in heads])
    evaluation = evaluate_masks(model, prepared, "test", gates, seed=seed, max_windows=windows)
    per_window = evaluation.window_mse - evaluation.window_mse[:1]  # [1 + heads, windows]
    table = pd.DataFrame([{**_site_columns(model, None), "head": -1, "delta_mse": 0.0}] +
                         [{**_site_columns(model, s), "head": h, "delta_mse": float(per_window[1 + k].mean())}
                          for k, (s, h) in enumerate(heads)])
    if head is None:
        return not_applicable("head_knockout", "head ablation", "no head was chosen by its lag profile"), table
    k = heads.index(head)
    others = np.delete(per_window[1:], k, axis=0).mean(axis=0)
    diff = per_window[1 + k] - others
    means = window_means(diff, span=evaluation.span)
    est, lo, hi = np.atleast_1d(means.estimate), np.atleast_1d(means.lo), np.atleast_1d(means.hi)
    passed = None if np.isnan(lo[0]) else bool(lo[0] > 0)
    detail = (f"removing {head_label(model, *head)}: ΔMSE {per_window[1 + k].mean():+.4f}; the other heads' mean "
              f"{others.mean():+.4f} (zero ablation, {evaluation.windows} test windows)"
              + (f"; {means.reasons()[0]}" if passed is None else ""))
    return row("head_knockout", "head ablation", float(est[0]), float(lo[0]), float(hi[0]),
               "removing it costs more than removing another head (interval above 0)", passed, detail), table


def importance_agreement(model: Informer, prepared: PreparedData, sweep: pd.DataFrame, *, seed: int,
                         windows: int) -> dict:
    """Spearman ρ between gradient head importance and the measured single-head ΔMSE, with a Fisher-z interval
    over heads (standard error √(1.06 / (n − 3)), Fieller et al. 1957)."""
    importance = head_importance(model, prepared, "test", seed=seed, max_windows=windows, null=False)
    rho = rank_correlation(importance, sweep)
    n = len(sweep) - 1
    if not np.isfinite(rho) or n < 4:
        return not_applicable("importance_agreement", "gradient importance vs ablation",
                              "too few heads, or a constant score", role="agreement")
    z, se = math.atanh(max(-0.999999, min(0.999999, rho))), math.sqrt(1.06 / (n - 3))
    lo, hi = math.tanh(z - 1.96 * se), math.tanh(z + 1.96 * se)
    return row("importance_agreement", "gradient importance vs ablation", rho, lo, hi,
               "rank correlation above 0 (interval)", bool(lo > 0),
               f"Spearman ρ over {n} heads: |∂L/∂gate| (saliency) against ΔMSE of removing the head", "agreement")


@torch.no_grad()
def topu_at_events(model: Informer, prepared: PreparedData, events: np.ndarray, *, seed: int,
                   per_event: int = 8, max_events: int = 64) -> dict:
    """How much more often ProbSparse's top-u queries sit on a planted spike than queries picked at random: the
    share of selected queries whose span holds a spike over the share of all queries that do, in encoder
    windows that hold a spike (any split: which queries are selected needs no unseen data). Interval over events."""
    sparse = [s for s in model.sites if s.kind == "encoder" and model.attention_layer(s).kind == "prob"]
    if not sparse:
        return not_applicable("topu_events", "top-u query selection", "no ProbSparse encoder site")
    if len(events) == 0:
        return not_applicable("topu_events", "top-u query selection", "no planted spike in this file")
    c = model.config
    hits, chances = [], []
    for e in events[:max_events]:
        for split in ("train", "val", "test"):
            part = prepared.split(split)
            n = len(WindowDataset(prepared, split))
            first, last = max(0, e - part.start - c.seq_len + 1), min(n - 1, e - part.start)
            if first > last:
                continue
            windows = np.unique(np.linspace(first, last, min(per_event, last - first + 1)).round().astype(int))
            records = record_forward(model, window_batch(prepared, split, windows), seed,
                                     *[f"{s.name}.selected" for s in sparse], *[f"{s.name}.rows" for s in sparse])
            hit = chance = 0.0
            for site in sparse:
                pos = site_positions(c, site)
                event_at = e - part.start - windows  # [B] the spike's step in each window
                covers = (pos.query_start[None, :] <= event_at[:, None]) & (event_at[:, None] <= pos.query_end[None, :])
                selected = records[f"{site.name}.selected"].numpy()  # [B, H, u]
                picked = np.take_along_axis(covers[:, None, :].repeat(selected.shape[1], 1), selected, axis=2)
                hit += picked.mean()
                chance += covers.mean()
            hits.append(hit / len(sparse))
            chances.append(chance / len(sparse))
            break
    if not hits:
        return not_applicable("topu_events", "top-u query selection", "no window holds a planted spike")
    values = np.stack([hits, chances], axis=1)
    interval = ratio_interval(values[:, 0], np.maximum(values[:, 1], 1e-12), span=1)
    est, lo, hi = interval.estimate, interval.lo, interval.hi
    passed = None if np.isnan(lo) else bool(lo > 1)
    return row("topu_events", "top-u query selection", float(est), float(lo), float(hi),
               "selected queries sit on spikes more often than chance (ratio interval above 1)", passed,
               f"{len(hits)} spikes, up to {per_event} windows each, {len(sparse)} ProbSparse encoder site(s): "
               f"{np.mean(hits):.3f} of selected queries vs {np.mean(chances):.3f} of all queries hold a spike")


__all__ = ["head_at_lag", "importance_agreement", "knockout", "lag_masses", "not_applicable", "row", "topu_at_events"]
