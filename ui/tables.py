"""Presentation helpers shared by several screens (no Streamlit, no maths beyond reshaping): markdown tables,
file-name parts, progress fractions, the sidebar's model description, and reading clicked chart points.

Each screen's own table shaping lives in its folder (`ui/<screen>/tables.py`).
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable, Iterator, Mapping

import pandas as pd

if TYPE_CHECKING:  # annotations only: this module stays importable before torch loads (ui.frames)
    from informer_lab.analysis.learning.training import TrainProgress


def progress_fraction(report: TrainProgress | None) -> float:
    if report is None:
        return 0.0
    done = (report.epoch - 1) * report.steps + report.step
    return min(1.0, done / max(1, report.epochs * report.steps))


def config_rows(config, schema) -> list[tuple[str, str]]:
    """Short (label, value) pairs describing a model for the sidebar."""
    spec = schema.spec
    e = config.e_layers
    encoder = f"{e[0]} layers" if len(e) == 1 else f"stack {','.join(map(str, e))}"
    attention = f"enc {config.encoder_attention} · dec {config.decoder_attention} · cross {config.cross_attention}"
    return [
        ("data", f"target {spec.target!r}, features {spec.features}, every {schema.freq}"),
        ("windows", f"seq {spec.seq_len} · label {spec.label_len} · pred {spec.pred_len}"),
        ("embedding", _embedding_row(config, schema.columns)),
        ("size", f"d_model {config.d_model} · {config.n_heads} heads (D={config.head_dim}) · d_ff {config.d_ff}"),
        ("layers", f"encoder {encoder}{' + distil' if config.distil else ''} · decoder {config.d_layers}"),
        ("attention", f"{attention} · factor {config.factor}"),
        ("columns", f"{config.enc_in} in → {config.c_out} out"
                    + (" · RevIN (each window at its own level)" if getattr(config, "revin", False) else "")),
    ]


def _embedding_row(config, columns) -> str:
    """The input embedding, and for the lags embedding how much of the window only feeds lags and which columns it
    does not read the level of."""
    from informer_lab.analysis.learning.embedding import describe_embedding, describe_withheld

    text = describe_embedding({"embedding": getattr(config, "embedding", "conv"), "lags": getattr(config, "lags", ()),
                               "revin": getattr(config, "revin", False)})
    history = getattr(config, "history_len", 0)
    withheld = describe_withheld(getattr(config, "level_free", ()), columns)
    return (text + (f"; the encoder reads the last {config.seq_len - history} of {config.seq_len} rows" if history
                    else "")
            + (f"; {withheld}" if withheld else ""))


# What the sign of a paired difference's interval (`analysis.intervals.interval_sign` of other − reference) says
# of the other model.
COMPARED = {1: "worse than", -1: "better than", 0: "not distinguishable from"}

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


DATA_EXTENSIONS = re.compile(r"\.(csv|tsv|txt|json|pth|pt|safetensors)$", re.IGNORECASE)


def file_stem(name: str) -> str:
    """A file name without its data extension, safe for a download name: 'ETTh1.csv' → 'ETTh1' (so that a download
    built from it is 'ETTh1-forecast.csv', not 'ETTh1.csv-forecast.csv' or '….csv.csv')."""
    return safe_file_part(DATA_EXTENSIONS.sub("", str(name).strip()))


def safe_file_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_") or "x"


def custom_values(data) -> list:
    """A point's customdata as a list: plotly.js sends an array, which may arrive as {"0": a, "1": b, ...}."""
    if data is None:
        return []
    if isinstance(data, Mapping):
        return [data[k] for k in sorted(data, key=lambda k: int(k))]
    if isinstance(data, (str, bytes)) or not isinstance(data, Iterable):
        return [data]  # one value (a heatmap cell's number)
    return list(data)


def clicked_customdata(selection) -> Iterator[list]:
    """The customdata values of each clicked point in st.plotly_chart's selection state (nothing when malformed)."""
    if not selection:
        return
    try:
        points = selection["selection"]["points"]
    except (KeyError, TypeError):
        return
    for point in points or ():
        yield custom_values(point.get("customdata") if isinstance(point, Mapping) else None)
