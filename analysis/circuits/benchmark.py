"""Every input-attribution and head-level instrument of the lab scored against planted answers.

For each generated kind (analysis.planted.synth) and seed: the series is generated, a small Informer is trained on it
at the lab's training defaults (`TrainSettings()`, its seed the benchmark's), and every instrument is scored on test
windows against the answer the generator planted.

Input instruments, each a [seq_len, enc_in] map of scores per (window, horizon step h):

    integrated_gradients  |IG| per (column, lag), baseline "zeros" (each column's training mean), the self-test's call
    occlusion             per cell: |f_h(x) − f_h(x with that one cell at 0)|, f_h the step-h forecast of the target
    blank_out             per step (the lab's `blank_out_delta`): ΔMSE at step h, every column of an input step at 0
    rollout, flow         attention rollout / flow (analysis.anatomy; α = ½, P routed, the heads' mean) of step h
    attention             raw attention: the first encoder layer's rows the model used (true rows), mean over heads and
                          queries, i.e. the attention each input step receives (the same map for every h)
    random                seeded uniform scores: the control

Time-only maps (blank_out, rollout, flow, attention) are spread over the columns: every column of a step gets the
step's score (a tie the metrics keep as a tie; removal breaks it at random).

The true cells of (window, h): the planted (column, lag) cells the Bayes forecast of step h reads
(known_answer.planted_cells) and the cells within the value embedding's reach of each in time, same column
(± known_answer.receptive_radius: 1 step for the conv embedding), as the self-test counts them. Steps: probe_steps
(1, the middle, the last step up to the shortest planted lag). Metrics (analysis.circuits.scores): AUP, AUR, AUPRC
per (window, step) against those cells; comprehensiveness and sufficiency (ΔMSE of step h when the top 20 % of cells
are removed / only they are kept, against as many random cells). Each per window (mean over the steps), then the
mean over windows with the lab's interval (analysis.intervals.window_means, span from overlap_span of the windows'
spacing; windows one seq_len + pred_len apart where the split allows: independent).

Head instruments: the planted head is `selftest_heads.head_at_lag`'s (the head whose rows put most mass at the target's
planted lag, chosen on half the profile windows; `lag_profile/planted_head_found` says whether its dominant lag is a
planted one, `planted_lag_mass` its mass there on the other half). Each instrument ranks every head; metrics `top1`
(1 when it ranks that head first) and `rank` (1 = first, ties at their mean rank): ablation (head_sweep's ΔMSE, zero
ablation), gradient_importance (E|∂L/∂gate|), direct_share (mean |share|, top_heads; decoder heads only: an encoder
head gets top1 0 and no rank), faithfulness (the forecast's mean squared change when the head's rows become uniform)
and atp (mean |AtP| over window pairs, from analysis.circuits.attribution when it is there; else skipped, said so).

Note: blank_out scores a step by the ΔMSE its removal causes, the quantity comprehensiveness and sufficiency measure
(per step, not per cell): expect it to lead there by construction; AUP, AUR and AUPRC are the answer-based test.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import torch

from analysis.circuits.scores import DRAWS, SHARE, removal_scores, white_box

KINDS = ("seasonal_ar", "driver", "spikes")
INPUT_INSTRUMENTS = ("integrated_gradients", "occlusion", "blank_out", "rollout", "flow", "attention", "random")
HEAD_INSTRUMENTS = ("ablation", "gradient_importance", "direct_share", "faithfulness", "atp")
INPUT_METRICS = ("aup", "aur", "auprc", "comprehensiveness", "comprehensiveness_excess", "sufficiency",
                 "sufficiency_excess")
HEAD_METRICS = ("top1", "rank")
COLUMNS = ("kind", "seed", "instrument", "metric", "value", "low", "high", "windows", "note")
TIME_ONLY = ("blank_out", "rollout", "flow", "attention")
FLOW_EDGES = 400_000  # as the self-test: flow is scored where one window's graph has at most this many edges

Progress = Callable[[int, int], None]


def _train_defaults():
    from analysis.learning.training import TrainSettings

    return TrainSettings()


@dataclass(frozen=True)
class BenchmarkSettings:
    """What the benchmark generates, trains and scores. `training`'s seed is replaced by each benchmark seed."""

    kinds: tuple[str, ...] = KINDS
    seeds: tuple[int, ...] = (0, 1, 2)
    rows: int = 10_080  # hourly rows per series (the generator's default: 14 weeks)
    lag: int = 24  # the target's seasonal lag (coefficient 0.9)
    driver_lag: int = 6
    irrelevant: int = 3  # driver: irrelevant columns beside the driver (the other kinds: 1, and 1 decoy)
    seq_len: int = 96
    label_len: int = 48
    pred_len: int = 24
    d_model: int = 32
    n_heads: int = 4
    d_ff: int = 64
    e_layers: tuple[int, ...] = (2,)
    d_layers: int = 1
    training: object = field(default_factory=_train_defaults)
    windows: int = 12  # test windows the input instruments are scored on
    ig_steps: int = 32
    share: float = SHARE
    draws: int = DRAWS
    profile_windows: int = 256  # head_at_lag (the self-test's default)
    head_windows: int = 1024  # ablation and gradient importance (the first windows of the test split)
    share_windows: int = 64  # direct shares
    faithfulness_windows: int = 64
    atp_pairs: int = 64

    def __post_init__(self):
        from analysis.planted.synth import KINDS as ALL

        bad = [k for k in self.kinds if k not in ALL]
        if not self.kinds or bad:
            raise ValueError(f"kinds must be some of {', '.join(ALL)}, got {', '.join(self.kinds) or 'none'}")
        if not self.seeds or min(self.seeds) < 0:
            raise ValueError("give at least one seed, each ≥ 0")
        if not 0 < self.share < 1 or self.windows < 1 or self.draws < 1 or self.ig_steps < 2:
            raise ValueError("share must lie in (0, 1), windows and draws be ≥ 1, ig_steps ≥ 2")

    @classmethod
    def quick(cls, kinds: tuple[str, ...] = ("seasonal_ar",), seeds: tuple[int, ...] = (0,)) -> "BenchmarkSettings":
        """For tests and CI: a tiny model (d_model 16, 2 heads), 1,500 rows, seq 48 / label 24 / pred 12, lag 12,
        one short epoch, 4 windows, few steps."""
        from analysis.learning.training import TrainSettings

        return cls(kinds=tuple(kinds), seeds=tuple(seeds), rows=1500, lag=12, driver_lag=4, irrelevant=2, seq_len=48,
                   label_len=24, pred_len=12, d_model=16, n_heads=2, d_ff=32,
                   training=TrainSettings(epochs=1, max_steps_per_epoch=8, learning_rate=1e-2), windows=4,
                   ig_steps=8, draws=2, profile_windows=16, head_windows=32, share_windows=8,
                   faithfulness_windows=8, atp_pairs=4)

    def describe(self) -> dict:
        t = self.training
        return {"kinds": ", ".join(self.kinds), "seeds": ", ".join(map(str, self.seeds)),
                "series": f"{self.rows:,} hourly rows; lag {self.lag} (coef 0.9); driver lag {self.driver_lag}",
                "windows": f"seq {self.seq_len} / label {self.label_len} / pred {self.pred_len}, features MS",
                "model": f"d_model {self.d_model}, {self.n_heads} heads, d_ff {self.d_ff}, e_layers "
                         f"{','.join(map(str, self.e_layers))}, d_layers {self.d_layers}, ProbSparse (the defaults)",
                "training": t.describe() + (f", ≤ {t.max_steps_per_epoch} steps per epoch"
                                            if t.max_steps_per_epoch else ""),
                "scoring": f"{self.windows} test windows, IG {self.ig_steps} steps, top {self.share:.0%} of cells, "
                           f"{self.draws} random draws; head profiles {self.profile_windows}, ablation / importance "
                           f"{self.head_windows}, direct shares {self.share_windows}, faithfulness "
                           f"{self.faithfulness_windows} windows, AtP {self.atp_pairs} pairs"}


