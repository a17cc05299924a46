"""What a user sets for a model and its training, as plain values: importable without torch, so that the commands that
only read a study's plan (`study --status`, `--stop`) answer without loading the model stack."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from informer_lab.analysis.learning.schedules import SCHEDULES


@dataclass(frozen=True)
class ModelSize:
    """The knobs a user sets for a model; everything else follows from the data or the defaults."""

    d_model: int = 64
    n_heads: int = 4
    e_layers: tuple[int, ...] = (2,)
    d_layers: int = 1
    d_ff: int = 128
    # 8, not the paper's 5: more active queries (u = 8·⌈ln L⌉: 40 of 96) brought planted structure closer to the
    # Bayes MSE in 16 of 23 runs, mean ratio 0.97 (five planted families × up to 5 seeds; docs/measurements.md,
    # benchmarks/defaults.py); still sparse on long windows (64 of 1,440)
    factor: int = 8
    dropout: float = 0.05
    encoder_attention: str = "prob"
    decoder_attention: str = "prob"
    cross_attention: str = "full"
    attention_options: dict = field(default_factory=dict)  # by site type: the kinds' parameters (model/attention)
    revin: bool = False  # reversible instance normalisation (model/revin.py): for series whose level trends
    # "auto", not the paper's "conv": lags (each step with its value one season back) where the data has a season,
    # the lag's rows put before the window where it would take more than half of it; else conv with RevIN. Closer to
    # the Bayes MSE than conv on six planted families (analysis/learning/embedding.py, docs/measurements.md)
    embedding: str = "auto"
    # "withhold": the lags embedding does not read the level of an input-only column with a unit root in the training
    # split (analysis/learning/unit_root.py). With the lags models' last-value placeholders it changes little (a
    # planted random-walk input 1.02 → 1.01x the Bayes MSE; ETTh2's OT 1.00–1.11x, ETTh1's 0.95–1.00x the test MSE
    # of "keep"; docs/measurements.md), so "keep" (every level read) stays the default.
    unit_roots: str = "keep"

    def as_dict(self) -> dict:
        return dict(self.__dict__)

    def __hash__(self) -> int:  # attention_options is a dict
        return hash(tuple(sorted((k, repr(v)) for k, v in self.__dict__.items())))


# An unset `epochs` plans the fewest whole epochs that give AUTO_STEPS optimiser steps, within AUTO_EPOCHS: two
# epochs of 10,000 hourly rows (about 430 steps each at batch 16), six of a short series. On six planted families two
# epochs were as close to the Bayes MSE as six with early stopping (12 of 18 pairs lower, mean ratio 0.996) in half
# the time; on weekly CO2 (2,284 rows, 90 steps an epoch) two epochs with RevIN gave 2.3x the test MSE of six
# (docs/measurements.md, benchmarks/defaults.py, benchmarks/revin.py)
AUTO_STEPS = 800
AUTO_EPOCHS = (2, 6)


@dataclass(frozen=True)
class TrainSettings:
    epochs: int | None = None  # at most; None: auto (AUTO_STEPS above; the paper's count is 6). Early stopping and a
    # time budget may end a run before
    # 16, not the paper's 32: twice the optimiser steps in the same epochs learned planted structure closer to the
    # Bayes MSE in 12 of 15 runs (five planted families × 3 seeds; docs/measurements.md, benchmarks/defaults.py)
    batch_size: int = 16
    learning_rate: float = 3e-3  # the schedule's peak (paper: 1e-4, halved after every epoch)
    patience: int = 3  # epochs without a better validation loss before stopping
    seed: int = 0  # weights init, shuffling, dropout and ProbSparse key samples
    device: str | None = None  # None: CUDA, else MPS, else CPU
    max_steps_per_epoch: int | None = None  # cap for quick runs (UI demo, tests); None = whole split
    eval_seed: int = 0  # key-sample seed for validation/test, so every evaluation is repeatable
    schedule: str = "cosine"  # "cosine" (warm-up, hold, decay), "paper" (halved per epoch), "constant"
    warmup: float = 0.05  # cosine: fraction of the run warming up
    hold: float = 0.3  # cosine: the peak is held until this fraction of the run
    max_minutes: float | None = None  # time budget for training and validation (the test pass follows)
    find_lr: bool = False  # a learning-rate range test first; its rate replaces learning_rate as the peak
    # > 0: validate and keep an exponential moving average of the weights, this decay a step (0: the last step's
    # weights, as the paper). 0.98 averages about the last 50 steps: closer to the Bayes MSE than the last step's
    # weights in 17 of 18 runs, mean ratio 0.980 (six planted families × 3 seeds; docs/measurements.md)
    average: float = 0.98

    def __post_init__(self):
        if ((self.epochs is not None and self.epochs < 1) or self.batch_size < 1 or self.learning_rate <= 0
                or self.patience < 1):
            raise ValueError("epochs, batch_size and patience must be ≥ 1 and learning_rate > 0")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {self.schedule!r}")
        if not 0 <= self.warmup <= self.hold <= 1:
            raise ValueError(f"need 0 ≤ warmup ≤ hold ≤ 1, got warmup {self.warmup} and hold {self.hold}")
        if not 0 <= self.average < 1:
            raise ValueError(f"average must be a decay per step in [0, 1), got {self.average}")
        if self.max_minutes is not None and not (self.max_minutes > 0 and math.isfinite(self.max_minutes)):
            raise ValueError(f"max_minutes must be a number of minutes > 0, got {self.max_minutes}")

    def planned_epochs(self, steps_per_epoch: int) -> int:
        """The epochs the run plans (its schedule decays over them): `epochs` where set, else auto (AUTO_STEPS)."""
        if self.epochs is not None:
            return self.epochs
        low, high = AUTO_EPOCHS
        return min(high, max(low, math.ceil(AUTO_STEPS / max(1, steps_per_epoch))))

    def describe(self) -> str:
        """The optimisation settings in a few words (what a checkpoint records trained it)."""
        rule = {"cosine": f"warm-up {self.warmup:.0%}, hold to {self.hold:.0%}, cosine decay",
                "paper": "halved after every epoch (the paper's)", "constant": "constant"}[self.schedule]
        budget = f", at most {self.max_minutes:g} min" if self.max_minutes else ""
        epochs = (f"≤ {self.epochs} epochs" if self.epochs is not None
                  else f"{AUTO_EPOCHS[0]}-{AUTO_EPOCHS[1]} epochs (as many as give {AUTO_STEPS} steps)")
        average = f", weights averaged (EMA {self.average:g} a step)" if self.average else ""
        return f"Adam, lr {self.learning_rate:g} {rule}, {epochs}, patience {self.patience}{average}{budget}"
