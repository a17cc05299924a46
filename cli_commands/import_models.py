"""`import`: an Informer trained elsewhere → our checkpoint folder.

    --official checkpoint.pth   Informer2020 (zhouhaoyi/Informer2020)          analysis.checkpoints.official
    --tsl checkpoint.pth        Time-Series-Library's models/Informer.py       analysis.checkpoints.imports.tsl
    --hf FOLDER                 transformers' InformerForPrediction folder     analysis.checkpoints.imports.hf

The weights come without a data schema, so it comes from the CSV the run trained on: Informer2020 and TSL fit their
scaler on the train split, exactly as ours does; HF's model scales each window itself (instance_scaling) and reads
raw values, so its checkpoint's scaler is the identity. Lengths, heads and factor: given for --official / --tsl (not
in their files); read from config.json for --hf (the options, when given, must agree with it).
"""
from __future__ import annotations

from pathlib import Path


from ._common import SIZE, text, add_csv_options, open_csv

DEFAULTS = {"seq_len": 96, "label_len": 48, "pred_len": 24, "n_heads": 8}


def register(sub) -> None:
    p = sub.add_parser("import", help="convert an Informer trained elsewhere (Informer2020, Time-Series-Library, "
                                      "Hugging Face) into a checkpoint folder")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--official", type=Path, metavar="PTH", help="an Informer2020 run's checkpoint.pth")
    source.add_argument("--tsl", type=Path, metavar="PTH", help="a Time-Series-Library Informer's checkpoint.pth")
    source.add_argument("--hf", type=Path, metavar="FOLDER",
                        help="a transformers InformerForPrediction save_pretrained folder (config.json, "
                             "model.safetensors)")
    add_csv_options(p, help="the CSV the run trained on")
    p.add_argument("--target", required=True, type=text(1000), help="the run's --target")
    p.add_argument("--features", choices=("M", "S", "MS"), default="M")
    p.add_argument("--seq-len", type=SIZE["seq_len"], default=None, help="default 96 (--hf: context_length + max lag)")
    p.add_argument("--label-len", type=SIZE["label_len"], default=None, help="default 48 (--hf: 1, not read)")
    p.add_argument("--pred-len", type=SIZE["pred_len"], default=None, help="default 24 (--hf: prediction_length)")
    p.add_argument("--n-heads", type=SIZE["n_heads"], default=None,
                   help="cannot be read off .pth weights; default 8 (--hf: from config.json)")
    p.add_argument("--factor", type=SIZE["factor"], default=None,
                   help="default 5 for --official, 1 for --tsl (its run.py default; its Informer scripts pass 3), "
                        "config.json's sampling_factor for --hf")
    p.add_argument("--attention", choices=("prob", "full"), default=None, help="--official: the run's --attn")
    p.add_argument("--no-mix", action="store_true", help="--official: the run used --mix false")
    p.add_argument("--out", required=True, type=Path)
    p.set_defaults(func=run)


def _given(args) -> dict:
    return {name: getattr(args, name) for name in ("seq_len", "label_len", "pred_len", "n_heads", "factor")
            if getattr(args, name) is not None}


def _load(args):
    """(model, config, source path, metrics to save) of the chosen source."""
    from informer_lab.analysis.errors import CheckpointError
    from informer_lab.analysis.checkpoints.imports.hf import load_hf_folder
    from informer_lab.analysis.checkpoints.imports.tsl import load_tsl_checkpoint
    from informer_lab.analysis.checkpoints.official import load_official_checkpoint

    if args.hf is not None:
        if args.attention or args.no_mix:
            raise CheckpointError("--attention and --no-mix are for --official; an HF model's config.json says "
                                  "attention_type")
        given = _given(args)
        label_len = given.pop("label_len", None)
        model, config, info = load_hf_folder(args.hf, **({} if label_len is None else {"label_len": label_len}))
        for name, value in given.items():
            if getattr(config, name) != value:
                raise CheckpointError(f"--{name.replace('_', '-')} {value} disagrees with {args.hf}/config.json, "
                                      f"which gives {name}={getattr(config, name)}", field=name)
        return model, config, args.hf, {"imported_from": str(args.hf), "source": "hf", **info}
    settings = {**DEFAULTS, **_given(args)}
    if args.tsl is not None:
        if args.attention or args.no_mix:
            raise CheckpointError("--attention and --no-mix are for --official: TSL's Informer always uses "
                                  "ProbSparse attention and mixes heads")
        model, config = load_tsl_checkpoint(args.tsl, **{"factor": 1, **settings})
        return model, config, args.tsl, {"imported_from": str(args.tsl), "source": "tsl"}
    overrides = {"encoder_attention": args.attention or "prob", "decoder_attention": args.attention or "prob"}
    if args.no_mix:
        overrides["mix"] = False
    model, config = load_official_checkpoint(args.official, **{"factor": 5, **settings}, **overrides)
    return model, config, args.official, {"imported_from": str(args.official)}


def run(args) -> int:
    import numpy as np
    from informer_lab.analysis.checkpoints.folder import DataSchema, save_checkpoint
    from informer_lab.analysis.data import DataSpec, Scaler, prepare
    from informer_lab.analysis.errors import CheckpointError

    model, config, source, metrics = _load(args)
    frame = open_csv(args)
    prepared = prepare(frame, DataSpec(target=args.target, features=args.features, seq_len=config.seq_len,
                                       label_len=config.label_len, pred_len=config.pred_len))
    given = (prepared.enc_in, prepared.dec_in, prepared.c_out, prepared.n_marks)
    if given != (config.enc_in, config.dec_in, config.c_out, config.n_marks):
        raise CheckpointError(f"the checkpoint expects {config.enc_in} inputs, {config.c_out} outputs and "
                              f"{config.n_marks} time features; {frame.name} with --features {args.features} gives "
                              f"{prepared.enc_in}, {prepared.c_out} and {prepared.n_marks}")
    schema = DataSchema.of(prepared, frame.datetime_column)
    if config.instance_scaling != "none" or config.embedding == "lags":  # HF reads raw values and scales itself
        columns = prepared.scaler.columns
        schema = DataSchema(schema.spec, Scaler(np.zeros(len(columns)), np.ones(len(columns)), columns),
                            schema.target_columns, schema.datetime_column, schema.freq)
    save_checkpoint(args.out, model, schema, metrics)
    print(f"imported {source} (e_layers {config.e_layers}, d_model {config.d_model}) into {args.out}")
    return 0
