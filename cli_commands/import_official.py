"""`import`: an official Informer2020 checkpoint.pth → our checkpoint folder.

The .pth holds weights only, so the data schema (columns, scaler) comes from the CSV the official run
trained on: the scaler is fitted on its train split, exactly as the official code does.
"""
from __future__ import annotations

from pathlib import Path

from analysis.checkpoint import DataSchema, save_checkpoint
from analysis.data import DataSpec, prepare
from analysis.errors import CheckpointError
from analysis.official import load_official_checkpoint

from ._common import add_csv_options, open_csv, positive_int


def register(sub) -> None:
    p = sub.add_parser("import", help="convert an official Informer2020 checkpoint.pth into a checkpoint folder")
    p.add_argument("--official", required=True, type=Path, help="the official run's checkpoint.pth")
    add_csv_options(p, help="the CSV the official run trained on")
    p.add_argument("--target", required=True, help="the official run's --target")
    p.add_argument("--features", choices=("M", "S", "MS"), default="M")
    p.add_argument("--seq-len", type=positive_int, default=96)
    p.add_argument("--label-len", type=positive_int, default=48)
    p.add_argument("--pred-len", type=positive_int, default=24)
    p.add_argument("--n-heads", type=positive_int, default=8, help="cannot be read off the weights; default 8")
    p.add_argument("--factor", type=positive_int, default=5)
    p.add_argument("--attention", choices=("prob", "full"), default="prob", help="the official run's --attn")
    p.add_argument("--no-mix", action="store_true", help="the official run used --mix false")
    p.add_argument("--out", required=True, type=Path)
    p.set_defaults(func=run)


def run(args) -> int:
    overrides = {"encoder_attention": args.attention, "decoder_attention": args.attention}
    if args.no_mix:
        overrides["mix"] = False
    model, config = load_official_checkpoint(args.official, seq_len=args.seq_len, label_len=args.label_len,
                                             pred_len=args.pred_len, factor=args.factor, n_heads=args.n_heads,
                                             **overrides)
    frame = open_csv(args)
    prepared = prepare(frame, DataSpec(target=args.target, features=args.features, seq_len=args.seq_len,
                                       label_len=args.label_len, pred_len=args.pred_len))
    if (prepared.enc_in, prepared.c_out, prepared.n_marks) != (config.enc_in, config.c_out, config.n_marks):
        raise CheckpointError(f"the checkpoint expects {config.enc_in} inputs, {config.c_out} outputs and "
                              f"{config.n_marks} time features; {frame.name} with --features {args.features} gives "
                              f"{prepared.enc_in}, {prepared.c_out} and {prepared.n_marks}")
    save_checkpoint(args.out, model, DataSchema.of(prepared, frame.datetime_column),
                    {"imported_from": str(args.official)})
    print(f"imported {args.official} (e_layers {config.e_layers}, d_model {config.d_model}) into {args.out}")
    return 0
