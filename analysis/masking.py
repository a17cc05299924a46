"""Head masks as users think of them: a set of (site, head) pairs switched off, zero or mean ablation.

Pure functions; nothing here changes the model. A mask is an input to one forward call.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal

import numpy as np
import pandas as pd
import torch

from model import HeadMask, Informer, recording

from .data import PreparedData
from .windows import WindowDataset, collate

AblationMode = Literal["zero", "mean"]


def site_labels(model: Informer) -> list[str]:
    """Readable names of the attention sites in gate order, e.g. 'encoder.0.1', 'decoder_self.0', 'cross.0'."""
    return [site.name for site in model.sites]


def gates_with_heads_off(model: Informer, off: Iterable[tuple[int, int]], batch_size: int = 1) -> torch.Tensor:
    """[batch_size, n_sites, H] ones with a 0 at every (site index, head) in `off`."""
    gates = model.full_gates(batch_size)
    for site, head in off:
        if not (0 <= site < model.n_sites and 0 <= head < model.config.n_heads):
            raise ValueError(f"no head {head} at site {site} (the model has {model.n_sites} sites × "
                             f"{model.config.n_heads} heads)")
        gates[:, site, head] = 0.0
    return gates


@torch.no_grad()
def mean_contexts(model: Informer, prepared: PreparedData, split: str = "train", *, max_windows: int = 256,
                  batch_size: int = 64, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Each site's mean per-head context over reference windows: one [L_Q, H, D] tensor per site.

    This is what mean ablation replaces a head with: its average output at each position. The windows are
    the first `max_windows` of `split`, evenly strided through it when the split has more.
    """
    dataset = WindowDataset(prepared, split)
    n = len(dataset)
    picks = np.unique(np.linspace(0, n - 1, num=min(n, max_windows)).round().astype(int))
    device = next(model.parameters()).device
    sums: dict[str, torch.Tensor] = {}
    generator = torch.Generator(device=device).manual_seed(seed)
    for start in range(0, len(picks), batch_size):
        batch, _ = collate([dataset[int(i)] for i in picks[start:start + batch_size]])
        with recording("*.context") as rec:
            model(batch.to(device), generator=generator)
        for name, ctx in rec.records.items():
            total = ctx.float().sum(dim=0)
            sums[name] = sums[name] + total if name in sums else total
    return tuple(sums[f"{site.name}.context"] / len(picks) for site in model.sites)


def head_mask(model: Informer, off: Iterable[tuple[int, int]], mode: AblationMode = "zero",
              means: tuple[torch.Tensor, ...] | None = None, batch_size: int = 1) -> HeadMask | None:
    """A HeadMask with the heads in `off` removed (zero) or replaced by their mean context (mean).

    None when nothing is off, so the plain forward runs.
    """
    off = list(off)
    if not off:
        return None
    gates = gates_with_heads_off(model, off, batch_size)
    if mode == "zero":
        return HeadMask(gates)
    if mode == "mean":
        if means is None:
            raise ValueError("mean ablation needs the heads' mean contexts (mean_contexts(...))")
        return HeadMask(gates, tuple(m.to(gates.device) for m in means))
    raise ValueError(f"ablation mode must be 'zero' or 'mean', got {mode!r}")


@dataclass(frozen=True)
class WindowForecast:
    """One window's forecast with and without a mask, in original units.

    table: one row per (horizon step, target column): step, timestamp, column, truth, baseline, masked,
           baseline_error, masked_error (absolute errors) and error_change (masked − baseline).
    history: the encoder window of the target columns (timestamp, column, value) for context plots.
    """

    table: pd.DataFrame
    history: pd.DataFrame


@torch.no_grad()
def masked_window_forecast(model: Informer, prepared: PreparedData, split: str, window: int,
                           mask: HeadMask | None, *, seed: int = 0) -> WindowForecast:
    dataset = WindowDataset(prepared, split)
    if not 0 <= window < len(dataset):
        raise ValueError(f"window {window} is outside the {split} split's {len(dataset)} windows")
    batch, y = collate([dataset[window]])
    device = next(model.parameters()).device
    batch = batch.to(device)

    def run(m):
        out = model(batch, head_mask=m, generator=torch.Generator(device=device).manual_seed(seed))
        return out[0].float().cpu().numpy()  # [pred_len, c_out]

    base, masked = run(None), run(mask)
    targets = list(prepared.target_columns)
    inv = lambda a: prepared.scaler.inverse_transform(a, targets)  # noqa: E731
    truth, base, masked = inv(y[0].numpy()), inv(base), inv(masked)
    stamps = dataset.window_timestamps(window)
    rows = []
    for step in range(truth.shape[0]):
        for c, column in enumerate(targets):
            rows.append({"step": step + 1, "timestamp": stamps[step], "column": column, "truth": truth[step, c],
                         "baseline": base[step, c], "masked": masked[step, c],
                         "baseline_error": abs(base[step, c] - truth[step, c]),
                         "masked_error": abs(masked[step, c] - truth[step, c])})
    table = pd.DataFrame(rows)
    table["error_change"] = table["masked_error"] - table["baseline_error"]
    seq_len = prepared.spec.seq_len
    part = prepared.split(split)
    hist_values = prepared.scaler.inverse_transform(part.values[window:window + seq_len, -len(targets):], targets)
    hist_stamps = part.timestamps[window:window + seq_len]
    history = pd.DataFrame([{"timestamp": hist_stamps[i], "column": col, "value": hist_values[i, c]}
                            for i in range(seq_len) for c, col in enumerate(targets)])
    return WindowForecast(table, history)


__all__ = ["AblationMode", "WindowForecast", "gates_with_heads_off", "head_mask", "masked_window_forecast",
           "mean_contexts", "site_labels"]
