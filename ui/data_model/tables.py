"""Shaping for the Data & model screen: plotted series, column summary, loss curves, run names, model tables."""
from __future__ import annotations

import re
from dataclasses import asdict
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

from informer_lab.analysis.errors import ConfigError

if TYPE_CHECKING:  # annotations only: this module stays importable before torch loads (the cold start)
    from informer_lab.analysis.learning.training import TrainProgress

RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md(text: object) -> str:
    """Text shown as itself in Streamlit markdown (a column or series name may hold `*`, backticks, `$`, `<`)."""
    return MARKDOWN_SPECIAL.sub(r"\\\1", str(text).replace("\n", " "))


def series_label(info) -> str:
    """A long table's series for a picker: 'AAPL · 1,258 rows · 2019-01-02 → 2023-12-29'."""
    return f"{info.id} · {info.rows:,} rows · {info.first:%Y-%m-%d} → {info.last:%Y-%m-%d}"


def series_table(long) -> pd.DataFrame:
    """A long table's series: id, rows, first, last, read (whether the frame holds it)."""
    return pd.DataFrame([{"series": s.id, "rows": s.rows, "first": s.first, "last": s.last,
                          "read": s.id in long.chosen} for s in long.series])


def dropped_text(why) -> str:
    """'summary (text, e.g. 'sunny'), ok (true/false)' as markdown."""
    return ", ".join(f"{md(c)} ({md(reason)})" for c, reason in list(why)[:20]) + (", …" if len(why) > 20 else "")


def downsample_minmax(values: pd.DataFrame, max_points: int = 5000) -> tuple[pd.DataFrame, int]:
    """A long table (timestamp, column, value) for plotting, and the bucket size used (1: every row).

    Above `max_points` rows each column keeps, per bucket of k rows, the rows of its minimum and
    maximum (in time order), so peaks stay visible: at most `max_points` points per column.
    `values` is indexed by timestamps.
    """
    n = len(values)
    if n <= max_points:
        long = values.rename_axis("timestamp").reset_index().melt("timestamp", var_name="column")
        return long, 1
    bucket = int(np.ceil(n / (max_points // 2)))
    parts = []
    groups = np.arange(n) // bucket
    for column in values.columns:
        series = values[column].to_numpy()
        frame = pd.DataFrame({"v": series, "g": groups, "i": np.arange(n)})
        keep = np.union1d(frame.loc[frame.groupby("g")["v"].idxmin(), "i"], frame.loc[frame.groupby("g")["v"].idxmax(), "i"])
        parts.append(pd.DataFrame({"timestamp": values.index[keep], "column": column, "value": series[keep]}))
    return pd.concat(parts, ignore_index=True), bucket


def column_summary(values: pd.DataFrame) -> pd.DataFrame:
    """Per numeric column: count, mean, std, min, max (the file's raw values)."""
    table = values.agg(["count", "mean", "std", "min", "max"]).T
    table.index.name = "column"
    table["count"] = table["count"].astype(int)
    return table.reset_index()


def loss_curves(reports: Sequence[TrainProgress]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per step, per epoch) tables from the training reports.

    `TrainProgress.train_loss` is the mean loss of the epoch so far; the loss of step k is recovered
    exactly as k·m_k − (k−1)·m_{k−1}. steps: global_step, epoch, step, loss, epoch_mean.
    epochs: epoch, global_step (of its last step), train_loss, val_loss.
    """
    step_rows, epoch_rows = [], []
    previous_mean: dict[int, float] = {}
    offset, last_global, current_epoch = 0, 0, None
    for r in reports:
        if r.stage != "train":  # a validation / test pass in progress: not a step
            continue
        if r.val_loss is not None:
            epoch_rows.append({"epoch": r.epoch, "global_step": last_global, "train_loss": r.train_loss,
                               "val_loss": r.val_loss})
            continue
        if r.epoch != current_epoch:
            if current_epoch is not None:
                offset = last_global
            current_epoch = r.epoch
        loss = r.step * r.train_loss - (r.step - 1) * previous_mean.get(r.epoch, 0.0)
        previous_mean[r.epoch] = r.train_loss
        last_global = offset + r.step
        step_rows.append({"global_step": last_global, "epoch": r.epoch, "step": r.step, "loss": loss,
                          "epoch_mean": r.train_loss})
    steps = pd.DataFrame(step_rows, columns=["global_step", "epoch", "step", "loss", "epoch_mean"])
    epochs = pd.DataFrame(epoch_rows, columns=["epoch", "global_step", "train_loss", "val_loss"])
    return steps, epochs


def parse_e_layers(text: str) -> tuple[int, ...]:
    """'2' → (2,); '3,2,1' → (3, 2, 1) (InformerStack replicas). ConfigError otherwise."""
    try:
        layers = tuple(int(part) for part in str(text).replace(" ", "").split(","))
    except ValueError:
        raise ConfigError(f"encoder layers must be whole numbers separated by commas (e.g. 2 or 3,2,1), "
                          f"got {text!r}") from None
    if not layers or min(layers) < 1:
        raise ConfigError(f"every encoder replica needs at least one layer, got {text!r}")
    return layers


def check_run_name(name: str) -> str:
    name = name.strip()
    if not RUN_NAME.match(name):
        raise ConfigError(f"run name {name!r} must start with a letter or digit and use only letters, digits, "
                          "'_', '-' and '.' (at most 64 characters)")
    return name


def default_run_name(target: str, features: str, seq_len: int, label_len: int, pred_len: int, stamp: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", target) or "model"
    return f"{safe}-{features}-{seq_len}-{label_len}-{pred_len}-{stamp}"


def metrics_table(metrics: dict) -> pd.DataFrame:
    """The checkpoint's test metrics as rows (scale, MSE, MAE)."""
    test = metrics.get("test") or {}
    if not test:
        return pd.DataFrame(columns=["scale", "MSE", "MAE"])
    by_column = test.get("original_by_column")
    rows = [{"scale": "standardised (train-split scaler)", "MSE": test.get("mse"), "MAE": test.get("mae")}]
    if isinstance(by_column, list) and by_column:  # each column in its own units: a mean over them means nothing
        rows += [{"scale": f"original units: {v.get('column')}", "MSE": v.get("mse"), "MAE": v.get("mae")}
                 for v in by_column if isinstance(v, dict)]
    else:  # an older checkpoint: the mean over columns, said to be one
        rows.append({"scale": "original units (mean over columns)", "MSE": test.get("mse_original"),
                     "MAE": test.get("mae_original")})
    return pd.DataFrame(rows)


def history_table(metrics: dict) -> pd.DataFrame:
    rows = metrics.get("history") or []
    return pd.DataFrame(rows, columns=["epoch", "train_loss", "val_loss", "learning_rate", "seconds"])


def config_table(config) -> pd.DataFrame:
    return pd.DataFrame([{"field": k, "value": str(v)} for k, v in asdict(config).items()])
