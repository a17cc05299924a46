"""Long ("tidy") tables as databases and forecasting libraries keep them, for the reader's, the CLI's and the app's
tests: one row per (series, time), series of different spans, ids with commas, quotes and non-ASCII letters."""
from __future__ import annotations

import numpy as np
import pandas as pd

TRICKY = 'Acme, "Inc." — Zürich'  # a comma, quotes and non-ASCII letters in one id
SPANS = {"AAPL": ("2021-01-01", 60), "MSFT": ("2021-01-11", 50), TRICKY: ("2021-01-06", 40)}


def long_frame(spans: dict[str, tuple[str, int]] = SPANS, freq: str = "D", seed: int = 0, order: str = "series",
               drop: dict[str, int] | None = None) -> pd.DataFrame:
    """symbol, date, price, volume: each series' values are known functions of its day number, so a test can
    check every cell of the wide frame; `drop` removes the k-th row of a series (a gap); `order` 'time' interleaves
    the series as many exports do."""
    rng = np.random.default_rng(seed)
    parts = []
    for k, (sid, (start, n)) in enumerate(spans.items()):
        stamps = pd.date_range(start, periods=n, freq=freq)
        day = ((stamps - pd.Timestamp("2021-01-01")) / pd.Timedelta(days=1)).to_numpy()
        part = pd.DataFrame({"symbol": sid, "date": stamps.strftime("%Y-%m-%d"), "price": 100 * (k + 1) + day,
                             "volume": (1000 * (k + 1) + rng.integers(0, 100, n)).astype(float)})
        if drop and sid in drop:
            part = part.drop(index=drop[sid])
        parts.append(part)
    table = pd.concat(parts, ignore_index=True)
    if order == "time":
        table = table.sort_values(["date", "symbol"], kind="stable").reset_index(drop=True)
    return table


def price(sid: str, stamp: str) -> float:
    """The price a series holds on a day (long_frame's formula)."""
    k = list(SPANS).index(sid)
    return 100 * (k + 1) + (pd.Timestamp(stamp) - pd.Timestamp("2021-01-01")) / pd.Timedelta(days=1)


def csv_of(table: pd.DataFrame) -> bytes:
    return table.to_csv(index=False).encode("utf-8")


__all__ = ["SPANS", "TRICKY", "csv_of", "long_frame", "price"]
