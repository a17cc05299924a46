"""`train`: fit an Informer on a CSV and write a checkpoint folder."""
from __future__ import annotations

from pathlib import Path

from analysis.data import DataSpec
from analysis.training import TrainSettings
from analysis.workflow import ModelSize, train_on_frame

from ._common import ConsoleProgress, add_csv_options, open_csv, positive_int


def register(sub) -> None:
    p = sub.add_parser("train", help="train on a CSV, write a checkpoint folder")
    add_csv_options(p)
    p.add_argument("--target", required=True, help="column to forecast")
    p.add_argument("--features", choices=("M", "S", "MS"), default="M",
                   help="M: all in, all out; S: target only; MS: all in, target out")
    p.add_argument("--seq-len", type=positive_int, default=96)
    p.add_argument("--label-len", type=positive_int, default=48)
    p.add_argument("--pred-len", type=positive_int, default=24)
    p.add_argument("--epochs", type=positive_int, default=6)
    p.add_argument("--batch-size", type=positive_int, default=32)
    p.add_argument("--learning-rate", type=float, default=1e-4)
    p.add_argument("--patience", type=positive_int, default=3)
    p.add_argument("--d-model", type=positive_int, default=64)
    p.add_argument("--n-heads", type=positive_int, default=4)
    p.add_argument("--d-ff", type=positive_int, default=128)
    p.add_argument("--e-layers", default="2", help="layers per encoder replica, e.g. 2 or 3,2,1 (stack)")
    p.add_argument("--d-layers", type=positive_int, default=1)
    p.add_argument("--factor", type=positive_int, default=5)
    p.add_argument("--dropout", type=float, default=0.05)
    p.add_argument("--attention", choices=("prob", "full"), default="prob",
                   help="encoder and decoder self-attention (cross-attention stays full)")
    p.add_argument("--max-steps", type=positive_int, default=None, help="cap on steps per epoch (quick runs)")
    p.add_argument("--device", choices=("cuda", "mps", "cpu"), default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, type=Path, help="checkpoint folder to write")
    p.set_defaults(func=run)


def parse_layers(text: str) -> tuple[int, ...]:
    try:
        layers = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"--e-layers must be numbers separated by commas, got {text!r}") from None
    return layers


def run(args) -> int:
    spec = DataSpec(target=args.target, features=args.features, seq_len=args.seq_len, label_len=args.label_len,
                    pred_len=args.pred_len)
    size = ModelSize(d_model=args.d_model, n_heads=args.n_heads, e_layers=parse_layers(args.e_layers),
                     d_layers=args.d_layers, d_ff=args.d_ff, factor=args.factor, dropout=args.dropout,
                     encoder_attention=args.attention, decoder_attention=args.attention)
    settings = TrainSettings(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
                             patience=args.patience, seed=args.seed, device=args.device,
                             max_steps_per_epoch=args.max_steps)
    checkpoint, result = train_on_frame(open_csv(args), spec, size, settings, out=args.out, progress=ConsoleProgress())
    t = result.test
    print(f"device {result.device}, {len(result.history)} epochs ({result.stopped}), "
          f"{result.train_seconds_per_epoch:.1f} s/epoch training ({result.seconds_per_epoch:.1f} with validation)")
    print(f"test mse {t.mse:.4f} mae {t.mae:.4f} (standardised); "
          f"mse {t.mse_original:.4f} mae {t.mae_original:.4f} (original units)")
    print(f"checkpoint written to {args.out}")
    return 0
