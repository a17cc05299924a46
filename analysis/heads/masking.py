"""Head masks as users think of them: a set of (site, head) pairs switched off, zero or mean ablation.

Mean ablation replaces a head with its mean context per position over reference windows (`mean_contexts`);
`reference_means` picks them for the studies: the `means` given, else the train split's (256 windows evenly
strided, the same key-sample seed).

Pure functions; nothing here changes the model. A mask is an input to one forward call.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal, Sequence

import numpy as np
import pandas as pd
import torch

from informer_lab.model import HeadMask, Informer, key_generator, recording

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.learning.windows import WindowDataset, collate
from informer_lab.analysis.heads.names import head_name

AblationMode = Literal["zero", "mean"]
BASELINE = "baseline"  # the site of the unmasked row that opens every study table


def site_labels(model: Informer) -> list[str]:
    """Readable names of the attention sites in gate order, e.g. 'encoder.0.1', 'decoder_self.0', 'cross.0'."""
    return [site.name for site in model.sites]


def head_label(model: Informer, site: int, head: int) -> str:
    """'encoder.0.1:2' — head 2 of site 1 (analysis.heads.names.head_name)."""
    return head_name(model.sites[site].name, head)


def heads_label(model: Informer, heads: Iterable[tuple[int, int]]) -> str:
    """'site:head;site:head;…' in the order given ('' for none)."""
    return ";".join(head_label(model, s, h) for s, h in heads)


def all_heads(model: Informer) -> list[tuple[int, int]]:
    """Every (site index, head) in gate order."""
    return [(s, h) for s in range(model.n_sites) for h in range(model.config.n_heads)]


def gates_with_heads_off(model: Informer, off: Iterable[tuple[int, int]], batch_size: int = 1) -> torch.Tensor:
    """[batch_size, n_sites, H] ones with a 0 at every (site index, head) in `off`."""
    gates = model.full_gates(batch_size)
    for site, head in off:
        if not (0 <= site < model.n_sites and 0 <= head < model.config.n_heads):
            raise ValueError(f"no head {head} at site {site} (the model has {model.n_sites} sites × "
                             f"{model.config.n_heads} heads)")
        gates[:, site, head] = 0.0
    return gates


def gates_with_sets_off(model: Informer, off_sets: Sequence[Iterable[tuple[int, int]]]) -> torch.Tensor:
    """[len(off_sets), n_sites, H]: one mask per set, ones with zeros at that set's (site, head) pairs."""
    return torch.cat([gates_with_heads_off(model, off) for off in off_sets])


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
    generator = key_generator(seed)
    for start in range(0, len(picks), batch_size):
        batch, _ = collate([dataset[int(i)] for i in picks[start:start + batch_size]])
        with recording("*.context") as rec:
            model(batch.to(device), generator=generator)
        for name, ctx in rec.records.items():
            total = ctx.float().sum(dim=0)
            sums[name] = sums[name] + total if name in sums else total
    return tuple(sums[f"{site.name}.context"] / len(picks) for site in model.sites)


def check_mode(mode: str) -> None:
    if mode not in ("zero", "mean"):
        raise ConfigError(f"ablation mode must be 'zero' or 'mean', got {mode!r}")


def reference_means(model: Informer, prepared: PreparedData, mode: AblationMode,
                    means: Sequence[torch.Tensor] | None, seed: int) -> tuple[torch.Tensor, ...] | None:
    """What mean ablation replaces heads with: `means` if given, else each site's mean context over the
    train split. None in zero mode."""
    check_mode(mode)
    if mode == "zero":
        return None
    if means is None:
        means = mean_contexts(model, prepared, "train", seed=seed)
    if len(means) != model.n_sites:
        raise ConfigError(f"mean ablation needs one mean context per site ({model.n_sites}), got {len(means)}")
    return tuple(means)


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
        out = model(batch, head_mask=m, generator=key_generator(seed))
        return out[0].float().cpu().numpy()  # [pred_len, c_out]

    base, masked = run(None), run(mask)
    targets = list(prepared.target_columns)
    inv = lambda a: prepared.scaler.inverse_transform(a, targets)  # noqa: E731
    seq_len, part = prepared.spec.seq_len, prepared.split(split)
    truth = part.original[window + seq_len:window + seq_len + prepared.spec.pred_len, -len(targets):]  # as read
    base, masked = inv(base), inv(masked)
    stamps = dataset.window_timestamps(window)
    P, C = truth.shape  # rows step-major, columns in target order (built as arrays: at seq_len 1440 with 7 columns a
    # row-by-row history was 0.37 s of every click on the Head masking screen)
    table = pd.DataFrame({"step": np.repeat(np.arange(1, P + 1), C), "timestamp": np.repeat(np.asarray(stamps[:P]), C),
                          "column": np.tile(targets, P), "truth": truth.reshape(-1), "baseline": base.reshape(-1),
                          "masked": masked.reshape(-1), "baseline_error": np.abs(base - truth).reshape(-1),
                          "masked_error": np.abs(masked - truth).reshape(-1)})
    table["error_change"] = table["masked_error"] - table["baseline_error"]
    hist_values = part.original[window:window + seq_len, -len(targets):]
    hist_stamps = part.timestamps[window:window + seq_len]
    history = pd.DataFrame({"timestamp": np.repeat(np.asarray(hist_stamps), C), "column": np.tile(targets, seq_len),
                            "value": np.asarray(hist_values, dtype=np.float64).reshape(-1)})
    return WindowForecast(table, history)


__all__ = ["AblationMode", "BASELINE", "WindowForecast", "all_heads", "gates_with_sets_off",
           "gates_with_heads_off", "head_label", "head_mask", "heads_label", "masked_window_forecast", "mean_contexts",
           "reference_means", "site_labels"]
