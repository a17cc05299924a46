"""Helpers shared by the commands: argument types, the reading options, the console progress bar (outputs:
_output.py)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from typing import TYPE_CHECKING

from informer_lab.home import resolve_run

from ._choices import (ATTENTION_KINDS, AUTO_EPOCHS, AUTO_STEPS, EMBEDDINGS, FILLS, MAX_REPLICA_LAYERS, MAX_REPLICAS,
                       SCHEDULES, SIZE_DEFAULTS, SIZE_RANGES, TRAIN_DEFAULTS, UNIT_ROOTS)
from ._types import (COUNT_MAX, LIST_MAX, bounded_text, choice_list, int_in, int_list, non_negative_int, number_in, number_list,  # noqa: F401
                     positive_int, seed_int, seeds, shown, text, threads_int)  # the commands import their types from here
from ._output import AFTER, ProgressLine, write_table  # noqa: F401 — write_table: the commands import it from here

if TYPE_CHECKING:  # the analyses are imported when a command runs, not to parse its arguments
    from informer_lab.analysis.checkpoints.folder import Checkpoint
    from informer_lab.analysis.data import PreparedData, ReadOptions, SeriesFrame


SIZE = {name: int_in(max(1, low), high) for name, (low, high) in SIZE_RANGES.items()}  # the checkpoint's limits
HEAD = int_in(0, SIZE_RANGES["n_heads"][1] - 1)  # a head of a site
STEP = int_in(1, SIZE_RANGES["pred_len"][1])  # a horizon step, 1-based

DATA_HELP = ("the data: CSV (any separator; .csv.gz / .bz2 / .xz, or a .zip holding one), a spreadsheet (.xlsx: "
             "the first sheet, or --sheet) or Parquet; wide (a time column, one column per variable) or long (an id "
             "column, a time column, values)")


def add_csv_options(parser: argparse.ArgumentParser, *, help: str = DATA_HELP, required: bool = True) -> None:
    """--csv (alias --data) and how to read it: every command that reads data takes the same options
    (`required=False` for a command that reads it only in some of its forms, and checks that itself)."""
    parser.add_argument("--csv", "--data", dest="csv", required=required, type=Path, help=help)
    read = parser.add_argument_group("reading the data")
    read.add_argument("--datetime-column", default=None, type=text(1000, items=2, what="columns"),
                      help="the timestamp column (default: found by its content); integer years are read as years, "
                           "and two columns as one date: year,quarter, year,month or year,week")
    read.add_argument("--repair", choices=FILLS, default=None,
                      help="none: refuse gaps, repeated or unsorted timestamps and missing cells; interpolate / ffill: "
                           "regularise them and fill missing cells, listing every change (default: as the "
                           "checkpoint's training data was read, its repair.json; else none)")
    read.add_argument("--freq", default=None, type=bounded_text(chars=40), help="the grid a repair regularises to, a pandas alias such as h, "
                                                   "15min, D, W-SUN, MS (default: inferred)")
    read.add_argument("--dayfirst", action=argparse.BooleanOptionalAction, default=None,
                      help="dates such as 01/02/2021 put the day first (--dayfirst) or the month first "
                           "(--no-dayfirst); default: decided from the whole column")
    read.add_argument("--decimal", choices=(".", ","), default=None,
                      help="the decimal mark of the numbers (default: decided from every cell; a file where nothing "
                           "decides is refused)")
    read.add_argument("--sheet", default=None, type=text(1000), help="a spreadsheet's sheet (default: the first)")
    read.add_argument("--id-column", default=None, type=text(1000),
                      help="a long table's series id column (default: found by its content)")
    read.add_argument("--series", default=None, metavar="NAME[,NAME…]", type=text(100_000, items=LIST_MAX, what="series"),
                      help="the series of a long table to read: one gives its value columns as they are named, "
                           "several give <series>.<column> columns (default: every series; quote an id holding a "
                           "comma as in CSV)")


def read_options(args: argparse.Namespace) -> ReadOptions:
    from informer_lab.analysis.data import ReadOptions

    return ReadOptions(datetime_column=args.datetime_column, repair=args.repair or "none", freq=args.freq,
                       dayfirst=args.dayfirst, decimal=args.decimal, sheet=getattr(args, "sheet", None),
                       id_column=getattr(args, "id_column", None),
                       series=(args.series,) if getattr(args, "series", None) else None)


def open_csv(args: argparse.Namespace, checkpoint: Checkpoint | None = None) -> SeriesFrame:
    """The data of --csv read with the reading options; what a repair changed is summarised on stderr. Without
    --repair, the data for a checkpoint is read as its training data was (its repair.json), and a note says so."""
    from informer_lab.analysis.data import load_csv

    trained = (checkpoint.repair or {}) if checkpoint is not None else {}
    read = (checkpoint.metrics or {}).get("read") if checkpoint is not None else None
    series = read.get("series") if isinstance(read, dict) else None
    if getattr(args, "series", None) is None and isinstance(series, list) and series and \
            all(isinstance(s, str) for s in series):
        import csv
        import io

        line = io.StringIO()
        csv.writer(line).writerow(series)
        args.series = line.getvalue().strip()
        if getattr(args, "id_column", None) is None and isinstance(read.get("id_column"), str):
            args.id_column = read["id_column"]
        print(f"note: read --series {args.series} of the long table, as the model's training data was (its "
              "metrics.json); --series names others", file=sys.stderr)
    if args.repair is None and trained.get("fill", "none") != "none":
        args.repair = trained["fill"]
        args.freq = args.freq or trained.get("freq") or None
        print(f"note: read with --repair {args.repair}"
              + (f" --freq {args.freq}" if args.freq else "") + ", as the model's training data was (its "
              "repair.json); --repair none refuses what needs repairing instead", file=sys.stderr)
    frame = load_csv(args.csv, read_options(args))
    for note in frame.notes:
        print(f"note: {note}", file=sys.stderr)
    if not frame.repairs.empty:
        print(f"repaired {frame.name} ({args.repair or 'none'}, {len(frame.repairs.changes)} changes):",
              file=sys.stderr)
        for line in frame.repairs.summary():
            print(f"  {line}", file=sys.stderr)
    return frame


class PaperRecipe(argparse._StoreTrueAction):
    """--paper-recipe, a flag: the paper's learning rate, schedule, batch size, epochs, sampling factor and input
    embedding, and no weight average, in place of the lab's defaults."""

    def __call__(self, parser, namespace, values, option_string=None):
        super().__call__(parser, namespace, values, option_string)
        namespace.learning_rate, namespace.schedule, namespace.batch_size, namespace.epochs = 1e-4, "paper", 32, 6
        namespace.average = 0.0
        namespace.factor, namespace.embedding = 5, "conv"


