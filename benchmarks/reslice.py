"""Every screen in a real browser on a long-input model: first results, re-slices and runs, timed.

    python benchmarks/reslice.py --seq-len 1440                     # ETTm1, an untrained seq_len-1440 model
    python benchmarks/reslice.py --seq-len 5760 --rounds 1
    python benchmarks/reslice.py --seq-len 1440 --screens sparsity qk_map --against /tmp/old-checkout
    python benchmarks/reslice.py --checkpoint runs/mine --csv my.csv  # any checkpoint and the CSV it reads

With --seq-len L, a seeded, untrained Informer (d_model 32, 4 heads, 3 encoder layers, d_ff 64, label_len L/5,
pred_len 96: the long-input model; training is not what is timed) is built on
../shared/data/ETT/ETTm1.csv (or --csv) and copied into a temporary runs folder as `sample`. Each round starts a
fresh server per contestant (this checkout's app.py, then each --against checkout's), uploads the CSV in one
Chromium tab and walks every screen (tests/e2e/walk.py): each screen opened from the sidebar (kind *first*: to its
first result drawn), its main controls (kind *reslice*: click → the end of the run it started with what it asked
for shown) and its Run buttons (kind *run*: Compare's first 512 windows, a 32-window sweep, Integrated Gradients
with 16 path points). The server's peak resident memory (VmHWM) is read after Compare and at the end.

Prints one table per contestant (screen, interaction, kind, actions, median, max), then
`reslice_max_seconds_L<L>: X` (bar: 1 s at 1440, 2 s at 5760), `first_result_max_seconds_L<L>: Y` (bar: 5 s / 10 s)
and `compare_512_seconds_L<L>: Z` (bar: 10 s / 20 s) for this checkout. Exits 1 if a screen raised or showed an
error (its message printed), 2 on bad arguments. Needs Debian's /usr/bin/chromium and playwright.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.test_browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, streamlit_server  # noqa: E402
from tests.e2e.walk import SCREENS, SLOW, ScreenError, Walk, untrained_model, upload  # noqa: E402

ETTM1 = ROOT.parent / "shared" / "data" / "ETT" / "ETTm1.csv"
BARS = {"reslice": (1.0, 2.0), "first": (5.0, 10.0), "run": (10.0, 20.0)}  # (seq_len ≤ 1440, longer)


def server_hwm_mib(port: int) -> float | None:
    """Peak resident memory (VmHWM) of our child `streamlit run` listening on `port`."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            status = (proc / "status").read_text()
        except OSError:
            continue
        if b"streamlit" in b" ".join(cmdline) and str(port).encode() in cmdline and \
                f"PPid:\t{os.getpid()}" in status:
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    return None


def walk_once(browser, runs: Path, csv: Path, app: Path, log: Path, screens: list[str]):
    """(timings, problems, memory): one fresh server for `app`, one tab walking `screens`."""
    problems: list[str] = []
    memory: dict[str, float | None] = {}
    with streamlit_server(runs, log, app) as url:
        port = int(url.rsplit(":", 1)[1])
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(url)
        page.get_by_role("heading", name="Data & model", level=1).wait_for(timeout=SLOW)
        page.get_by_text("Device:").first.wait_for(timeout=SLOW)  # the model stack has loaded
        upload(page, csv)
        walk = Walk(page, log=lambda line: print(f"  {line}", flush=True))
        for name in screens:
            try:
                SCREENS[name](walk)
            except ScreenError as err:
                problems.append(str(err))
            except Exception as err:  # a timeout: the screen never showed its result
                problems.append(f"{name}: {type(err).__name__}: {str(err).splitlines()[0][:300]}")
            if name == "compare":
                memory["after compare"] = server_hwm_mib(port)
        memory["at the end"] = server_hwm_mib(port)
        page.close()
    return walk.times, problems, memory


