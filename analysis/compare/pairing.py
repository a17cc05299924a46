"""Two models on the same data, side by side: the same windows, the same scale, and what differs.

Two checkpoints may read the same CSV with different seq_len, pred_len or scalers (each fits its own on its
train rows). So "the same window" is defined by the data, not by an index: window i of a split is matched with
the other model's window whose encoder input ends at the same row of the CSV (its forecast starts at the same
timestamp). On val and test, whose splits start seq_len rows before their border, that is window i again for
any two seq_len; on short data or on train it is not, and this module finds the match or says there is none.
Forecasts are compared in the first model's standardised scale: the second's are un-scaled with its own scaler
and re-scaled with the first's.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import ConfigError


def forecast_start_rows(prepared: PreparedData, split: str) -> np.ndarray:
    """[windows] the CSV row at which each window of the split starts its forecast (= where its encoder input
    ends, exclusive)."""
    part = prepared.split(split)
    spec = prepared.spec
    n = max(0, len(part) - spec.seq_len - spec.pred_len + 1)
    return part.start + spec.seq_len + np.arange(n)


def matching_window(first: PreparedData, second: PreparedData, split: str, window: int) -> int | None:
    """The second model's window of `split` whose forecast starts at the row where `first`'s window `window`
    starts its forecast; None when the second model has no such window."""
    rows = forecast_start_rows(second, split)
    row = forecast_start_rows(first, split)[window]
    j = int(row - (rows[0] if len(rows) else 0))
    return j if 0 <= j < len(rows) and rows[j] == row else None


def windows_needed(first: PreparedData, second: PreparedData, split: str) -> int | None:
    """How many of the second model's first windows of `split` cover every window `first` has (its last match and
    all before it); None when the second model has none. To forecast only those (`windows.limit_windows`)."""
    a, b = forecast_start_rows(first, split), forecast_start_rows(second, split)
    if not len(a) or not len(b):
        return None
    return int(max(1, a[-1] - b[0] + 1))


def common_windows(first: PreparedData, second: PreparedData, split: str) -> tuple[np.ndarray, np.ndarray]:
    """Indices (into each model's windows of `split`) of the windows both have, matched by forecast start."""
    a, b = forecast_start_rows(first, split), forecast_start_rows(second, split)
    shared, ia, ib = np.intersect1d(a, b, assume_unique=True, return_indices=True)
    return ia, ib


def forecast_misfit(first: PreparedData, second: PreparedData) -> str | None:
    """Why the two models' forecasts cannot be scored against each other window by window, or None."""
    if first.spec.pred_len != second.spec.pred_len:
        return (f"the models forecast different horizons (pred_len {first.spec.pred_len} and "
                f"{second.spec.pred_len}); paired errors need the same steps")
    if tuple(first.target_columns) != tuple(second.target_columns):
        return (f"the models forecast different columns ({', '.join(first.target_columns)} and "
                f"{', '.join(second.target_columns)})")
    return None


def rescale(forecast: np.ndarray, source: PreparedData, target: PreparedData) -> np.ndarray:
    """[..., c_out] standardised by `source`'s scaler → the same values standardised by `target`'s."""
    columns = tuple(source.target_columns)
    original = source.scaler.inverse_transform(np.asarray(forecast, dtype=np.float64), columns)
    return target.scaler.transform(original, tuple(target.target_columns))


def aligned_forecasts(second_forecasts: np.ndarray, first: PreparedData, second: PreparedData,
                      split: str) -> np.ndarray:
    """The second model's forecasts of every window of `split` [N_b, pred_len, c_out] (its own scale), reordered
    onto the first model's windows [N_a, pred_len, c_out] and put in the first's scale.

    ConfigError when the forecasts cannot be paired (`forecast_misfit`) or the second model lacks some of the
    first's windows (say which, so the user can pick a split where they overlap)."""
    why = forecast_misfit(first, second)
    if why is not None:
        raise ConfigError(why)
    ia, ib = common_windows(first, second, split)
    n = len(forecast_start_rows(first, split))
    if len(ia) < n:
        raise ConfigError(f"the second model has only {len(ia)} of the first's {n} {split} windows (its seq_len "
                          f"{second.spec.seq_len} and split borders differ); compare on another split")
    out = np.empty((n, *np.shape(second_forecasts)[1:]), dtype=np.float64)
    out[ia] = np.asarray(second_forecasts, dtype=np.float64)[ib]
    return rescale(out, second, first)


def selection_overlap(queries_a: pd.DataFrame, queries_b: pd.DataFrame) -> pd.DataFrame:
    """Per (site, head) both models have, on one window each: how the two ProbSparse selections differ.

    queries_*: SparsityReport.queries of one window and seed (columns site, head, timestamp, selected, exact_m),
    the two windows matched by `matching_window`. Queries are matched by `timestamp`, that of the step their
    span starts at, so two models of different seq_len or label_len are compared on the steps both read. Columns: site, head, queries (matched), selected_a, selected_b, both,
    only_a, only_b, jaccard (|A ∩ B| / |A ∪ B| of the selected sets; NaN when neither selects), spearman (of the
    exact M over the matched queries: do the heads rank the queries alike?).
    """
    from scipy.stats import spearmanr  # at use: importing scipy.stats costs ~1.5 s of CPU in every process

    keys = ["site", "head", "timestamp"]
    a = queries_a[keys + ["selected", "exact_m"]]
    b = queries_b[keys + ["selected", "exact_m"]]
    both = a.merge(b, on=keys, suffixes=("_a", "_b"))
    rows = []
    for (site, head), part in both.groupby(["site", "head"], sort=False):
        sa, sb = part["selected_a"].to_numpy(bool), part["selected_b"].to_numpy(bool)
        union = int((sa | sb).sum())
        rho = spearmanr(part["exact_m_a"], part["exact_m_b"]).statistic if len(part) > 2 else np.nan
        rows.append({"site": site, "head": int(head), "queries": len(part), "selected_a": int(sa.sum()),
                     "selected_b": int(sb.sum()), "both": int((sa & sb).sum()), "only_a": int((sa & ~sb).sum()),
                     "only_b": int((~sa & sb).sum()),
                     "jaccard": (sa & sb).sum() / union if union else np.nan, "spearman": float(rho)})
    return pd.DataFrame(rows, columns=["site", "head", "queries", "selected_a", "selected_b", "both", "only_a",
                                       "only_b", "jaccard", "spearman"])


def side_by_side(table_a: pd.DataFrame, table_b: pd.DataFrame, keys: list[str], values: list[str]) -> pd.DataFrame:
    """An outer join of two per-key tables: each value as `<value>_a`, `<value>_b`, and `differs` (a key only one
    model has, or any value unequal)."""
    merged = table_a[keys + values].merge(table_b[keys + values], on=keys, how="outer", suffixes=("_a", "_b"),
                                          indicator=True)
    differs = merged["_merge"] != "both"
    for v in values:
        differs |= ~(merged[f"{v}_a"] == merged[f"{v}_b"])
    return merged.drop(columns="_merge").assign(differs=differs.to_numpy())


__all__ = ["aligned_forecasts", "common_windows", "windows_needed", "forecast_misfit", "forecast_start_rows", "matching_window",
           "rescale", "selection_overlap", "side_by_side"]