def add_training_options(p: argparse.ArgumentParser, *, target_required: bool = True) -> None:
    """What to forecast, the windows, the model's size and the training settings (`train` and `study`)."""
    p.add_argument("--target", required=target_required, type=text(1000),
                   help="column to forecast" + ("" if target_required else " (default: the file's only numeric column)"))
    p.add_argument("--features", choices=("M", "S", "MS"), default="M",
                   help="M: all in, all out; S: target only; MS: all in, target out")
    size = SIZE
    p.add_argument("--seq-len", type=size["seq_len"], default=96)
    p.add_argument("--label-len", type=size["label_len"], default=48)
    p.add_argument("--pred-len", type=size["pred_len"], default=24)
    defaults = argparse.Namespace(**TRAIN_DEFAULTS)  # TrainSettings' defaults, without importing the trainer
    p.add_argument("--epochs", type=int_in(1, 100_000), default=defaults.epochs,
                   help=f"at most this many epochs (default: auto, the fewest whole epochs that give {AUTO_STEPS} "
                        f"optimiser steps, {AUTO_EPOCHS[0]} to {AUTO_EPOCHS[1]}; early stopping and --minutes may end "
                        "the run before)")
    p.add_argument("--batch-size", type=int_in(1, 65_536), default=defaults.batch_size)
    p.add_argument("--learning-rate", type=number_in(0, 10, low_open=True), default=defaults.learning_rate,
                   help=f"the schedule's peak rate (default {defaults.learning_rate:g}; the paper's is 1e-4)")
    p.add_argument("--schedule", choices=SCHEDULES, default=defaults.schedule,
                   help="cosine: warm-up, a held peak, cosine decay over the run (default); paper: halved after "
                        "every epoch, as Informer2020 (--paper-recipe for its whole recipe); "
                        "constant")
    p.add_argument("--minutes", type=number_in(0, 1e6, low_open=True), default=None,
                   help="time budget for training and validation; the schedule decays within it (default: none)")
    p.add_argument("--find-lr", action="store_true",
                   help="run a short learning-rate range test first and use its rate as the peak")
    p.add_argument("--patience", type=int_in(1, 100_000), default=defaults.patience)
    p.add_argument("--average", type=number_in(0, 1, high_open=True), default=defaults.average, metavar="DECAY",
                   help=f"validate and keep an exponential moving average of the weights, this decay a step (default "
                        f"{defaults.average:g}: about the last {round(1 / (1 - defaults.average))} steps; 0: the "
                        "last step's weights, as the paper)")
    p.add_argument("--paper-recipe", action=PaperRecipe,
                   help="the paper's recipe: Adam at 1e-4 halved after every epoch, 6 epochs, batches of 32, factor 5, "
                        "the conv embedding, no weight average (sets --learning-rate, --schedule, --epochs, "
                        "--batch-size, --factor, --embedding and --average; any of them given after it wins)")
    p.add_argument("--d-model", type=size["d_model"], default=SIZE_DEFAULTS["d_model"])
    p.add_argument("--n-heads", type=size["n_heads"], default=SIZE_DEFAULTS["n_heads"])
    p.add_argument("--d-ff", type=size["d_ff"], default=SIZE_DEFAULTS["d_ff"])
    p.add_argument("--e-layers", type=ENCODER_LAYERS, default="2",
                   help=f"layers per encoder replica, e.g. 2 or 3,2,1 (a stack; at most {MAX_REPLICAS} replicas of "
                        f"{MAX_REPLICA_LAYERS} layers)")
    p.add_argument("--d-layers", type=size["d_layers"], default=SIZE_DEFAULTS["d_layers"])
    p.add_argument("--factor", type=size["factor"], default=SIZE_DEFAULTS["factor"])
    p.add_argument("--dropout", type=number_in(0, 1, high_open=True), default=SIZE_DEFAULTS["dropout"])
    p.add_argument("--attention", choices=ATTENTION_KINDS, default="prob", metavar="KIND",
                   help=f"encoder and decoder self-attention: {', '.join(ATTENTION_KINDS)} (cross-attention stays "
                        f"full unless --cross-attention)")
    p.add_argument("--cross-attention", choices=("full", "prob", "lsh"), default="full")
    p.add_argument("--attention-option", action="append", default=[], metavar="[SITE.]NAME=VALUE",
                   type=bounded_text(chars=4096),
                   help="a parameter of the attention kind, e.g. window=16, globals=0,-1, encoder.window=32, "
                        "cross.buckets=4 (every site of that kind unless a site type is named; repeatable)")
    p.add_argument("--embedding", choices=EMBEDDINGS, default="auto",
                   help="lags: each step embedded with its value one season back (hourly data: 24 steps, the "
                        "smallest multiple of the season ≥ --pred-len), which must fit in half of --seq-len (else an "
                        "error says why); auto (default): lags, with the lag's rows put before each window where it "
                        "does not fit (15-minute data at --seq-len 96: windows of 192 rows, the encoder reading 96), "
                        "conv with RevIN where the data has no season; conv: the paper's (with --revin, or alone as "
                        "in --paper-recipe). On six planted families auto reached 1.02-1.08x the best possible "
                        "error, conv 1.11-1.42x")
    p.add_argument("--unit-roots", choices=UNIT_ROOTS, default="keep",
                   help="withhold: with the lags embedding, the model does not read the level of an input column "
                        "(not a target) with a unit root in the training split (augmented Dickey-Fuller, 5 %%: a "
                        "random walk, a drifting level), only its values within each window, so it cannot take the "
                        "drift for a predictor; the checkpoint names such columns. keep (default): every level. On "
                        "a planted random-walk input withhold gave 1.01x the best possible error against 1.02x; on "
                        "ETTh2, whose target follows three drifting load columns, 1.00-1.11x the error of keep")
    p.add_argument("--revin", action="store_true",
                   help="reversible instance normalisation (Kim et al. 2022): each window standardised by its own "
                        "mean and deviation, the forecast mapped back; for series whose level trends out of the "
                        "train split's range (a price, a count that grows); recorded in the checkpoint")
    p.add_argument("--max-steps", type=positive_int, default=None, help="cap on steps per epoch (quick runs)")
    p.add_argument("--device", choices=("cuda", "mps", "cpu"), default=None)


