"""Per-row statistics of attention: entropy, and where the mass goes as lags between query and key."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch


def as_float64(x) -> np.ndarray:
    return x.detach().double().cpu().numpy() if torch.is_tensor(x) else np.asarray(x, dtype="float64")


def row_entropy(rows) -> np.ndarray:
    """−Σ_j p_j ln p_j (nats) of each row, with 0·ln 0 = 0. [..., L_K] → [...]."""
    p = as_float64(rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return -terms.sum(-1)


@dataclass(frozen=True, eq=False)
class LagProfile:
    """Mean attention mass per lag i − j over a set of rows.

    mass: Series indexed by lag (ascending), the mass a row puts on keys at that lag, averaged over the
          rows (a row that cannot reach a lag contributes 0 to it). Sums to 1 for softmax rows.
    lag:  the lag with the largest mean mass (the smallest |lag| wins a tie, then the positive one).
    """

    mass: pd.Series
    lag: int
    lag_mass: float
    distance: float  # mean over rows of Σ_j p_ij |i − j|


def lag_profile(rows, query_positions, key_positions) -> LagProfile:
    """Where attention goes, as lags. rows: [N, L_K]; query_positions: [N]; key_positions: [L_K] (integers).

    Lag = query position − key position (positive: the key lies in the past).
    """
    p = as_float64(rows)
    q = np.asarray(query_positions, dtype=np.int64)
    k = np.asarray(key_positions, dtype=np.int64)
    if p.ndim != 2 or p.shape != (len(q), len(k)) or len(q) == 0:
        raise ValueError(f"rows must be [N, L_K] = [{len(q)}, {len(k)}] and non-empty, got {list(p.shape)}")
    lags = q[:, None] - k[None, :]  # [N, L_K]
    low = int(lags.min())
    totals = np.bincount((lags - low).ravel(), weights=p.ravel())
    mass = pd.Series(totals / len(q), index=pd.RangeIndex(low, low + len(totals), name="lag"), name="mass")
    candidates = mass.index.to_numpy()
    best = mass.to_numpy().max()
    tied = candidates[np.isclose(mass.to_numpy(), best, rtol=0, atol=1e-12)]
    lag = int(sorted(tied, key=lambda x: (abs(x), -x))[0])
    distance = float((p * np.abs(lags)).sum(-1).mean())
    return LagProfile(mass=mass, lag=lag, lag_mass=float(mass[lag]), distance=distance)


__all__ = ["LagProfile", "lag_profile", "row_entropy"]
