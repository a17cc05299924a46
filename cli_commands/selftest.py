"""`selftest`: the instruments against a generated file's planted answer (analysis.planted.selftest).

    python cli.py synth --kind seasonal_ar --out planted.csv
    python cli.py train --csv planted.csv --target y --features MS --out runs/planted
    python cli.py selftest --checkpoint runs/planted --csv planted.csv --out selftest.csv   # reads planted.answer.json
"""
from __future__ import annotations

import sys
from pathlib import Path

from informer_lab.source import command

from ._common import (seed_int, int_in, AFTER, add_checkpoint_and_csv, baseline_check_note, open_checkpoint, open_csv,
                      write_table)


def register(sub) -> None:
    p = sub.add_parser("selftest", help="test the instruments against a generated file's planted answer")
    add_checkpoint_and_csv(p)
    p.add_argument("--answer", type=Path, default=None,
                   help="the answer file (default: FILE.answer.json beside --csv, as `synth` writes it)")
    p.add_argument("--out", required=True, type=Path, help="CSV to write (- for standard output): one row per check")
    p.add_argument("--ig-windows", type=int_in(1, 4096), default=8, help="test windows Integrated Gradients reads")
    p.add_argument("--seed", type=seed_int, default=0, help="ProbSparse key-sample seed")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.errors import ConfigError
    from informer_lab.analysis.planted.selftest import self_test
    from informer_lab.analysis.planted.synth import answer_path, read_answer
    from informer_lab.analysis.learning.workflow import prepare_for_checkpoint

    answer_file = args.answer or answer_path(args.csv)
    if not Path(answer_file).is_file():
        raise ConfigError(f"no answer file {answer_file}: generate the data with `{command('synth')}`, or give "
                          "--answer")
    answer = read_answer(answer_file)
    checkpoint = open_checkpoint(args.checkpoint)
    frame = open_csv(args, checkpoint)
    prepared = prepare_for_checkpoint(checkpoint, frame)
    if args.baseline_check:
        AFTER.append(lambda: baseline_check_note(checkpoint, prepared))

    def say(what: str) -> None:
        print(f"self-test: {what}…", file=sys.stderr)

    result = self_test(checkpoint.model, prepared, frame, answer, seed=args.seed, ig_windows=args.ig_windows,
                       progress=say)
    where = write_table(result.table, args.out)
    for r, state in zip(result.table.itertuples(), result.results()):
        interval = "" if r.lo != r.lo else f" [{r.lo:.3g}, {r.hi:.3g}]"
        print(f"  {r.check:<21} {state:<10} {r.figure:.3g}{interval}  ({r.criterion})")
    print(result.verdict())
    print(f"written to {where}")
    return 0
