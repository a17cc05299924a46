"""How the learning rate moves during training, and a short range test that picks one.

Schedules (TrainSettings.schedule):

    cosine    the lab's default: a linear warm-up from 10 % of the peak over the first `warmup` of the run, the peak
              held until `hold`, then a cosine decay to 1 % of the peak at the end of the run
    paper     Informer2020's "type1": the rate halved after every epoch (lr·0.5^(epoch−1)); with the paper's 1e-4 it
              learns little in a short run (1.07 standardised MSE on a series whose Bayes MSE is 0.19)
    constant  the rate as given

"The run" is measured by progress p in [0, 1]: the larger of the steps done over the steps planned (epochs × steps
per epoch) and the seconds spent over the time budget, so that a run cut short by its budget still decays.

The range test (Smith 2017, "Cyclical learning rates"): from a fresh copy of the model, a few dozen steps with the
rate growing geometrically from 1e-5 to 1e-1; the loss, smoothed, falls and then blows up. The rate chosen is a
tenth of the one at the smoothed loss's minimum (the usual rule: well below where training diverges), clipped to
[1e-4, 3e-3].
"""
from __future__ import annotations

import math
from dataclasses import dataclass

SCHEDULES = ("cosine", "paper", "constant")
FLOOR = 0.01  # the cosine schedule ends at this fraction of the peak
START = 0.1  # and starts its warm-up at this fraction


def learning_rate_at(schedule: str, peak: float, *, progress: float, epoch: int, warmup: float = 0.05,
                     hold: float = 0.3) -> float:
    """The rate for the next step. progress in [0, 1]; epoch 1-based (the paper's schedule reads it only)."""
    if schedule == "paper":
        return peak * 0.5 ** (epoch - 1)
    if schedule == "constant":
        return peak
    if schedule != "cosine":
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    p = min(1.0, max(0.0, progress))
    if p < warmup:
        return peak * (START + (1 - START) * p / warmup)
    if p < hold:
        return peak
    t = (p - hold) / max(1e-12, 1 - hold)
    return peak * (FLOOR + (1 - FLOOR) * 0.5 * (1 + math.cos(math.pi * t)))


@dataclass(frozen=True)
class RangeTest:
    """The rates tried, their smoothed losses, and the rate chosen."""

    rates: tuple[float, ...]
    losses: tuple[float, ...]
    chosen: float
    steps: int


def choose_rate(rates: list[float], losses: list[float], *, low: float = 1e-4, high: float = 3e-3) -> float:
    """A tenth of the rate at the smoothed loss's minimum (exponential smoothing, β = 0.9, bias corrected), within
    [low, high]. Losses after a blow-up (non-finite, or over 4× the smallest) are left out."""
    smoothed, avg, best = [], 0.0, math.inf
    for k, loss in enumerate(losses, start=1):
        if not math.isfinite(loss) or loss > 4 * best:
            break
        avg = 0.9 * avg + 0.1 * loss
        value = avg / (1 - 0.9 ** k)
        smoothed.append(value)
        best = min(best, value)
    if len(smoothed) < 3:
        return low
    at = min(range(len(smoothed)), key=smoothed.__getitem__)
    return float(min(high, max(low, rates[at] / 10)))


def range_rates(steps: int, start: float = 1e-5, stop: float = 1e-1) -> list[float]:
    return [start * (stop / start) ** (k / max(1, steps - 1)) for k in range(steps)]


__all__ = ["RangeTest", "SCHEDULES", "choose_rate", "learning_rate_at", "range_rates"]
