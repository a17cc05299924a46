"""Thousands of generated CSVs, valid and damaged (tests/corpus/csv_strategies.py), through load_csv as it is and
with a repair: each must be read (regular, complete, finite) or refused with a typed error of at most 300
characters, within 5 s; anything else is counted as a failure and printed.

    python benchmarks/fuzz_csv.py                 # 5000 examples
    python benchmarks/fuzz_csv.py --examples 500

Last line: `fuzz_csv_failures: <n>` (bar: 0).
"""
from __future__ import annotations

import argparse
import collections
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, given, settings  # noqa: E402

from tests.analysis.data.test_properties import check_read_or_refused  # noqa: E402
from tests.corpus.csv_strategies import any_csvs  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=5000)
    args = parser.parse_args(argv)
    outcomes: collections.Counter = collections.Counter()
    failures: list[str] = []
    slowest = [0.0]

    @settings(max_examples=args.examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(any_csvs())
    def run(data: bytes) -> None:
        for options in ({}, {"repair": "interpolate"}, {"repair": "ffill"}):
            started = time.perf_counter()
            try:
                outcomes[(options.get("repair", "none"), check_read_or_refused(data, **options))] += 1
            except Exception:  # noqa: BLE001 — counted and shown, never raised
                failures.append(f"{options}: {data[:200]!r}\n{traceback.format_exc(limit=3)}")
            slowest[0] = max(slowest[0], time.perf_counter() - started)

    started = time.perf_counter()
    run()
    for text in failures[:5]:
        print(text)
    for (repair, outcome), n in sorted(outcomes.items()):
        print(f"repair={repair:<12} {outcome:<8} {n}")
    print(f"{args.examples} files × 3 readings in {time.perf_counter() - started:.0f} s; slowest reading "
          f"{slowest[0]:.3f} s")
    print(f"fuzz_csv_failures: {len(failures)}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
