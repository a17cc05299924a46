"""Series with a planted answer: linear processes whose best forecast, relevant inputs and events are known.

Every kind is a set of linear equations, one per column, driven by Gaussian innovations:

    seasonal_ar  y_t = φ₁·y_{t−s₁} (+ φ₂·y_{t−s₂}) + e_t                       one or two seasonal lags
    driver       y_t = a·y_{t−s} + b·d_{t−k} + e_t,  d_t = ρ·d_{t−1} + η_t      an exogenous driver at lag k
    spikes       seasonal_ar plus spikes ±A·σ in the innovation at known times   planted events
    regime       y_t = φ_A·y_{t−s_A} + e_t in regime A, φ_B·y_{t−s_B} + e_t in B  a switch at known times

plus `irrelevant` columns x (independent AR(1), unit variance) that the target never reads, and optionally `decoys`:
seasonal AR columns with the target's own first lag and coefficient (the same season, unit variance) that the target
never reads either, the column an instrument that answers "what repeats with the target's period" would wrongly
name. Each file comes with
its answer (`Answer`, written beside it as FILE.answer.json): the equations, the relevant (column, lag) pairs of
the target, the planted events, and the Bayes MSE per horizon step of every column.

The Bayes MSE. With the whole past known and innovations independent of it, the best h-step forecast iterates the
equations with future innovations at their mean (0), and its error is Σ_{j<h} Σ_c ψ^{i,c}_j · ε^c_{t+h−j}: the
h-step MSE of column i is Σ_c Var(ε^c) Σ_{j<h} (ψ^{i,c}_j)², ψ the impulse responses of the system. Spikes add
p·A²σ² to the target's innovation variance (random sign, so mean 0); a regime's figure assumes the forecaster knows
the regime in force (a lower bound near a switch). In standardised units it is divided by the variance of the
column on the train split (the first 70 % of rows, as `analysis.data.prepare` fits its scaler).
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis import jsonfile
from informer_lab.source import command

KINDS = ("seasonal_ar", "driver", "spikes", "regime")


def _lfilter(b, a, x):
    from scipy.signal import lfilter  # at use: importing scipy.signal costs ~1.4 s of CPU in every process

    return lfilter(b, a, x)
TARGET = "y"
DRIVER = "driver"
MAX_ROWS = 2_000_000
MAX_IRRELEVANT = 64
MAX_DECOYS = 8
HORIZON = 168  # Bayes MSE per step up to here
TRAIN_FRACTION = 0.7  # the 70 / 10 / 20 split's train rows (analysis.data.split_borders)


@dataclass(frozen=True)
class Term:
    """coef · column[t − lag]."""

    column: str
    lag: int
    coef: float


@dataclass(frozen=True)
class Equation:
    """column_t = Σ terms + innovation of standard deviation `noise`."""

    column: str
    terms: tuple[Term, ...]
    noise: float


@dataclass(frozen=True)
class SynthSpec:
    """What to generate. Lags are in steps of `freq`; `spike` and `noise` in units of the target's innovation σ."""

    kind: str = "seasonal_ar"
    rows: int = 10_080
    freq: str = "h"
    start: str = "2024-01-01"
    seed: int = 0
    lags: tuple[int, ...] = (24,)  # the target's seasonal lags (seasonal_ar, spikes; the first for driver)
    coefs: tuple[float, ...] = (0.9,)
    noise: float = 1.0
    irrelevant: int = 1
    decoys: int = 0  # seasonal columns with the target's period that it never reads
    driver_lag: int = 6
    driver_coef: float = 0.8
    driver_rho: float = 0.8
    events: int = 20  # spikes
    spike: float = 8.0
    regime_lags: tuple[int, int] = (24, 12)
    regime_length: int = 720  # mean steps between switches (each segment 0.75–1.25 of it)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ConfigError(f"--kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if not 1 <= self.rows <= MAX_ROWS:
            raise ConfigError(f"--rows must be in 1 … {MAX_ROWS:,}, got {self.rows}")
        values = [*self.coefs, self.noise, self.driver_coef, self.driver_rho, self.spike]
        if not all(math.isfinite(v) for v in values):
            raise ConfigError("--coefs, --noise, --driver-coef, --driver-rho and --spike must be finite numbers")
        if not 0 <= self.irrelevant <= MAX_IRRELEVANT:
            raise ConfigError(f"--irrelevant must be in 0 … {MAX_IRRELEVANT}, got {self.irrelevant}")
        if not 0 <= self.decoys <= MAX_DECOYS:
            raise ConfigError(f"--decoys must be in 0 … {MAX_DECOYS}, got {self.decoys}")
        if self.kind in ("seasonal_ar", "spikes"):
            if not 1 <= len(self.lags) <= 2 or len(self.coefs) != len(self.lags):
                raise ConfigError(f"--lags takes one or two lags and --coefs as many coefficients, got lags "
                                  f"{list(self.lags)} and coefs {list(self.coefs)}")
            if sum(abs(c) for c in self.coefs) >= 1:
                raise ConfigError(f"--coefs {list(self.coefs)}: their absolute values must add up to less than 1, "
                                  "or the series is not stationary")
        for flag, lags in (("--lags", list(self.lags)), ("--driver-lag", [self.driver_lag]),
                           ("--regime-lags", list(self.regime_lags))):
            if min(lags) < 1 or (flag == "--lags" and len(set(lags)) != len(lags)):
                raise ConfigError(f"{flag} must be distinct whole numbers ≥ 1, got {','.join(map(str, lags))}")
        if self.kind == "driver" and not (abs(self.coefs[0]) < 1 and abs(self.driver_rho) < 1):
            raise ConfigError("--coefs and --driver-rho must lie in (−1, 1) for a stationary driver series")
        if self.kind == "regime" and (len(self.coefs) > 2 or not all(abs(c) < 1 for c in self.coefs)
                                      or len({*zip(self.regime_lags, (self.coefs * 2)[:2])}) < 2):
            raise ConfigError("regime: --coefs takes one or two coefficients in (−1, 1) (regime A's, B's) and the two "
                              "regimes must differ in --regime-lags or --coefs")
        if self.noise <= 0 or not math.isfinite(self.noise) or self.events < 0 or self.regime_length < 2:
            raise ConfigError("--noise must be > 0, --events ≥ 0 and --regime-length ≥ 2")
        if self.rows < 4 * self.max_lag:
            raise ConfigError(f"--rows {self.rows} is too short for lag {self.max_lag}: give at least "
                              f"{4 * self.max_lag} rows")

    @property
    def max_lag(self) -> int:
        return max([*self.lags, self.driver_lag if self.kind == "driver" else 1,
                    *(self.regime_lags if self.kind == "regime" else ())])

    @property
    def irrelevant_names(self) -> tuple[str, ...]:
        return ("x",) if self.irrelevant == 1 else tuple(f"x{i + 1}" for i in range(self.irrelevant))

    @property
    def decoy_names(self) -> tuple[str, ...]:
        return ("decoy",) if self.decoys == 1 else tuple(f"decoy{i + 1}" for i in range(self.decoys))


