"""`study`: many models (seeds × settings) trained and analysed in parallel on Ray, with findings across them.

    python cli.py study --csv data.csv --target OT --seeds 0-7 --grid attention=prob,full --out studies/ett
    python cli.py study ... --address auto          # join a running Ray cluster instead of starting one

Every `train` option sets the runs' base; --grid varies some of them. Re-running a study does no work twice and
resumes a killed one; a failed run is reported with its error and does not stop the others.
"""
from __future__ import annotations

import sys
from pathlib import Path

from analysis.data import prepare
from analysis.errors import ConfigError
from analysis.training import config_for
from study.plan import ANALYSES, StudyPlan, fingerprint, parse_grid, parse_seeds
from study.runner import run_study

from ._common import add_csv_options, add_training_options, open_csv, positive_int, read_options, training_choices


def register(sub) -> None:
    p = sub.add_parser("study", help="train and analyse many models (seeds × settings) in parallel on Ray")
    add_csv_options(p)
    add_training_options(p)
    p.add_argument("--seeds", default="0-1", help="seeds: 0-7, 0,3,9 or 2-4,8 (default 0-1)")
    p.add_argument("--grid", nargs="*", default=[], metavar="KEY=V1,V2",
                   help="settings to vary, each KEY=values (e.g. attention=prob,full factor=3,5); every combination "
                        "runs with every seed")
    p.add_argument("--analyses", default=",".join(ANALYSES),
                   help=f"analyses per run, from {', '.join(ANALYSES)} (default: all)")
    p.add_argument("--max-windows", type=positive_int, default=512, help="windows each analysis scores")
    p.add_argument("--split", choices=("val", "test"), default="test")
    p.add_argument("--address", default=None, help="a Ray cluster to join (auto, or HOST:PORT); default: start "
                                                  "Ray in this process, sized to this machine")
    p.add_argument("--cpus", type=positive_int, default=None, help="CPUs for the in-process Ray (default: all)")
    p.add_argument("--out", required=True, type=Path, help="the study folder")
    p.set_defaults(func=run)


def run(args) -> int:
    analyses = tuple(a.strip() for a in args.analyses.split(",") if a.strip())
    unknown = sorted(set(analyses) - set(ANALYSES))
    if unknown:
        raise ConfigError(f"unknown analyses {', '.join(unknown)}; choose from {', '.join(ANALYSES)}")
    frame = open_csv(args)  # read once here: a bad file is refused before any Ray task starts
    spec, size, settings = training_choices(args)
    data = Path(args.csv).read_bytes()
    plan = StudyPlan(csv=str(Path(args.csv).resolve()), fingerprint=fingerprint(data), options=read_options(args), spec=spec,
                     size=size, train=settings, seeds=parse_seeds(args.seeds),
                     grid=parse_grid(args.grid), analyses=analyses, max_windows=args.max_windows, split=args.split)
    for run in plan.runs():  # every run's settings are valid for this data before anything starts
        config_for(prepare(frame, run.spec), **run.size.as_dict())
    findings = run_study(plan, args.out, data, address=args.address, num_cpus=args.cpus,
                         echo=lambda text: print(text, file=sys.stderr, flush=True))
    for setting, entry in findings.get("settings", {}).items():
        mse = entry.get("test_mse", {})
        removable = entry.get("removable", {})
        line = f"{setting}: test mse {mse.get('mse_mean', float('nan')):.4f} ± {mse.get('mse_std', float('nan')):.4f} " \
               f"over {mse.get('seeds', '?')} seeds"
        if removable:
            line += (f"; removable heads {removable['with_interval_mean']:.1f} of {removable['heads']} with the "
                     f"interval ({removable['by_point_mean']:.1f} by point estimates)")
        if "roles_in_every_seed" in entry:
            line += f"; heads with one role in every seed: {entry['heads_with_a_stable_role']}"
        print(line)
    print(f"tables in {args.out / 'tables'}")
    return 0
