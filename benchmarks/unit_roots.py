"""The level of input columns with a unit root withheld, or read: the default model's test MSE both ways on CSV
files, same seed, same windows (features MS: the other columns in, the target out).

    python benchmarks/unit_roots.py --csv sample_data/sample.csv --target load
    python benchmarks/unit_roots.py --csv ../shared/data/ETT/ETTh1.csv ../shared/data/ETT/ETTh2.csv --target OT \
        --seeds 0 1 2

For each file: the augmented Dickey–Fuller t statistic of every input column on the training split (a unit root
where it is above −2.86: analysis/learning/unit_root.py), then per seed the test MSE (standardised) of the default
model (ModelSize(), TrainSettings()) with those columns' levels withheld ("withhold": `unit_roots="withhold"`) and
with every level read ("keep", the default), and seasonal naive's and the linear baseline's on the same test
windows. Each training is one process of one torch thread; `--processes` run side by side.
Last line: `withhold_over_keep_median: X` (the median over files and seeds of the MSE ratio).
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.paired_csv import parse_csv_arguments, run_modes  # noqa: E402

MODES = ("withhold", "keep")


def column_statistics(csv: Path, target: str) -> dict:
    from informer_lab.analysis.data import DataSpec, load_csv, prepare
    from informer_lab.analysis.learning.unit_root import MAX_ROWS, dickey_fuller_t

    prepared = prepare(load_csv(csv.read_bytes()), DataSpec(target, "MS", 96, 48, 24))
    inputs = prepared.columns[:-1]
    return {c: round(dickey_fuller_t(prepared.train.values[-MAX_ROWS:, i]), 2) for i, c in enumerate(inputs)}


def one_run(csv: Path, target: str, seed: int, mode: str) -> dict:
    import torch

    torch.set_num_threads(1)
    from informer_lab.analysis.data import DataSpec, load_csv
    from informer_lab.analysis.learning.embedding import withheld_columns
    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.learning.workflow import ModelSize, train_on_frame

    frame = load_csv(csv.read_bytes())
    checkpoint, result = train_on_frame(frame, DataSpec(target, "MS", 96, 48, 24), ModelSize(unit_roots=mode),
                                        TrainSettings(seed=seed), check_baselines=True)
    c = checkpoint.model.config
    return {"file": csv.name, "seed": seed, "mode": mode, "mse": result.test.mse,
            "val_mse": min(h.val_loss for h in result.history),
            "withheld": withheld_columns(c.level_free, checkpoint.schema.columns), "embedding": c.embedding,
            "baselines_mse": checkpoint.metrics["baselines"]["mse"]}


def main() -> None:
    args = parse_csv_arguments(__doc__)
    for csv in args.csv:
        print(json.dumps({"file": csv.name, "dickey_fuller_t": column_statistics(csv, args.target)}), flush=True)
    runs = run_modes(one_run, args, MODES)
    ratios = []
    for csv in args.csv:
        for seed in args.seeds:
            withhold, keep = runs[csv.name, seed, "withhold"], runs[csv.name, seed, "keep"]
            ratios.append(withhold["mse"] / keep["mse"])
            print(f"{csv.name} seed {seed}: withhold {withhold['mse']:.4f} ({', '.join(withhold['withheld']) or 'none'})"
                  f", keep {keep['mse']:.4f}, ratio {ratios[-1]:.3f}")
    print(f"withhold_over_keep_median: {statistics.median(ratios):.4f}")


if __name__ == "__main__":
    main()
