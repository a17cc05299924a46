"""The forecast lens (DESIGN §7): the forecast each decoder layer and each encoder depth would give.

The forecast head is y = rescale(proj(LN_dec(h))[-pred_len:]). Three lenses read it from inside the model:

- decoder: LN_dec and proj applied to decoder layer l's output ("decoder.layer{l}.out", [B, L_dec, d_model]); the
  last layer's reading is the forecast.
- encoder (early exit): the unchanged decoder reads, as its memory, the encoder CUT AT DEPTH l: every replica r keeps
  its first min(l + 1, n_r) attention layers (with the distilling steps between them) and then its own final norm
  (Encoder.finish); the replicas' outputs are joined along time as EncoderStack does. The deepest depth
  (l = max_r n_r − 1) is the model's own memory, and its reading is the forecast.
- encoder_tuned (Belrose et al. 2023, tuned lens, closed form): the depth-l memory is first mapped by an affine map
  d_model → d_model fitted by least squares on train windows towards the final memory (`fit_tuned_lens`).

Key samples. One generator, key_generator(seed), per batch of windows. The encoder runs once in the model's order;
the memory at every depth is read off that pass (replica r's layer-i output before its distilling step, then its
norm), so every layer a cut keeps computes with the key sample it has in the model's own pass. Each decoder run
starts from the generator state the model's decoder starts from, so all lenses share the decoder's key sample and
differ by the memory alone. Draws depend on lengths only, not on the batch: a window's numbers do not depend on the
windows batched with it.

Figures: MSE against the truth and against the model's own forecast (mse_to_final), in the standardised units of the
lab's MSE, as means over evenly spread windows with `analysis.intervals.window_means` (span `analysis.row_memory.data_span`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Batch, Informer, key_generator

from informer_lab.analysis.attention.positions import distilled_spans, replica_length
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.intervals import window_means
from informer_lab.analysis.row_memory import data_span
from informer_lab.analysis.learning.windows import WindowDataset, collate

LENSES = ("decoder", "encoder", "encoder_tuned")
# Ridge of the tuned lens, relative to the mean variance of the depth-l memory. The memory is a LayerNorm's output:
# every row satisfies Σ_k (x_k − β_k)/γ_k = 0, so along that direction the rows differ by float32 rounding alone (on
# the tiny test model: a singular value 1e-6 against 2–50 for the others). Plain least squares spends a huge
# coefficient fitting that rounding noise; the ridge leaves the direction out and every other one as it is.
RIDGE = 1e-6
BATCH = 64


def check_eval(model: Informer) -> None:
    """ValueError unless the model is in eval mode (dropout off, batch-norm statistics frozen)."""
    if model.training:
        raise ValueError("the model is in training mode (dropout on, batch-norm statistics updating); "
                         "analyse a model in eval mode (checkpoints load that way)")


def spread_windows(prepared: PreparedData, split: str, windows: int) -> tuple[np.ndarray, int, int]:
    """(indices, stride, total): at most `windows` windows of `split`, one in `stride` = ⌈total / windows⌉ from the
    first, so the spacing is constant (the intervals' dependence span is `data_span(prepared, split, stride)`)."""
    if int(windows) < 1:
        raise ConfigError(f"choose at least one window, got {windows}")
    total = len(WindowDataset(prepared, split))
    if total < 1:
        raise ConfigError(f"the {split} split has no complete window")
    stride = max(1, math.ceil(total / int(windows)))
    return np.arange(0, total, stride, dtype=np.int64), stride, total


def window_batches(prepared: PreparedData, split: str, indices, batch_size: int = BATCH):
    """(Batch, y [B, pred_len, c_out]) of the given windows, `batch_size` at a time, in order."""
    dataset = WindowDataset(prepared, split)
    indices = [int(w) for w in indices]
    for i in range(0, len(indices), batch_size):
        yield collate([dataset[w] for w in indices[i:i + batch_size]])


# --------------------------------------------------------------------------------------------
# One batch through the lenses
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class TunedLens:
    """Affine maps of the tuned encoder lens, one per depth l below the last: memory_l @ weight[l] + bias[l].

    weight: [n_depths − 1, d_model, d_model]; bias: [n_depths − 1, d_model] (float64). fit: one row per depth on the
    fit windows: depth, pairs (aligned positions), untuned_mse (identity map) and tuned_mse, each the mean squared
    distance to the aligned final memory. windows: the train windows fitted on; ridge: relative ridge used."""

    weight: np.ndarray
    bias: np.ndarray
    fit: pd.DataFrame
    windows: int
    ridge: float

    def apply(self, depth: int, memory: torch.Tensor) -> torch.Tensor:
        """The mapped depth-`depth` memory, [B, L_l, d_model] → [B, L_l, d_model] (memory's dtype and device)."""
        w = torch.as_tensor(self.weight[depth], dtype=memory.dtype, device=memory.device)
        b = torch.as_tensor(self.bias[depth], dtype=memory.dtype, device=memory.device)
        return memory @ w + b


@dataclass(frozen=True, eq=False)
class LensPass:
    """One batch of B windows through the lenses; P = pred_len, C = c_out, model units (the standardised data,
    after the model's per-window rescale).

    forecast: [B, P, C] the model's own forecast; decoder: [n_dec_layers, B, P, C]; encoder: [n_depths, B, P, C];
    encoder_tuned: [n_depths − 1, B, P, C] (None without maps); memories: the memory at each depth, [B, L_l, d_model]
    (kept when asked)."""

    forecast: torch.Tensor
    decoder: torch.Tensor
    encoder: torch.Tensor
    encoder_tuned: torch.Tensor | None
    memories: tuple[torch.Tensor, ...] | None


def n_depths(model: Informer) -> int:
    """Depths of the encoder early exit: the deepest replica's layer count."""
    return max(len(replica.layers) for replica in model.encoder.replicas)


@torch.no_grad()
def lens_pass(model: Informer, batch: Batch, seed: int, *, maps: TunedLens | None = None,
              keep_memories: bool = False) -> LensPass:
    """Every lens on one batch, calling the model's own submodules in the model's order (module docstring)."""
    check_eval(model)
    if maps is not None and maps.weight.shape != (n_depths(model) - 1, model.config.d_model, model.config.d_model):
        raise ValueError(f"the tuned lens has maps of shape {list(maps.weight.shape)}, not this model's")
    device = next(model.parameters()).device
    batch = batch.to(device)
    model.check_batch(batch)
    generator = key_generator(int(seed))

    def layer_args(module) -> dict:
        return {"gate": None, "mean": None, "generator": generator, "kind": None}

    inputs, statistics = model.normalise(batch)
    embedded = model.hook_enc_embedding(model.enc_embedding(inputs.x_enc, inputs.mark_enc))  # [B, L, d_model]
    outputs = []  # per replica: each attention layer's output before its distilling step
    for r, replica in enumerate(model.encoder.replicas):
        x, kept = model.encoder.replica_input(embedded, r), []
        for i, layer in enumerate(replica.layers):
            x = layer(x, **layer_args(layer.attention))
            kept.append(x)
            if i < len(replica.distils):
                x = replica.distils[i](x)
        outputs.append(kept)
    memories = tuple(torch.cat([replica.finish(kept[min(l, len(kept) - 1)])
                                for replica, kept in zip(model.encoder.replicas, outputs)], dim=1)
                     for l in range(n_depths(model)))  # depth l: [B, L_l, d_model]
    decoder_state = generator.get_state()
    decoder_input = model.hook_dec_embedding(model.embed_decoder(inputs))  # [B, L_dec, d_model]
    P = model.config.pred_len

    def decode(memory: torch.Tensor) -> list[torch.Tensor]:
        generator.set_state(decoder_state)
        x, out = decoder_input, []
        for layer in model.decoder.layers:
            x = layer(x, memory, layer_args)
            out.append(x)
        return out

    def read(x: torch.Tensor) -> torch.Tensor:  # [B, L_dec, d_model] → [B, P, C]
        return model.rescale(model.projection(model.decoder.norm(x[:, -P:])), batch, statistics)

    decoder = torch.stack([read(x) for x in decode(memories[-1])])
    forecast = decoder[-1]
    encoder = torch.stack([read(decode(m)[-1]) for m in memories[:-1]] + [forecast])
    tuned = None
    if maps is not None and len(memories) > 1:
        tuned = torch.stack([read(decode(maps.apply(l, m))[-1]) for l, m in enumerate(memories[:-1])])
    return LensPass(forecast, decoder, encoder, tuned, memories if keep_memories else None)


# --------------------------------------------------------------------------------------------
# The tuned lens
# --------------------------------------------------------------------------------------------
def alignment(model: Informer, depth: int) -> np.ndarray:
    """[L_depth] for each position of the depth-`depth` memory, the position of the final memory it is paired with:
    position i of replica r (after min(depth, n_r − 1) distilling steps) goes to the final-depth position of the same
    replica whose input span contains the start of i's span (`distilled_spans`; spans of one level tile the replica's
    input, so it is the last final position starting at or before it)."""
    c = model.config
    pairs, offset = [], 0
    for r, replica in enumerate(model.encoder.replicas):
        L_r, n_r = replica_length(c, r), len(replica.layers)
        level = lambda l: min(l, n_r - 1) if c.distil else 0  # noqa: E731
        starts = distilled_spans(L_r, level(depth), c.distil_padding)[:, 0]
        final = distilled_spans(L_r, level(n_r - 1), c.distil_padding)[:, 0]
        pairs.append(offset + np.clip(np.searchsorted(final, starts, side="right") - 1, 0, len(final) - 1))
        offset += len(final)
    return np.concatenate(pairs)


class AffineFit:
    """Running sums for the least-squares affine map y ≈ x @ W + b over rows added in parts (float64)."""

    def __init__(self, d_in: int, d_out: int):
        self.n = 0
        self.sx, self.sy = np.zeros(d_in), np.zeros(d_out)
        self.sxx, self.sxy, self.syy = np.zeros((d_in, d_in)), np.zeros((d_in, d_out)), np.zeros(d_out)

    def add(self, x: np.ndarray, y: np.ndarray) -> None:
        """x: [N, d_in], y: [N, d_out]."""
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        self.n += len(x)
        self.sx += x.sum(0)
        self.sy += y.sum(0)
        self.sxx += x.T @ x
        self.sxy += x.T @ y
        self.syy += (y * y).sum(0)

    def solve(self, ridge: float = RIDGE) -> tuple[np.ndarray, np.ndarray]:
        """(W [d_in, d_out], b [d_out]) minimising Σ‖x W + b − y‖² + λ‖W‖²_F, the bias unpenalised: on centred sums,
        W = (Xcᵀ Xc + λ I)⁻¹ Xcᵀ Yc and b = ȳ − x̄ W, with λ = ridge · trace(Xcᵀ Xc) / d_in."""
        mx, my = self.sx / self.n, self.sy / self.n
        cxx = self.sxx - self.n * np.outer(mx, mx)
        cxy = self.sxy - self.n * np.outer(mx, my)
        lam = ridge * np.trace(cxx) / len(mx)
        w = np.linalg.solve(cxx + lam * np.eye(len(mx)), cxy)
        return w, my - mx @ w


def fit_affine(x: np.ndarray, y: np.ndarray, ridge: float = RIDGE) -> tuple[np.ndarray, np.ndarray]:
    """The affine least-squares map of `AffineFit.solve` for x [N, d_in] → y [N, d_out]."""
    fit = AffineFit(x.shape[1], y.shape[1])
    fit.add(x, y)
    return fit.solve(ridge)


def fit_tuned_lens(model: Informer, prepared: PreparedData, *, windows: int = 256, seed: int = 0,
                   batch_size: int = BATCH, ridge: float = RIDGE) -> TunedLens:
    """One affine map per depth below the last, fitted on `windows` train windows spread evenly (rows: every aligned
    (depth-l position, final position) pair of every window). A model of one depth gets no map (empty arrays)."""
    check_eval(model)
    depths, d = n_depths(model), model.config.d_model
    indices, _, _ = spread_windows(prepared, "train", windows)
    aligned = [alignment(model, l) for l in range(depths - 1)]
    fits = [AffineFit(d, d) for _ in aligned]
    for batch, _ in window_batches(prepared, "train", indices, batch_size):
        memories = lens_pass(model, batch, seed, keep_memories=True).memories
        final = memories[-1].double().cpu().numpy()  # [B, L_final, d]
        for l, (fit, pairs) in enumerate(zip(fits, aligned)):
            x = memories[l].double().cpu().numpy()
            if x.shape[1] != len(pairs):
                raise ValueError(f"the depth-{l} memory has {x.shape[1]} positions; the spans give {len(pairs)}")
            fit.add(x.reshape(-1, d), final[:, pairs].reshape(-1, d))
    weight, bias, rows = np.zeros((len(fits), d, d)), np.zeros((len(fits), d)), []
    for l, fit in enumerate(fits):
        weight[l], bias[l] = fit.solve(ridge)
        rows.append({"depth": l, "pairs": fit.n, "untuned_mse": _fit_error(fit, np.eye(d), np.zeros(d)),
                     "tuned_mse": _fit_error(fit, weight[l], bias[l])})
    table = pd.DataFrame(rows, columns=["depth", "pairs", "untuned_mse", "tuned_mse"])
    return TunedLens(weight, bias, table, len(indices), ridge)


def _fit_error(fit: AffineFit, w: np.ndarray, b: np.ndarray) -> float:
    """Mean over pairs and dimensions of (x W + b − y)², from the running sums."""
    total = (np.einsum("jo,ko,jk->", w, w, fit.sxx) - 2 * np.einsum("ij,ij->", w, fit.sxy) + fit.syy.sum()
             + 2 * (fit.sx @ w) @ b - 2 * fit.sy @ b + fit.n * b @ b)
    return float(total / (fit.n * len(b)))


# --------------------------------------------------------------------------------------------
# Over the windows of a split
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class LensResult:
    """The lenses over `windows` of a split (S = the number of windows, P = pred_len).

    table: one row per (lens, layer, step 1 … P): mse, mse_low, mse_high (against the truth), mse_to_final,
           mse_to_final_low, mse_to_final_high (against the model's own forecast), windows, reason (why mse's
           interval, else mse_to_final's, is missing; '' where both are shown); standardised units, each a mean over
           windows of the mean over columns.
    overall: the same per (lens, layer), the horizon's mean (per window, the mean over steps and columns).
    forecasts: window `show`'s readings in data units: window, lens, layer, step, column, forecast, truth.
    tuned: the tuned lens's maps and fit (None when not fitted). layer is the decoder layer or the encoder depth l
    (its first l + 1 layers per replica), 0-based."""

    table: pd.DataFrame
    overall: pd.DataFrame
    forecasts: pd.DataFrame
    tuned: TunedLens | None
    split: str
    windows: np.ndarray
    total: int
    stride: int
    span: int
    seed: int
    show: int


def _figure_rows(lens: str, layer: int, error: np.ndarray, to_final: np.ndarray, span: int) -> tuple[list, dict]:
    """error, to_final: [S, P] per-window squared errors (mean over columns) → rows per step, and the horizon row."""
    P = error.shape[1]
    values = np.concatenate([error, to_final, error.mean(1, keepdims=True), to_final.mean(1, keepdims=True)], axis=1)
    m = window_means(values, span=span, floor=0.0)  # squared errors: an interval never reaches below 0
    reasons = m.reasons()

    def row(i: int, j: int) -> dict:
        return {"lens": lens, "layer": layer, "mse": m.estimate[i], "mse_low": m.lo[i], "mse_high": m.hi[i],
                "mse_to_final": m.estimate[j], "mse_to_final_low": m.lo[j], "mse_to_final_high": m.hi[j],
                "windows": m.windows, "reason": reasons[i] or reasons[j]}

    steps = [{**row(t, P + t), "step": t + 1} for t in range(P)]
    return steps, row(2 * P, 2 * P + 1)


@torch.no_grad()
def forecast_lens(model: Informer, prepared: PreparedData, split: str = "test", *, windows: int = 256, seed: int = 0,
                  tuned: bool = True, fit_windows: int = 256, show: int | None = None,
                  batch_size: int = BATCH) -> LensResult:
    """The decoder lens, the encoder early exit and (tuned=True, on `fit_windows` train windows) the tuned encoder
    lens over `windows` windows spread evenly over `split`. show: the window whose readings `forecasts` holds (a
    window index of the split; None: the middle one scored). Every batch's key sample is drawn from `seed`."""
    check_eval(model)
    if batch_size < 1:
        raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
    indices, stride, total = spread_windows(prepared, split, windows)
    show = int(indices[len(indices) // 2]) if show is None else int(show)
    if not 0 <= show < total:
        raise ConfigError(f"window {show} is outside the {split} split's {total} windows")
    maps = fit_tuned_lens(model, prepared, windows=fit_windows, seed=seed, batch_size=batch_size) \
        if tuned and n_depths(model) > 1 else None

    parts: dict[str, list[np.ndarray]] = {name: [] for name in ("forecast", "truth", *LENSES)}
    for batch, y in window_batches(prepared, split, indices, batch_size):
        p = lens_pass(model, batch, seed, maps=maps)
        parts["truth"].append(y.double().numpy())
        parts["forecast"].append(p.forecast.double().cpu().numpy())
        for lens in LENSES:
            value = getattr(p, lens)
            if value is not None:
                parts[lens].append(value.double().cpu().numpy())
    truth = np.concatenate(parts["truth"])  # [S, P, C]
    forecast = np.concatenate(parts["forecast"])
    readings = {lens: np.concatenate(parts[lens], axis=1) for lens in LENSES if parts[lens]}  # [n_l, S, P, C]

    span = data_span(prepared, split, stride)
    rows, overall = [], []
    for lens, values in readings.items():
        for layer, reading in enumerate(values):
            steps, whole = _figure_rows(lens, layer, ((reading - truth) ** 2).mean(-1),
                                        ((reading - forecast) ** 2).mean(-1), span)
            rows += steps
            overall.append(whole)
    columns = ["lens", "layer", "step", "mse", "mse_low", "mse_high", "mse_to_final", "mse_to_final_low",
               "mse_to_final_high", "windows", "reason"]
    table = pd.DataFrame(rows, columns=columns)
    overall = pd.DataFrame(overall, columns=[c for c in columns if c != "step"])
    return LensResult(table, overall, window_readings(model, prepared, split, show, seed, maps), maps, split,
                      indices, total, stride, span, int(seed), show)


def window_readings(model: Informer, prepared: PreparedData, split: str, window: int, seed: int,
                     maps: TunedLens | None) -> pd.DataFrame:
    """One window's reading by every lens and layer, in data units (long table)."""
    batch, y = next(window_batches(prepared, split, [window]))
    p = lens_pass(model, batch, seed, maps=maps)
    targets = list(prepared.target_columns)
    truth = prepared.scaler.inverse_transform(y[0].double().numpy(), targets)  # [P, C]
    P, C = truth.shape
    frames = []
    for lens in LENSES:
        values = getattr(p, lens)
        for layer, reading in enumerate([] if values is None else values):
            data = prepared.scaler.inverse_transform(reading[0].double().cpu().numpy(), targets)
            frames.append(pd.DataFrame({"window": window, "lens": lens, "layer": layer,
                                        "step": np.repeat(np.arange(1, P + 1), C), "column": np.tile(targets, P),
                                        "forecast": data.reshape(-1), "truth": truth.reshape(-1)}))
    return pd.concat(frames, ignore_index=True)


__all__ = ["AffineFit", "LENSES", "LensPass", "LensResult", "RIDGE", "TunedLens", "alignment", "check_eval",
           "fit_affine", "fit_tuned_lens", "forecast_lens", "lens_pass", "window_readings", "n_depths", "spread_windows",
           "window_batches"]