@dataclass(frozen=True)
class Answer:
    """What a generated file is known to hold (JSON: `to_dict` / `from_dict`)."""

    kind: str
    spec: dict
    target: str
    columns: tuple[str, ...]
    equations: tuple[Equation, ...]  # one per column (regime: regime A's target equation)
    regimes: tuple[Equation, ...]  # regime: the target's equation in A, B; else ()
    regime_of_row: tuple[tuple[int, int], ...]  # regime: (first row, regime index) per segment; else ()
    relevant: tuple[dict, ...]  # {"column", "lag", "regime" (None or "A" / "B")}
    events: tuple[dict, ...]  # {"row", "time", "what", "size"}
    innovation_variance: dict  # column → Var(ε) the forecaster faces (spikes included)
    train_rows: int
    train_variance: dict  # column → variance on the train rows (the scaler's)
    stationary_variance: dict
    bayes_mse: dict  # column → [HORIZON] standardised h-step Bayes MSE, h = 1 … HORIZON
    notes: tuple[str, ...] = field(default=())
    decoys: tuple[str, ...] = field(default=())  # columns with the target's season that it never reads

    def __post_init__(self):
        rows = int(self.spec.get("rows", 0) or 0)
        for e in (*self.equations, *self.regimes):
            for t in e.terms:
                if not (1 <= t.lag and (not rows or t.lag < rows)) or not math.isfinite(t.coef):
                    raise ConfigError(f"the answer's term {t.column}@{t.lag:g} (coefficient {t.coef:g}) cannot hold "
                                      f"for a file of {rows:,} rows: lags run from 1 to the rows, coefficients are "
                                      f"finite; regenerate the file and its answer with `{command('synth')}`")
        if self.target not in self.columns:
            raise ConfigError(f"the answer's target {self.target!r} is not one of its columns")

    def to_dict(self) -> dict:
        out = asdict(self)
        out["equations"] = [asdict(e) for e in self.equations]
        out["regimes"] = [asdict(e) for e in self.regimes]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "Answer":
        def eq(d):
            return Equation(str(d["column"]), tuple(Term(str(t["column"]), int(t["lag"]), float(t["coef"]))
                                                    for t in d["terms"]), float(d["noise"]))
        try:
            return cls(str(data["kind"]), dict(data["spec"]), str(data["target"]), tuple(data["columns"]),
                       tuple(eq(e) for e in data["equations"]), tuple(eq(e) for e in data.get("regimes", ())),
                       tuple((int(a), int(b)) for a, b in data.get("regime_of_row", ())),
                       tuple(dict(r) for r in data["relevant"]), tuple(dict(e) for e in data.get("events", ())),
                       {k: float(v) for k, v in data["innovation_variance"].items()}, int(data["train_rows"]),
                       {k: float(v) for k, v in data["train_variance"].items()},
                       {k: float(v) for k, v in data["stationary_variance"].items()},
                       {k: [float(x) for x in v] for k, v in data["bayes_mse"].items()},
                       tuple(data.get("notes", ())), tuple(str(d) for d in data.get("decoys", ())))
        except (KeyError, TypeError, ValueError, OverflowError) as err:
            raise ConfigError(f"not an answer file of `{command('synth')}`: {type(err).__name__} {str(err)[:120]}") from None

    def bayes_for(self, columns: tuple[str, ...] | list[str], pred_len: int) -> float:
        """The Bayes MSE the lab's MSE is set against: the mean over the forecast columns and steps 1 … pred_len."""
        if pred_len > len(self.bayes_mse[self.target]):
            raise ConfigError(f"the answer holds Bayes MSEs up to horizon {len(self.bayes_mse[self.target])}, "
                              f"not {pred_len}")
        return float(np.mean([self.bayes_mse[c][:pred_len] for c in columns]))


