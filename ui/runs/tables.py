"""Tables of the Runs screen (pure pandas and JSON): a run's settings, and whether the active data fits it."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from informer_lab.analysis.data import SeriesFrame
from informer_lab.analysis.learning.runs import RunRecord

COLUMN_CONFIG = {
    "best val loss": st.column_config.NumberColumn(format="%.4g"),
    "test MSE": st.column_config.NumberColumn(format="%.4g"),
    "test MAE": st.column_config.NumberColumn(format="%.4g"),
    "modified": st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm"),
}
SETTINGS = ("d_model", "n_heads", "e_layers", "d_layers", "d_ff", "factor", "encoder_attention", "decoder_attention",
            "cross_attention", "distil", "dropout", "embedding", "revin")


def settings_rows(record: RunRecord) -> pd.DataFrame:
    """setting, value: the data spec, the model's size and attention, and how it was trained."""
    rows = [(f"data: {k}", v) for k, v in (record.schema.get("spec") or {}).items()]
    rows += [(k, record.config[k]) for k in SETTINGS if k in record.config]
    training = record.metrics.get("training") or {}
    rows += [(f"training: {k}", v) for k, v in training.items() if not isinstance(v, (dict, list))]
    rows += [("stopped", record.metrics.get("stopped", "")), ("folder", str(record.path))]
    return pd.DataFrame([(k, str(v)) for k, v in rows], columns=["setting", "value"])


def data_misfit(record: RunRecord, frame: SeriesFrame) -> str | None:
    """Why `frame` cannot be read by the run's model (its schema.json), or None when it can."""
    from informer_lab.analysis.learning.workflow import read_schema, schema_misfit

    schema = read_schema(record.path)
    if schema is None:
        return "its schema.json cannot be read"
    return schema_misfit(schema, frame)
