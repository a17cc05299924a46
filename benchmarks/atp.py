"""Attribution patching (AtP) against exact patching where AtP is meant to pay: every (head, query position), beside
the per-head comparison, in one process on the same pairs of windows.

    python benchmarks/atp.py                  # the shipped sample model (d_model 64, 4 heads) and a d_model 512,
                                              # 8-head, 3-layer model trained a few steps on the sample

For each model: AtP's one forward and one backward pass of the corrupted windows (it gives every head's and every
(head, query position)'s estimate at once) against the exact patches — one batched variant per head, and one per
(head, query position) over every site — on `--pairs` pairs; the median of `--rounds` rounds, interleaved. Rank
agreement: the per-pair Spearman ρ between AtP and the exact patch, across heads and across (head, position) cells,
averaged over the pairs. Last line `atp_speedup_vs_exact_positions: X` (the smaller model's; goal ≥ 10).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _spearman(a, b) -> float:
    import numpy as np
    from scipy.stats import spearmanr

    rhos = [spearmanr(x.reshape(-1), y.reshape(-1)).statistic for x, y in zip(a, b) if np.ptp(x) > 0 and np.ptp(y) > 0]
    return float(np.mean(rhos)) if rhos else float("nan")


def compare(name: str, model, prepared, pairs: int, rounds: int) -> float:
    import numpy as np

    from informer_lab.analysis.circuits.attribution import (_batch, atp_estimates, exact_patches,
                                                            exact_position_patches, pair_windows)

    chosen = pair_windows(prepared, "test", pairs)
    A, B = _batch(prepared, "test", chosen.clean), _batch(prepared, "test", chosen.corrupt)
    times = {"atp": [], "exact_heads": [], "exact_positions": []}
    for _ in range(rounds):
        started = time.perf_counter()
        heads, positions = atp_estimates(model, A, B, seed=0)
        times["atp"].append(time.perf_counter() - started)
        started = time.perf_counter()
        exact = exact_patches(model, A, B, seed=0)
        times["exact_heads"].append(time.perf_counter() - started)
        started = time.perf_counter()
        exact_positions = exact_position_patches(model, A, B, seed=0)
        times["exact_positions"].append(time.perf_counter() - started)
    t = {k: statistics.median(v) for k, v in times.items()}
    cells = sum(v.shape[1] * v.shape[2] for v in exact_positions.values())
    atp_cells = np.concatenate([positions[s].reshape(len(A.x_enc), -1) for s in exact_positions], axis=1)
    exact_cells = np.concatenate([exact_positions[s].reshape(len(A.x_enc), -1) for s in exact_positions], axis=1)
    c = model.config
    print(f"{name}: d_model {c.d_model}, {c.n_heads} heads, e_layers {c.e_layers}, {len(model.sites)} sites, "
          f"{pairs} pairs, {cells} (head, position) cells per pair")
    print(f"  AtP (fwd + bwd, every head and cell)  {t['atp']:8.3f} s")
    print(f"  exact, per head                       {t['exact_heads']:8.3f} s   AtP speed-up {t['exact_heads'] / t['atp']:7.1f}×"
          f"   ρ {_spearman(heads, exact):+.3f}")
    print(f"  exact, per (head, position)           {t['exact_positions']:8.3f} s   AtP speed-up "
          f"{t['exact_positions'] / t['atp']:7.1f}×   ρ {_spearman(atp_cells, exact_cells):+.3f}")
    return t["exact_positions"] / t["atp"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--skip-large", action="store_true", help="the sample model only")
    args = parser.parse_args()

    import torch

    from informer_lab.analysis.data import DataSpec, load_csv
    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.learning.workflow import ModelSize, prepare_for_checkpoint, train_on_frame
    from informer_lab.api import SAMPLE_CHECKPOINT, SAMPLE_CSV, load_checkpoint

    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    checkpoint = load_checkpoint(SAMPLE_CHECKPOINT)
    frame = load_csv(SAMPLE_CSV)
    speedup = compare("sample model", checkpoint.model, prepare_for_checkpoint(checkpoint, frame), args.pairs,
                      args.rounds)
    if not args.skip_large:
        spec = DataSpec(target="load", features="M", seq_len=96, label_len=48, pred_len=24)
        large, _ = train_on_frame(frame, spec, ModelSize(d_model=512, n_heads=8, e_layers=(3,), d_layers=1, d_ff=2048),
                                  TrainSettings(epochs=1, max_steps_per_epoch=20, batch_size=16, seed=0))
        compare("d_model 512 model", large.model, prepare_for_checkpoint(large, frame), args.pairs, args.rounds)
    print(f"atp_speedup_vs_exact_positions: {speedup:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
