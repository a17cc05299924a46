"""Training and evaluation: Adam, a learning-rate schedule (analysis.learning.schedules), early stopping on validation MSE,
a time budget, seeds everywhere.

The defaults learn: a warm-up, a held peak of 3e-3 and a cosine decay over the fewest whole epochs that give 800
optimiser steps (two to six: `TrainSettings.planned_epochs`), stopped early when validation stops improving; what is
validated and kept is a moving average of the weights (`TrainSettings.average`). The paper's recipe (1e-4 halved
after every epoch, the last step's weights) is `TrainSettings(schedule="paper", learning_rate=1e-4, epochs=6,
average=0)` (`--paper-recipe`); in a short run it learns little. `train` reports through a callback (the UI draws
it; the CLI prints a console bar) and can be asked to stop between steps, or stops itself when its time budget is
spent; either way the best weights by validation loss are kept.
"""
from __future__ import annotations

import copy
import functools
import logging
import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
from torch.optim import swa_utils

from informer_lab.model import HeadMask, Informer, InformerConfig, autocast_context, key_generator, pick_device

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.learning.embedding import embedding_fields
from informer_lab.analysis.learning.unit_root import UNIT_ROOTS, unit_root_channels
from informer_lab.analysis.learning.settings import TrainSettings
from informer_lab.analysis.learning.schedules import RangeTest, choose_rate, learning_rate_at, range_rates
from informer_lab.analysis.learning.windows import WindowDataset, split_batches

log = logging.getLogger(__name__)
clock = time.perf_counter  # what a time budget is measured with (tests set a clock of their own)


@dataclass(frozen=True)
class Metrics:
    """MSE / MAE on the standardised scale (as papers report) and in the data's original units: per column
    (`columns`, `mse_by_column`, `mae_by_column`), since columns whose scales differ by orders of magnitude make a
    mean over them meaningless; mse_original / mae_original are that mean, kept for older readers."""

    mse: float
    mae: float
    mse_original: float
    mae_original: float
    windows: int
    columns: tuple[str, ...] = ()
    mse_by_column: tuple[float, ...] = ()
    mae_by_column: tuple[float, ...] = ()

    def as_dict(self) -> dict:
        return {"mse": self.mse, "mae": self.mae, "mse_original": self.mse_original,
                "mae_original": self.mae_original, "windows": self.windows,
                "original_by_column": [{"column": c, "mse": m, "mae": a} for c, m, a in  # a list: the columns' order
                                       zip(self.columns, self.mse_by_column, self.mae_by_column)]}

    def original_text(self, digits: int = 4, shown: int = 6) -> str:
        """'in original units, per column: load mse 12.3 mae 2.9; price mse …' (the first `shown` columns)."""
        parts = [f"{c} mse {m:.{digits}g} mae {a:.{digits}g}"
                 for c, m, a in zip(self.columns, self.mse_by_column, self.mae_by_column)]
        more = f"; … {len(parts) - shown} more columns" if len(parts) > shown else ""
        return "in original units, per column: " + "; ".join(parts[:shown]) + more


@dataclass(frozen=True)
class TrainProgress:
    """One report: after a step (`val_loss` None), after an epoch (with `val_loss`), or while the validation or
    test pass runs (`stage` "validate" | "test", with `windows_done` of `windows_total`): on long inputs a pass
    over every window takes minutes, and says how far it has got."""

    epoch: int  # 1-based
    epochs: int
    step: int  # 1-based within the epoch
    steps: int
    train_loss: float
    val_loss: float | None = None
    best_val_loss: float | None = None
    seconds: float = 0.0  # since training began
    stage: str = "train"  # "train" | "validate" | "test"
    windows_done: int = 0
    windows_total: int = 0


@dataclass(frozen=True)
class EpochReport:
    epoch: int
    train_loss: float
    val_loss: float
    learning_rate: float
    seconds: float  # the whole epoch: the training steps and the validation pass
    train_seconds: float = 0.0  # the training steps only (what the official code prints as "cost time")


