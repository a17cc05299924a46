"""`benchmark`: every input-attribution and head-level instrument scored against planted answers
(analysis.circuits.benchmark): series generated, small models trained at the lab's defaults, scores written.

    python cli.py benchmark --out bench                        # 3 kinds × 3 seeds: about 15 min on two busy cores
    python cli.py benchmark --out bench --kinds driver --seeds 0-1
    python cli.py benchmark --out bench --quick                # 1 kind, 1 seed, a tiny model: seconds
    python cli.py benchmark --out bench --seeds 0-9 --kinds seasonal_ar,driver,spikes,multivariate --processes 2
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from ._choices import BENCH_KINDS
from ._common import choice_list, int_in, seeds as seed_list, step_bar, threads_int

DEFAULT_KINDS = ("seasonal_ar", "driver", "spikes")  # analysis.circuits.benchmark.KINDS
MAX_SEEDS = 100


kinds_list = choice_list(BENCH_KINDS, "kinds")


def register(sub) -> None:
    p = sub.add_parser("benchmark", help="score every instrument against planted answers (scores.csv, report.html)")
    p.add_argument("--out", required=True, type=Path,
                   help="the folder to write scores.csv and report.html into (created if need be)")
    p.add_argument("--kinds", type=kinds_list, default=None,
                   help=f"generated kinds, comma-separated (default {','.join(DEFAULT_KINDS)})")
    p.add_argument("--seeds", type=seed_list(MAX_SEEDS), default=None,
                   help=f"seeds of the series and the training, e.g. 0-2 or 0,3 (default 0-2; at most {MAX_SEEDS})")
    p.add_argument("--quick", action="store_true",
                   help="a tiny model, one short epoch, 4 windows (tests, CI); alone it runs one kind and seed")
    p.add_argument("--threads", type=threads_int(), default=1,
                   help="torch threads on the CPU (default 1, as `train`: on a busy two-core machine a second thread "
                        "made the quick run five times slower)")
    p.add_argument("--processes", type=int_in(1, 64), default=1,
                   help="(kind, seed) units run side by side in this many processes, the threads shared among them "
                        "(default 1; 2 on a two-core machine)")
    p.set_defaults(func=run)


def run(args) -> int:
    import torch

    from informer_lab.analysis.circuits.benchmark import BenchmarkSettings, run_benchmark, summary_table
    from informer_lab.analysis.circuits.benchmark_files import write_benchmark

    if args.quick:
        settings = BenchmarkSettings.quick(kinds=args.kinds or ("seasonal_ar",), seeds=args.seeds or (0,))
    else:
        settings = BenchmarkSettings(kinds=args.kinds or DEFAULT_KINDS, seeds=args.seeds or (0, 1, 2))
    torch.set_num_threads(args.threads)
    bar = step_bar("benchmark")

    started = time.perf_counter()

    def say(text: str) -> None:
        if getattr(args, "verbose", False):
            print(f"\n{text} ({time.perf_counter() - started:.0f} s)", file=sys.stderr)

    result = run_benchmark(settings, progress=bar, say=say, processes=args.processes)
    files = write_benchmark(result, args.out)
    print_summary(summary_table(result.scores))
    for note in result.notes:
        if "skipped" in note or "not scored" in note:
            print(f"note: {note}")
    print(f"{len(settings.kinds)} kind(s) × {len(settings.seeds)} seed(s) in {result.seconds / 60:.1f} min; "
          f"written {', '.join(map(str, files.values()))}")
    return 0


def print_summary(summary) -> None:
    """Per kind: instruments × metrics, the mean over seeds."""
    import pandas as pd

    for kind, part in summary.groupby("kind", sort=False):
        wide = part.pivot(index="instrument", columns="metric", values="value")
        order = list(dict.fromkeys(part["instrument"]))
        metrics = list(dict.fromkeys(part["metric"]))
        wide = wide.reindex(index=order, columns=metrics)
        seeds = int(part["seeds"].max())
        print(f"\n{kind} (mean over {seeds} seed{'s' if seeds != 1 else ''}):")
        with pd.option_context("display.width", 250, "display.max_columns", 30, "display.max_rows", 100):
            print(wide.rename(columns=_short).to_string(float_format=lambda v: f"{v:.3g}", na_rep="–"))
    print()


def _short(metric: str) -> str:
    return (metric.replace("comprehensiveness", "comp").replace("sufficiency", "suff")
            .replace("mse_over_bayes", "mse/bayes").replace("planted_head_found", "head_found")
            .replace("degradation", "degr"))
