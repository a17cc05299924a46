"""The lags embedding's decoder placeholders: the default model's test MSE with the lab's "last" (every channel's
forecast steps repeat the window's last value) and with HF's "zero" (0 before scaling, −loc/scale after), same seed,
same windows, on CSV files (features MS: the other columns in, the target out).

    python benchmarks/placeholders.py --csv sample_data/sample.csv --target load
    python benchmarks/placeholders.py --csv ../shared/data/ETT/ETTh1.csv ../shared/data/ETT/ETTh2.csv --target OT \
        --seeds 0 1 2

Per file and seed: the test MSE (standardised) of the default model (ModelSize(), TrainSettings()) both ways, and
seasonal naive's and the linear baseline's on the same test windows. Each training is one process of one torch
thread; `--processes` run side by side. Planted families: `python benchmarks/defaults.py --recipes default
zero_placeholders`. Last line: `last_over_zero_median: X` (the median over files and seeds of the MSE ratio).
"""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.paired_csv import parse_csv_arguments, run_modes  # noqa: E402

MODES = ("last", "zero")


def one_run(csv: Path, target: str, seed: int, mode: str) -> dict:
    import torch

    torch.set_num_threads(1)
    from informer_lab.analysis.data import DataSpec, load_csv
    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.learning.workflow import ModelSize, train_on_frame

    frame = load_csv(csv.read_bytes())
    checkpoint, result = train_on_frame(frame, DataSpec(target, "MS", 96, 48, 24), ModelSize(),
                                        TrainSettings(seed=seed), config_overrides={"placeholders": mode},
                                        check_baselines=True)
    c = checkpoint.model.config
    return {"file": csv.name, "seed": seed, "mode": mode, "mse": result.test.mse, "embedding": c.embedding,
            "placeholders": c.placeholders, "baselines_mse": checkpoint.metrics["baselines"]["mse"]}


def main() -> None:
    args = parse_csv_arguments(__doc__)
    runs = run_modes(one_run, args, MODES)
    ratios = []
    for csv in args.csv:
        for seed in args.seeds:
            last, zero = runs[csv.name, seed, "last"], runs[csv.name, seed, "zero"]
            base = last["baselines_mse"]
            ratios.append(last["mse"] / zero["mse"])
            print(f"{csv.name} seed {seed}: last {last['mse']:.4f}, zero {zero['mse']:.4f}, ratio {ratios[-1]:.3f}; "
                  f"seasonal naive {base['seasonal_naive']:.4f}, linear {base['linear']:.4f}")
    print(f"last_over_zero_median: {statistics.median(ratios):.4f}")


if __name__ == "__main__":
    main()
