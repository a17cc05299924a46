"""Which inputs moved one forecast: Integrated Gradients over the encoder window (time × feature).

For one window of a split, one horizon step and one target column, the forecast is a scalar function
f(x_enc) of the [seq_len, enc_in] encoder window. Integrated Gradients (captum) splits
f(x) − f(baseline) among the input cells:

    attribution[t, c] = (x[t, c] − b[t, c]) · ∫₀¹ ∂f/∂x[t, c] (b + α(x − b)) dα

and completeness says the attributions add up to f(x) − f(b). Choices made here, each on purpose:

- **The decoder's label part follows x_enc.** The Informer reads the last label_len known steps
  twice: in x_enc and again at the start of x_dec (`decoder_values`). The forward function rebuilds
  x_dec from the perturbed x_enc, so a cell's attribution covers both of its uses, and the baseline
  input is a consistent pair (x_enc = b, x_dec = its last label_len rows then zeros). Holding x_dec
  fixed instead would attribute to a model input that never occurs in data.
- **Time marks are fixed** (they are calendar facts, not measurements).
- **A fixed key sample.** Every call of the forward function draws the ProbSparse key sample from a
  new `torch.Generator` seeded with `seed`. The draws depend on lengths only, not on the batch size,
  so every point of the integration path — whatever internal batch captum puts it in — sees the same
  keys, and two calls of `input_attribution` agree exactly.
- **Jumps.** Even with fixed keys the top-u query selection is piecewise constant in the input:
  where the path crosses a point at which the selected set changes, f jumps (a query switches between
  full attention and the lazy mean) and the gradient never sees the jump. Completeness then fails
  by the sum of the jumps. `convergence_delta` (captum's) and `completeness_gap` (recomputed here
  from two plain forward calls) measure it, and `path_selection_changes` counts the intervals of a
  uniform path grid across which some site's selection changed. With u = L at every site
  (factor large) or attention="full" there are no jumps. Measured (tests/analysis/instruments/test_attribution.py
  and the sample data): smooth model (u = L, no distilling) gap ≈ 1e-6 relative, float round-off;
  distilling's max-pool / ELU kinks add a quadrature error ≈ 1e-4 relative that shrinks with n_steps;
  ProbSparse jumps leave 0.03 %–12 % of f(x) − f(b) that no number of steps removes. Read the delta
  before reading the map.

Nothing here changes the model: no hooks are registered, no parameter's `requires_grad` is touched;
captum takes gradients with respect to the inputs only (`torch.autograd.grad`, so no `.grad` is
written on the parameters). The model must already be in eval mode.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Batch, Informer, key_generator, recording

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.learning.windows import WindowDataset, decoder_values

BaselineName = Literal["zeros", "window_mean"]
BASELINES = ("zeros", "window_mean")


@dataclass(frozen=True, eq=False)
class Attribution:
    """Integrated Gradients of one forecast value with respect to its encoder window.

    values:            long table, one row per input cell: timestamp, position (0 … seq_len − 1),
                       feature, attribution (standardised forecast units)
    array:             the same attributions as a [seq_len, enc_in] array (columns in `prepared.columns` order)
    baseline:          the [seq_len, enc_in] baseline input (standardised)
    baseline_name:     "zeros" (the training mean of every column) or "window_mean" (each feature's
                       mean over this window, repeated over time)
    convergence_delta: captum's Σ attributions − (f(x) − f(baseline)), signed
    forecast:          f(x): the model's value at (step, target_column), standardised
    baseline_forecast: f(baseline), standardised
    completeness_gap:  |Σ attributions − (forecast − baseline_forecast)|, from two separate forward calls
    path_selection_changes: intervals of a uniform (n_steps + 1)-point path grid across which a ProbSparse
                       site's top-u query set changed (0: no jump seen at that resolution)
    """

    values: pd.DataFrame
    array: np.ndarray
    baseline: np.ndarray
    baseline_name: str
    convergence_delta: float
    forecast: float
    baseline_forecast: float
    completeness_gap: float
    path_selection_changes: int
    split: str
    window: int
    step: int
    target_column: str
    n_steps: int
    seed: int

    @property
    def difference(self) -> float:
        """f(x) − f(baseline): what the attributions should add up to."""
        return self.forecast - self.baseline_forecast

    @property
    def relative_gap(self) -> float:
        """completeness_gap / |f(x) − f(baseline)| (inf when the two forecasts coincide and the gap does not)."""
        denominator = abs(self.difference)
        if denominator == 0.0:
            return 0.0 if self.completeness_gap == 0.0 else float("inf")
        return self.completeness_gap / denominator


def baseline_input(x_enc: np.ndarray, name: str) -> np.ndarray:
    """[seq_len, enc_in] standardised window → the baseline of the same shape.

    zeros: every column at its training mean (0 after standardising).
    window_mean: each feature's mean over this window, on every row.
    """
    if name == "zeros":
        return np.zeros_like(x_enc)
    if name == "window_mean":
        mean = np.asarray(x_enc, dtype=np.float64).mean(axis=0, keepdims=True)  # exact for a constant column
        return np.broadcast_to(mean, x_enc.shape).astype(x_enc.dtype)
    raise ValueError(f"baseline must be one of {', '.join(BASELINES)}, got {name!r}")


def forecast_function(model: Informer, mark_enc: torch.Tensor, mark_dec: torch.Tensor, *, step: int,
                      column_index: int, seed: int, attention: str | None = None
                      ) -> Callable[[torch.Tensor], torch.Tensor]:
    """The scalar captum integrates: x_enc [N, seq_len, enc_in] → forecast[:, step − 1, column_index] [N].

    mark_enc [seq_len, F] and mark_dec [label_len + pred_len, F] are shared by all N rows; x_dec is rebuilt
    from each row of x_enc (its last label_len rows, then zeros). A new generator seeded with `seed` per call
    draws the same key sample every time.
    """
    c = model.config

    def f(x_enc: torch.Tensor) -> torch.Tensor:
        N = x_enc.shape[0]
        x_dec = decoder_values(x_enc, c.label_len, c.pred_len)  # [N, label_len + pred_len, enc_in]
        batch = Batch(x_enc, mark_enc.expand(N, -1, -1), x_dec, mark_dec.expand(N, -1, -1))
        generator = key_generator(seed)
        out = model(batch, generator=generator, attention=attention)  # [N, pred_len, c_out]
        return out[:, step - 1, column_index]  # [N]

    return f


def input_attribution(model: Informer, prepared: PreparedData, split: str, window: int, *, step: int,
                      target_column: str, baseline: BaselineName = "zeros", n_steps: int = 64, seed: int = 0,
                      internal_batch_size: int = 32, attention: str | None = None) -> Attribution:
    """Integrated Gradients of window `window`'s forecast at horizon `step` (1 = the first forecast step)
    of `target_column`, over its [seq_len, enc_in] encoder window.

    window: 0-based, as in WindowDataset(prepared, split). n_steps: Gauss–Legendre points on the path.
    internal_batch_size: path points per forward/backward call (bounds memory).
    attention: None (as trained) or "full" (attribute the full-attention counterfactual).
    Raises ValueError for a model in train mode or an argument out of range.
    """
    if model.training:
        raise ValueError("the model is in train mode; attribution needs eval mode (dropout off), "
                         "and this function will not switch a shared model itself")
    dataset = WindowDataset(prepared, split)
    if not 0 <= window < len(dataset):
        raise ValueError(f"window {window} is outside the {split} split's {len(dataset)} windows")
    pred_len = prepared.spec.pred_len
    if not 1 <= step <= pred_len:
        raise ValueError(f"step must be in 1 … pred_len = {pred_len}, got {step}")
    targets = list(prepared.target_columns)
    if target_column not in targets:
        raise ValueError(f"target column {target_column!r} is not a forecast column; "
                         f"choose one of {', '.join(targets)}")
    if baseline not in BASELINES:
        raise ValueError(f"baseline must be one of {', '.join(BASELINES)}, got {baseline!r}")
    if n_steps < 2 or internal_batch_size < 1:
        raise ValueError(f"n_steps must be ≥ 2 and internal_batch_size ≥ 1, "
                         f"got {n_steps} and {internal_batch_size}")

    device = next(model.parameters()).device
    x_enc, mark_enc, _, mark_dec, _ = dataset[window]
    x_np = x_enc.numpy().astype(np.float32)  # [seq_len, enc_in]
    b_np = baseline_input(x_np, baseline).astype(np.float32)
    x = torch.from_numpy(x_np).to(device)[None]  # [1, seq_len, enc_in]
    b = torch.from_numpy(b_np).to(device)[None]
    f = forecast_function(model, mark_enc.to(device), mark_dec.to(device), step=step,
                          column_index=targets.index(target_column), seed=seed, attention=attention)

    from captum.attr import IntegratedGradients  # at use: importing captum.attr costs ~1 s of CPU

    ig = IntegratedGradients(f)
    attributions, delta = ig.attribute(x, baselines=b, n_steps=n_steps, method="gausslegendre",
                                       internal_batch_size=internal_batch_size, return_convergence_delta=True)
    array = attributions[0].detach().double().cpu().numpy()  # [seq_len, enc_in]
    with torch.no_grad():
        fx, fb = (float(f(t)[0]) for t in (x, b))
    gap = abs(float(array.sum()) - (fx - fb))
    changes = _path_selection_changes(f, x, b, n_steps, internal_batch_size)

    seq_len = prepared.spec.seq_len
    stamps = prepared.split(split).timestamps[window:window + seq_len]
    columns = list(prepared.columns)
    values = pd.DataFrame({
        "timestamp": np.repeat(np.asarray(stamps), len(columns)),
        "position": np.repeat(np.arange(seq_len), len(columns)),
        "feature": np.tile(columns, seq_len),
        "attribution": array.reshape(-1),
    })
    array.setflags(write=False)
    b_np.setflags(write=False)
    return Attribution(values=values, array=array, baseline=b_np, baseline_name=baseline,
                       convergence_delta=float(delta.reshape(-1)[0]), forecast=fx, baseline_forecast=fb,
                       completeness_gap=gap, path_selection_changes=changes, split=split, window=window,
                       step=step, target_column=target_column, n_steps=n_steps, seed=seed)


@torch.no_grad()
def _path_selection_changes(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, b: torch.Tensor,
                            n_steps: int, chunk: int) -> int:
    """Intervals of the grid α = 0, 1/n_steps, …, 1 on the path b + α(x − b) across which the set of
    selected queries changes at some site (recorded by a scoped recorder; full-attention sites never change)."""
    alphas = torch.linspace(0.0, 1.0, n_steps + 1, device=x.device, dtype=x.dtype).view(-1, 1, 1)
    path = b + alphas * (x - b)  # [n_steps + 1, seq_len, enc_in]
    selected: dict[str, list[torch.Tensor]] = {}
    for start in range(0, path.shape[0], chunk):
        with recording("*.rows", "*.selected") as rec:  # rows must be wanted for `selected` to be recorded
            f(path[start:start + chunk])
        for name, tensor in rec.records.items():
            if name.endswith(".selected"):
                selected.setdefault(name, []).append(tensor.sort(dim=-1).values)  # [n, H, u] as sets
    changed = torch.zeros(n_steps, dtype=torch.bool, device=x.device)
    for parts in selected.values():
        s = torch.cat(parts)  # [n_steps + 1, H, u]
        changed |= (s[1:] != s[:-1]).flatten(1).any(dim=1)
    return int(changed.sum())


__all__ = ["Attribution", "BASELINES", "BaselineName", "baseline_input", "forecast_function", "input_attribution"]
