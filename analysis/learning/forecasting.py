"""Forecast the future: the pred_len steps after a CSV's last row, in original units, with timestamps."""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from informer_lab.analysis.checkpoints.folder import Checkpoint
from informer_lab.analysis.data import SeriesFrame
from informer_lab.analysis.learning.windows import forecast_batch
from informer_lab.analysis.errors import DataError
from informer_lab.model import key_generator


def forecast_future(checkpoint: Checkpoint, frame: SeriesFrame, *, seed: int = 0) -> pd.DataFrame:
    """A table: the datetime column, then one column per forecast target, pred_len rows.

    The frame must have the model's columns and its frequency; the key sample is drawn from `seed`.
    """
    schema = checkpoint.schema
    if frame.freq != schema.freq:
        raise DataError(f"the model was trained on data every {schema.freq!r}, but {frame.name} is every "
                        f"{frame.freq!r}; time features would not match", value=frame.freq)
    batch, future = forecast_batch(frame, schema.spec, schema.scaler)
    model = checkpoint.model
    device = next(model.parameters()).device
    with torch.no_grad():
        out = model(batch.to(device), generator=key_generator(seed))  # [1, pred, c_out]
    values = schema.scaler.inverse_transform(out[0].float().cpu().numpy(), schema.target_columns)
    broken = ~np.isfinite(values).all(axis=0)
    if broken.any():
        column = schema.target_columns[int(np.argmax(broken))]
        raise DataError(f"the forecast of {column!r} is not finite in the data's units (its scale, std "
                        f"{schema.scaler.std[schema.columns.index(column)]:.3g}, overflows float64); rescale the column "
                        "and train again", column=column)
    table = pd.DataFrame(values, columns=list(schema.target_columns))
    table.insert(0, schema.datetime_column, future)
    return table
