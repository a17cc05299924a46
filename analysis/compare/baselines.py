"""Simple forecasts every Informer result is set against: the last value, the seasonal naive forecast, and a
DLinear-style linear map of the window (Zeng et al. 2023) fitted in closed form. No randomness anywhere."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from numpy.lib.stride_tricks import sliding_window_view
from scipy import linalg, sparse

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.learning.windows import WindowDataset


# ---------------------------------------------------------------------------------------------
# Naive baselines: [N, seq_len, c_out] known target history → [N, pred_len, c_out]
# ---------------------------------------------------------------------------------------------

def last_value_forecast(history: np.ndarray, pred_len: int) -> np.ndarray:
    """[N, seq_len, C] → [N, pred_len, C]: the last known value, repeated."""
    return np.repeat(history[:, -1:, :], pred_len, axis=1)


def seasonal_naive_forecast(history: np.ndarray, pred_len: int, period: int) -> np.ndarray:
    """[N, seq_len, C] → [N, pred_len, C]: step h (1-based) takes the value at T + h − k·period, with
    k = ⌈h / period⌉ the fewest whole seasons that reach back into the window (T = its last position).
    Needs period ≤ seq_len."""
    seq_len = history.shape[1]
    if not 1 <= period <= seq_len:
        raise ValueError(f"seasonal period {period} must be in 1 … seq_len = {seq_len}")
    h = np.arange(1, pred_len + 1)
    k = -(-h // period)  # ⌈h / period⌉
    index = seq_len - 1 + h - k * period  # in [seq_len − period, seq_len − 1]
    return history[:, index, :]


# ---------------------------------------------------------------------------------------------
# The DLinear-style baseline
# ---------------------------------------------------------------------------------------------

def moving_average(x: np.ndarray, kernel: int) -> np.ndarray:
    """Trend of [..., L] series: a centred moving average of odd width `kernel`, the ends padded by
    repeating the first and last values (as DLinear's `moving_avg`). Same shape as x."""
    if kernel < 1 or kernel % 2 == 0:
        raise ValueError(f"moving-average kernel must be an odd number ≥ 1, got {kernel}")
    pad = (kernel - 1) // 2
    padded = np.concatenate([np.repeat(x[..., :1], pad, axis=-1), x, np.repeat(x[..., -1:], pad, axis=-1)], axis=-1)
    csum = np.concatenate([np.zeros(x.shape[:-1] + (1,)), np.cumsum(padded, axis=-1)], axis=-1)
    return (csum[..., kernel:] - csum[..., :-kernel]) / kernel  # [..., L]


def _decompose(x: np.ndarray, kernel: int) -> np.ndarray:
    """[N, L] windows → [N, 2L] features: (seasonal = x − trend, trend)."""
    trend = moving_average(x, kernel)
    return np.concatenate([x - trend, trend], axis=-1)


@dataclass(frozen=True, eq=False)
class LinearBaseline:
    """Per target column j: forecast = W_s[j] · seasonal + W_t[j] · trend + bias[j], each W [pred_len, seq_len].

    seasonal_weights, trend_weights: [c_out, pred_len, seq_len]; bias: [c_out, pred_len]; standardised scale.

    Note: trend and seasonal are both linear in the window, so the fitted map is a linear map of the
    window; the split changes the fit only through the ridge penalty (and, in DLinear, through SGD).
    """

    seasonal_weights: np.ndarray
    trend_weights: np.ndarray
    bias: np.ndarray
    kernel: int
    ridge: float
    train_windows: int

    def predict(self, history: np.ndarray) -> np.ndarray:
        """[N, seq_len, c_out] target history → [N, pred_len, c_out]."""
        c_out, pred_len, seq_len = self.seasonal_weights.shape
        if history.ndim != 3 or history.shape[1:] != (seq_len, c_out):
            raise ValueError(f"history has shape {list(history.shape)}, expected [N, {seq_len}, {c_out}]")
        out = np.empty((history.shape[0], pred_len, c_out))
        for j in range(c_out):
            weights = np.concatenate([self.seasonal_weights[j], self.trend_weights[j]], axis=1)  # [P, 2L]
            out[:, :, j] = _decompose(history[:, :, j].astype(np.float64), self.kernel) @ weights.T + self.bias[j]
        return out


def window_gram(s: np.ndarray, width: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(Σ_t w_t w_tᵀ [width, width], Σ_t w_t [width]) over the n sliding windows w_t = s[t : t + width], t < n.

    In O(n·width + width²), not O(n·width²): G[a, b] = Σ_t s[t+a]·s[t+b] changes along each diagonal by one term
    in and one out, G[a+1, b+1] = G[a, b] + s[n+a]·s[n+b] − s[a]·s[b]; only the first row is summed over t.
    (At seq_len 1440 the direct products took 33 s of a comparison's 38.)
    """
    s = np.asarray(s, dtype=np.float64)
    if len(s) < n + width - 1:
        raise ValueError(f"{len(s)} values hold fewer than {n} windows of {width}")
    csum = np.concatenate([[0.0], np.cumsum(s)])
    sums = csum[np.arange(width) + n] - csum[np.arange(width)]
    first = sliding_window_view(s, width)[:n].T @ s[:n]  # G[0, d] = Σ_t s[t]·s[t+d]
    gram = np.empty((width, width))
    head, tail = s[:width - 1], s[n:n + width - 1]  # the term leaving and the term joining, a = 0 … width − 2
    gram[0] = first
    for a in range(width - 1):  # row by row (contiguous), each entry from its diagonal predecessor
        np.subtract(tail[a] * tail, head[a] * head, out=gram[a + 1, 1:])
        gram[a + 1, 1:] += gram[a, :-1]
        gram[a + 1, 0] = first[a + 1]  # G[a + 1, 0] = G[0, a + 1]
    return gram, sums


def decomposition_matrix(seq_len: int, kernel: int) -> np.ndarray:
    """A [L, 2L] with window @ A = [seasonal, trend] (`_decompose`): both parts are linear in the window."""
    trend = trend_operator(seq_len, kernel).toarray()  # row i: the trend of the unit window e_i
    return np.concatenate([np.eye(seq_len) - trend, trend], axis=1)


def trend_operator(seq_len: int, kernel: int) -> sparse.csr_matrix:
    """T [L, L], sparse, with window @ T = moving_average(window, kernel): T[i, j] = (1/kernel) · #{m ∈ [j − p, j + p] :
    clip(m, 0, L − 1) = i}, p = (kernel − 1)/2 (the ends are padded by repeating the first and last values)."""
    if kernel < 1 or kernel % 2 == 0:
        raise ValueError(f"moving-average kernel must be an odd number ≥ 1, got {kernel}")
    p = (kernel - 1) // 2
    j = np.repeat(np.arange(seq_len), kernel)
    i = np.clip(j + np.tile(np.arange(-p, p + 1), seq_len), 0, seq_len - 1)
    return sparse.coo_matrix((np.full(len(j), 1.0 / kernel), (i, j)), shape=(seq_len, seq_len)).tocsr()


def _features_gram_inverse(seq_len: int, kernel: int) -> tuple[sparse.csr_matrix, sparse.csr_matrix, torch.Tensor]:
    """(T, S = AAᵀ, S⁻¹) of the decomposition A = [I − T, T]. S = (I − T)(I − T)ᵀ + TTᵀ is banded (half-width
    kernel − 1) and positive definite (vᵀSv = 0 forces Tᵀv = 0 and v = Tᵀv); S⁻¹ (dense, float64) solved from its
    banded Cholesky factor: seq_len² · kernel operations, not the dense inverse's seq_len³ (7.4 s of a seq_len-5760
    fit)."""
    T = trend_operator(seq_len, kernel)
    R = sparse.identity(seq_len, format="csr") - T
    S = (R @ R.T + T @ T.T).tocsr()
    width = min(seq_len - 1, 2 * ((kernel - 1) // 2))  # the half-width of S's band
    upper = np.zeros((width + 1, seq_len))  # LAPACK's upper banded storage: upper[width + i − j, j] = S[i, j]
    for offset in range(width + 1):
        upper[width - offset, offset:] = S.diagonal(offset)
    factor = linalg.cholesky_banded(upper, check_finite=False)
    inverse = np.empty((seq_len, seq_len), order="F")  # S⁻¹ a block of columns at a time: SciPy's LAPACK calls hold
    for a in range(0, seq_len, 256):  # the GIL, and a server's other threads wait out each one (1.3 s whole, at 5760)
        b = min(seq_len, a + 256)
        unit = np.zeros((seq_len, b - a), order="F")
        unit[np.arange(a, b), np.arange(b - a)] = 1.0
        inverse[:, a:b] = linalg.cho_solve_banded((factor, False), unit, overwrite_b=True, check_finite=False)
    return T, S, torch.from_numpy(inverse.T)  # symmetric: the C-ordered transpose is S⁻¹ itself, no copy


def _cholesky_in_place(H: torch.Tensor) -> torch.Tensor:
    """The lower Cholesky factor of the symmetric positive-definite H, written over H (no second L × L copy)."""
    info = torch.empty((), dtype=torch.int32)
    torch.linalg.cholesky_ex(H, out=(H, info))
    if int(info):  # G + λS⁻¹ with λ > 0 is positive definite: a failure here is a bug
        raise RuntimeError(f"the linear baseline's normal equations are not positive definite (info {int(info)})")
    return H


def fit_linear_baseline(prepared: PreparedData, *, kernel: int = 25, ridge: float = 1e-6) -> LinearBaseline:
    """Least squares with a small ridge on the train split's windows, per target column, in float64.

    The features [seasonal, trend] and the targets are centred (the intercept is not penalised); the
    ridge is `ridge` × the mean feature variance, so it is scale-free. The features are a linear map A of the
    window, so their normal equations are Aᵀ G A and Aᵀ C, with G and C the centred second moments of the
    windows and their futures (`window_gram`). The fit W = (AᵀGA + λI)⁻¹AᵀC maps a window through M = AW; with
    S = AAᵀ, M = (G + λS⁻¹)⁻¹ C and W = AᵀS⁻¹M (both from the push-through identity), so each column costs one
    L × L Cholesky of a symmetric positive-definite matrix (torch's LAPACK), and S⁻¹ (S is banded) is shared by
    every column: memory and time grow with seq_len² and one seq_len³/3 per column, not with seq_len² × windows,
    (2·seq_len)³ or the two seq_len³ products of forming G·S. No randomness.
    """
    spec = prepared.spec
    seq_len, pred_len, c_out = spec.seq_len, spec.pred_len, prepared.c_out
    values = np.asarray(prepared.train.values, dtype=np.float64)[:, -c_out:]  # [N_rows, c_out]
    n = len(values) - seq_len - pred_len + 1
    if n < 1:
        raise ValueError(f"the train split has {len(values)} rows: no window of seq_len + pred_len = "
                         f"{seq_len + pred_len} to fit the linear baseline on")
    T, S, S_inv = _features_gram_inverse(seq_len, kernel)
    band = S.tocoo()  # the entries of S: tr(G·S) reads only these of G
    seasonal = np.empty((c_out, pred_len, seq_len))
    trend = np.empty((c_out, pred_len, seq_len))
    bias = np.empty((c_out, pred_len))
    H = torch.empty(seq_len, seq_len, dtype=torch.float64)  # the normal equations of each column in turn
    for j in range(c_out):
        full, sums = window_gram(values[:, j], seq_len + pred_len, n)  # a window and its future, together
        mu = sums / n
        full = linalg.blas.dger(-float(n), mu, mu, a=full.T, overwrite_a=True).T  # centred, in place (full is symmetric)
        G, C = full[:seq_len, :seq_len], torch.from_numpy(full[:seq_len, seq_len:].copy())  # [L, L], [L, P]
        scale = float(np.dot(G[band.row, band.col], band.data)) / (2 * seq_len)  # tr(AᵀGA) / 2L = tr(G·S) / 2L
        torch.mul(S_inv, ridge * (scale if scale > 0 else 1.0), out=H)
        H += torch.from_numpy(G)
        del full, G
        M = torch.cholesky_solve(C, _cholesky_in_place(H))  # [L, P] = (G + λS⁻¹)⁻¹ C
        Y = (S_inv @ M).numpy()  # [L, P] = S⁻¹M
        TY = T.T @ Y  # Tᵀ S⁻¹ M
        seasonal[j], trend[j] = (Y - TY).T, TY.T  # W = AᵀS⁻¹M = [(I − T)ᵀ; Tᵀ] S⁻¹M
        bias[j] = mu[seq_len:] - mu[:seq_len] @ M.numpy()  # μ_y − μ_x·A·W, and AW = M
    return LinearBaseline(seasonal, trend, bias, kernel, ridge, n)


def split_histories(prepared: PreparedData, split: str) -> np.ndarray:
    """[N, seq_len, c_out] the known target history of every window of a split (window i starts at row i)."""
    spec = prepared.spec
    n = len(WindowDataset(prepared, split))
    values = np.asarray(prepared.split(split).values)[:, -prepared.c_out:]  # [N_rows, c_out]
    return sliding_window_view(values, spec.seq_len, axis=0)[:n].transpose(0, 2, 1)  # [n, L, c_out]


__all__ = ["LinearBaseline", "decomposition_matrix", "trend_operator", "fit_linear_baseline", "last_value_forecast", "moving_average",
           "seasonal_naive_forecast", "split_histories", "window_gram"]
