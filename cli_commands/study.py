"""`study`: many models (seeds × settings) trained and analysed in parallel on Ray, with findings across them.

    python cli.py study --csv data.csv --target OT --seeds 0-7 --grid attention=prob,full --out studies/ett
    python cli.py study ... --address HOST:PORT     # join a Ray cluster instead of starting a local Ray
    python cli.py study --status studies/ett         # where it stands (also while another process runs it)
    python cli.py study --stop studies/ett           # stop between tasks; the same command later resumes it
    python cli.py study --csv … --out studies/ett --add-seeds 8-15   # more seeds for an existing study

Every `train` option sets the runs' base; --grid varies some of them. Re-running a study does no work twice and
resumes a killed or stopped one (--seeds may be left out: the study's own); a failed run is reported with its
error and does not stop the others.
"""
from __future__ import annotations

import sys
from pathlib import Path

import argparse

from ._choices import ANALYSES, DEFAULT_ANALYSES, GRID_KEYS, STUDY_MAX_RUNS
from ._common import (add_csv_options, choice_list, add_training_options, int_in, open_csv, read_options, seeds, shown, text,
                      threads_int, training_choices)


def register(sub) -> None:
    p = sub.add_parser("study", help="train and analyse many models (seeds × settings) in parallel on Ray")
    add_csv_options(p, required=False)
    add_training_options(p)
    for action in p._actions:  # --csv and --target are needed to run a study, not to ask for its status
        if action.dest in ("csv", "target"):
            action.required = False
    p.add_argument("--seeds", type=seeds(STUDY_MAX_RUNS), default=None, help="seeds: 0-7, 0,3,9 or 2-4,8 (default: 0-1 for a new study, the "
                                                 "study's own seeds when --out holds one)")
    p.add_argument("--add-seeds", type=seeds(STUDY_MAX_RUNS), default=None, metavar="SEEDS", help="seeds to add to the study in --out")
    p.add_argument("--grid", nargs="*", default=[], metavar="KEY=V1,V2", type=grid_item(p),
                   help="settings to vary, each KEY=values (e.g. attention=prob,full factor=3,5); every combination "
                        "runs with every seed")
    p.add_argument("--analyses", type=analyses_list, default=",".join(DEFAULT_ANALYSES),
                   help=f"analyses per run, from {', '.join(ANALYSES)} (default: all but features, which trains a "
                        "sparse dictionary of the memory per run)")
    p.add_argument("--max-windows", type=int_in(1, 1_000_000), default=512, help="windows each analysis scores")
    p.add_argument("--split", choices=("val", "test"), default="test")
    p.add_argument("--address", default=None, type=text(300), help="a Ray cluster to join (auto, or HOST:PORT); default: start "
                                                  "a Ray of the study's own on this machine's loopback")
    p.add_argument("--cpus", type=threads_int(), default=None,
                   help="CPUs for the local Ray (default: all; at most the CPUs this process may use)")
    p.add_argument("--dashboard", action="store_true", help="start Ray's dashboard (on 127.0.0.1) with the local Ray")
    p.add_argument("--out", type=Path, default=None, help="the study folder")
    p.add_argument("--status", type=Path, default=None, metavar="DIR",
                   help="print where the study in DIR stands, and exit")
    p.add_argument("--stop", type=Path, default=None, metavar="DIR",
                   help="ask the study running in DIR to stop between tasks, and exit")
    p.set_defaults(func=run)


analyses_list = choice_list(ANALYSES, "analyses")


def grid_item(parser: argparse.ArgumentParser):
    """An argparse type: KEY=V1,V2 with KEY in GRID_KEYS and each value checked as its own option checks it (the
    same type, choices and bounds); the text is returned for study.plan.parse_grid."""
    actions = {a.dest: a for a in parser._actions}

    def parse(text: str) -> str:
        key, eq, values = str(text).partition("=")
        key = key.strip().replace("-", "_")
        if not eq or key not in GRID_KEYS:
            raise argparse.ArgumentTypeError(f"expected KEY=V1,V2 with KEY one of {', '.join(GRID_KEYS)}, got "
                                             f"{shown(text)}")
        items = [v.strip() for v in values.split(",", STUDY_MAX_RUNS) if v.strip()]
        if not items or len(items) > STUDY_MAX_RUNS:
            raise argparse.ArgumentTypeError(f"{key}: expected 1 to {STUDY_MAX_RUNS:,} values, got {shown(values)}")
        action = actions.get(key)
        for value in items:
            if key == "revin":
                if value.lower() not in ("on", "off", "true", "false", "yes", "no", "1", "0"):
                    raise argparse.ArgumentTypeError(f"revin: expected on or off, got {shown(value)}")
            elif action is not None and action.choices is not None and value not in action.choices:
                raise argparse.ArgumentTypeError(f"{key}: expected one of {', '.join(action.choices)}, got "
                                                 f"{shown(value)}")
            elif action is not None and action.type is not None:
                try:
                    action.type(value.replace(":", ",") if key == "e_layers" else value)
                except argparse.ArgumentTypeError as err:
                    raise argparse.ArgumentTypeError(f"{key}: {err}") from None
        return text
    parse.items = STUDY_MAX_RUNS
    return parse


