"""Kill a process in the middle of saving checkpoints, again and again: a checkpoint must always load at the path.

Each round starts a child process that saves a small checkpoint over the same folder in a loop (metrics
{"n": i}, i counting up across rounds), SIGKILLs it after a random delay, then calls `load_checkpoint` on the
folder, which must succeed with the old content or the new (and recovers or deletes what the killed save left).
The last line is `save_kill_failures: N`; the bar is 0.

    python benchmarks/save_kill.py                     # 200 kills, atomic exchange (Linux renameat2)
    python benchmarks/save_kill.py --fallback          # the two-rename fallback used where no exchange exists
    python benchmarks/save_kill.py --kills 50 --max-delay 0.2 --seed 1 --dir /some/disk

Also counted: how many kills fell inside a save (a hidden copy beside the folder right after the kill), how often
the folder was missing right after a kill (0 with the exchange; with the fallback, a kill between its two renames,
which `load_checkpoint` then repairs), how often a load restored a copy, and any leftovers still beside the folder
after the load (0: the load deletes stale ones). The child signals when it is ready (torch imported, model built),
so the delay falls among its saves, not its start-up.
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # `python benchmarks/save_kill.py` puts benchmarks/ first, not the root
    sys.path.insert(0, str(REPO_ROOT))


def small_checkpoint():
    """A seeded Informer (d_model 32, 4 heads, 7 columns; about 40 k parameters) and its data schema."""
    import numpy as np
    import torch

    from informer_lab.analysis.checkpoints.folder import DataSchema
    from informer_lab.analysis.data import DataSpec, Scaler
    from informer_lab.model import Informer, InformerConfig

    columns = tuple(f"c{i}" for i in range(7))
    config = InformerConfig(enc_in=7, dec_in=7, c_out=7, seq_len=96, label_len=48, pred_len=24, d_model=32,
                            n_heads=4, d_ff=64, e_layers=(2,), d_layers=1)
    torch.manual_seed(0)
    scaler = Scaler(np.zeros(7), np.ones(7), columns)
    schema = DataSchema(DataSpec(target="c6", features="M", seq_len=96, label_len=48, pred_len=24), scaler, columns,
                        "date", "h")
    return Informer(config).eval(), schema


def child(folder: Path, start: int, fallback: bool) -> None:
    """Save over `folder` forever (until killed), metrics {"n": start, start + 1, ...}."""
    import torch

    torch.set_num_threads(1)
    from informer_lab.analysis.checkpoints import store as checkpoint_store
    from informer_lab.analysis.checkpoints.folder import save_checkpoint

    if fallback:
        def no_exchange(a, b):
            raise checkpoint_store.ExchangeUnsupported(95, "exchange disabled by --fallback")
        checkpoint_store._exchange = no_exchange
    model, schema = small_checkpoint()
    print("ready", flush=True)
    n = start
    while True:
        save_checkpoint(folder, model, schema, {"n": n})
        n += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--max-delay", type=float, default=0.3, help="seconds; each kill waits uniform(0, this)")
    parser.add_argument("--fallback", action="store_true", help="disable the atomic exchange (two renames)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dir", type=Path, default=None, help="where to save (default: a temporary folder)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.start, args.fallback)
        return 0

    from informer_lab.analysis.checkpoints.folder import load_checkpoint, save_checkpoint
    from informer_lab.analysis.checkpoints.store import leftovers
    from informer_lab.analysis.errors import CheckpointError

    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        folder = Path(tmp) / "ck"
        save_checkpoint(folder, *small_checkpoint(), {"n": 0})
        last, start = 0, 1
        counts = dict(kills=0, failures=0, mid_save_kills=0, missing_after_kill=0, restored_by_load=0, loaded_old=0,
                      loaded_new=0, leftovers_after_load=0)
        for _ in range(args.kills):
            command = [sys.executable, __file__, "--child", str(folder), "--start", str(start)]
            process = subprocess.Popen(command + (["--fallback"] if args.fallback else []), stdout=subprocess.PIPE,
                                       text=True)
            if process.stdout.readline().strip() != "ready":
                process.wait()
                print(f"child failed to start (exit {process.returncode})")
                return 1
            time.sleep(rng.uniform(0.0, args.max_delay))
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            process.stdout.close()
            counts["kills"] += 1
            missing = not folder.is_dir()
            counts["mid_save_kills"] += bool(leftovers(folder))  # a hidden copy: the kill fell inside a save
            counts["missing_after_kill"] += missing
            try:
                n = load_checkpoint(folder).metrics["n"]
            except CheckpointError as err:
                counts["failures"] += 1
                print(f"kill {counts['kills']}: load failed: {err}")
                continue
            counts["restored_by_load"] += missing
            if n == last:
                counts["loaded_old"] += 1
            elif last < n:
                counts["loaded_new"] += 1
            else:
                counts["failures"] += 1
                print(f"kill {counts['kills']}: loaded n={n}, older than the last seen {last}")
            counts["leftovers_after_load"] += len(leftovers(folder))
            last, start = max(last, n), max(last, n) + 1_000_000  # each child's numbers above everything before
        mode = "two renames (fallback)" if args.fallback else "atomic exchange"
        print(f"mode: {mode}; " + ", ".join(f"{k}: {v}" for k, v in counts.items()))
        print(f"save_kill_failures: {counts['failures']}")
    return 0 if counts["failures"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
