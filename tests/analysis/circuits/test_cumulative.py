"""CPD and CPP against a linear forecast, whose every removal changes it by exactly Σ w·x over the cells removed."""
import numpy as np
import pytest
import torch

from informer_lab.analysis.circuits.cumulative import cumulative_scores
from tests.analysis.circuits.test_benchmark import Linear


def by_hand(W_h: np.ndarray, x: np.ndarray, order: np.ndarray, counts) -> float:
    """Σ_k |Σ_{cells removed at step k} w·x|: a linear forecast with fill 0 drops by w·x per cell removed."""
    contribution = (W_h * x).reshape(-1)[order]
    edges = np.r_[0, counts]
    return float(sum(abs(contribution[a:b].sum()) for a, b in zip(edges, edges[1:])))


def test_cpd_and_cpp_equal_the_linear_forecasts_own_sums_and_rank_an_oracle_first():
    L, C, P = 24, 4, 6
    model = Linear(L, C, P)
    rng = np.random.default_rng(4)
    x = rng.uniform(0.5, 1.5, size=(L, C)).astype(np.float32)
    steps = [1, 3]
    W = model.W.numpy()
    oracle = np.stack([np.abs(W[h - 1] * x) + 1e-3 * rng.random((L, C)) for h in steps])  # no ties
    noise = rng.random((2, L, C))
    maps = {"oracle": oracle, "anti": -oracle, "noise": noise}
    fractions = (0.01, 0.02, 0.05, 0.1, 0.5)
    out = cumulative_scores(model, x, steps, maps, fractions=fractions, draws=16, rng=rng)
    counts = sorted({int(np.floor(f * L * C)) for f in fractions})
    for name, m in maps.items():
        cpd = np.mean([by_hand(W[h - 1], x, np.argsort(-m[t].reshape(-1), kind="stable"), counts)
                       for t, h in enumerate(steps)])
        cpp = np.mean([by_hand(W[h - 1], x, np.argsort(-m[t].reshape(-1), kind="stable")[::-1], counts)
                       for t, h in enumerate(steps)])
        assert out[name]["cpd"] == pytest.approx(cpd, rel=1e-5), name
        assert out[name]["cpp"] == pytest.approx(cpp, rel=1e-5), name
    # the oracle puts both planted cells in the first step: every step after changes nothing
    total = np.mean([(W[h - 1] * x).sum() for h in steps])
    assert out["oracle"]["cpd"] == pytest.approx(total, rel=1e-5) and out["oracle"]["cpp"] == pytest.approx(0, abs=1e-6)
    assert out["anti"]["cpd"] == pytest.approx(0, abs=1e-6)
    assert out["oracle"]["cpd_excess"] > 0 > out["oracle"]["cpp_excess"]
    assert out["oracle"]["cpd_random"] == out["noise"]["cpd_random"]  # one shared set of random orders


def test_steps_that_cancel_are_not_netted_out():
    """Two cells whose effects cancel, removed in separate steps: CPD counts both, a one-shot removal sees 0."""
    L, C = 4, 1
    W = torch.zeros(1, L, C)
    W[0, 0, 0], W[0, 1, 0] = 1.0, -1.0

    def forecast(batch):
        return torch.einsum("nlc,hlc->nh", batch.float(), W)

    x = np.ones((L, C), dtype=np.float32)
    scores = np.array([[[4.0], [3.0], [2.0], [1.0]]])
    out = cumulative_scores(forecast, x, [1], {"m": scores}, fractions=(0.25, 0.5), draws=2,
                            rng=np.random.default_rng(0))
    assert out["m"]["cpd"] == pytest.approx(2.0)  # |−1| then |+1|; removing both at once changes nothing


def test_fractions_that_remove_nothing_are_refused():
    with pytest.raises(ValueError, match="remove no cell"):
        cumulative_scores(lambda b: b.sum(dim=(1, 2))[:, None], np.ones((4, 1)), [1], {"m": np.ones((1, 4, 1))},
                          fractions=(0.1,), rng=np.random.default_rng(0))
