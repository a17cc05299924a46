"""Rollout and flow over many windows, and their validation as Abnar & Zuidema validated theirs: the Spearman ρ,
window by window, between a method's relevance of the input steps and (a) the forecast's loss when that step is
blanked out (ΔMSE), (b) Integrated Gradients' time relevance (|IG| summed over the columns).

Intervals: ρ is computed per window; its mean over evenly spread windows gets the lab's interval for per-window
figures (`analysis.intervals.window_means`: the long-run variance of the window series, windows sharing rows counted
as dependent), not a block bootstrap, which under-covers with the few independent stretches a split holds (measured
in benchmarks/coverage.py). Where too few independent stretches exist there is no interval, and the reason says so.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Batch, Informer, key_generator

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.anatomy.flow import flow
from informer_lab.analysis.anatomy.rollout import record_pieces, relevance_table, rollout, window_graph
from informer_lab.analysis.instruments.paired import spread_windows
from informer_lab.analysis.intervals import mean_interval
from informer_lab.analysis.learning.windows import decoder_values

AGAINST = ("blank_out", "integrated_gradients")


@dataclass(frozen=True, eq=False)
class WindowRelevance:
    """Relevance of many windows. table: `relevance_table` rows of every window, method and distil form;
    inputs[(method, distil)]: [n_windows, seq_len] relevance of the input steps (mean over the target steps);
    windows: the split's window indices; span: windows sharing rows with one (the intervals' dependence)."""

    split: str
    windows: np.ndarray
    span: int
    targets: np.ndarray
    table: pd.DataFrame
    inputs: dict
    validation: pd.DataFrame | None = None


def _targets(steps, pred_len: int) -> np.ndarray:
    if steps is None or steps == "all":
        return np.arange(1, pred_len + 1)
    out = np.asarray([int(s) for s in np.atleast_1d(steps)], dtype=np.int64)
    if len(out) == 0 or out.min() < 1 or out.max() > pred_len:
        raise ValueError(f"target steps must be in 1 … pred_len = {pred_len}, got {list(out)[:5]}")
    return out


def windows_relevance(model: Informer, prepared: PreparedData, split: str = "test", *, windows: int = 16,
                      methods: Sequence[str] = ("rollout",), distils: Sequence[str] = ("routed",),
                      alpha: float = 0.5, head: int | None = None, steps=None, seed: int = 0,
                      progress: Callable[[int, int], None] | None = None) -> WindowRelevance:
    """Rollout and/or flow of at most `windows` evenly spread windows of `split`, for the target steps `steps`
    (None: all), every distil form asked for. Each batch's key sample is drawn from `seed`."""
    for m in methods:
        if m not in ("rollout", "flow"):
            raise ValueError(f"method must be rollout, flow or both, got {m!r}")
    if model.training:
        raise ValueError("the model is in training mode; rollout reads a model in eval mode")
    targets = _targets(steps, prepared.spec.pred_len)
    spread = spread_windows(prepared, split, windows, batch_size=16)
    frames, inputs = [], {(m, d): [] for m in methods for d in distils}
    done, total = 0, len(spread.indices)
    for b, (batch, _) in enumerate(spread.batches):
        pieces = record_pieces(model, batch, seed)
        for row in range(pieces.batch_size):
            window = int(spread.indices[done])
            for distil in distils:
                graph = window_graph(model, pieces, row, alpha=alpha, head=head, distil=distil)
                for method in methods:
                    rel = rollout(graph, targets) if method == "rollout" else flow(graph, targets)[0]
                    frames.append(relevance_table(rel, window=window, method=method, distil=distil))
                    inputs[(method, distil)].append(rel.inputs.mean(axis=0))
            done += 1
            if progress is not None:
                progress(done, total)
    return WindowRelevance(split, spread.indices, spread.span, targets, pd.concat(frames, ignore_index=True),
                           {k: np.stack(v) for k, v in inputs.items()})