def _equations(spec: SynthSpec) -> tuple[list[Equation], list[Equation]]:
    """(equations of every column, the target's regime equations)."""
    x_noise = math.sqrt(1 - 0.5 ** 2)  # AR(0.5) with unit variance
    xs = [Equation(name, (Term(name, 1, 0.5),), x_noise) for name in spec.irrelevant_names]
    season = spec.regime_lags[0] if spec.kind == "regime" else spec.lags[0]
    phi = max(-0.95, min(0.95, spec.coefs[0]))
    xs += [Equation(name, (Term(name, season, phi),), math.sqrt(1 - phi ** 2)) for name in spec.decoy_names]
    if spec.kind == "driver":
        rho = spec.driver_rho
        drive = Equation(DRIVER, (Term(DRIVER, 1, rho),), math.sqrt(1 - rho ** 2))
        y = Equation(TARGET, (Term(TARGET, spec.lags[0], spec.coefs[0]), Term(DRIVER, spec.driver_lag, spec.driver_coef)),
                     spec.noise)
        return [drive, *xs, y], []
    if spec.kind == "regime":  # one coefficient for both regimes, or regime A's and B's
        regimes = [Equation(TARGET, (Term(TARGET, lag, c),), spec.noise)
                   for lag, c in zip(spec.regime_lags, (spec.coefs * 2)[:2])]
        return [*xs, regimes[0]], regimes
    y = Equation(TARGET, tuple(Term(TARGET, lag, c) for lag, c in zip(spec.lags, spec.coefs)), spec.noise)
    return [*xs, y], []


def impulse_responses(equations: list[Equation], horizon: int) -> np.ndarray:
    """ψ[i, c, j]: the response of column i, j steps after a unit innovation in column c. [C, C, horizon]."""
    names = [e.column for e in equations]
    index = {n: k for k, n in enumerate(names)}
    C = len(names)
    psi = np.zeros((C, C, horizon))
    psi[np.arange(C), np.arange(C), 0] = 1.0
    for j in range(1, horizon):
        for i, e in enumerate(equations):
            for t in e.terms:
                if t.lag <= j:
                    psi[i, :, j] += t.coef * psi[index[t.column], :, j - t.lag]
    return psi