def _seeds(args, out: Path) -> tuple[int, ...]:
    """The seeds to run: --seeds, else the study's own (or 0-1 for a new one), plus --add-seeds."""
    from informer_lab.analysis.errors import ConfigError
    from informer_lab.study.plan import format_seeds, parse_seeds, read_plan

    existing = read_plan(out) if out.is_dir() else None
    seeds = args.seeds or (existing.seeds if existing else (0, 1))
    if args.add_seeds:
        if existing is None:
            raise ConfigError(f"--add-seeds adds seeds to an existing study, and {out} holds none; use --seeds")
        seeds = tuple(dict.fromkeys([*existing.seeds, *seeds, *args.add_seeds]))
        parse_seeds(format_seeds(seeds))  # the whole study stays within the run limit
    return seeds


def run(args) -> int:
    from informer_lab.analysis.errors import ConfigError

    for folder in (args.status, args.stop):  # named before any import: the model stack alone takes seconds of CPU
        if folder is not None and not (folder / "study.json").is_file():
            raise ConfigError(f"{folder} holds no study (no study.json)")
    if args.status is not None:  # answered from the status file and the folder, without Ray or torch
        from informer_lab.study.status import describe

        for line in describe(args.status):
            print(line)
        return 0
    if args.stop is not None:
        from informer_lab.study.folder import request_stop
        from informer_lab.study.plan import read_plan

        read_plan(args.stop)  # a damaged plan is named, not stopped
        request_stop(args.stop)
        print(f"stop requested: the study in {args.stop} stops between tasks (re-run its command to resume)")
        return 0
    from informer_lab.analysis.data import prepare
    from informer_lab.analysis.learning.training import config_for
    from informer_lab.analysis.learning.workflow import training_spec
    from informer_lab.study.plan import StudyPlan, fingerprint, parse_grid, read_plan
    from informer_lab.study.runner import run_study

    missing = [flag for flag, value in (("--csv", args.csv), ("--target", args.target), ("--out", args.out))
               if value is None]
    if missing:
        raise ConfigError(f"study needs {', '.join(missing)} (or --status DIR / --stop DIR)")
    if args.out.exists() and not args.out.is_dir():
        raise ConfigError(f"--out {args.out} is a file, not a study folder; choose a folder")
    analyses = args.analyses
    seeds = _seeds(args, args.out)
    grid = parse_grid(args.grid)
    frame = open_csv(args)  # read once here: a bad file is refused before any Ray task starts
    spec, size, settings = training_choices(args)
    data = Path(args.csv).read_bytes()
    plan = StudyPlan(csv=str(Path(args.csv).resolve()), fingerprint=fingerprint(data), options=read_options(args),
                     spec=spec, size=size, train=settings, seeds=seeds, grid=grid, analyses=analyses,
                     max_windows=args.max_windows, split=args.split)
    checked = set()
    for run in plan.runs():  # every setting is valid for this data before anything starts
        key = (run.spec, run.size)
        if key not in checked:
            checked.add(key)
            config_for(prepare(frame, training_spec(frame, run.spec, run.size)), **run.size.as_dict())
    findings = run_study(plan, args.out, data, address=args.address, num_cpus=args.cpus, dashboard=args.dashboard,
                         echo=lambda text: print(text, file=sys.stderr, flush=True))
    for setting, entry in findings.get("settings", {}).items():
        mse = entry.get("test_mse", {})
        removable = entry.get("removable", {})
        line = f"{setting}: test mse {mse.get('mse_mean', float('nan')):.4f} ± {mse.get('mse_std', float('nan')):.4f} " \
               f"over {mse.get('seeds', '?')} seeds"
        if mse.get("interval"):
            line += f" ({mse['interval']})"
        if removable.get("runs_with_interval"):
            line += (f"; removable heads {removable['with_interval_mean']:.1f} of {removable['heads']} (BH at q 0.05; "
                     f"raw {removable['raw_mean']:.1f}, by point estimates {removable['by_point_mean']:.1f})")
            if removable["runs_with_interval"] < removable["runs"]:
                line += f" over the {removable['runs_with_interval']} of {removable['runs']} runs with an interval"
        elif removable:
            line += "; removable heads: " + removable.get("no_interval", "no interval")
        if "roles_in_every_seed" in entry:
            line += f"; heads with one role in every seed: {entry['heads_with_a_stable_role']}"
        print(line)
    for note in findings.get("notes", []):
        print(f"note: {note}", file=sys.stderr)
    print(f"tables in {args.out / 'tables'}")
    return 0