def table(times) -> list[tuple[str, str, str, list[float]]]:
    rows: dict[tuple[str, str, str], list[float]] = {}
    for t in times:
        rows.setdefault((t.screen, t.action, t.kind), []).append(t.seconds)
    return [(s, a, k, v) for (s, a, k), v in rows.items()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq-len", type=int, help="build an untrained model of this seq_len on --csv")
    parser.add_argument("--checkpoint", type=Path, help="a checkpoint folder instead of --seq-len")
    parser.add_argument("--csv", type=Path, default=ETTM1, help="the data (default: ETTm1)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--screens", nargs="+", choices=list(SCREENS), default=list(SCREENS))
    parser.add_argument("--against", type=Path, action="append", default=[],
                        help="another checkout whose app.py is walked in every round too (repeatable)")
    args = parser.parse_args()
    if (args.seq_len is None) == (args.checkpoint is None):
        parser.error("give --seq-len or --checkpoint")
    if not args.csv.is_file():
        parser.error(f"{args.csv} not found (ETTm1 lives in ../shared/data/ETT/; or pass --csv)")
    if args.checkpoint is not None and not (args.checkpoint / "manifest.json").is_file():
        parser.error(f"{args.checkpoint} is not a checkpoint folder (no manifest.json)")
    if not CHROMIUM.exists():
        parser.error(f"{CHROMIUM} is missing (install Debian's chromium)")
    names = [other.resolve().name for other in args.against]
    if len(set(names)) < len(names) or "app" in names or any(not (o / "app.py").is_file() for o in args.against):
        parser.error("give --against checkouts (each with an app.py) distinct folder names other than app")
    contestants = {"app": ROOT / "app.py", **{n: o.resolve() / "app.py" for n, o in zip(names, args.against)}}
    from playwright.sync_api import sync_playwright

    times = {name: [] for name in contestants}
    problems = {name: [] for name in contestants}
    with tempfile.TemporaryDirectory() as tmp_name, sync_playwright() as p:
        tmp = Path(tmp_name)
        runs = tmp / "runs"
        if args.checkpoint is not None:
            shutil.copytree(args.checkpoint, runs / "sample")
            length = None
        else:
            started = time.perf_counter()
            untrained_model(args.csv, runs / "sample", args.seq_len)
            print(f"seq_len {args.seq_len}: untrained model built in {time.perf_counter() - started:.1f} s", flush=True)
            length = args.seq_len
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for r in range(args.rounds):
            for name, app in contestants.items():
                started = time.perf_counter()
                got, trouble, memory = walk_once(browser, runs, args.csv, app, tmp / f"{name}.log", args.screens)
                times[name] += got
                problems[name] += [f"round {r + 1}: {t}" for t in trouble]
                print(f"round {r + 1} {name}: {len(got)} actions in {time.perf_counter() - started:.0f} s; server "
                      "peak RSS " + ", ".join(f"{k} {v:.0f} MiB" for k, v in memory.items() if v) +
                      "".join(f"\n  PROBLEM {t}" for t in trouble), flush=True)
        browser.close()

    suffix = f"_L{length}" if length else ""
    long = (length or 0) > 1440
    for name in contestants:
        print(f"\n{name}: screen, interaction, kind, actions, median s, max s (bar)")
        for screen, action, kind, values in table(times[name]):
            bar = BARS[kind][long]
            over = " OVER" if max(values) > bar else ""
            print(f"  {screen:15s} {action:24s} {kind:8s} {len(values):3d}  {statistics.median(values):6.2f} "
                  f"{max(values):6.2f}  ({bar:g} s){over}")
    ours = times["app"]
    for kind, line in (("reslice", "reslice_max_seconds"), ("first", "first_result_max_seconds")):
        values = [t.seconds for t in ours if t.kind == kind]
        print(f"{line}{suffix}: {max(values):.2f}" if values else f"{line}{suffix}: n/a")
    compare = [t.seconds for t in ours if t.screen == "compare" and t.kind == "run"]
    print(f"compare_512_seconds{suffix}: {max(compare):.2f}" if compare else f"compare_512_seconds{suffix}: n/a")
    if problems["app"]:
        print("\n".join(["screens that raised:", *problems["app"]]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
