"""The anatomy of a forecast, timed: one window's rollout, flow (routed) and lens at seq_len 96, the lens over 512 test
windows, and the same window's first result and re-slices at seq_len 1440, each beside a plain forward pass of the same
windows run in the same process (the ratio is what carries across machines).

    python benchmarks/anatomy.py                     # the shipped sample model and data (seq_len 96)
    python benchmarks/anatomy.py --long-csv ../shared/data/ETT/ETTm1.csv   # adds an untrained seq_len-1440 model

Bars (issue figures, on a 2-core CPU): a window's rollout + flow + lens at 96 under 1 s; the lens over 512 windows
at 96 under 30 s; at 1440 the first result (record + rollout + the three P forms) under 5 s, a re-slice under 1 s.
The screen's own timings in a browser: benchmarks/reslice.py --screens anatomy.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--long-csv", type=Path, default=None, help="a CSV for the untrained seq_len-1440 model")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = parser.parse_args()

    import torch

    from informer_lab.analysis.anatomy.flow import flow
    from informer_lab.analysis.anatomy.lens import forecast_lens, window_readings
    from informer_lab.analysis.anatomy.direct import window_parts
    from informer_lab.analysis.anatomy.rollout import record_pieces, rollout, window_graph
    from informer_lab.analysis.anatomy.transfer import FORMS
    from informer_lab.analysis.attention.recording import window_batch
    from informer_lab.analysis.data import load_csv
    from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
    from informer_lab.cli_commands._common import open_checkpoint
    from informer_lab.model import key_generator

    if args.threads:
        torch.set_num_threads(args.threads)
    checkpoint = open_checkpoint(ROOT / "sample_data" / "checkpoint")
    model = checkpoint.model
    prepared = prepare_for_checkpoint(checkpoint, load_csv(ROOT / "sample_data" / "sample.csv"))
    batch = window_batch(prepared, "test", [100])

    def forward():
        with torch.no_grad():
            model(batch, generator=key_generator(0))

    def one_window():
        pieces = record_pieces(model, batch, 0)
        graph = window_graph(model, pieces, 0)
        rollout(graph, range(1, model.config.pred_len + 1))
        flow(graph, [1])
        window_readings(model, prepared, "test", 100, 0, None)
        window_parts(model, prepared, "test", 100, 0)

    base = timed(forward)
    window = timed(one_window)
    print(f"seq_len 96 (sample model, {torch.get_num_threads()} threads): forward {base * 1e3:.1f} ms; rollout (all "
          f"steps) + flow (step 1, routed) + decoder/encoder lens + direct shares of one window {window:.3f} s "
          f"({window / base:.0f}× the forward pass)")
    print(f"anatomy_window_seconds_96: {window:.3f}  (bar 1 s)")

    def many_forward():
        from informer_lab.analysis.instruments.paired import paired_forecast, spread_windows
        spread = spread_windows(prepared, "test", 512, 64)
        paired_forecast(model, spread.batches, 0)

    lens_base = timed(many_forward, 1)
    started = time.perf_counter()
    scored = forecast_lens(model, prepared, "test", windows=512, seed=0)
    lens = time.perf_counter() - started
    print(f"lens over {len(scored.windows)} test windows (tuned lens fitted on 256 train windows included): "
          f"{lens:.2f} s; a forward pass of 512 windows {lens_base:.2f} s ({lens / lens_base:.1f}×)")
    print(f"lens_512_seconds_96: {lens:.2f}  (bar 30 s)")

    if args.long_csv is not None:
        from tests.e2e.walk import untrained_model

        with tempfile.TemporaryDirectory() as tmp:
            untrained_model(args.long_csv, Path(tmp) / "long", 1440)
            long = open_checkpoint(Path(tmp) / "long")
            prepared_long = prepare_for_checkpoint(long, load_csv(args.long_csv))
            batch_long = window_batch(prepared_long, "test", [0])

            def forward_long():
                with torch.no_grad():
                    long.model(batch_long, generator=key_generator(0))

            base_long = timed(forward_long)
            started = time.perf_counter()
            pieces = record_pieces(long.model, batch_long, 0)
            first = {f: rollout(window_graph(long.model, pieces, 0, distil=f), [1]) for f in FORMS}
            first_seconds = time.perf_counter() - started
            steps = range(1, long.model.config.pred_len + 1)
            reslices = {
                "every step, routed": lambda: rollout(window_graph(long.model, pieces, 0), steps),
                "step 1, the three forms": lambda: [rollout(window_graph(long.model, pieces, 0, distil=f), [1])
                                                    for f in FORMS],
                "head 2, α 0.3": lambda: rollout(window_graph(long.model, pieces, 0, head=2, alpha=0.3), [1]),
            }
            print(f"seq_len 1440 (untrained, d_model 32, 3 encoder layers): forward {base_long:.3f} s; first result "
                  f"(record + rollout in three forms) {first_seconds:.2f} s ({first_seconds / base_long:.1f}×)")
            worst = 0.0
            for name, fn in reslices.items():
                seconds = timed(fn)
                worst = max(worst, seconds)
                print(f"  re-slice {name}: {seconds:.3f} s ({seconds / base_long:.1f}× the forward pass)")
            print(f"anatomy_first_seconds_1440: {first_seconds:.2f}  (bar 5 s)")
            print(f"anatomy_reslice_max_seconds_1440: {worst:.3f}  (bar 1 s)")
            del first
    return 0


if __name__ == "__main__":
    sys.exit(main())
