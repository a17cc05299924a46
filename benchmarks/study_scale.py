"""A study of many tiny runs on the local Ray: the driver's memory must stay flat as the runs grow.

    python benchmarks/study_scale.py                     # 20 and 200 runs (a grid of 4 settings × seeds)
    python benchmarks/study_scale.py --runs 20 200 1000

Each size runs in a fresh process of its own (`--one N`): a study of N runs of a tiny Informer (seq 24 / label 12 /
pred 6, d_model 8, 2 heads, 2 training steps, the 'errors' and 'sweep' analyses on 16 windows) on the first 480 rows
of sample_data/sample.csv, then the table join and the findings timed again on their own. Printed per size: wall
time, the driver's peak RSS (its own process: Ray's workers are not counted), the bytes the results carried home
through Ray, and the join and findings times; last lines `study_scale_rss_ratio_<big>_vs_<small>` (flat memory: near
1) and `study_scale_seconds_<N>`.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def one(runs: int, cpus: int | None) -> dict:
    import pandas as pd

    from informer_lab.analysis.data import DataSpec, ReadOptions
    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.learning.workflow import ModelSize
    from informer_lab.study.findings import summarise
    from informer_lab.study.plan import StudyPlan, fingerprint
    from informer_lab.study.runner import run_study
    from informer_lab.study.tables import join_tables

    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "small.csv"
        pd.read_csv(ROOT / "sample_data" / "sample.csv").head(480).to_csv(csv, index=False)
        data = csv.read_bytes()
        grid = {"factor": (3, 5), "dropout": (0.0, 0.1)}
        plan = StudyPlan(str(csv), fingerprint(data), ReadOptions(),
                         DataSpec(target="load", features="S", seq_len=24, label_len=12, pred_len=6),
                         ModelSize(d_model=8, n_heads=2, e_layers=(1,), d_layers=1, d_ff=8),
                         TrainSettings(epochs=1, batch_size=16, learning_rate=1e-3, max_steps_per_epoch=2),
                         seeds=tuple(range(max(1, runs // 4))), grid=grid, analyses=("errors", "sweep"),
                         max_windows=16)
        out = Path(tmp) / "study"
        started = time.perf_counter()
        run_study(plan, out, data, num_cpus=cpus)
        wall = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux → MiB
        status = json.loads((out / "status.json").read_text())
        started = time.perf_counter()
        join_tables(out, plan.runs(), plan.analyses)
        join = time.perf_counter() - started
        started = time.perf_counter()
        summarise(out)
        findings = time.perf_counter() - started
        return {"runs": len(plan.runs()), "done": status["counts"]["done"], "wall_s": wall, "driver_peak_rss_mib": peak,
                "moved_mib": status["moved_bytes"] / 2**20, "join_s": join, "findings_s": findings}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[20, 200])
    parser.add_argument("--cpus", type=int, default=None)
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.cpus)))
        return
    results = []
    for n in args.runs:
        command = [sys.executable, __file__, "--one", str(n)] + (["--cpus", str(args.cpus)] if args.cpus else [])
        out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        if out.returncode:
            sys.exit(out.stderr[-3000:])
        result = json.loads(out.stdout.strip().splitlines()[-1])
        results.append(result)
        print(f"{result['runs']:>5} runs: {result['done']} done in {result['wall_s']:.1f} s; driver peak RSS "
              f"{result['driver_peak_rss_mib']:.0f} MiB; {result['moved_mib']:.1f} MiB home through Ray "
              f"({result['moved_mib'] * 1024 / result['runs']:.1f} KiB per run); join {result['join_s']:.2f} s, "
              f"findings {result['findings_s']:.2f} s", flush=True)
    small, big = results[0], results[-1]
    print(f"study_scale_rss_ratio_{big['runs']}_vs_{small['runs']}: "
          f"{big['driver_peak_rss_mib'] / small['driver_peak_rss_mib']:.2f}")
    for r in results:
        print(f"study_scale_seconds_{r['runs']}: {r['wall_s']:.1f}")


if __name__ == "__main__":
    main()
