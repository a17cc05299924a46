"""Reversible instance normalisation on a trending series: the Informer trained with and without RevIN (same seeds,
same data, same settings), each against seasonal naive and the linear baseline on the test split.

    python benchmarks/revin.py --csv PATH --target COL [--repair interpolate] [--seq-len 104 --label-len 52
                               --pred-len 52] [--seeds 0 1 2] [--epochs 6]

A public trending series ships inside statsmodels' wheel: weekly CO2 at Mauna Loa, 1958-2001 (2,284 rows, 59
missing: --repair interpolate); `pip download statsmodels --no-deps` and unzip statsmodels/datasets/co2/co2.csv.
Prints one row per seed and variant (the test MSE of the model, of seasonal naive and of the linear baseline,
standardised; the window interval where the split holds enough windows), then per variant the mean over seeds with
a t interval over seeds (it covers the training seed's variation on these test windows, not the data's), and the
ratio RevIN / default per seed. Last line `revin_vs_default_test_mse_ratio` (the median over seeds).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from informer_lab.analysis.compare.verdict import check_against_baselines  # noqa: E402
from informer_lab.analysis.data import DataSpec, ReadOptions, load_csv, prepare, range_departure  # noqa: E402
from informer_lab.analysis.intervals import across_seeds  # noqa: E402
from informer_lab.analysis.learning.training import TrainSettings  # noqa: E402
from informer_lab.analysis.learning.workflow import ModelSize, train_on_frame  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--csv", required=True, type=Path)
    p.add_argument("--target", required=True)
    p.add_argument("--repair", choices=("none", "interpolate", "ffill"), default="none")
    p.add_argument("--seq-len", type=int, default=104)
    p.add_argument("--label-len", type=int, default=52)
    p.add_argument("--pred-len", type=int, default=52)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--batch-size", type=int, default=32)
    args = p.parse_args()
    torch.set_num_threads(1)

    frame = load_csv(args.csv, ReadOptions(repair=args.repair))
    spec = DataSpec(args.target, "S", args.seq_len, args.label_len, args.pred_len)
    prepared = prepare(frame, spec)
    print(f"# {frame.name}: {frame.n_rows:,} rows, step {frame.freq}; windows {spec.seq_len}/{spec.label_len}/"
          f"{spec.pred_len}; {range_departure(prepared).describe()}; torch {torch.__version__}, 1 thread")
    rows = []
    for seed in args.seeds:
        for revin in (False, True):
            start = time.perf_counter()
            checkpoint, result = train_on_frame(frame, spec, ModelSize(revin=revin),
                                                TrainSettings(epochs=args.epochs, batch_size=args.batch_size,
                                                              seed=seed))
            check = check_against_baselines(checkpoint.model, prepared)
            table = check.table.set_index("name")
            row = {"seed": seed, "variant": "revin" if revin else "default",
                   "model": table.loc["model", "mse"], "model_lo": table.loc["model", "mse_lo"],
                   "model_hi": table.loc["model", "mse_hi"], "seasonal_naive": table.loc["seasonal_naive", "mse"],
                   "linear": table.loc["linear", "mse"], "epochs": len(result.history),
                   "seconds": time.perf_counter() - start, "windows": check.describe_windows()}
            rows.append(row)
            print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
                  flush=True)
    runs = pd.DataFrame(rows)
    print(check.notes[-1] if check.notes else "")
    summary = across_seeds(runs, ["variant"], "model", floor=0.0)
    print(summary.to_string(index=False))
    print(f"seasonal naive {runs.seasonal_naive.iloc[0]:.4g}, linear baseline {runs.linear.iloc[0]:.4g} (the same "
          "for every run)")
    ratio = runs[runs.variant == "revin"].model.to_numpy() / runs[runs.variant == "default"].model.to_numpy()
    print("revin / default per seed: " + ", ".join(f"{r:.3g}" for r in ratio))
    print(f"revin_vs_default_test_mse_ratio {float(np.median(ratio)):.4g}")


if __name__ == "__main__":
    main()
