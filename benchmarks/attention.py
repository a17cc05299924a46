"""Forward time and peak extra memory of the Informer's attentions against PyTorch's SDPA.

Methods, all on [B, H, L, D] = [4, 8, L, 64] fp32 inputs under torch.no_grad():

* ProbSparse, encoder form (non-causal, factor 5, mean_divisor "U"), with the config's default
  `sample_block` and with sample_block=1 (the official per-query key sample). ProbSparse is not exact attention: it
  computes the softmax rows of the u = 5·⌈ln L⌉ queries with the largest sampled M̄ only and gives every other
  ("lazy") query mean(V) — it approximates the lazy rows, so its speed buys a different answer, by design;
* our full attention with explicit rows (`full_attention(..., need_rows=True)`: builds QKᵀ and the
  softmax rows, the path taken when a hook records them);
* `torch.nn.functional.scaled_dot_product_attention`, the baseline;
* with --against DIR, the default ProbSparse of another checkout (e.g. before a change), in the same rounds.

Timing: in this process, at 1 torch thread and at the machine's threads (`--threads`); for each thread setting and
length the methods are interleaved round by round (one call of each per round, after one warm-up call each; each
round starts one method later, so that no method always follows the same one), so a
change of the machine's load between rounds moves every method alike; each method's median over the rounds. Rounds:
20 up to L = 512, 7 at 2048, 5 at 8192. Speed x = SDPA's median / the method's; the headline takes the worse of the
thread settings.
Peak memory runs each (method, L) in a fresh child process (this script with a hidden flag): the child
builds the inputs, warms the method up at L=16, reads ru_maxrss, calls the method once at L and reports
how far ru_maxrss rose (the peak extra resident memory of the first call); it then frees that output, resets the
process's high-water mark (`/proc/self/clear_refs`) and reports how far it rises over a second call at L (a repeat
call: without what the first call pays once, such as library code paged in and what a library keeps after its first
use of a kernel; nor what the process kept from the first call). The headline memory ratio is the repeat call's; the
first call's stands beside it.

    python benchmarks/attention.py            # L = 96, 512, 2048, 8192 (several minutes on 2 cores)
    python benchmarks/attention.py --quick    # L = 96, 512, 3 rounds (smoke run)
    python benchmarks/attention.py --device cuda --dtype bf16   # on a GPU: CUDA-event-free timing after a
                                              # synchronize per call; memory = the rise of torch's peak allocation

On CUDA the thread settings do not apply (one setting, the machine's threads) and memory is read in this process
(torch.cuda.max_memory_allocated over the call, less what was allocated before it).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # `python benchmarks/attention.py` puts benchmarks/ first, not the root
    sys.path.insert(0, str(REPO_ROOT))

from informer_lab.hugepages import VARIABLE, prefer_huge_pages  # noqa: E402

HUGE_PAGES = prefer_huge_pages()  # as the app runs (set before torch's first tensor; THP_MEM_ALLOC_ENABLE=0: off)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from informer_lab.model import key_generator  # noqa: E402
from informer_lab.model.attention import full_attention, probsparse_attention  # noqa: E402
from informer_lab.model.config import InformerConfig  # noqa: E402

B, H, D = 4, 8, 64
FACTOR = 5
MEAN_DIVISOR = "U"
DEFAULT_BLOCK = InformerConfig.__dataclass_fields__["sample_block"].default
LENGTHS = (96, 512, 2048, 8192)
QUICK_LENGTHS = (96, 512)
WARMUP_LENGTH = 16
INPUT_SEED = 0
SAMPLE_SEED = 1234
MAX_EXPLICIT_GIB = 6.0  # skip the explicit full-attention path above this estimated footprint
SPEEDUP_LENGTH = 8192
DEVICE = torch.device("cpu")  # --device
DTYPE = torch.float32  # --dtype


@dataclass(frozen=True)
class Method:
    key: str
    label: str


OTHERS: dict[str, object] = {}  # "prob_<name>" → another checkout's model.attention module (--against)


def load_other(folder: Path) -> str:
    """Import `folder`'s model package under its own name; its default ProbSparse becomes method prob_<folder name>."""
    import importlib.util
    name = f"model_{re.sub(r'[^A-Za-z0-9_]', '_', folder.resolve().name)}"
    spec = importlib.util.spec_from_file_location(name, folder / "model" / "__init__.py",
                                                  submodule_search_locations=[str(folder / "model")])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    OTHERS[f"prob_{folder.resolve().name}"] = sys.modules[f"{name}.attention"]
    return f"prob_{folder.resolve().name}"


