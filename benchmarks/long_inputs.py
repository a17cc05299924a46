"""Each screen's first computation on long inputs: seconds and peak memory at seq_len 96, 1440 and 5760.

    python benchmarks/long_inputs.py                          # ETTm1 (../shared/data/ETT/ETTm1.csv), L = 96 1440
    python benchmarks/long_inputs.py --lengths 96 1440 5760   # 5760 takes a few minutes more
    python benchmarks/long_inputs.py --device cuda            # the model on the GPU, as the app puts it there
                                                              # (each call synchronizes before its clock stops)

For every length, a small Informer (d_model 32, 4 heads, 3 encoder layers, label_len = L/2, pred_len 96; seeded,
untrained: training is not what is timed, and a validation pass at L = 5760 alone takes minutes) is saved, then each
screen's cached call is timed once, cold, in a child process per call so that its peak resident memory
(ru_maxrss, which includes the ~0.9 GiB of torch, pandas and the loaded CSV) is its own:

  sparsity (one window, 10 key-sample seeds) · pyramid (one window) · head masking (one window, zero) ·
  mean contexts (what "mean" ablation waits for) · query/key map (256 windows) · counterfactual · patching ·
  compare (the first 512 test windows) · single-head sweep (32 windows)

The bar: every first result under 10 s on a CPU for such a model. Last line:
`long_inputs_seconds_max <s>` over every call and length.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from informer_lab.hugepages import prefer_huge_pages  # noqa: E402

prefer_huge_pages()  # as the app runs; the spawned children inherit it

ETTM1 = ROOT.parent / "shared" / "data" / "ETT" / "ETTm1.csv"
CALLS = ("sparsity", "pyramid", "masking", "mean_contexts", "qk_map", "counterfactual", "patching", "compare",
         "sweep")


def _build(length: int, csv: Path, folder: Path) -> None:
    import torch

    from informer_lab.analysis.checkpoints.folder import DataSchema, save_checkpoint
    from informer_lab.analysis.data import DataSpec, load_csv, prepare
    from informer_lab.analysis.learning.training import config_for
    from informer_lab.model import Informer

    frame = load_csv(csv)
    prepared = prepare(frame, DataSpec(target="OT", features="M", seq_len=length, label_len=length // 2,
                                       pred_len=96))
    torch.manual_seed(0)
    model = Informer(config_for(prepared, d_model=32, n_heads=4, e_layers=(3,), d_layers=1, d_ff=64,
                                dropout=0.0)).eval()
    save_checkpoint(folder, model, DataSchema.of(prepared, frame.datetime_column), {"note": "untrained"})


def _run(call: str, folder: str, csv: str, out, device: str = "cpu") -> None:
    import torch

    from informer_lab.analysis.checkpoints.folder import load_checkpoint
    from informer_lab.analysis.data import load_csv
    from informer_lab.analysis.learning.workflow import prepare_for_checkpoint

    torch.set_num_threads(2)
    checkpoint = load_checkpoint(folder)
    prepared = prepare_for_checkpoint(checkpoint, load_csv(csv))
    model, window = checkpoint.model.to(device), 100
    started = time.perf_counter()
    if call == "sparsity":
        from informer_lab.analysis.attention.sparsity import sparsity_report
        sparsity_report(model, prepared, "test", [window], seed=0, seeds=10)
    elif call == "pyramid":
        from informer_lab.analysis.attention.pyramid import pyramid_report
        pyramid_report(model, prepared, "test", window, seed=0)
    elif call == "masking":
        from informer_lab.analysis.heads.masking import head_mask, masked_window_forecast
        masked_window_forecast(model, prepared, "test", window, head_mask(model, [(0, 1)], "zero"), seed=0)
    elif call == "mean_contexts":
        from informer_lab.analysis.heads.masking import mean_contexts
        from informer_lab.ui.cache import mean_windows
        mean_contexts(model, prepared, "train", max_windows=mean_windows(prepared.spec.seq_len), seed=0)
    elif call == "qk_map":
        from informer_lab.analysis.instruments.qk_map import qk_map
        qk_map(model, prepared, "test", "encoder.0.0", 0, windows=256, seed=0)
    elif call == "counterfactual":
        from informer_lab.analysis.instruments.counterfactual import counterfactual
        counterfactual(model, prepared, "test", window, f"spike:t={prepared.spec.seq_len - 10},size=3", seed=0)
    elif call == "patching":
        from informer_lab.analysis.instruments.patching import activation_patching
        activation_patching(model, prepared, "test", window, window + prepared.spec.seq_len, seed=0)
    elif call == "compare":
        from informer_lab.analysis.compare.comparison import compare_forecasts
        from informer_lab.analysis.learning.windows import limit_windows
        compare_forecasts(model, limit_windows(prepared, "test", 512), split="test", seed=0)
    elif call == "sweep":
        from informer_lab.analysis.heads.ablation import head_sweep
        head_sweep(model, prepared, "test", seed=0, max_windows=32)
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    gpu = torch.cuda.max_memory_allocated() / 2**20 if device == "cuda" else None
    out.put((seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, gpu))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=ETTM1)
    parser.add_argument("--lengths", type=int, nargs="+", default=[96, 1440])
    parser.add_argument("--calls", nargs="+", default=list(CALLS), choices=CALLS)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where the model runs")
    args = parser.parse_args()
    if not args.csv.is_file():
        sys.exit(f"{args.csv} not found: pass --csv (ETTm1 lives in ../shared/data/ETT/)")
    import tempfile

    worst, rows = 0.0, []
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        for length in args.lengths:
            folder = Path(tmp) / f"L{length}"
            started = time.perf_counter()
            _build(length, args.csv, folder)
            print(f"L = {length}: model built and saved in {time.perf_counter() - started:.1f} s",
                  flush=True)
            for call in args.calls:
                queue = ctx.Queue()
                child = ctx.Process(target=_run, args=(call, str(folder), str(args.csv), queue, args.device))
                child.start()
                seconds, peak, gpu = queue.get()
                child.join()
                worst = max(worst, seconds)
                rows.append({"seq_len": length, "call": call, "seconds": round(seconds, 2), "peak_mib": round(peak),
                             **({} if gpu is None else {"gpu_peak_mib": round(gpu)})})
                on_gpu = "" if gpu is None else f"   GPU peak {gpu:7.0f} MiB"
                print(f"  {call:15s} {seconds:7.2f} s   peak RSS {peak:7.0f} MiB{on_gpu}", flush=True)
    print(json.dumps(rows))
    print(f"long_inputs_seconds_max {worst:.2f}")


if __name__ == "__main__":
    main()
