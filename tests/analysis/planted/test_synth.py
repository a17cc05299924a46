"""The generator's answers against the maths of the processes, not against the generator's own code."""
import json

import numpy as np
import pytest
from pandas.tseries.frequencies import to_offset

from informer_lab.analysis.data import load_csv
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.planted.known_answer import bayes_forecasts, planted_cells
from informer_lab.analysis.planted.synth import Answer, SynthSpec, answer_json, generate


def _lagged_regression(y: np.ndarray, sources: dict[str, np.ndarray], max_lag: int) -> dict[tuple[str, int], float]:
    """Least-squares coefficients of y_t on every source at lags 1 … max_lag."""
    n = len(y)
    columns, names = [], []
    for name, x in sources.items():
        for lag in range(1, max_lag + 1):
            columns.append(x[max_lag - lag:n - lag])
            names.append((name, lag))
    A = np.stack(columns, axis=1)
    coef, *_ = np.linalg.lstsq(A - A.mean(0), y[max_lag:] - y[max_lag:].mean(), rcond=None)
    return dict(zip(names, coef))


def test_a_seasonal_ar_has_the_variance_and_bayes_mse_of_its_equation():
    phi, sigma = 0.9, 1.5
    standardised, h1, h30 = [], [], []
    for seed in range(6):
        frame, answer = generate(SynthSpec(rows=20_000, lags=(24,), coefs=(phi,), noise=sigma, seed=seed))
        assert answer.stationary_variance["y"] == pytest.approx(sigma ** 2 / (1 - phi ** 2), rel=1e-6)
        # the Bayes MSE is the innovation variance over the series' (train) variance: 1 − φ² within sampling error
        standardised.append(answer.bayes_mse["y"][0])
        assert answer.bayes_mse["y"][23] == pytest.approx(answer.bayes_mse["y"][0])  # h ≤ s: σ²
        assert answer.bayes_mse["y"][24] == pytest.approx(answer.bayes_mse["y"][0] * (1 + phi ** 2))  # s < h ≤ 2s
        # realised: the iterated forecast's errors on the file itself have the variance the answer states
        y = frame["y"].to_numpy()
        starts = np.arange(200, len(y) - 40, 7)
        made = bayes_forecasts(answer, load_csv(frame.to_csv(index=False).encode()), starts, 30)["y"]
        truth = np.stack([y[s:s + 30] for s in starts])
        h1.append(np.mean((made[:, 0] - truth[:, 0]) ** 2))
        h30.append(np.mean((made[:, 29] - truth[:, 29]) ** 2))
    assert np.mean(standardised) == pytest.approx(1 - phi ** 2, rel=0.1)
    assert np.mean(h1) == pytest.approx(sigma ** 2, rel=0.05)  # ~16,000 errors: standard error ~1.5 %
    assert np.mean(h30) == pytest.approx(sigma ** 2 * (1 + phi ** 2), rel=0.06)


def test_the_relevant_lags_are_the_process_lags():
    frame, answer = generate(SynthSpec(rows=30_000, lags=(24, 168), coefs=(0.5, 0.3), seed=3))
    assert {(r["column"], r["lag"]) for r in answer.relevant} == {("y", 24), ("y", 168)}
    coef = _lagged_regression(frame["y"].to_numpy(), {"y": frame["y"].to_numpy(), "x": frame["x"].to_numpy()}, 170)
    big = {k for k, v in coef.items() if abs(v) > 0.1}
    assert big == {("y", 24), ("y", 168)}
    assert coef[("y", 24)] == pytest.approx(0.5, abs=0.05) and coef[("y", 168)] == pytest.approx(0.3, abs=0.05)


def test_a_driver_enters_at_its_lag_and_its_bayes_mse_is_the_innovation_while_both_inputs_are_known():
    frame, answer = generate(SynthSpec(kind="driver", rows=30_000, lags=(24,), coefs=(0.6,), driver_lag=6,
                                       driver_coef=0.8, irrelevant=2, seed=1))
    assert list(frame.columns) == ["date", "driver", "x1", "x2", "y"]
    assert {(r["column"], r["lag"]) for r in answer.relevant} == {("y", 24), ("driver", 6)}
    coef = _lagged_regression(frame["y"].to_numpy(), {c: frame[c].to_numpy() for c in ("y", "driver", "x1", "x2")},
                              30)
    assert {k for k, v in coef.items() if abs(v) > 0.1} == {("y", 24), ("driver", 6)}
    raw = np.asarray(answer.bayes_mse["y"]) * answer.train_variance["y"]
    assert raw[0] == pytest.approx(1.0) and raw[5] == pytest.approx(1.0)  # h ≤ k: σ²
    # beyond k the driver is itself forecast (ρ^j·d_T): + b²·Var of its error, Σ_{j<h−k} ρ^{2j}·(1 − ρ²)
    rho, b = 0.8, 0.8
    for h in (7, 10, 20):
        extra = b ** 2 * (1 - rho ** (2 * (h - 6)))
        assert raw[h - 1] == pytest.approx(1.0 + extra, rel=1e-9)


