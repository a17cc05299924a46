"""What the benchmarks that train the default model two ways on CSV files share (unit_roots.py, placeholders.py):
their options (--csv, --target, --seeds, --processes) and the trainings run side by side, each printed as it ends."""
from __future__ import annotations

import argparse
import json
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Callable


def parse_csv_arguments(description: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--csv", type=Path, nargs="+", required=True)
    p.add_argument("--target", required=True)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--processes", type=int, default=2)
    return p.parse_args()


def run_modes(one_run: Callable[[Path, str, int, str], dict], args: argparse.Namespace, modes: tuple[str, ...]) -> dict:
    """one_run(csv, target, seed, mode) for every file, seed and mode, `args.processes` at a time; each row printed
    (floats to 5 digits) as it ends. Returns the rows by (file name, seed, mode)."""
    jobs = [(csv, args.target, seed, mode) for csv in args.csv for seed in args.seeds for mode in modes]
    runs = {}
    with ProcessPoolExecutor(max_workers=args.processes) as pool:
        for future in as_completed([pool.submit(one_run, *job) for job in jobs]):
            row = future.result()
            runs[row["file"], row["seed"], row["mode"]] = row
            print(json.dumps({k: round(v, 5) if isinstance(v, float) else v for k, v in row.items()}), flush=True)
    return runs