ENCODER_LAYERS = int_list(1, MAX_REPLICA_LAYERS, most=MAX_REPLICAS, what="layers per encoder replica")


def training_choices(args: argparse.Namespace):
    """(DataSpec, ModelSize, TrainSettings) of `add_training_options`' arguments."""
    from informer_lab.analysis.data import DataSpec
    from informer_lab.analysis.learning.attention_options import parse_attention_options
    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.learning.workflow import ModelSize

    spec = DataSpec(target=args.target, features=args.features, seq_len=args.seq_len, label_len=args.label_len,
                    pred_len=args.pred_len)
    kinds = {"encoder": args.attention, "decoder_self": args.attention,
             "cross": getattr(args, "cross_attention", "full")}
    size = ModelSize(d_model=args.d_model, n_heads=args.n_heads, e_layers=tuple(args.e_layers),
                     d_layers=args.d_layers, d_ff=args.d_ff, factor=args.factor, dropout=args.dropout,
                     encoder_attention=kinds["encoder"], decoder_attention=kinds["decoder_self"],
                     cross_attention=kinds["cross"],
                     attention_options=parse_attention_options(getattr(args, "attention_option", []), kinds),
                     revin=getattr(args, "revin", False), embedding=getattr(args, "embedding", "auto"),
                     unit_roots=getattr(args, "unit_roots", "keep"))
    settings = TrainSettings(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
                             patience=args.patience, seed=getattr(args, "seed", 0), device=args.device,
                             max_steps_per_epoch=args.max_steps, schedule=args.schedule, max_minutes=args.minutes,
                             find_lr=args.find_lr, average=args.average)
    return spec, size, settings


