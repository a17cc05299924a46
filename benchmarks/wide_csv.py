"""A wide file: 10,000 numeric columns × 1,000 rows through `load_csv`, against plain `pandas.read_csv` of the same
bytes in the same process (the floor: parsing alone, without validation, timestamps or checks).

    python benchmarks/wide_csv.py                         # 10,000 × 1,000, 3 repeats
    python benchmarks/wide_csv.py --columns 2000 --rows 5000

Last line: `wide_csv_seconds: <median>` (bar: 5 s) and the ratio to pandas.
"""
from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from informer_lab.analysis.data import load_csv  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.normal(size=(args.rows, args.columns)).round(4),
                         columns=[f"sensor_{i}" for i in range(args.columns)])
    table.insert(0, "date", pd.date_range("2024-01-01", periods=args.rows, freq="h").strftime("%Y-%m-%d %H:%M:%S"))
    data = table.to_csv(index=False).encode()
    ours, floor = [], []
    for _ in range(args.repeats):
        started = time.perf_counter()
        frame = load_csv(data)
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        pd.read_csv(io.BytesIO(data))
        floor.append(time.perf_counter() - started)
    assert frame.values.shape == (args.rows, args.columns)
    print(f"{len(data) / 1e6:.0f} MB, {args.columns:,} columns × {args.rows:,} rows")
    print(f"load_csv        median {statistics.median(ours):.2f} s  (min {min(ours):.2f}, max {max(ours):.2f})")
    print(f"pandas.read_csv median {statistics.median(floor):.2f} s  (min {min(floor):.2f}, max {max(floor):.2f})")
    print(f"load_csv / pandas.read_csv: {statistics.median(ours) / statistics.median(floor):.1f}x")
    print(f"wide_csv_seconds: {statistics.median(ours):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
