"""A study on local Ray against the same runs one after another, in one process, and what the study finds.

    python benchmarks/study_speed.py                      # 8 seeds on ETTh1 (../shared/data/ETT/ETTh1.csv)
    python benchmarks/study_speed.py --seeds 0-1 --max-steps 20 --max-windows 64    # a quick look

Both sides run exactly the same work per run: `study.tasks.train_run` (train, then every analysis, in memory; one
torch thread, as a Ray task has) and the driver's writes (study.folder). First sequentially, in this process;
then `study.runner.run_study` on a local Ray started in-process with `--cpus` CPUs (default: every core), into
another. Every run is seeded, so both sides must produce the same test MSE per run (checked and printed).

Prints the wall time of each side, their ratio (on n cores the bound is about n), and the findings of the Ray
study: roles found in every seed, heads removable with the interval (against by the point estimate), and the
rank correlation of matched heads' importance across seeds with its interval. Last line:
`study_ray_speedup <ratio>`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from informer_lab.analysis.data import DataSpec, ReadOptions  # noqa: E402
from informer_lab.analysis.learning.training import TrainSettings  # noqa: E402
from informer_lab.analysis.learning.workflow import ModelSize  # noqa: E402
from informer_lab.study import folder as disk  # noqa: E402
from informer_lab.study import tasks  # noqa: E402
from informer_lab.study.plan import StudyPlan, fingerprint, parse_seeds  # noqa: E402
from informer_lab.study.runner import run_study  # noqa: E402

ETTH1 = ROOT.parent / "shared" / "data" / "ETT" / "ETTh1.csv"


def _plan(csv: Path, data: bytes, args) -> StudyPlan:
    return StudyPlan(csv=str(csv.resolve()), fingerprint=fingerprint(data), options=ReadOptions(),
                     spec=DataSpec(target=args.target, features="M", seq_len=96, label_len=48, pred_len=24),
                     size=ModelSize(d_model=args.d_model, n_heads=4, e_layers=(2,), d_layers=1, d_ff=args.d_model * 2,
                                    dropout=0.05),
                     train=TrainSettings(epochs=args.epochs, batch_size=32, learning_rate=1e-3,
                                         max_steps_per_epoch=args.max_steps, seed=0),
                     seeds=parse_seeds(args.seeds), max_windows=args.max_windows)


def _sequential(plan: StudyPlan, data: bytes, out: Path) -> dict[str, float]:
    name, options = Path(plan.csv).name, asdict(plan.options)
    mse = {}
    for run in plan.runs():
        result = tasks.train_run(run.to_dict(), data, name, options, list(plan.analyses), plan.max_windows, plan.split,
                                 fingerprint=plan.fingerprint)
        disk.write_trained(out, run.name, result["files"], result["summary"], result["params"], result["log"])
        disk.write_tables(out, run.name, result["tables"])
        summary = result["summary"]
        mse[run.name] = summary["test_mse"]
        print(f"  sequential {run.name}: test mse {summary['test_mse']:.4f}", flush=True)
    return mse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=ETTH1)
    parser.add_argument("--target", default="OT")
    parser.add_argument("--seeds", default="0-7")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-steps", type=int, default=150)
    parser.add_argument("--d-model", type=int, default=32)
    parser.add_argument("--max-windows", type=int, default=256)
    parser.add_argument("--cpus", type=int, default=os.cpu_count())
    args = parser.parse_args()
    if not args.csv.is_file():
        sys.exit(f"{args.csv} not found: pass --csv (ETTh1 lives in ../shared/data/ETT/)")
    data = args.csv.read_bytes()
    plan = _plan(args.csv, data, args)
    n = len(plan.runs())
    print(f"{n} runs on {args.csv.name}: seq 96/48/24, d_model {args.d_model}, 4 heads × 4 sites, "
          f"{args.epochs} epoch(s) × {args.max_steps} steps, analyses {', '.join(plan.analyses)} on "
          f"{args.max_windows} windows; {args.cpus} CPUs", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        sequential = _sequential(plan, data, Path(tmp) / "sequential")
        t_seq = time.perf_counter() - started
        print(f"sequential: {t_seq:.1f} s", flush=True)

        started = time.perf_counter()
        findings = run_study(plan, Path(tmp) / "ray", data, num_cpus=args.cpus, echo=lambda line: None)
        t_ray = time.perf_counter() - started
        print(f"ray ({args.cpus} CPUs, started in-process): {t_ray:.1f} s", flush=True)
        runs = json.loads((Path(tmp) / "ray" / "status.json").read_text())["runs"]
        same = all(abs(r.get("test_mse", float("nan")) - sequential[r["run"]]) < 1e-9 for r in runs)
        print(f"same test MSE per run on both sides: {same}")
    print(json.dumps(findings, indent=1, default=str))
    print(f"study_sequential_seconds {t_seq:.1f}")
    print(f"study_ray_seconds {t_ray:.1f}")
    print(f"study_ray_speedup {t_seq / t_ray:.2f}")


if __name__ == "__main__":
    main()