def methods() -> list[Method]:
    found = [Method(f"prob_b{DEFAULT_BLOCK}", f"ProbSparse block={DEFAULT_BLOCK} (default)")]
    found += [Method(key, f"ProbSparse ({key[5:]})") for key in OTHERS]
    if DEFAULT_BLOCK != 1:
        found.append(Method("prob_b1", "ProbSparse block=1 (official)"))
    found += [Method("full_rows", "full, explicit rows"), Method("sdpa", "SDPA (baseline)")]
    return found


def rounds_for(L: int) -> int:
    return 20 if L <= 512 else 7 if L <= 2048 else 5


def make_inputs(L: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(INPUT_SEED + L)
    return tuple(torch.randn(B, H, L, D, generator=gen).to(DEVICE, DTYPE)  # type: ignore[return-value]
                 for _ in range(3))


def explicit_bytes(L: int) -> int:
    """The explicit path holds two [B, H, L, L] fp32 tensors at its peak (scores and rows)."""
    return 2 * B * H * L * L * torch.finfo(DTYPE).bits // 8


def explicit_skipped(key: str, L: int, max_gib: float) -> bool:
    return key == "full_rows" and explicit_bytes(L) > max_gib * 2**30


def call(key: str, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """One forward call. ProbSparse as the model's layer calls it when nothing is recorded (no rows, no M̄ kept, the
    top u in no particular order)."""
    if key in OTHERS:
        return OTHERS[key].probsparse_attention(Q, K, V, factor=FACTOR, causal=False, mean_divisor=MEAN_DIVISOR,
                                                decoder_lazy="cummean", sample_block=DEFAULT_BLOCK,
                                                generator=gen).context
    if key.startswith("prob_b"):
        return probsparse_attention(Q, K, V, factor=FACTOR, causal=False, mean_divisor=MEAN_DIVISOR,
                                    decoder_lazy="cummean", sample_block=int(key[len("prob_b"):]),
                                    generator=gen, need_scores=False, order_selected=False).context
    if key == "full_rows":
        return full_attention(Q, K, V, causal=False, need_rows=True).context
    if key == "sdpa":
        return F.scaled_dot_product_attention(Q, K, V)
    raise ValueError(f"unknown method {key!r}")


def interleaved_ms(keys: list[str], L: int, rounds: int) -> dict[str, float]:
    """Median ms of each method over `rounds` rounds of one call each, the methods interleaved within a round."""
    Q, K, V = make_inputs(L)
    gen = key_generator(SAMPLE_SEED)  # on the CPU, as the model draws
    times: dict[str, list[float]] = {key: [] for key in keys}
    with torch.no_grad():
        for key in keys:
            call(key, Q, K, V, gen)  # warm-up
        for r in range(rounds):
            for key in keys[r % len(keys):] + keys[:r % len(keys)]:  # each round starts one method later: none
                synchronize()  # always follows the same one (whose caches and threads it would inherit)
                start = time.perf_counter()
                call(key, Q, K, V, gen)
                synchronize()
                times[key].append((time.perf_counter() - start) * 1e3)
    return {key: statistics.median(values) for key, values in times.items()}


def synchronize() -> None:
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()


def device_peak_extra_mib(key: str, L: int) -> float:
    """On CUDA: how far torch's peak allocation rose over one call, above what was allocated before it."""
    gen = key_generator(SAMPLE_SEED)  # on the CPU, as the model draws
    with torch.no_grad():
        call(key, *make_inputs(WARMUP_LENGTH), gen)
        Q, K, V = make_inputs(L)
        synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        out = call(key, Q, K, V, gen)
        synchronize()
        extra = (torch.cuda.max_memory_allocated() - before) / 2**20
    del out, Q, K, V
    return extra


def maxrss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def own_hwm_kib() -> int | None:
    """This process's own RSS high-water mark (VmHWM), which, unlike ru_maxrss, nothing inherits."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    return int(found.group(1)) if found else None


def reset_hwm() -> bool:
    """Sets this process's RSS high-water mark (VmHWM) to its current RSS (Linux ≥ 4.0); False where not allowed."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def memory_child(key: str, L: int) -> dict:
    """Runs in a fresh process: the rise of ru_maxrss over a first call at L, then of VmHWM over a repeat call."""
    gen = key_generator(SAMPLE_SEED)
    with torch.no_grad():
        call(key, *make_inputs(WARMUP_LENGTH), gen)  # load kernels, touch the allocator
        Q, K, V = make_inputs(L)
        before, hwm = maxrss_kib(), own_hwm_kib()
        out = call(key, Q, K, V, gen)
        after = maxrss_kib()
        del out
        repeat = None
        if reset_hwm() and (base := own_hwm_kib()) is not None:
            call(key, Q, K, V, gen)  # its output is freed on return; the high-water mark keeps its peak
            repeat = (own_hwm_kib() - base) / 1024
    # A baseline above our own high-water mark came from the parent: the rise would read too low.
    inherited = hwm is not None and before > hwm + 1024
    return {"method": key, "L": L, "before_kib": before, "after_kib": after, "own_hwm_kib": hwm,
            "inherited_baseline": inherited, "extra_mib": (after - before) / 1024, "repeat_extra_mib": repeat}


# Linux carries the RSS high-water mark of the process that forks across execve into the child's
# ru_maxrss, so a child started straight from this (large) process would start with our peak as its
# baseline. A torch-free launcher in between forks it from a ~10 MiB process instead.
LAUNCHER = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"


def peak_extra_mib(key: str, L: int, against: list[Path]) -> tuple[float, float | None]:
    """(first call, repeat call) MiB; the repeat is None where it cannot be read (CUDA, no clear_refs)."""
    if DEVICE.type == "cuda":
        return device_peak_extra_mib(key, L), None
    dtype = "bf16" if DTYPE == torch.bfloat16 else "fp32"
    child = [sys.executable, str(Path(__file__).resolve()), *[f"--against={a}" for a in against],
             f"--dtype={dtype}", "--_memory-child", key, str(L)]
    cmd = [sys.executable, "-c", LAUNCHER, *child]
    done = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy(), check=False)
    if done.returncode != 0:
        raise RuntimeError(f"memory child for {key} at L={L} failed ({done.returncode}):\n{done.stderr}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if report["inherited_baseline"]:
        raise RuntimeError(f"memory child for {key} at L={L} inherited its ru_maxrss baseline: {report}")
    repeat = report["repeat_extra_mib"]
    return float(report["extra_mib"]), None if repeat is None else float(repeat)


def steady(mib: tuple[float, float | None] | None) -> float | None:
    """A method's memory figure: the repeat call's, or the first call's where no repeat was read."""
    if mib is None:
        return None
    return mib[0] if mib[1] is None else mib[1]


def first_call(mib: tuple[float, float | None] | None) -> float | None:
    """A method's first-call memory figure (None where memory was not measured)."""
    return None if mib is None else mib[0]


def fmt(value: float | None, spec: str) -> str:
    return "n/a" if value is None or math.isnan(value) else format(value, spec)


def ratio(num: float | None, den: float | None) -> float | None:
    if num is None or den is None or den <= 0:
        return None
    return num / den


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="L in 96, 512 only, 3 rounds (smoke run)")
    parser.add_argument("--lengths", type=int, nargs="+", help="sequence lengths (default 96 512 2048 8192)")
    parser.add_argument("--rounds", type=int, help="rounds per length (default: 20, 7 at 2048, 5 at 8192)")
    parser.add_argument("--threads", type=int, nargs="+",
                        help=f"torch thread settings (default: 1 and the machine's {os.cpu_count()})")
    parser.add_argument("--against", type=Path, action="append", default=[],
                        help="another checkout whose default ProbSparse joins every round (repeatable)")
    parser.add_argument("--max-explicit-gib", type=float, default=MAX_EXPLICIT_GIB,
                        help="skip the explicit full path when its two LxL tensors exceed this (default 6)")
    parser.add_argument("--no-memory", action="store_true", help="time only; skip the memory child processes")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where the inputs live (default cpu)")
    parser.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32", help="the inputs' type (default fp32)")
    parser.add_argument("--_memory-child", nargs=2, metavar=("METHOD", "L"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    global DEVICE, DTYPE
    DEVICE, DTYPE = torch.device(args.device), {"fp32": torch.float32, "bf16": torch.bfloat16}[args.dtype]
    for folder in args.against:
        load_other(folder)

    if args._memory_child:
        key, L = args._memory_child
        print(json.dumps(memory_child(key, int(L))))
        return 0

    lengths = tuple(args.lengths) if args.lengths else (QUICK_LENGTHS if args.quick else LENGTHS)
    rounds = (lambda L: args.rounds) if args.rounds else ((lambda L: 3) if args.quick else rounds_for)
    default_threads = [os.cpu_count() or 1] if DEVICE.type == "cuda" else [1, os.cpu_count() or 1]
    settings = sorted(set(args.threads or default_threads))
    meths = methods()
    where = torch.cuda.get_device_name() if DEVICE.type == "cuda" else "CPU"
    print(f"torch {torch.__version__} on {where}; B={B} H={H} D={D} {args.dtype}, no_grad; ProbSparse non-causal, factor={FACTOR}, "
          f"mean_divisor={MEAN_DIVISOR!r}, default sample_block={DEFAULT_BLOCK}; thread settings {settings}; "
          f"{VARIABLE}={HUGE_PAGES} (large tensors on huge pages, as in the app: 1)")
    print("ProbSparse approximates: only its u = 5·⌈ln L⌉ selected queries get softmax rows, the lazy rows are "
          "mean(V) — a different answer from SDPA's exact attention, by design.")
    print("ms: median over rounds, the methods interleaved in each round (after 1 warm-up call each); MiB: peak "
          "extra resident memory of a repeat call at L in a fresh process (1st MiB: of its first call, which also "
          "pages in library code and buffers once)")
    print("speed x: sdpa_ms / ms (>1 faster than SDPA); mem x: MiB / sdpa_MiB (<1 less memory than SDPA)\n",
          flush=True)

    results: dict[tuple[int, str, int], float | None] = {}
    for threads in settings:
        torch.set_num_threads(threads)
        for L in lengths:
            keys = [m.key for m in meths if not explicit_skipped(m.key, L, args.max_explicit_gib)]
            ms = interleaved_ms(keys, L, rounds(L))
            for m in meths:
                results[(threads, m.key, L)] = ms.get(m.key)
            print(f"  measured {threads} thread(s), L={L:<5} ({rounds(L)} rounds): " +
                  ", ".join(f"{k} {v:.2f} ms" for k, v in ms.items()), flush=True)
    memory = {} if args.no_memory else {(m.key, L): None if explicit_skipped(m.key, L, args.max_explicit_gib)
                                        else peak_extra_mib(m.key, L, args.against)
                                        for L in lengths for m in meths}
    print()

    header = (f"{'threads':>7} {'L':>5}  {'method':<34} {'ms':>10} {'MiB':>9} {'1st MiB':>9} {'speed x':>8} "
              f"{'mem x':>7}")
    print(header)
    print("-" * len(header))
    for threads in settings:
        for L in lengths:
            sdpa_ms, sdpa_mib = results[(threads, "sdpa", L)], steady(memory.get(("sdpa", L)))
            for m in meths:
                ms, mib = results[(threads, m.key, L)], steady(memory.get((m.key, L)))
                first = first_call(memory.get((m.key, L)))
                if ms is None:
                    print(f"{threads:>7} {L:>5}  {m.label:<34} {'skipped (memory)':>20}   "
                          f"(needs ~{explicit_bytes(L) / 2**30:.0f} GiB)")
                    continue
                print(f"{threads:>7} {L:>5}  {m.label:<34} {ms:>10.2f} {fmt(mib, '.1f'):>9} {fmt(first, '.1f'):>9} "
                      f"{fmt(ratio(sdpa_ms, ms), '.2f'):>8} {fmt(ratio(mib, sdpa_mib), '.2f'):>7}")
            print()

    prob = meths[0].key
    for L in (SPEEDUP_LENGTH, 96):
        speedups = [ratio(results.get((t, "sdpa", L)), results.get((t, prob, L))) for t in settings]
        worst = None if None in speedups or not speedups else min(speedups)
        by = ", ".join(f"{t} thread(s) {fmt(x, '.1f')}" for t, x in zip(settings, speedups))
        print(f"probsparse_vs_sdpa_speedup_L{L}: {fmt(worst, '.2f')}   (the worse of: {by})")
    mem = ratio(steady(memory.get((prob, SPEEDUP_LENGTH))), steady(memory.get(("sdpa", SPEEDUP_LENGTH))))
    firsts = [first_call(memory.get((key, SPEEDUP_LENGTH))) for key in (prob, "sdpa")]
    print(f"probsparse_vs_sdpa_memory_L{SPEEDUP_LENGTH}: {fmt(mem, '.2f')}   (a repeat call; the first call in a "
          f"fresh process: {fmt(ratio(*firsts), '.2f')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