@dataclass
class TrainResult:
    model: Informer  # best weights by validation loss, in eval mode, on `device`
    history: list[EpochReport] = field(default_factory=list)
    test: Metrics | None = None
    device: str = "cpu"
    stopped: str = "completed"  # "completed" | "early_stopping" | "user" | "time_budget"
    seconds_per_epoch: float = 0.0  # mean over epochs, validation included
    train_seconds_per_epoch: float = 0.0  # mean over epochs, training steps only
    learning_rate: float = 0.0  # the peak used (the range test's when asked for)
    steps: int = 0  # optimiser steps taken
    planned_epochs: int = 0  # the epochs the schedule decayed over (settings.planned_epochs)
    seconds: float = 0.0  # training and validation, the range test included
    range_test: RangeTest | None = None

    def record(self, settings: "TrainSettings") -> dict:
        """What trained the model, for the checkpoint's metrics: the settings, the peak rate used, steps, time."""
        out = {k: getattr(settings, k) for k in ("schedule", "learning_rate", "warmup", "hold", "epochs", "patience",
                                                  "batch_size", "max_minutes", "max_steps_per_epoch", "find_lr", "seed",
                                                  "average")}
        out.update({"planned_epochs": self.planned_epochs, "peak_learning_rate": self.learning_rate,
                    "steps": self.steps, "seconds": round(self.seconds, 2), "description": settings.describe()})
        if settings.epochs is None:
            out["description"] += f"; {self.planned_epochs} planned"
        if self.range_test is not None:
            out["range_test"] = {"chosen": self.range_test.chosen, "steps": self.range_test.steps}
            out["description"] += f"; the range test chose the peak {self.range_test.chosen:.2g} instead"
        return out


def seed_everything(seed: int) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed % 2**32)


def config_for(prepared: PreparedData, **model_settings) -> InformerConfig:
    """An InformerConfig whose input/output sizes and lengths match the prepared data. embedding="auto" or "lags"
    (ModelSize's) becomes the config's embedding fields for the data's step (analysis.learning.embedding);
    with unit_roots="withhold" a lags model does not read the level of the input-only columns that have a unit root in
    the training split (analysis.learning.unit_root; "keep", the default, reads every level)."""
    s = prepared.spec
    unit_roots = model_settings.pop("unit_roots", "keep")
    if unit_roots not in UNIT_ROOTS:
        raise ValueError(f"unit_roots must be one of {', '.join(UNIT_ROOTS)}, got {unit_roots!r}")
    if model_settings.get("embedding") == "auto" or (model_settings.get("embedding") == "lags"
                                                     and not model_settings.get("lags")):
        fields = embedding_fields(model_settings["embedding"], prepared.freq, s.seq_len, s.pred_len,
                                  revin=bool(model_settings.get("revin")),
                                  replicas=len(model_settings.get("e_layers", (2,))))
        if "placeholders" in model_settings:  # given (HF's "zero" to compare with): the lab's "last" does not win
            fields.pop("placeholders", None)
        model_settings.update(fields)
        if model_settings["embedding"] == "lags" and unit_roots == "withhold" and "level_free" not in model_settings:
            # the level of each input-only column with a unit root in the training split is not read
            model_settings["level_free"] = unit_root_channels(prepared.train.values, prepared.enc_in - prepared.c_out)
    return InformerConfig(enc_in=prepared.enc_in, dec_in=prepared.dec_in, c_out=prepared.c_out, seq_len=s.seq_len,
                          label_len=s.label_len, pred_len=s.pred_len, n_marks=prepared.n_marks, **model_settings)


