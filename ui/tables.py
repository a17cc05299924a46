"""Presentation helpers: small pure functions that shape analysis output for tables and charts.

No Streamlit and no maths beyond reshaping: every number shown comes from `analysis`.
"""
from __future__ import annotations

import re
from dataclasses import asdict
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np
import pandas as pd

from analysis.errors import ConfigError

if TYPE_CHECKING:  # annotations only: this module stays importable before torch loads (ui.frames)
    from analysis.training import TrainProgress

RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
SITE_KINDS = (("encoder", "Encoder self-attention"), ("decoder_self", "Decoder self-attention (causal)"),
              ("cross", "Decoder cross-attention"))


# ------------------------------------------------------------------------------------------ data
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


# ------------------------------------------------------------------------------------------ training
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


def progress_fraction(report: TrainProgress | None) -> float:
    if report is None:
        return 0.0
    done = (report.epoch - 1) * report.steps + report.step
    return min(1.0, done / max(1, report.epochs * report.steps))


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


# ------------------------------------------------------------------------------------------ model
def metrics_table(metrics: dict) -> pd.DataFrame:
    """The checkpoint's test metrics as rows (scale, MSE, MAE)."""
    test = metrics.get("test") or {}
    if not test:
        return pd.DataFrame(columns=["scale", "MSE", "MAE"])
    return pd.DataFrame([
        {"scale": "standardised (train-split scaler)", "MSE": test.get("mse"), "MAE": test.get("mae")},
        {"scale": "original units", "MSE": test.get("mse_original"), "MAE": test.get("mae_original")},
    ])


def history_table(metrics: dict) -> pd.DataFrame:
    rows = metrics.get("history") or []
    return pd.DataFrame(rows, columns=["epoch", "train_loss", "val_loss", "learning_rate", "seconds"])


def config_rows(config, schema) -> list[tuple[str, str]]:
    """Short (label, value) pairs describing a model for the sidebar."""
    spec = schema.spec
    e = config.e_layers
    encoder = f"{e[0]} layers" if len(e) == 1 else f"stack {','.join(map(str, e))}"
    attention = f"enc {config.encoder_attention} · dec {config.decoder_attention} · cross {config.cross_attention}"
    return [
        ("data", f"target {spec.target!r}, features {spec.features}, every {schema.freq}"),
        ("windows", f"seq {spec.seq_len} · label {spec.label_len} · pred {spec.pred_len}"),
        ("size", f"d_model {config.d_model} · {config.n_heads} heads (D={config.head_dim}) · d_ff {config.d_ff}"),
        ("layers", f"encoder {encoder}{' + distil' if config.distil else ''} · decoder {config.d_layers}"),
        ("attention", f"{attention} · factor {config.factor}"),
        ("columns", f"{config.enc_in} in → {config.c_out} out"),
    ]


def config_table(config) -> pd.DataFrame:
    return pd.DataFrame([{"field": k, "value": str(v)} for k, v in asdict(config).items()])


# ------------------------------------------------------------------------------------------ masks
def head_key(model_key: str, site_index: int, head: int) -> str:
    """The session-state key of one head's checkbox; the model key keeps masks of different models apart."""
    return f"head_on::{model_key}::{site_index}::{head}"


def layer_label(site) -> str:
    if site.kind == "encoder":
        return f"replica {site.replica} · layer {site.layer}" if site.replica else f"layer {site.layer}"
    return f"layer {site.layer}"


def off_description(off: Iterable[tuple[int, int]], sites) -> str:
    off = sorted(off)
    if not off:
        return "all heads on"
    by_index = {s.index: s for s in sites}
    return ", ".join(f"{by_index[s].name} h{h}" for s, h in off)


def window_table(table: pd.DataFrame, column: str) -> pd.DataFrame:
    """The masked-window forecast rows of one target column, in horizon order."""
    rows = table[table["column"] == column].sort_values("step")
    return rows[["step", "timestamp", "truth", "baseline", "masked", "baseline_error", "masked_error",
                 "error_change"]].reset_index(drop=True)


MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|$~:])")


def markdown_table(df: pd.DataFrame, formats: dict[str, str] | None = None) -> str:
    """`df` as a GitHub-flavoured markdown table: values through `formats` (column → format spec, e.g. "{:.3f}"),
    else str(); numeric columns right-aligned. Characters that markdown (and Streamlit's: $…$ maths, :icon:)
    would read as markup are backslash-escaped, and line breaks become spaces, so a cell shows its text as is.
    """
    formats = formats or {}

    def cell(text: str) -> str:
        return MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.splitlines()))

    columns = list(df.columns)
    align = ["---:" if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) else ":---"
             for c in columns]
    shown = [[cell(formats[c].format(v) if c in formats else str(v)) for v in df[c]] for c in columns]
    lines = ["| " + " | ".join(cell(str(c)) for c in columns) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in zip(*shown)]
    return "\n".join(lines)


def safe_file_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_") or "x"