@torch.no_grad()
def blank_out_delta(model: Informer, prepared: PreparedData, split: str, windows: np.ndarray, targets: np.ndarray,
                    seed: int = 0, columns: np.ndarray | None = None) -> np.ndarray:
    """[n_windows, seq_len] ΔMSE of the forecast (mean over `targets` and the forecast columns, or only the indices
    `columns` of them) when input step s is blanked out: every column at its training mean (0 after standardising), in
    the encoder and in the decoder's known tail that repeats it. One forward pass per window carries the window and
    its seq_len blanked copies (one key sample for all)."""
    from informer_lab.analysis.learning.windows import WindowDataset

    c, dataset = model.config, WindowDataset(prepared, split)
    device = next(model.parameters()).device
    out = []
    for w in windows:
        x, mark, _, mark_dec, y = dataset[int(w)]
        L = x.shape[0]
        copies = x.unsqueeze(0).repeat(L + 1, 1, 1)  # row 0: the window; row 1 + s: step s blanked
        copies[torch.arange(1, L + 1), torch.arange(L)] = 0.0
        batch = Batch(copies, mark.expand(L + 1, -1, -1), decoder_values(copies, c.label_len, c.pred_len),
                      mark_dec.expand(L + 1, -1, -1))
        f = model(batch.to(device), generator=key_generator(seed)).double().cpu()[:, targets - 1]
        truth = y[targets - 1].double()
        if columns is not None:
            f, truth = f[..., columns], truth[..., columns]
        error = ((f - truth) ** 2).mean(dim=(1, 2))  # [L + 1]
        out.append((error[1:] - error[0]).numpy())
    return np.stack(out)


def ig_time_relevance(model: Informer, prepared: PreparedData, split: str, windows: np.ndarray, targets: np.ndarray,
                      seed: int = 0, n_steps: int = 32) -> np.ndarray:
    """[n_windows, seq_len] |Integrated Gradients| summed over the columns, of the forecast's mean over `targets` and
    the target columns, from the all-zeros baseline (every column at its training mean)."""
    from captum.attr import IntegratedGradients

    from informer_lab.analysis.learning.windows import WindowDataset

    c, dataset = model.config, WindowDataset(prepared, split)
    device = next(model.parameters()).device
    out = []
    for w in windows:
        x, mark, _, mark_dec, _ = dataset[int(w)]

        def f(x_enc: torch.Tensor) -> torch.Tensor:
            N = x_enc.shape[0]
            batch = Batch(x_enc, mark.to(device).expand(N, -1, -1), decoder_values(x_enc, c.label_len, c.pred_len),
                          mark_dec.to(device).expand(N, -1, -1))
            return model(batch, generator=key_generator(seed))[:, targets - 1].mean(dim=(1, 2))

        x = x.to(device)[None]
        attribution = IntegratedGradients(f).attribute(x, baselines=torch.zeros_like(x), n_steps=n_steps,
                                                       method="gausslegendre", internal_batch_size=n_steps)
        out.append(attribution[0].abs().sum(dim=-1).double().cpu().numpy())
    return np.stack(out)


def spearman_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman ρ of each row pair (NaN where a row is constant)."""
    from scipy.stats import spearmanr

    return np.array([spearmanr(x, y).statistic if np.ptp(x) > 0 and np.ptp(y) > 0 else np.nan
                     for x, y in zip(a, b)])


def validate(model: Informer, prepared: PreparedData, result: WindowRelevance, *, seed: int = 0,
             ig_steps: int = 32) -> pd.DataFrame:
    """Per (method, distil) and reference: the mean over windows of the per-window Spearman ρ with its interval.
    Columns: method, distil, against, rho, rho_low, rho_high, windows, reason."""
    references = {
        "blank_out": blank_out_delta(model, prepared, result.split, result.windows, result.targets, seed),
        "integrated_gradients": ig_time_relevance(model, prepared, result.split, result.windows, result.targets,
                                                  seed, ig_steps),
    }
    rows = []
    for (method, distil), relevance in result.inputs.items():
        for against, reference in references.items():
            rho = spearman_rows(relevance, reference)
            kept = rho[np.isfinite(rho)]
            interval = mean_interval(kept, span=result.span) if len(kept) else None
            flat = bool((np.ptp(relevance, axis=1) <= 1e-12).all())
            none = ("the method gives every input step the same relevance in every window: no rank correlation"
                    if flat else "no window with a ρ (the reference is constant)")
            rows.append({"method": method, "distil": distil, "against": against,
                         "rho": interval.estimate if interval else np.nan,
                         "rho_low": interval.lo if interval else np.nan,
                         "rho_high": interval.hi if interval else np.nan,
                         "windows": len(kept), "reason": interval.reason if interval else none})
    return pd.DataFrame(rows)


__all__ = ["AGAINST", "WindowRelevance", "blank_out_delta", "ig_time_relevance", "spearman_rows", "validate",
           "windows_relevance"]
