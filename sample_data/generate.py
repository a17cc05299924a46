"""Generate sample_data/sample.csv: a synthetic hourly electricity-demand series (see README.md).

    python sample_data/generate.py                      # 8760 rows, seed 2024 -> sample_data/sample.csv
    python sample_data/generate.py --rows 2000 --seed 7 --out /tmp/small.csv

Columns: date, temperature, humidity, price, load (the target, last like ETT's OT).
Deterministic: the same --rows and --seed always give the same file.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

DEFAULT_ROWS = 8760  # one year of hours
DEFAULT_SEED = 2024
START = "2024-01-01 00:00:00"
DEFAULT_OUT = Path(__file__).resolve().parent / "sample.csv"


def _ar1(rng: np.random.Generator, n: int, phi: float, sigma: float) -> np.ndarray:
    """[n] AR(1) noise e_t = phi * e_{t-1} + N(0, sigma²), started at 0: slow, weather-like wobble."""
    shocks = rng.normal(0.0, sigma, size=n)
    out = np.empty(n)
    level = 0.0
    for t in range(n):
        level = phi * level + shocks[t]
        out[t] = level
    return out


def generate(rows: int = DEFAULT_ROWS, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """[rows] hourly rows from 2024-01-01 00:00 with columns date, temperature, humidity, price, load."""
    rng = np.random.default_rng(seed)
    dates = pd.date_range(START, periods=rows, freq="h")
    t = np.arange(rows, dtype="float64")  # hours since start
    hour = dates.hour.to_numpy()
    day_of_year = dates.day_of_year.to_numpy()
    weekend = (dates.day_of_week.to_numpy() >= 5).astype("float64")

    # temperature (°C): annual drift (cold January, warm July) + daily cycle peaking at 15:00 + weather.
    temperature = (
        12.0
        - 9.0 * np.cos(2 * np.pi * (day_of_year - 15) / 365.25)
        + 4.0 * np.sin(2 * np.pi * (hour - 9) / 24)
        + _ar1(rng, rows, phi=0.95, sigma=0.5)
    )
    # humidity (%): falls as temperature rises, plus its own wobble; clipped to [15, 100].
    humidity = np.clip(70.0 - 1.5 * (temperature - 12.0) + _ar1(rng, rows, phi=0.9, sigma=1.5), 15.0, 100.0)
    # load (MW), the target: trend + daily and weekly seasonality + heating/cooling demand + noise.
    load = (
        100.0
        + 0.002 * t
        + 12.0 * np.sin(2 * np.pi * (hour - 8) / 24)
        - 8.0 * weekend
        + 1.5 * np.abs(temperature - 18.0)
        + rng.normal(0.0, 2.0, size=rows)
    )
    # price (EUR/MWh): follows demand, plus market noise.
    price = 40.0 + 0.6 * (load - 100.0) + _ar1(rng, rows, phi=0.8, sigma=3.0)

    return pd.DataFrame({
        "date": dates.strftime("%Y-%m-%d %H:%M:%S"),
        "temperature": temperature.round(4),
        "humidity": humidity.round(4),
        "price": price.round(4),
        "load": load.round(4),
    })


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, help="number of hourly rows (default 8760)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="numpy seed (default 2024)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output CSV (default sample_data/sample.csv)")
    args = parser.parse_args(argv)
    if args.rows < 2:
        parser.error("--rows must be at least 2")
    generate(args.rows, args.seed).to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
