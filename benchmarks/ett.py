"""Train on ETTh1 (multivariate, 96/48/24) and print test MSE/MAE and seconds per epoch.

    python benchmarks/ett.py                      # small config of the issue: d_model 64, d_ff 128, 4 heads
    python benchmarks/ett.py --epochs 2 6         # report after 2 and after 6 epochs (two runs, same seed)
    python benchmarks/ett.py --paper              # d_model 512, 8 heads, d_ff 2048 (GPU advised)
    python benchmarks/ett.py --variant official   # the official quirks: L_K, cumsum, mix, block 1, future keys

Reads ../shared/data/ETT/ETTh1.csv (or --csv). Metrics are on the standardised scale, as published:
Informer ETTh1 multivariate horizon 24: MSE 0.577 / MAE 0.549 (paper config).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from informer_lab.analysis.data import DataSpec, load_csv, prepare  # noqa: E402
from informer_lab.analysis.learning.training import TrainSettings, config_for, train  # noqa: E402

VARIANTS = {
    "default": {},
    "official": {"mean_divisor": "L_K", "decoder_lazy": "cumsum", "mix": True, "sample_block": 1,
                 "causal_sampling": False},
    "noncausal_sampling": {"causal_sampling": False},
    "divisor_LK": {"mean_divisor": "L_K"},
    "cumsum": {"decoder_lazy": "cumsum"},
    "mix": {"mix": True},
    "block1": {"sample_block": 1},
    "full": {"encoder_attention": "full", "decoder_attention": "full"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=ROOT.parent / "shared" / "data" / "ETT" / "ETTh1.csv")
    parser.add_argument("--target", default="OT")
    parser.add_argument("--epochs", type=int, nargs="+", default=[2, 6], help="train once per value, report each")
    parser.add_argument("--variant", choices=sorted(VARIANTS), nargs="+", default=["default"])
    parser.add_argument("--paper", action="store_true", help="d_model 512, 8 heads, d_ff 2048, batch 32")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=None, help="cap steps per epoch (smoke runs)")
    parser.add_argument("--device", default=None)
    args = parser.parse_args()

    if not args.csv.is_file():
        sys.exit(f"error: {args.csv} not found (the ETT data sets live in ../shared/data/ETT/)")
    frame = load_csv(args.csv)
    prepared = prepare(frame, DataSpec(target=args.target, features="M", seq_len=96, label_len=48, pred_len=24))
    size = (dict(d_model=512, n_heads=8, d_ff=2048) if args.paper else dict(d_model=64, n_heads=4, d_ff=128))
    print(f"{frame.name}: {frame.n_rows} rows, ETT borders {prepared.is_ett}, train windows "
          f"{len(prepared.train) - 96 - 24 + 1}; model {size}, e_layers 2, d_layers 1, batch 32")
    print("s/epoch: training steps only (the official code's 'cost time'); +val: with the validation pass")
    print(f"{'variant':18s} {'epochs':>6s} {'ran':>4s} {'s/epoch':>8s} {'+val':>6s} {'test mse':>9s} {'test mae':>9s} "
          "stopped")
    for variant in args.variant:
        for epochs in args.epochs:
            config = config_for(prepared, e_layers=(2,), d_layers=1, dropout=0.05, **size, **VARIANTS[variant])
            settings = TrainSettings(epochs=epochs, batch_size=32, learning_rate=1e-4, patience=3, seed=args.seed,
                                     device=args.device, max_steps_per_epoch=args.max_steps,
                                     schedule="paper")  # the official recipe its figures are set against
            started = time.perf_counter()
            result = train(prepared, config, settings)
            wall = time.perf_counter() - started
            print(f"{variant:18s} {epochs:6d} {len(result.history):4d} {result.train_seconds_per_epoch:8.1f} "
                  f"{result.seconds_per_epoch:6.1f} {result.test.mse:9.4f} {result.test.mae:9.4f} {result.stopped} (device {result.device}, "
                  f"{wall:.0f}s total)", flush=True)


if __name__ == "__main__":
    main()
