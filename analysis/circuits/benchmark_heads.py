"""The benchmark's head instruments (analysis.circuits.benchmark's docstring says what each scores): the planted head
found by its lag profile, then each instrument's rank of it."""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from informer_lab.analysis.circuits.scores import HEAD_INSTRUMENTS, head_rows, random_head_rows


def _atp_scores(model, prepared, settings, seed) -> tuple[np.ndarray | None, str]:
    """Mean |AtP| per head over window pairs, or (None, why) when analysis.circuits.attribution is not there."""
    try:
        from informer_lab.analysis.circuits.attribution import atp_estimates, pair_windows
    except ImportError as err:  # being written elsewhere: skipped, said so
        return None, f"skipped: analysis.circuits.attribution is not importable ({err})"
    from informer_lab.analysis.attention.recording import window_batch

    pairs = pair_windows(prepared, "test", settings.atp_pairs)
    values = []
    for start in range(0, len(pairs.clean), 16):
        A = window_batch(prepared, "test", pairs.clean[start:start + 16])
        B = window_batch(prepared, "test", pairs.corrupt[start:start + 16])
        values.append(atp_estimates(model, A, B, seed)[0])  # [K, n_sites, H]
    return np.abs(np.concatenate(values)).mean(axis=0).reshape(-1), f"mean |AtP| over {len(pairs.clean)} pairs"


def score_heads(model, prepared, answer, settings, *, kind: str, seed: int,
                tick: Callable[[], None] = lambda: None) -> tuple[list[dict], list[str]]:
    """The head instruments' rows of one run, and notes."""
    from informer_lab.analysis.anatomy.direct import direct_shares, top_heads
    from informer_lab.analysis.heads.ablation import head_sweep
    from informer_lab.analysis.heads.faithfulness import attention_baselines
    from informer_lab.analysis.heads.importance import head_importance
    from informer_lab.analysis.heads.masking import head_label
    from informer_lab.analysis.planted.selftest_heads import head_at_lag

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
            rows += head_rows(kind, seed, name, None, None, "no planted head")
            tick()
        return rows, notes
    planted, label = head[0] * H + head[1], head_label(model, *head)
    notes = [f"{kind} seed {seed}: planted head {label}"]
    rows += random_head_rows(kind, seed, model.n_sites * H)

    def by_head(sites, heads, values) -> np.ndarray:  # one score per (site, head), in gate order
        scores = np.zeros(model.n_sites * H)
        scores[np.asarray(sites) * H + np.asarray(heads)] = np.asarray(values, dtype=np.float64)
        return scores

    t = head_sweep(model, prepared, "test", seed=seed, max_windows=settings.head_windows).table.query("head >= 0")
    rows += head_rows(kind, seed, "ablation", by_head(t.site_index, t["head"], t.delta_mse), planted,
                      f"planted {label}; zero-ablation ΔMSE, first {settings.head_windows} test windows")
    tick()
    t = head_importance(model, prepared, "test", seed=seed, max_windows=settings.head_windows, null=False).table
    rows += head_rows(kind, seed, "gradient_importance", by_head(t.site_index, t["head"], t.importance), planted,
                      f"planted {label}; E|∂L/∂gate|")
    tick()
    t = top_heads(direct_shares(model, prepared, "test", windows=settings.share_windows, seed=seed), k=10 ** 6)
    t = t[t["column"] == answer.target].reset_index(drop=True)  # decoder heads only
    part = f"{model.sites[head[0]].name}:{head[1]}"
    found_at = t.index[t["part"] == part]
    rows += head_rows(kind, seed, "direct_share", t.mean_abs.to_numpy(), int(found_at[0]) if len(found_at) else -1,
                      f"planted {label}; mean |share|" if len(found_at) else
                      f"planted {label} is an encoder head: direct shares rank decoder heads only")
    tick()
    t = attention_baselines(model, prepared, split="test", seed=seed, max_windows=settings.faithfulness_windows,
                            draws=1, key_seeds=1).table
    index = {s.name: s.index for s in model.sites}
    rows += head_rows(kind, seed, "faithfulness", by_head(t.site.map(index), t["head"], t.uniform_change), planted,
                      f"planted {label}; mean squared forecast change, uniform rows")
    tick()
    try:
        scores, why = _atp_scores(model, prepared, settings, seed)
    except Exception as err:  # noqa: BLE001 — AtP failing on one model is reported, not fatal to the benchmark
        scores, why = None, f"skipped: AtP failed ({type(err).__name__}: {str(err)[:120]})"
    if scores is None:
        notes.append(f"{kind} seed {seed}: atp {why}")
    rows += head_rows(kind, seed, "atp", scores, planted, f"planted {label}; {why}")
    tick()
    return rows, notes


__all__ = ["score_heads"]
