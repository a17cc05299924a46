"""Per-column standardisation fitted on the training rows, for numpy arrays and torch tensors alike (torch-free)."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from informer_lab.analysis.errors import ConfigError, DataError


@dataclass(frozen=True, eq=False)
class Scaler:
    """Per-column standardisation fitted on the training rows: (x - mean) / std.

    mean, std: [C] float64; columns: the C column names, in the order of the arrays' last axis.
    """

    mean: np.ndarray
    std: np.ndarray
    columns: tuple[str, ...]

    def _stats(self, columns: Sequence[str] | None) -> tuple[np.ndarray, np.ndarray]:
        if columns is None:
            return self.mean, self.std
        unknown = [c for c in columns if c not in self.columns]
        if unknown:
            raise ConfigError(f"the scaler knows columns {', '.join(self.columns)}, not {', '.join(unknown)}")
        idx = [self.columns.index(c) for c in columns]
        return self.mean[idx], self.std[idx]

    def transform(self, values, columns: Sequence[str] | None = None):
        """[..., C'] raw → scaled. `columns` names the C' columns (default: all, in order). Arrays
        stay arrays (float64), tensors stay tensors (their dtype and device)."""
        mean, std = self._stats(columns)
        mean, std = _like(mean, values), _like(std, values)
        return (_as_values(values) - mean) / std

    def inverse_transform(self, values, columns: Sequence[str] | None = None):
        """[..., C'] scaled → raw; e.g. `columns=[target]` for a forecast of the target only."""
        mean, std = self._stats(columns)
        mean, std = _like(mean, values), _like(std, values)
        return _as_values(values) * std + mean

    def to_dict(self) -> dict:
        """JSON-ready form, for checkpoints."""
        return {"columns": list(self.columns), "mean": self.mean.tolist(), "std": self.std.tolist()}

    @classmethod
    def from_dict(cls, data: dict) -> "Scaler":
        mean = np.asarray(data["mean"], dtype="float64")
        std = np.asarray(data["std"], dtype="float64")
        columns = tuple(data["columns"])
        if not (mean.shape == std.shape == (len(columns),)):
            raise ConfigError(f"invalid scaler: {len(columns)} columns, mean {mean.shape}, std {std.shape}")
        bad = [c for c, m, s in zip(columns, mean, std) if not (np.isfinite(m) and np.isfinite(s) and s > 0)]
        if bad:
            raise ConfigError(f"invalid scaler: column {bad[0]!r} has mean {mean[columns.index(bad[0])]} and std "
                              f"{std[columns.index(bad[0])]} (a mean must be finite, a std finite and > 0)")
        return cls(mean, std, columns)


def _torch_tensor(values) -> bool:
    """Whether `values` is a torch tensor, without importing torch: if torch is not loaded, it cannot be one."""
    torch = sys.modules.get("torch")
    return torch is not None and torch.is_tensor(values)


def _as_values(values):
    return values if _torch_tensor(values) else np.asarray(values, dtype="float64")


def _like(stat: np.ndarray, values):
    if _torch_tensor(values):
        return sys.modules["torch"].as_tensor(stat, dtype=values.dtype, device=values.device)
    return stat


def fit_scaler(train_values, columns: Sequence[str]) -> Scaler:
    """Mean and (population) std of each column of [N, C] training rows; a constant column gets std 1.

    Values near the float64 limit (±1e308) overflow the plain sums: those columns are computed on values divided
    by their largest magnitude. A column whose statistics stay non-finite (a std beyond float64) is a DataError
    naming it.
    """
    values = np.asarray(train_values, dtype="float64")
    if values.ndim != 2 or values.shape[1] != len(columns) or values.shape[0] == 0:
        raise ValueError(f"expected [N > 0, {len(columns)}] training values, got {values.shape}")
    with np.errstate(over="ignore", invalid="ignore"):
        mean = values.mean(axis=0)
        std = values.std(axis=0)
        overflow = ~(np.isfinite(mean) & np.isfinite(std))
        if overflow.any():
            scale = np.abs(values[:, overflow]).max(axis=0)
            part = values[:, overflow] / scale
            mean[overflow], std[overflow] = part.mean(axis=0) * scale, part.std(axis=0) * scale
    bad = [c for c, m, s in zip(columns, mean, std) if not (np.isfinite(m) and np.isfinite(s))]
    if bad:
        raise DataError(f"column {bad[0]!r}: its values (up to {np.abs(values[:, list(columns).index(bad[0])]).max():.3g})"
                        " are too large to standardise (the standard deviation exceeds float64); rescale the column",
                        column=bad[0])
    constant = std <= 1e-12 * np.maximum(1.0, np.abs(mean))
    return Scaler(mean, np.where(constant, 1.0, std), tuple(columns))


__all__ = ["Scaler", "fit_scaler"]