@dataclass(frozen=True, eq=False)
class BenchmarkResult:
    """scores: the long table (COLUMNS); notes: what was skipped or chosen, per run; seconds: wall time."""

    scores: pd.DataFrame
    settings: BenchmarkSettings
    notes: tuple[str, ...]
    seconds: float

    def summary(self) -> pd.DataFrame:
        return summary_table(self.scores)


# --------------------------------------------------------------------------------------------
# Data and model
# --------------------------------------------------------------------------------------------
def synth_spec(kind: str, seed: int, settings: BenchmarkSettings):
    """The SynthSpec of one run: seasonal_ar and spikes with one irrelevant column and one decoy (the target's season,
    unread); driver with `irrelevant` irrelevant columns beside the driver."""
    from analysis.planted.synth import SynthSpec

    common = dict(kind=kind, rows=settings.rows, seed=seed, lags=(settings.lag,), coefs=(0.9,))
    if kind == "driver":
        return SynthSpec(**common, irrelevant=settings.irrelevant, driver_lag=settings.driver_lag)
    return SynthSpec(**common, irrelevant=1, decoys=1)


def train_run(kind: str, seed: int, settings: BenchmarkSettings):
    """(model in eval mode, prepared, frame, answer) of one (kind, seed)."""
    from analysis.data import DataSpec, load_csv, prepare
    from analysis.learning.training import config_for, train
    from analysis.planted.synth import generate

    table, answer = generate(synth_spec(kind, seed, settings))
    frame = load_csv(table.to_csv(index=False).encode("utf-8"))
    prepared = prepare(frame, DataSpec(answer.target, "MS", settings.seq_len, settings.label_len, settings.pred_len))
    config = config_for(prepared, d_model=settings.d_model, n_heads=settings.n_heads, d_ff=settings.d_ff,
                        e_layers=tuple(settings.e_layers), d_layers=settings.d_layers)
    result = train(prepared, config, replace(settings.training, seed=int(seed)))
    model = result.model.eval()
    return model, prepared, frame, answer