def add_checkpoint_and_csv(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--checkpoint", required=True, type=Path,
                        help="checkpoint folder written by `train`, or the name of a run in the lab's home "
                             "(`sample` is the shipped sample model)")
    add_csv_options(parser, help="CSV with the model's columns")
    parser.add_argument("--no-baseline-check", dest="baseline_check", action="store_false",
                        help="skip the closing check of the model's test MSE against seasonal naive and the linear "
                             "baseline (an analysis prints it once its output is written)")


UNCHECKED = ("compare",)  # commands that print the model against the baselines themselves


def baseline_check_note(checkpoint: Checkpoint, prepared: PreparedData) -> None:
    """Print the model against seasonal naive and the linear baseline, and a warning when it is not better."""
    from informer_lab.analysis.compare.verdict import check_against_baselines  # torch

    check = check_against_baselines(checkpoint.model, prepared)
    print(check.summary())
    warning = check.warning()
    if warning is not None:
        print(f"warning: {warning}")


def open_checkpoint(path: Path) -> Checkpoint:
    from informer_lab.analysis.checkpoints.folder import load_checkpoint

    return load_checkpoint(resolve_run(path))


def open_checkpoint_and_data(args: argparse.Namespace) -> tuple[Checkpoint, PreparedData]:
    """The checkpoint of --checkpoint and the CSV of --csv prepared for it (`add_checkpoint_and_csv`'s arguments)."""
    from informer_lab.analysis.learning.workflow import prepare_for_checkpoint

    checkpoint = open_checkpoint(args.checkpoint)
    prepared = prepare_for_checkpoint(checkpoint, open_csv(args, checkpoint))
    if getattr(args, "baseline_check", False) and getattr(args, "command", None) not in UNCHECKED:
        AFTER.append(lambda: baseline_check_note(checkpoint, prepared))
    return checkpoint, prepared


def step_bar(label: str, width: int = 30):
    """A progress callback (done, total) drawing one line on stderr; closed by the next print (ProgressLine)."""
    def update(done: int, total: int) -> None:
        filled = int(width * done / max(1, total))
        sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        ProgressLine.open = done < total
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()
    return update


class ConsoleProgress:
    """A one-line progress bar on stderr, redrawn per step, with a line per finished epoch."""

    def __init__(self, stream=None, width: int = 30):
        self._stream, self.width = stream, width

    @property
    def stream(self):
        return self._stream or sys.stderr  # looked up per call: pytest swaps sys.stderr between tests

    def __call__(self, p) -> None:  # p: analysis.learning.training.TrainProgress
        if p.stage in ("validate", "test"):
            done = int(self.width * p.windows_done / max(1, p.windows_total))
            self.stream.write(f"\repoch {p.epoch}/{p.epochs} {'validating' if p.stage == 'validate' else 'test'} "
                              f"[{'#' * done}{'.' * (self.width - done)}] {p.windows_done}/{p.windows_total} windows")
        elif p.val_loss is not None:
            self.stream.write(f"\repoch {p.epoch}/{p.epochs}  train {p.train_loss:.4f}  val {p.val_loss:.4f}  "
                              f"best {p.best_val_loss:.4f}  {p.seconds:.0f}s{' ' * 10}\n")
        else:
            done = int(self.width * p.step / max(1, p.steps))
            self.stream.write(f"\repoch {p.epoch}/{p.epochs} [{'#' * done}{'.' * (self.width - done)}] "
                              f"{p.step}/{p.steps}  loss {p.train_loss:.4f}")
        ProgressLine.open = not (p.stage not in ("validate", "test") and p.val_loss is not None)
        self.stream.flush()
