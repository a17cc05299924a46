"""`report`: one self-contained HTML file (figures, tables, the model's config, the data's fingerprint, seeds, the
project's version) for one model on one data set, or for a whole study. It opens offline and fetches nothing.

    python cli.py report --checkpoint runs/mine --csv sample_data/sample.csv --out report.html [--seed 0]
    python cli.py report --study studies/ett --out study.html
"""
from __future__ import annotations

from pathlib import Path


from ._common import seed_int, add_csv_options, open_checkpoint, open_csv, positive_int
from ._output import write_data


def register(sub) -> None:
    p = sub.add_parser("report", help="one self-contained HTML report of a model on a CSV, or of a study folder")
    p.add_argument("--checkpoint", type=Path, default=None, help="checkpoint folder written by `train` (with --csv)")
    p.add_argument("--study", type=Path, default=None, help="a study folder written by `study` (instead of "
                                                            "--checkpoint and --csv)")
    add_csv_options(p, help="CSV with the model's columns (with --checkpoint)", required=False)
    p.add_argument("--out", required=True, type=Path, help="the HTML file to write (- for standard output)")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--seed", type=seed_int, default=0, help="key-sample seed")
    p.add_argument("--max-windows", type=positive_int, default=256,
                   help="windows of the split the errors and the head sweep score (the first ones; default 256)")
    p.set_defaults(func=run)


def run(args) -> int:
    from informer_lab.analysis.errors import ConfigError
    from informer_lab.analysis.reports.report import checkpoint_report, study_report
    from informer_lab.analysis.reports.html import render_html

    if (args.study is None) == (args.checkpoint is None):
        raise ConfigError("give either --checkpoint DIR with --csv PATH, or --study DIR")
    if args.study is not None:
        if args.csv is not None:
            raise ConfigError("--csv goes with --checkpoint; a study report reads the study folder only")
        report = study_report(args.study)
    else:
        if args.csv is None:
            raise ConfigError("--checkpoint needs --csv: the data to report the model on")
        checkpoint = open_checkpoint(args.checkpoint)
        frame = open_csv(args, checkpoint)
        report = checkpoint_report(checkpoint, frame, seed=args.seed, split=args.split, max_windows=args.max_windows,
                                   data=args.csv.read_bytes(), folder=args.checkpoint)
    page = render_html(report).encode("utf-8")
    where = write_data(page, args.out)
    tables = sum(len(s.tables) for s in report.sections)
    print(f"report written to {where} ({len(page) / 1e6:.1f} MB: {len(report.sections)} sections, "
          f"{report.figure_count} figures, {tables} tables)")
    return 0