# --------------------------------------------------------------------------------------------
# Input instruments
# --------------------------------------------------------------------------------------------
def scored_windows(prepared, answer, steps, count: int) -> tuple[np.ndarray, int]:
    """(up to `count` test windows spread evenly whose every probe step reads every planted cell, the span of the
    intervals: overlap_span of their closest spacing; 1 when they are a whole seq_len + pred_len apart)."""
    from analysis.intervals import overlap_span
    from analysis.learning.windows import WindowDataset
    from analysis.planted.known_answer import planted_cells

    spec = prepared.spec
    total = len(WindowDataset(prepared, "test"))
    usable = [w for w in range(total) if all(planted_cells(answer, prepared, "test", w, h) is not None for h in steps)]
    if not usable:
        raise ValueError("no test window reads every planted (column, lag): the lags exceed seq_len")
    stride = max(1, len(usable) // count)
    chosen = np.asarray(usable[::stride][:count], dtype=np.int64)
    gaps = np.diff(chosen)
    return chosen, overlap_span(spec.seq_len, spec.pred_len, int(gaps.min()) if len(gaps) else spec.seq_len +
                                spec.pred_len)


def true_mask(answer, prepared, window: int, step: int, radius: int) -> np.ndarray:
    """[seq_len, enc_in] the planted cells of (window, step) ± radius steps in time (module docstring)."""
    from analysis.planted.known_answer import planted_cells

    cells = planted_cells(answer, prepared, "test", int(window), int(step))
    mask = np.zeros((prepared.spec.seq_len, prepared.enc_in), dtype=bool)
    for p, c in zip(cells.positions, cells.columns):
        mask[max(0, p - radius):p + radius + 1, c] = True
    return mask


def window_forecaster(model, mark_enc: torch.Tensor, mark_dec: torch.Tensor, column_index: int, seed: int):
    """x [N, seq_len, enc_in] → [N, pred_len] the target column's forecast, the decoder's known tail rebuilt from x
    (as Integrated Gradients does), one key sample (`seed`) per call."""
    from model import Batch, key_generator

    from analysis.learning.windows import decoder_values

    c = model.config
    device = next(model.parameters()).device

    def forecast(x: torch.Tensor) -> torch.Tensor:
        x = x.to(device=device, dtype=torch.float32)
        N = x.shape[0]
        batch = Batch(x, mark_enc.to(device).expand(N, -1, -1), decoder_values(x, c.label_len, c.pred_len),
                      mark_dec.to(device).expand(N, -1, -1))
        with torch.no_grad():
            return model(batch, generator=key_generator(seed))[:, :, column_index]

    return forecast


def _spread(time_scores: np.ndarray, columns: int) -> np.ndarray:
    """[T, L] → [T, L, C]: every column of a step gets the step's score."""
    return np.repeat(np.asarray(time_scores, dtype=np.float64)[:, :, None], columns, axis=2)


def input_maps(model, prepared, answer, window: int, steps, *, seed: int, ig_steps: int,
               rng: np.random.Generator) -> tuple[dict[str, np.ndarray], list[str]]:
    """Every input instrument's [len(steps), seq_len, enc_in] map of one test window, and notes (what was skipped)."""
    from analysis.anatomy.flow import flow, flow_edges
    from analysis.anatomy.relevance import blank_out_delta
    from analysis.anatomy.rollout import record_pieces, rollout, window_graph
    from analysis.anatomy.true_rows import token_rows
    from analysis.attention.recording import window_batch
    from analysis.learning.windows import WindowDataset
    from analysis.planted.selftest import integrated_gradients

    L, C = prepared.spec.seq_len, prepared.enc_in
    steps = np.asarray(steps, dtype=np.int64)
    T = len(steps)
    notes = []
    maps = {"integrated_gradients": np.stack([
        np.abs(integrated_gradients(model, prepared, "test", window, int(h), answer.target, seed, ig_steps))
        for h in steps])}

    x, mark, _, mark_dec, _ = WindowDataset(prepared, "test")[int(window)]
    forecast = window_forecaster(model, mark, mark_dec, list(prepared.target_columns).index(answer.target), seed)
    copies = x.unsqueeze(0).repeat(L * C + 1, 1, 1)  # row 0: the window; row 1 + p·C + c: cell (p, c) at 0
    cells = torch.arange(L * C)
    copies[1 + cells, cells // C, cells % C] = 0.0
    out = torch.cat([forecast(copies[i:i + 256]) for i in range(0, len(copies), 256)]).double().numpy()
    maps["occlusion"] = np.abs(out[1:, steps - 1] - out[:1, steps - 1]).T.reshape(T, L, C)

    maps["blank_out"] = _spread(np.concatenate([blank_out_delta(model, prepared, "test", np.array([window]),
                                                                np.array([h]), seed) for h in steps]), C)
    pieces = record_pieces(model, window_batch(prepared, "test", [int(window)]), seed)
    graph = window_graph(model, pieces, 0)
    maps["rollout"] = _spread(rollout(graph, steps).inputs, C)
    if flow_edges(graph) <= FLOW_EDGES:
        maps["flow"] = _spread(flow(graph, steps)[0].inputs, C)
    else:
        notes.append(f"flow not scored: one window's graph has {flow_edges(graph):,} edges (over {FLOW_EDGES:,})")
    first = model.sites[0].name  # the first encoder layer of the first replica: its positions are the input steps
    received = token_rows(pieces.true[first], 0).mean(axis=0)  # [L_K]: attention each key position receives
    attention = np.zeros(L)
    np.add.at(attention, graph.steps[0], received)
    maps["attention"] = _spread(np.repeat(attention[None], T, axis=0), C)
    maps["random"] = rng.random((T, L, C))
    return maps, notes


def _interval_rows(kind, seed, instrument, metric, values, span, note=""):
    from analysis.intervals import window_means

    values = np.asarray(values, dtype=np.float64)
    if not len(values):
        return {"kind": kind, "seed": seed, "instrument": instrument, "metric": metric, "value": math.nan,
                "low": math.nan, "high": math.nan, "windows": 0, "note": note or "no window"}
    m = window_means(values, span=span)
    reason = m.reasons()[0]
    return {"kind": kind, "seed": seed, "instrument": instrument, "metric": metric, "value": float(m.estimate),
            "low": float(m.lo), "high": float(m.hi), "windows": len(values),
            "note": "; ".join(n for n in (note, reason) if n)}


def score_inputs(model, prepared, answer, settings: BenchmarkSettings, *, kind: str, seed: int,
                 tick: Callable[[], None] = lambda: None) -> tuple[list[dict], list[str]]:
    """The input instruments' rows of one run (one per instrument × metric), and notes."""
    from analysis.learning.windows import WindowDataset
    from analysis.planted.known_answer import probe_steps, receptive_radius

    steps = probe_steps(answer, prepared.spec.pred_len)
    windows, span = scored_windows(prepared, answer, steps, settings.windows)
    radius = receptive_radius(model.config)
    column = list(prepared.target_columns).index(answer.target)
    dataset = WindowDataset(prepared, "test")
    rng = np.random.default_rng([int(seed), 20240])
    per = {}  # (instrument, metric) → [per-window values]
    notes: list[str] = []
    for w in windows:
        maps, why = input_maps(model, prepared, answer, int(w), steps, seed=seed, ig_steps=settings.ig_steps, rng=rng)
        notes += [n for n in why if n not in notes]
        masks = [true_mask(answer, prepared, int(w), h, radius) for h in steps]
        for name, scores in maps.items():
            figures = [white_box(scores[t], masks[t]) for t in range(len(steps))]
            for metric in ("aup", "aur", "auprc"):
                per.setdefault((name, metric), []).append(float(np.mean([f[metric] for f in figures])))
        x, mark, _, mark_dec, y = dataset[int(w)]
        forecast = window_forecaster(model, mark, mark_dec, column, seed)
        removal = removal_scores(forecast, x.numpy(), y[:, column].numpy(), steps, maps, share=settings.share,
                                 draws=settings.draws, rng=rng)
        for name, figures in removal.items():
            for metric in INPUT_METRICS[3:]:
                per.setdefault((name, metric), []).append(figures[metric])
        tick()
    spread = "; time only, spread over the columns"
    rows = []
    for instrument in INPUT_INSTRUMENTS:
        for metric in INPUT_METRICS:
            if (instrument, metric) not in per:
                continue
            note = f"steps {','.join(map(str, steps))}; true cells ± {radius}" + (spread if instrument in TIME_ONLY
                                                                                  else "")
            rows.append(_interval_rows(kind, seed, instrument, metric, per[(instrument, metric)], span, note))
    return rows, notes


# --------------------------------------------------------------------------------------------
# Head instruments
# --------------------------------------------------------------------------------------------
def rank_of(scores: np.ndarray, index: int) -> float:
    """1-based rank of scores[index] from the largest, tied scores at their mean rank."""
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    s = scores[index]
    return float(1 + np.sum(scores > s) + (np.sum(scores == s) - 1) / 2)


def _head_rows(kind, seed, instrument, scores: np.ndarray | None, planted: int | None, note: str) -> list[dict]:
    base = {"kind": kind, "seed": seed, "instrument": instrument, "low": math.nan, "high": math.nan, "windows": 0}
    if scores is None or planted is None:
        return [{**base, "metric": m, "value": math.nan, "note": note} for m in HEAD_METRICS]
    rank = rank_of(scores, planted)
    return [{**base, "metric": "top1", "value": float(rank == 1.0), "note": note},
            {**base, "metric": "rank", "value": rank, "note": note}]


def _atp_scores(model, prepared, settings, seed) -> tuple[np.ndarray | None, str]:
    """Mean |AtP| per head over window pairs, or (None, why) when analysis.circuits.attribution is not there."""
    try:
        from analysis.circuits.attribution import atp_estimates, pair_windows
    except ImportError as err:  # being written elsewhere: skipped, said so
        return None, f"skipped: analysis.circuits.attribution is not importable ({err})"
    from analysis.attention.recording import window_batch

    pairs = pair_windows(prepared, "test", settings.atp_pairs)
    values = []
    for start in range(0, len(pairs.clean), 16):
        A = window_batch(prepared, "test", pairs.clean[start:start + 16])
        B = window_batch(prepared, "test", pairs.corrupt[start:start + 16])
        values.append(atp_estimates(model, A, B, seed)[0])  # [K, n_sites, H]
    return np.abs(np.concatenate(values)).mean(axis=0).reshape(-1), f"mean |AtP| over {len(pairs.clean)} pairs"


def score_heads(model, prepared, answer, settings: BenchmarkSettings, *, kind: str, seed: int,
                tick: Callable[[], None] = lambda: None) -> tuple[list[dict], list[str]]:
    """The head instruments' rows of one run, and notes."""
    from analysis.anatomy.direct import direct_shares, top_heads
    from analysis.heads.ablation import head_sweep
    from analysis.heads.faithfulness import attention_baselines
    from analysis.heads.importance import head_importance
    from analysis.heads.masking import head_label
    from analysis.planted.selftest_heads import head_at_lag

    H = model.config.n_heads
    lags = sorted({int(r["lag"]) for r in answer.relevant if r["column"] == answer.target})
    found, head = head_at_lag(model, prepared, lags, seed=seed, windows=settings.profile_windows)
    base = {"kind": kind, "seed": seed, "instrument": "lag_profile", "windows": 0, "note": found["detail"]}
    rows = [{**base, "metric": "planted_lag_mass", "value": found["figure"], "low": found["lo"], "high": found["hi"]},
            {**base, "metric": "planted_head_found", "low": math.nan, "high": math.nan,
             "value": math.nan if found["passed"] is None else float(bool(found["passed"]))}]
    tick()
    if head is None:
        notes = [f"{kind} seed {seed}: no planted head ({found['detail']}); head instruments not scored"]
        for name in HEAD_INSTRUMENTS:
            rows += _head_rows(kind, seed, name, None, None, "no planted head")
            tick()
        return rows, notes
    planted = head[0] * H + head[1]
    label = head_label(model, *head)
    notes = [f"{kind} seed {seed}: planted head {label}"]
    total = model.n_sites * H

    sweep = head_sweep(model, prepared, "test", seed=seed, max_windows=settings.head_windows).table
    sweep = sweep[sweep["head"] >= 0]
    scores = np.zeros(total)
    scores[sweep["site_index"].to_numpy() * H + sweep["head"].to_numpy()] = sweep["delta_mse"].to_numpy()
    rows += _head_rows(kind, seed, "ablation", scores, planted, f"planted {label}; zero ablation ΔMSE, "
                       f"{settings.head_windows} windows")
    tick()

    table = head_importance(model, prepared, "test", seed=seed, max_windows=settings.head_windows, null=False).table
    scores = np.zeros(total)
    scores[table["site_index"].to_numpy() * H + table["head"].to_numpy()] = table["importance"].to_numpy()
    rows += _head_rows(kind, seed, "gradient_importance", scores, planted, f"planted {label}; E|∂L/∂gate|")
    tick()

    shares = direct_shares(model, prepared, "test", windows=settings.share_windows, seed=seed)
    ranked = top_heads(shares, k=len(shares.heads))
    ranked = ranked[ranked["column"] == answer.target]
    part = f"{model.sites[head[0]].name}:{head[1]}"
    if part in set(ranked["part"]):
        order = list(ranked["part"])
        values = ranked["mean_abs"].to_numpy()
        rows += _head_rows(kind, seed, "direct_share", values, order.index(part), f"planted {label}; mean |share|")
    else:
        base = {"kind": kind, "seed": seed, "instrument": "direct_share", "low": math.nan, "high": math.nan,
                "windows": 0}
        why = f"planted {label} is an encoder head: direct shares rank decoder heads only"
        rows += [{**base, "metric": "top1", "value": 0.0, "note": why},
                 {**base, "metric": "rank", "value": math.nan, "note": why}]
    tick()

    faith = attention_baselines(model, prepared, split="test", seed=seed, max_windows=settings.faithfulness_windows,
                                draws=1, key_seeds=1).table
    index = {s.name: s.index for s in model.sites}
    scores = np.zeros(total)
    scores[faith["site"].map(index).to_numpy() * H + faith["head"].to_numpy()] = faith["uniform_change"].to_numpy()
    rows += _head_rows(kind, seed, "faithfulness", scores, planted,
                       f"planted {label}; mean squared forecast change, uniform rows")
    tick()

    try:
        scores, why = _atp_scores(model, prepared, settings, seed)
    except Exception as err:  # noqa: BLE001 — another engineer's module in progress: reported, not fatal
        scores, why = None, f"skipped: AtP failed ({type(err).__name__}: {str(err)[:120]})"
    if scores is None:
        notes.append(f"{kind} seed {seed}: atp {why}")
    rows += _head_rows(kind, seed, "atp", scores, planted, f"planted {label}; {why}")
    tick()
    return rows, notes


# --------------------------------------------------------------------------------------------
# The whole benchmark
# --------------------------------------------------------------------------------------------
def _units(settings: BenchmarkSettings) -> int:
    return len(settings.kinds) * len(settings.seeds) * (1 + settings.windows + 1 + len(HEAD_INSTRUMENTS))


def run_benchmark(settings: BenchmarkSettings = BenchmarkSettings(), *, progress: Progress | None = None,
                  say: Callable[[str], None] | None = None) -> BenchmarkResult:
    """Generate, train and score every (kind, seed) of `settings`. progress(done, total) after each unit (a training,
    a window, a head instrument); say(text) names each stage."""
    started = time.perf_counter()
    total, done = _units(settings), 0
    say = say or (lambda text: None)

    def tick():
        nonlocal done
        done += 1
        if progress is not None:
            progress(min(done, total), total)

    rows, notes = [], []
    for kind in settings.kinds:
        for seed in settings.seeds:
            say(f"{kind} seed {seed}: training")
            began = time.perf_counter()
            model, prepared, frame, answer = train_run(kind, seed, settings)
            trained = time.perf_counter() - began
            tick()
            rows.append(_learned_row(model, prepared, frame, answer, kind, seed, trained))
            say(f"{kind} seed {seed}: input instruments")
            found, why = score_inputs(model, prepared, answer, settings, kind=kind, seed=seed, tick=tick)
            rows += found
            notes += [f"{kind} seed {seed}: {n}" for n in why]
            done = max(done, _done_before(settings, kind, seed) + 1 + settings.windows)
            say(f"{kind} seed {seed}: head instruments")
            found, why = score_heads(model, prepared, answer, settings, kind=kind, seed=seed, tick=tick)
            rows += found
            notes += why
    if progress is not None:
        progress(total, total)
    scores = pd.DataFrame(rows, columns=list(COLUMNS))
    return BenchmarkResult(scores, settings, tuple(notes), time.perf_counter() - started)


def _done_before(settings, kind, seed) -> int:
    runs = settings.kinds.index(kind) * len(settings.seeds) + settings.seeds.index(seed)
    return runs * (1 + settings.windows + 1 + len(HEAD_INSTRUMENTS))


def _learned_row(model, prepared, frame, answer, kind, seed, seconds) -> dict:
    """The model's test MSE over the Bayes MSE of the same windows (the self-test's `learned` row)."""
    from analysis.planted.selftest import LEARNED, _learned

    row = _learned(model, prepared, frame, answer, seed)
    return {"kind": kind, "seed": seed, "instrument": "model", "metric": "mse_over_bayes", "value": row["figure"],
            "low": row["lo"], "high": row["hi"], "windows": 0,
            "note": f"{row['detail']}; learned (≤ {LEARNED:g}): {bool(row['passed'])}; trained in {seconds:.0f} s"}


def summary_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds per (metric, instrument, kind): metric, instrument, kind, value, seeds (finite values)."""
    finite = scores[np.isfinite(scores["value"].astype(float))]
    grouped = finite.groupby(["metric", "instrument", "kind"], sort=False)["value"]
    out = grouped.agg(value="mean", seeds="count").reset_index()
    return out


def metric_tables(scores: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per metric: instruments × kinds, the mean over seeds (instruments in the benchmark's order)."""
    summary = summary_table(scores)
    order = ["model", *INPUT_INSTRUMENTS, "lag_profile", *HEAD_INSTRUMENTS]
    tables = {}
    for metric, part in summary.groupby("metric", sort=False):
        wide = part.pivot(index="instrument", columns="kind", values="value")
        wide = wide.reindex([i for i in order if i in wide.index] + [i for i in wide.index if i not in order])
        kinds = [k for k in scores["kind"].drop_duplicates() if k in wide.columns]
        tables[metric] = wide[kinds].reset_index()
    return tables


METRIC_TEXT = {
    "mse_over_bayes": "the model's test MSE over the Bayes MSE of the same windows (≤ 1.5: learned)",
    "aup": "area under precision(τ) against the true cells, scores scaled to [0, 1] (higher: better)",
    "aur": "area under recall(τ) (higher: better)",
    "auprc": "average precision Σ (R_n − R_{n−1}) P_n (chance: the share of true cells)",
    "comprehensiveness": "ΔMSE of the probed steps when the instrument's top cells are set to the training mean "
                         "(higher: better)",
    "comprehensiveness_excess": "comprehensiveness minus that of as many random cells, paired per window (> 0: "
                                "better than random)",
    "sufficiency": "ΔMSE when only the top cells are kept, the rest at the training mean (lower: better)",
    "sufficiency_excess": "sufficiency minus that of as many random cells kept (< 0: better than random)",
    "planted_lag_mass": "the chosen head's attention mass within a layer step of the planted lag, on held-out windows",
    "planted_head_found": "1 when the head chosen by its lag profile peaks at a planted lag with mass above uniform "
                          "(its interval; none without one)",
    "top1": "1 when the instrument ranks the planted head first",
    "rank": "the rank it gives the planted head (1 = first)",
}


def benchmark_report(result: BenchmarkResult):
    """The offline HTML report (analysis.reports.html): a table per metric, instruments × kinds, mean over seeds."""
    from analysis.reports.html import Report, ReportSection

    s = result.settings
    sections = [ReportSection("What was scored", __doc__.split("\n\n", 1)[1].strip())]
    for metric, table in metric_tables(result.scores).items():
        sections.append(ReportSection(metric, METRIC_TEXT.get(metric, ""),
                                      tables=((f"{metric}: mean over seeds {', '.join(map(str, s.seeds))}", table),)))
    sections.append(ReportSection("Notes", "\n\n".join(result.notes) or "none"))
    sections.append(ReportSection("Every score", "Per kind, seed, instrument and metric, with the 95 % interval over "
                                  "windows where there is one.", tables=(("scores", result.scores),)))
    provenance = {**s.describe(), "wall time": f"{result.seconds:.0f} s",
                  "torch threads": torch.get_num_threads()}
    return Report("Instrument benchmark against planted answers", tuple(sections), provenance)


def write_benchmark(result: BenchmarkResult, folder: str | Path) -> tuple[Path, Path]:
    """Write FOLDER/scores.csv and FOLDER/report.html. → their paths."""
    from analysis.outputs import write_bytes
    from analysis.reports.html import write_report

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    scores = folder / "scores.csv"
    write_bytes(scores, result.scores.to_csv(index=False).encode("utf-8"), "--out")
    html = write_report(benchmark_report(result), folder / "report.html")
    return scores, html


__all__ = ["BenchmarkResult", "BenchmarkSettings", "COLUMNS", "HEAD_INSTRUMENTS", "INPUT_INSTRUMENTS",
           "INPUT_METRICS", "KINDS", "benchmark_report", "input_maps", "metric_tables", "rank_of", "run_benchmark",
           "score_heads", "score_inputs", "scored_windows", "summary_table", "synth_spec", "train_run", "true_mask",
           "window_forecaster", "write_benchmark"]