def test_spikes_sit_at_the_answer_times_and_add_their_variance():
    frame, answer = generate(SynthSpec(kind="spikes", rows=20_000, events=40, spike=8.0, seed=2))
    y = frame["y"].to_numpy()
    residual = y[24:] - 0.9 * y[:-24]
    rows = np.array([e["row"] for e in answer.events])
    assert len(rows) == 40 and [e["time"] for e in answer.events][0] == frame["date"][rows[0]]
    assert np.all(np.abs(residual[rows - 24]) > 4.5)  # 8σ spikes in 1σ noise
    others = np.setdiff1d(np.arange(len(residual)), rows - 24)
    assert np.mean(np.abs(residual[others]) > 4.5) < 1e-3
    assert answer.innovation_variance["y"] == pytest.approx(1 + 40 / 20_000 * 64)


def test_a_regime_switch_changes_the_lag_at_the_answer_times():
    frame, answer = generate(SynthSpec(kind="regime", rows=30_000, regime_lags=(24, 12), regime_length=1000, seed=4))
    y = frame["y"].to_numpy()
    segments = list(answer.regime_of_row) + [(len(y), -1)]
    fits = {0: [], 1: []}
    for (first, regime), (stop, _) in zip(segments[:-1], segments[1:]):
        if stop - first > 300:
            part = y[first:stop]
            coef = _lagged_regression(part, {"y": part}, 30)
            fits[regime].append((coef[("y", 24)], coef[("y", 12)]))
    a, b = np.mean(fits[0], axis=0), np.mean(fits[1], axis=0)
    assert a[0] == pytest.approx(0.9, abs=0.1) and abs(a[1]) < 0.15  # regime A reads lag 24
    assert b[1] == pytest.approx(0.9, abs=0.1) and abs(b[0]) < 0.15  # regime B reads lag 12
    assert [e["row"] for e in answer.events] == [r for r, _ in answer.regime_of_row[1:]]


def test_same_spec_same_file_and_the_answer_survives_json():
    one, answer = generate(SynthSpec(kind="driver", rows=2000, seed=5))
    two, _ = generate(SynthSpec(kind="driver", rows=2000, seed=5))
    other, _ = generate(SynthSpec(kind="driver", rows=2000, seed=6))
    assert one.equals(two) and not one.equals(other)
    again = Answer.from_dict(json.loads(answer_json(answer)))
    assert again.to_dict() == answer.to_dict()
    assert again.bayes_for(["y"], 24) == pytest.approx(np.mean(answer.bayes_mse["y"][:24]))


@pytest.mark.parametrize("freq", ["15min", "D", "W-SUN", "MS"])
def test_any_frequency_reads_back_as_that_frequency(freq):
    frame, answer = generate(SynthSpec(rows=400, lags=(7,), freq=freq, seed=1))
    read = load_csv(frame.to_csv(index=False).encode())
    assert read.n_rows == 400 and read.columns == ("x", "y")
    assert to_offset(read.freq) == to_offset(freq)


def test_planted_cells_point_at_the_lag_in_the_window():
    from informer_lab.analysis.data import DataSpec, prepare

    frame, answer = generate(SynthSpec(kind="driver", rows=3000, lags=(12,), driver_lag=4, seed=0))
    prepared = prepare(load_csv(frame.to_csv(index=False).encode()), DataSpec("y", "MS", 48, 24, 12))
    cells = planted_cells(answer, prepared, "test", 5, 3)
    assert cells.positions == (48 - 1 + 3 - 12, 48 - 1 + 3 - 4)
    assert [prepared.columns[c] for c in cells.columns] == ["y", "driver"]
    assert planted_cells(answer, prepared, "test", 5, 5) is None  # step 5 reads the driver beyond the window


@pytest.mark.parametrize("changes,word", [(dict(coefs=(0.7, 0.5), lags=(24, 168)), "stationary"),
                                          (dict(kind="nope"), "--kind"), (dict(rows=50), "too short"),
                                          (dict(lags=(24, 24), coefs=(0.2, 0.2)), "distinct")])
def test_bad_specs_are_refused_naming_the_option(changes, word):
    with pytest.raises(ConfigError, match=word):
        SynthSpec(**changes)


def test_regimes_may_differ_in_their_coefficient_alone():
    frame, answer = generate(SynthSpec(kind="regime", rows=6000, regime_lags=(24, 24), coefs=(0.9, -0.9),
                                       regime_length=1000, seed=1))
    assert [r.terms[0].coef for r in answer.regimes] == [0.9, -0.9]
    y = frame["y"].to_numpy()
    regime = np.zeros(len(y), dtype=int)
    for first, g in answer.regime_of_row:
        regime[first:] = g
    lagged = np.arange(24, len(y))
    for g, sign in ((0, 1), (1, -1)):
        on = lagged[regime[lagged] == g]
        assert sign * np.corrcoef(y[on], y[on - 24])[0, 1] > 0.7
    with pytest.raises(ConfigError, match="must differ"):
        SynthSpec(kind="regime", regime_lags=(24, 24), coefs=(0.9,))