@torch.no_grad()
def predict(model: Informer, prepared: PreparedData, split: str, *, batch_size: int = 64, seed: int = 0,
            head_mask: HeadMask | None = None, attention: str | None = None,
            device: torch.device | None = None,
            progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Forecasts and truths for every window of a split, standardised: two arrays [N, pred_len, c_out].
    progress(done, total): called after every batch with the windows forecast so far."""
    device = device or next(model.parameters()).device
    generator = key_generator(seed)
    preds, trues = [], []
    model.eval()
    total, done = len(WindowDataset(prepared, split)), 0
    for batch, y in split_batches(prepared, split, batch_size):
        out = model(batch.to(device), head_mask=head_mask, generator=generator, attention=attention)  # float32
        preds.append(out.float().cpu().numpy())
        trues.append(y.numpy())
        done += len(y)
        if progress is not None:
            progress(done, total)
    return np.concatenate(preds), np.concatenate(trues)


def metrics_of(preds: np.ndarray, trues: np.ndarray, prepared: PreparedData) -> Metrics:
    """MSE/MAE over all windows, steps and output columns, standardised and in original units."""
    c_out = preds.shape[-1]
    original = [prepared.scaler.inverse_transform(a.reshape(-1, c_out), prepared.target_columns)
                for a in (preds, trues)]
    err, err_orig = preds - trues, original[0] - original[1]
    return Metrics(float(np.mean(err ** 2)), float(np.mean(np.abs(err))), float(np.mean(err_orig ** 2)),
                   float(np.mean(np.abs(err_orig))), int(preds.shape[0]), tuple(prepared.target_columns),
                   tuple(map(float, np.mean(err_orig ** 2, axis=0))), tuple(map(float, np.mean(np.abs(err_orig),
                                                                                             axis=0))))


def evaluate(model: Informer, prepared: PreparedData, split: str = "test", *, batch_size: int = 64, seed: int = 0,
             head_mask: HeadMask | None = None, attention: str | None = None) -> Metrics:
    return metrics_of(*predict(model, prepared, split, batch_size=batch_size, seed=seed, head_mask=head_mask,
                               attention=attention), prepared)


def make_adam(model: torch.nn.Module, learning_rate: float, device: torch.device) -> torch.optim.Optimizer:
    """Adam; the fused kernel where torch has one for the device (one pass over all parameters instead of a
    dozen small ops per tensor: ~4% of a CPU training step here). Same update rule either way."""
    fused = device.type in ("cpu", "cuda")
    return torch.optim.Adam(model.parameters(), lr=learning_rate, fused=fused or None)


@torch.no_grad()
def moving_average(decay: float, averaged: list[torch.Tensor], current: list[torch.Tensor], updates) -> None:
    """One step of the weights' moving average over one device's tensors of one dtype (AveragedModel's
    multi_avg_fn): w̄ ← δ·w̄ + (1 − δ)·w with δ = min(decay, (1 + n)/(10 + n)) after n updates, so that a short run
    averages over its own few steps rather than its first weights (the warm-up of TensorFlow's
    ExponentialMovingAverage); from about 500 steps on δ is `decay` (0.98: the last ~50 steps)."""
    n = float(updates)
    delta = min(decay, (1.0 + n) / (10.0 + n))
    if torch.is_floating_point(averaged[0]):
        torch._foreach_lerp_(averaged, current, 1.0 - delta)
    else:  # integer buffers (BatchNorm's batch count): lerp takes floats only
        for mean, value in zip(averaged, current):
            mean.copy_(mean * delta + value * (1.0 - delta))


def _validation_loss(model, prepared, settings, device, progress=None) -> float:
    preds, trues = predict(model, prepared, "val", batch_size=max(settings.batch_size, 64), seed=settings.eval_seed,
                           device=device, progress=progress)
    return float(np.mean((preds - trues) ** 2))


def training_step(model: Informer, optimiser: torch.optim.Optimizer, batch, y: torch.Tensor,
                  device: torch.device, key_gen: torch.Generator) -> float:
    """One optimiser step on (batch, y): forward (mixed precision where it pays), MSE (plus adaptive spans' ℓ1 term
    when the model learns spans), backward. → the MSE."""
    with autocast_context(device):
        out = model(batch.to(device), generator=key_gen)
    loss = torch.nn.functional.mse_loss(out.float(), y.to(device))
    penalty = model.span_penalty()
    optimiser.zero_grad(set_to_none=True)
    (loss if penalty is None else loss + penalty).backward()
    optimiser.step()
    return loss.item()


def range_test(prepared: PreparedData, config: InformerConfig, settings: TrainSettings, *,
               steps: int = 60) -> RangeTest:
    """The learning-rate range test (analysis.learning.schedules) on a fresh model of `config` seeded as `train` seeds its
    own: `steps` steps at rates growing from 1e-5 to 1e-1. The model it trains is thrown away."""
    device = pick_device(settings.device)
    seed_everything(settings.seed)
    model = Informer(config).to(device).train()
    optimiser = make_adam(model, 1e-5, device)
    shuffle_gen = torch.Generator().manual_seed(settings.seed + 2)
    key_gen = key_generator(settings.seed + 3)
    rates, losses = range_rates(steps), []
    batches = iter(())
    for rate in rates:
        try:
            batch, y = next(batches)
        except StopIteration:
            batches = iter(split_batches(prepared, "train", settings.batch_size, shuffle=True, generator=shuffle_gen))
            batch, y = next(batches)
        for group in optimiser.param_groups:
            group["lr"] = rate
        losses.append(training_step(model, optimiser, batch, y, device, key_gen))
        if not math.isfinite(losses[-1]):
            break
    return RangeTest(tuple(rates[:len(losses)]), tuple(losses), choose_rate(rates, losses), len(losses))


def train(prepared: PreparedData, config: InformerConfig, settings: TrainSettings = TrainSettings(), *,
          progress: Callable[[TrainProgress], None] | None = None,
          should_stop: Callable[[], bool] | None = None) -> TrainResult:
    """Fit an Informer on the train split; keep the weights with the best validation MSE; score the test split.

    The learning rate follows `settings.schedule` step by step (analysis.learning.schedules); with `max_minutes` the run
    stops before a step that would leave too little time for the validation pass that ends it."""
    started = clock()
    device = pick_device(settings.device)
    tested = range_test(prepared, config, settings) if settings.find_lr else None
    peak = tested.chosen if tested is not None else settings.learning_rate
    seed_everything(settings.seed)
    model = Informer(config).to(device)
    optimiser = make_adam(model, peak, device)
    shuffle_gen = torch.Generator().manual_seed(settings.seed)
    key_gen = key_generator(settings.seed + 1)
    loader = split_batches(prepared, "train", settings.batch_size, shuffle=True, generator=shuffle_gen)
    steps = len(loader) if settings.max_steps_per_epoch is None else min(len(loader), settings.max_steps_per_epoch)
    epochs = settings.planned_epochs(steps)
    planned = max(1, epochs * steps)
    budget = None if settings.max_minutes is None else 60.0 * settings.max_minutes

    averaged = None if not settings.average else swa_utils.AveragedModel(
        model, multi_avg_fn=functools.partial(moving_average, settings.average), use_buffers=True)
    result = TrainResult(model=model, device=str(device), learning_rate=peak, range_test=tested, planned_epochs=epochs)
    best_val, best_state, waited = math.inf, None, 0
    validation_seconds = 0.0  # the last validation pass: the budget keeps room for one more
    lr = peak
    for epoch in range(1, epochs + 1):
        model.train()
        losses = []
        epoch_start = clock()
        for step, (batch, y) in enumerate(loader, start=1):
            if step > steps:
                break
            if should_stop is not None and should_stop():
                result.stopped = "user"
                break
            elapsed = clock() - started
            if budget is not None and losses and elapsed + validation_seconds >= budget:
                result.stopped = "time_budget"
                break
            fraction = max(result.steps / planned, 0.0 if budget is None else elapsed / budget)
            lr = learning_rate_at(settings.schedule, peak, progress=fraction, epoch=epoch, warmup=settings.warmup,
                                  hold=settings.hold)
            for group in optimiser.param_groups:
                group["lr"] = lr
            losses.append(training_step(model, optimiser, batch, y, device, key_gen))
            result.steps += 1
            if averaged is not None:
                averaged.update_parameters(model)
            if progress is not None:
                progress(TrainProgress(epoch, epochs, step, steps, float(np.mean(losses)),
                                       best_val_loss=None if best_val == math.inf else best_val,
                                       seconds=clock() - started))
        if not losses:  # stopped before the first step of this epoch
            break
        train_seconds = clock() - epoch_start
        mean_loss = float(np.mean(losses))

        def passing(stage: str, epoch: int = epoch, loss: float = mean_loss):
            if progress is None:
                return None
            return lambda done, total: progress(TrainProgress(
                epoch, epochs, steps, steps, loss, seconds=clock() - started, stage=stage,
                windows_done=done, windows_total=total,
                best_val_loss=None if best_val == math.inf else best_val))

        validation_start = clock()
        scored = model if averaged is None else averaged.module
        val = _validation_loss(scored, prepared, settings, device, passing("validate"))
        validation_seconds = clock() - validation_start
        result.history.append(EpochReport(epoch, float(np.mean(losses)), val, lr,
                                          clock() - epoch_start, train_seconds))
        if val < best_val:
            best_val, best_state, waited = val, copy.deepcopy(scored.state_dict()), 0
        else:
            waited += 1
        log.info("epoch %d: train %.4f val %.4f lr %.2g (%.1fs)", epoch, np.mean(losses), val, lr,
                 result.history[-1].seconds)
        if progress is not None:
            progress(TrainProgress(epoch, epochs, steps, steps, float(np.mean(losses)), val_loss=val,
                                   best_val_loss=best_val, seconds=clock() - started))
        if result.stopped in ("user", "time_budget"):
            break
        if waited >= settings.patience:
            result.stopped = "early_stopping"
            break

    result.seconds = clock() - started
    optimiser.zero_grad(set_to_none=True)  # a returned (and maybe shared) model carries no gradient buffers
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    if result.history:
        result.seconds_per_epoch = float(np.mean([h.seconds for h in result.history]))
        result.train_seconds_per_epoch = float(np.mean([h.train_seconds for h in result.history]))
    test_progress = None
    if progress is not None and result.history:
        last = result.history[-1]

        def test_progress(done: int, total: int) -> None:
            progress(TrainProgress(last.epoch, epochs, steps, steps, last.train_loss,
                                   val_loss=None, best_val_loss=best_val, seconds=clock() - started,
                                   stage="test", windows_done=done, windows_total=total))
    result.test = metrics_of(*predict(model, prepared, "test", batch_size=max(settings.batch_size, 64),
                                      seed=settings.eval_seed, progress=test_progress), prepared)
    return result
