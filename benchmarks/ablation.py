"""Cost of a full single-head ablation sweep against plain evaluation, in one process.

A sweep scores n_heads_total + 1 masks (every head alone off, plus the baseline) over every window of a
split. Done naively — one `evaluate` per mask — it costs (n_heads_total + 1) plain evaluations. Ours runs
the masks as variants of one forward call (`HeadMask(..., variants=True)`, `analysis.heads.ablation`), so
the model can share the rows the masks agree on. The measured figure:

    ablation_sweep_cost_ratio = sweep_seconds / (plain_seconds × (n_heads_total + 1))

1.0 is the naive loop; the bar is < 0.6.

    python benchmarks/ablation.py                                  # trains a small model on sample_data/sample.csv
    python benchmarks/ablation.py --checkpoint CKPT --csv DATA.csv  # an existing checkpoint
    python benchmarks/ablation.py --csv ../shared/data/ETT/ETTh1.csv --target OT   # train on other data

Default model (trained here when no --checkpoint is given): d_model 64, 4 heads, e_layers 2, d_layers 1,
d_ff 128, seq 96 / label 48 / pred 24, 2 epochs × 100 steps of batch 32, seed 0. Both measurements use the
test split, batch size 64, zero ablation and key-sample seed 0, after one warm-up call of each path on
one batch. With --repeats N each is timed N times, interleaved, and the medians are used.
Times depend on the machine and on whatever else runs on it: compare ratios from the same run only.
"""
from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # `python benchmarks/ablation.py` puts benchmarks/ first, not the root
    sys.path.insert(0, str(REPO_ROOT))

import torch  # noqa: E402

from informer_lab.analysis.heads.ablation import single_head_sweep  # noqa: E402
from informer_lab.analysis.data import DataSpec, load_csv, prepare  # noqa: E402
from informer_lab.analysis.learning.training import TrainSettings, evaluate  # noqa: E402
from informer_lab.analysis.learning.windows import limit_windows  # noqa: E402
from informer_lab.analysis.learning.workflow import ModelSize, load_checkpoint, prepare_for_checkpoint, train_on_frame  # noqa: E402

SAMPLE_CSV = REPO_ROOT / "sample_data" / "sample.csv"
SIZE = ModelSize(d_model=64, n_heads=4, e_layers=(2,), d_layers=1)
SETTINGS = TrainSettings(epochs=2, batch_size=32, max_steps_per_epoch=100, seed=0)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", type=Path, default=None, help="checkpoint folder (default: train a small model)")
    p.add_argument("--csv", type=Path, default=SAMPLE_CSV, help="data (default: sample_data/sample.csv)")
    p.add_argument("--target", default="load", help="column to forecast when training (sample data: load)")
    p.add_argument("--features", choices=("M", "S", "MS"), default="M", help="when training")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--seed", type=int, default=0, help="key-sample seed")
    p.add_argument("--repeats", type=int, default=1, help="time each measurement this many times (median)")
    return p.parse_args(argv)


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main(argv=None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    frame = load_csv(args.csv)
    if args.checkpoint is not None:
        checkpoint = load_checkpoint(args.checkpoint)
        prepared = prepare_for_checkpoint(checkpoint, frame)
        model = checkpoint.model
        print(f"checkpoint {args.checkpoint}")
    else:
        spec = DataSpec(target=args.target, features=args.features)
        seconds, (checkpoint, _) = timed(lambda: train_on_frame(frame, spec, SIZE, SETTINGS))
        model = checkpoint.model
        prepared = prepare(frame, spec)
        print(f"trained d_model {SIZE.d_model}, {SIZE.n_heads} heads, e_layers {SIZE.e_layers}, d_layers "
              f"{SIZE.d_layers} on {frame.name} ({SETTINGS.epochs} epochs × {SETTINGS.max_steps_per_epoch} steps, "
              f"{seconds:.1f} s)")
    model.eval()
    n_heads_total = model.n_sites * model.config.n_heads
    c = model.config
    print(f"model: {model.n_sites} sites × {c.n_heads} heads = {n_heads_total} heads; seq {c.seq_len}, label "
          f"{c.label_len}, pred {c.pred_len}; torch {torch.__version__}, {torch.get_num_threads()} threads")

    # warm-up: one batch through each path (first-call allocations, kernel selection)
    one_batch = limit_windows(prepared, args.split, args.batch_size)
    evaluate(model, one_batch, args.split, batch_size=args.batch_size, seed=args.seed)
    single_head_sweep(model, one_batch, args.split, seed=args.seed, batch_size=args.batch_size)

    plain_times, sweep_times = [], []
    for _ in range(max(1, args.repeats)):
        t, plain = timed(lambda: evaluate(model, prepared, args.split, batch_size=args.batch_size, seed=args.seed))
        plain_times.append(t)
        t, sweep = timed(lambda: single_head_sweep(model, prepared, args.split, mode="zero", seed=args.seed,
                                                   batch_size=args.batch_size))
        sweep_times.append(t)
    plain_s, sweep_s = statistics.median(plain_times), statistics.median(sweep_times)
    ratio = sweep_s / (plain_s * (n_heads_total + 1))

    worst = sweep.iloc[1:].sort_values("delta_mse").iloc[-1]
    print(f"{args.split} split: {plain.windows} windows, batch size {args.batch_size}")
    print(f"plain evaluation:        {plain_s:8.3f} s   (mse {plain.mse:.6f})")
    print(f"single-head sweep:       {sweep_s:8.3f} s   ({n_heads_total + 1} masks; baseline mse "
          f"{sweep.mse.iloc[0]:.6f}, largest delta_mse {worst.delta_mse:+.6f} at {worst.site}:{int(worst['head'])})")
    print(f"naive loop estimate:     {plain_s * (n_heads_total + 1):8.3f} s   ((n_heads_total + 1) × plain)")
    print(f"sweep / plain:           {sweep_s / plain_s:8.2f}")
    print(f"ablation_sweep_cost_ratio: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