def _stationary(equations: list[Equation], variance: np.ndarray) -> np.ndarray:
    """Σ_c Var(ε^c) Σ_j (ψ^{i,c}_j)² until the tail is negligible."""
    length = 256
    while True:
        psi = impulse_responses(equations, length)
        tail = (psi[:, :, -length // 4:] ** 2).sum(axis=2)
        if tail.max() < 1e-10 or length >= 1 << 16:
            return ((psi ** 2).sum(axis=2) * variance[None, :]).sum(axis=1)
        length *= 2


def h_step_mse(equations: list[Equation], variance: np.ndarray, horizon: int) -> np.ndarray:
    """[C, horizon]: the raw-unit Bayes MSE of every column at h = 1 … horizon."""
    psi = impulse_responses(equations, horizon)
    return np.cumsum((psi ** 2 * variance[None, :, None]).sum(axis=1), axis=1)


def _switching(drive: np.ndarray, terms: list[Term], regime_at: np.ndarray) -> np.ndarray:
    """y_t = coef_r · y_{t − lag_r} + drive_t with r = regime_at[t], a block of min(lag) rows at a time."""
    y = np.zeros_like(drive)
    block = min(t.lag for t in terms)
    for start in range(0, len(y), block):
        stop = min(len(y), start + block)
        rows = np.arange(start, stop)
        out = drive[start:stop].copy()
        for r, t in enumerate(terms):
            back = rows - t.lag
            on = (regime_at[start:stop] == r) & (back >= 0)
            out[on] += t.coef * y[back[on]]
        y[start:stop] = out
    return y


def _segments(spec: SynthSpec, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Regime segments (first row, regime 0/1), alternating, each 0.75–1.25 × regime_length long."""
    out, row, regime = [], 0, 0
    while row < spec.rows:
        out.append((row, regime))
        row += int(rng.integers(int(0.75 * spec.regime_length), int(1.25 * spec.regime_length) + 1))
        regime = 1 - regime
    return out


def generate(spec: SynthSpec) -> tuple[pd.DataFrame, Answer]:
    """The series (a `date` column, then the columns, target last) and its answer. Same spec, same file."""
    rng = np.random.default_rng(spec.seed)
    equations, regimes = _equations(spec)
    names = [e.column for e in equations]
    index = {n: k for k, n in enumerate(names)}
    C, burn = len(names), 20 * spec.max_lag + 200
    n = spec.rows + burn
    shocks = rng.standard_normal((n, C)) * np.array([e.noise for e in equations])
    events: list[dict] = []
    segments: list[tuple[int, int]] = []
    spike_var = 0.0
    if spec.kind == "spikes" and spec.events:
        rows = np.sort(rng.choice(np.arange(spec.max_lag, spec.rows), size=min(spec.events, spec.rows // 4),
                                  replace=False))
        signs = rng.choice([-1.0, 1.0], size=len(rows))
        shocks[burn + rows, index[TARGET]] += signs * spec.spike * spec.noise
        events = [{"row": int(r), "what": "spike", "size": float(s * spec.spike * spec.noise)} for r, s in zip(rows, signs)]
        p = len(rows) / spec.rows
        spike_var = p * (spec.spike * spec.noise) ** 2
    if spec.kind == "regime":
        segments = _segments(spec, rng)
        events = [{"row": int(r), "what": f"regime {'AB'[g]}", "size": 0.0} for r, g in segments[1:]]
    regime_at = np.zeros(n, dtype=np.int64)
    for first, g in segments:
        regime_at[burn + first:] = g
    values = np.zeros((n, C))
    for i, e in enumerate(equations):  # the target last: every column it reads is made before it
        drive = shocks[:, i].copy()
        own = [t for t in e.terms if t.column == e.column]
        for t in e.terms:
            if t.column != e.column:
                drive[t.lag:] += t.coef * values[:-t.lag, index[t.column]]
        if regimes and e.column == TARGET:
            values[:, i] = _switching(drive, [r.terms[0] for r in regimes], regime_at)
        else:
            a = np.zeros(max(t.lag for t in own) + 1)
            a[0] = 1.0
            for t in own:
                a[t.lag] -= t.coef
            values[:, i] = _lfilter([1.0], a, drive)
    values = values[burn:]

    times = pd.date_range(spec.start, periods=spec.rows, freq=spec.freq)
    for e in events:
        e["time"] = str(times[e["row"]])
    order = [c for c in names if c != TARGET] + [TARGET]
    frame = pd.DataFrame({"date": times.strftime("%Y-%m-%d %H:%M:%S")})
    for c in order:
        frame[c] = np.round(values[:, index[c]], 6)

    variance = np.array([e.noise ** 2 for e in equations])
    variance[index[TARGET]] += spike_var
    train_rows = int(spec.rows * TRAIN_FRACTION)
    train_var = frame[order].iloc[:train_rows].to_numpy().var(axis=0)  # population variance, as the scaler
    train_var = {c: float(v) if v > 0 else 1.0 for c, v in zip(order, train_var)}
    if regimes:
        per_regime = [h_step_mse([*equations[:-1], r], variance, HORIZON)[index[TARGET]] for r in regimes]
        first_test = train_rows + (spec.rows - train_rows - int(spec.rows * 0.2))
        share_b = float(np.mean(regime_at[burn + first_test:] == 1))
        raw = h_step_mse(equations, variance, HORIZON)
        raw[index[TARGET]] = (1 - share_b) * per_regime[0] + share_b * per_regime[1]
        stationary = _stationary(equations, variance)
    else:
        raw = h_step_mse(equations, variance, HORIZON)
        stationary = _stationary(equations, variance)
    bayes = {c: (raw[index[c]] / train_var[c]).tolist() for c in order}
    target_eq = regimes[0] if regimes else equations[index[TARGET]]
    relevant = [{"column": t.column, "lag": t.lag, "regime": None} for t in target_eq.terms]
    if regimes:
        relevant = [{"column": TARGET, "lag": r.terms[0].lag, "regime": "AB"[g]} for g, r in enumerate(regimes)]
    notes = [f"Bayes MSE: the best forecast given the whole past, standardised by the train rows' variance "
             f"(first {train_rows:,} rows)"]
    if spec.decoys:
        notes.append(f"decoy column(s) {', '.join(spec.decoy_names)}: the target's season (lag {equations[index[spec.decoy_names[0]]].terms[0].lag}) without any "
                     "effect on it")
    if spec.kind == "spikes":
        notes.append(f"{len(events)} spikes of ±{spec.spike:g}σ in the target's innovation (they echo at its lags); "
                     "the Bayes forecast cannot foresee them: they add p·A² to the innovation variance")
    if regimes:
        notes.append(f"regime: the Bayes MSE assumes the regime in force is known (a lower bound near a switch); "
                     f"{share_b:.0%} of the test rows are in regime B")
    answer = Answer(spec.kind, {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(spec).items()}, TARGET,
                    tuple(order), tuple(equations), tuple(regimes), tuple(segments), tuple(relevant), tuple(events),
                    {c: float(variance[index[c]]) for c in order}, train_rows, train_var,
                    {c: float(stationary[index[c]]) for c in order}, bayes, tuple(notes), spec.decoy_names)
    return frame, answer


def answer_path(csv: str | Path) -> Path:
    """FILE.csv → FILE.answer.json (beside it)."""
    csv = Path(csv)
    stem = csv.name[:-4] if csv.name.lower().endswith(".csv") else csv.name
    return csv.with_name(f"{stem}.answer.json")


def answer_json(answer: Answer) -> str:
    return json.dumps(answer.to_dict(), indent=1)


def read_answer(path: str | Path) -> Answer:
    path = Path(path)
    try:
        return Answer.from_dict(jsonfile.read(path, max_bytes=64 << 20, name=f"the answer file {path}"))
    except OSError as err:
        raise ConfigError(f"cannot read the answer file {path}: {err.strerror or err}") from None


def with_overrides(spec: SynthSpec, **changes) -> SynthSpec:
    return replace(spec, **{k: v for k, v in changes.items() if v is not None})


__all__ = ["Answer", "Equation", "HORIZON", "KINDS", "SynthSpec", "TARGET", "Term", "answer_json", "answer_path",
           "generate", "h_step_mse", "impulse_responses", "read_answer", "with_overrides"]
