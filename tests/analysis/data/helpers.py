"""CSV and frame builders shared by the data tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from informer_lab.analysis.data import DataSpec, SeriesFrame, load_csv
from informer_lab.analysis.errors import DataError


def write(tmp_path: Path, text: str | bytes, name: str = "data.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def hourly_rows(n: int, start: str = "2024-01-01 00:00:00") -> list[str]:
    """n CSV lines 'timestamp,x,y' with x = i, y = 10 * i."""
    stamps = pd.date_range(start, periods=n, freq="h").strftime("%Y-%m-%d %H:%M:%S")
    return [f"{ts},{i},{10 * i}" for i, ts in enumerate(stamps)]


def csv_text(rows: list[str], header: str = "date,x,y") -> str:
    return "\n".join([header, *rows]) + "\n"


def make_frame(n: int, columns: tuple[str, ...], freq: str = "h", seed: int = 0,
               start: str = "2016-07-01 00:00:00") -> SeriesFrame:
    """A SeriesFrame of random values, built directly (no CSV)."""
    rng = np.random.default_rng(seed)
    timestamps = pd.date_range(start, periods=n, freq=freq, name="date")
    values = pd.DataFrame(rng.normal(size=(n, len(columns))) * 3.0 + np.arange(len(columns)), columns=list(columns),
                          index=timestamps)
    return SeriesFrame(timestamps, values, "date", freq, "synthetic")


def load_error(tmp_path: Path, text: str | bytes, **kwargs) -> DataError:
    with pytest.raises(DataError) as info:
        load_csv(write(tmp_path, text), **kwargs)
    return info.value


def generic_spec(**kwargs) -> DataSpec:
    return DataSpec("b", **{"features": "M", "seq_len": 24, "label_len": 12, "pred_len": 6, **kwargs})
