"""One ETTh1 training step of our Informer against one of the official Informer2020 operations, interleaved.

    python benchmarks/train_speed.py                       # 12 timed blocks of 10 steps per contestant
    python benchmarks/train_speed.py --blocks 12 --steps 5
    python benchmarks/train_speed.py --csv path/to/ETTh1.csv
    python benchmarks/train_speed.py --tsl path/to/Time-Series-Library   # a fourth contestant: TSL's own Informer
    /path/to/venv/bin/python benchmarks/train_speed.py --neuralforecast    # neuralforecast's Informer (its venv)
    python benchmarks/train_speed.py --threads 1                          # torch's thread count (default: torch's)
    python benchmarks/train_speed.py --device cuda   # on a GPU: every contestant there; ours in its training loop's
                                                     # bf16 autocast, the peers in fp32 (their scripts' default,
                                                     # use_amp off); each step ends in loss.item(), a synchronize

The machine's speed drifts (up to 60% within minutes), so seconds per epoch measured at different times
cannot be compared. Here three contestants (more with --tsl, --neuralforecast) train in ONE process, on the CPU, in
turns: a block of
`--steps` full training steps (forward, MSE loss, zero_grad, backward, optimiser step) of each in turn,
every block on the same batches, after one untimed warm-up block. Ratios are taken within a block.

  official              `benchmarks.official_style.Informer`, torch.optim.Adam with default arguments, the
                        decoder input built as the official `_process_one_batch` does (label part, then zeros).
                        It is a re-implementation of the official operations (the same module tree, ProbSparse
                        gather, global-RNG key samples, mask and lazy rows), verified to compute the official
                        function by tests/benchmarks/test_official_style.py; it is NOT the official code itself.
  ours                  `model.Informer` with default options, `analysis.learning.training.make_adam`, called as the
                        train loop calls it: model(batch, generator=g).
  ours_official_quirks  the same with `analysis.checkpoints.official.OFFICIAL_QUIRKS` (the official forward's
                        semantics).
  tsl                   with --tsl DIR: Time-Series-Library's own `models/Informer.py` from a checkout of it (it is not
                        a package; `git clone https://github.com/thuml/Time-Series-Library`), its
                        exp_long_term_forecasting step (zeros after the label part, MSE on the last pred_len steps,
                        Adam). Its layers import einops and reformer_pytorch for other models; stand-ins that fail
                        when called replace them, so the Informer runs TSL's code only.
  ours_S, neuralforecast
                        with --neuralforecast: neuralforecast's `neuralforecast.models.informer.Informer` (a Lightning
                        module; only its `forward(windows_batch)` is called, with torch.optim.Adam, its default
                        optimiser, and MSE) against ours at matching shapes. neuralforecast's Informer is univariate: it
                        reads one series (enc_in = dec_in = c_out = 1) and takes the time features as future exogenous
                        columns. Shapes matched: both read features "S" of the same ETTh1 target (OT) from the same
                        batches; its input_size = our seq_len 96, h = pred_len 24, decoder_input_size_multiplier 0.5
                        (label_len 48), hidden_size = d_model 64, conv_hidden_size = d_ff 128, n_head 4, factor 5,
                        dropout 0.05, encoder_layers 2, decoder_layers 1, gelu, distil; windows_batch["insample_y"] =
                        x_enc [B, 96, 1], windows_batch["futr_exog"] = the 4 hourly time features of the 96 input and
                        the 24 forecast steps [B, 120, 4] (its decoder reads the last 72: our mark_dec). Its own choices
                        stay: ProbSparse cross-attention (ours: full), the distilling conv padded 2 (96 → 49; ours
                        → 48), no time-feature bias, mean over L_K and cumsum lazy rows. ours_S is ours with default
                        options on those batches.

The issue's configuration: ETTh1 (../shared/data/ETT/ETTh1.csv relative to the repository root, or --csv),
features M, 96/48/24, d_model 64, 4 heads, d_ff 128, e_layers 2, d_layers 1, dropout 0.05, factor 5,
batch 32, lr 1e-4. Batches are built once, before timing, from `analysis.learning.windows.split_batches` (shuffled,
generator seed 0); our data loading per batch is timed separately. The est. s/epoch is ms/step × the
number of train batches (training steps only; the loading line says what iterating the loader adds).
Last lines: `ours_vs_official_train_step_speedup: <median over blocks of official ms / ours ms>`, with --tsl
`ours_vs_tsl_train_step_speedup`, with --neuralforecast `ours_vs_neuralforecast_train_step_speedup` (neuralforecast /
ours_S). --profile prints where 5 steps of ours and of each peer spend their time (operators by self CPU time).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from informer_lab.hugepages import prefer_huge_pages  # noqa: E402

prefer_huge_pages()  # as the app runs (before torch's first tensor)

import torch  # noqa: E402

from informer_lab.analysis.data import DataSpec, load_csv, prepare  # noqa: E402
from informer_lab.analysis.checkpoints.official import OFFICIAL_QUIRKS  # noqa: E402
from informer_lab.analysis.learning.training import config_for, make_adam, training_step  # noqa: E402
from informer_lab.analysis.learning.windows import split_batches  # noqa: E402
from benchmarks import official_style  # noqa: E402
from informer_lab.model import Batch, Informer, key_generator  # noqa: E402

SPEC = dict(features="M", seq_len=96, label_len=48, pred_len=24)
SIZE = dict(d_model=64, n_heads=4, d_ff=128, dropout=0.05, factor=5)
BATCH_SIZE, LEARNING_RATE = 32, 1e-4
DEVICE = torch.device("cpu")

Step = Callable[[Batch, torch.Tensor], float]  # one training step on (batch, y) → loss


@dataclass
class Contestant:
    name: str
    step: Step
    batches: list = field(default_factory=list)  # the batches it trains on (cycled)
    block_ms: list[float] = field(default_factory=list)  # ms per step, one entry per timed block
    losses: list[float] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# The three training steps
# --------------------------------------------------------------------------------------------
def official_step(prepared) -> Step:
    """The official `train` loop body: zero_grad, `_process_one_batch`, MSE, backward, Adam step."""
    s = prepared.spec
    torch.manual_seed(0)
    model = official_style.Informer(prepared.enc_in, prepared.dec_in, prepared.c_out, s.seq_len, s.label_len,
                                    s.pred_len, e_layers=2, d_layers=1, attn="prob", freq="h",
                                    activation="gelu", distil=True, mix=True, **SIZE).to(DEVICE).train()
    optimiser = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    criterion = torch.nn.MSELoss()

    def step(batch: Batch, y: torch.Tensor) -> float:
        optimiser.zero_grad()
        x_dec = batch.x_dec.float()  # [B, label_len + pred_len, dec_in]; only its label part is read
        zeros = torch.zeros([x_dec.shape[0], s.pred_len, x_dec.shape[-1]]).float()
        dec_inp = torch.cat([x_dec[:, :s.label_len, :], zeros], dim=1).float().to(DEVICE)
        out = model(batch.x_enc.float().to(DEVICE), batch.mark_enc.float().to(DEVICE), dec_inp,
                     batch.mark_dec.float().to(DEVICE))  # [B, pred_len, c_out]
        loss = criterion(out, y.float().to(DEVICE))
        loss.backward()
        optimiser.step()
        return loss.item()

    return step


def our_step(prepared, **options) -> Step:
    """analysis/learning/training.py's loop body, `training_step`: forward with the key generator, MSE, backward,
    step."""
    torch.manual_seed(0)
    model = Informer(config_for(prepared, e_layers=(2,), d_layers=1, **SIZE, **options)).to(DEVICE).train()
    optimiser = make_adam(model, LEARNING_RATE, DEVICE)
    key_gen = key_generator(1)  # as the training loop draws its key samples

    return lambda batch, y: training_step(model, optimiser, batch, y, DEVICE, key_gen)


def tsl_step(prepared, folder: Path) -> Step:
    """Time-Series-Library's Informer and its long-term-forecasting training step, from a checkout at `folder`."""
    import types
    for name, names in (("reformer_pytorch", ("LSHSelfAttention",)), ("einops", ("rearrange", "repeat"))):
        if name not in sys.modules:  # used by TSL's other models only
            stub = types.ModuleType(name)
            for attr in names:
                setattr(stub, attr, _unavailable(f"{name}.{attr}"))
            sys.modules[name] = stub
    sys.path.insert(0, str(folder))
    from models.Informer import Model  # noqa: E402 (TSL's own file)
    s = prepared.spec
    configs = types.SimpleNamespace(task_name="long_term_forecast", seq_len=s.seq_len, label_len=s.label_len,
                                    pred_len=s.pred_len, enc_in=prepared.enc_in, dec_in=prepared.dec_in,
                                    c_out=prepared.c_out, e_layers=2, d_layers=1, embed="timeF", freq="h",
                                    activation="gelu", distil=True, **SIZE)
    torch.manual_seed(0)
    model = Model(configs).to(DEVICE).train()
    optimiser = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    criterion = torch.nn.MSELoss()

    def step(batch: Batch, y: torch.Tensor) -> float:
        optimiser.zero_grad()
        y_dec = batch.x_dec.float()
        dec_inp = torch.cat([y_dec[:, :s.label_len, :], torch.zeros_like(y_dec[:, -s.pred_len:, :])], dim=1)
        out = model(batch.x_enc.float().to(DEVICE), batch.mark_enc.float().to(DEVICE), dec_inp.to(DEVICE),
                    batch.mark_dec.float().to(DEVICE))
        loss = criterion(out[:, -s.pred_len:, :], y.float().to(DEVICE))
        loss.backward()
        optimiser.step()
        return loss.item()

    return step


def neuralforecast_step(prepared) -> Step:
    """neuralforecast's Informer on univariate windows (see the module docstring for how its shapes match ours_S):
    zero_grad, forward(windows_batch), MSE, backward, Adam step."""
    try:
        from neuralforecast.losses.pytorch import MSE
        from neuralforecast.models.informer import Informer as NFInformer
    except ImportError as error:
        sys.exit(f"error: --neuralforecast needs the neuralforecast package ({error}); run this script with the "
                 "python of an environment that has it")
    s = prepared.spec
    if prepared.enc_in != 1:
        raise ValueError("neuralforecast's Informer reads one series: prepare features 'S'")
    model = NFInformer(h=s.pred_len, input_size=s.seq_len, futr_exog_list=[f"mark{i}" for i in range(prepared.n_marks)],
                       decoder_input_size_multiplier=s.label_len / s.seq_len, hidden_size=SIZE["d_model"],
                       conv_hidden_size=SIZE["d_ff"], n_head=SIZE["n_heads"], factor=SIZE["factor"],
                       dropout=SIZE["dropout"], activation="gelu", encoder_layers=2, decoder_layers=1, distil=True,
                       loss=MSE(), learning_rate=LEARNING_RATE, random_seed=0).to(DEVICE).train()
    if model.label_len != s.label_len:
        raise ValueError(f"neuralforecast's label_len is {model.label_len}, ours {s.label_len}")
    optimiser = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)  # its configure_optimizers' default

    def step(batch: Batch, y: torch.Tensor) -> float:
        optimiser.zero_grad()
        marks = torch.cat([batch.mark_enc, batch.mark_dec[:, -s.pred_len:]], dim=1)  # [B, seq_len + pred_len, n_marks]
        out = model({"insample_y": batch.x_enc.float().to(DEVICE),
                     "futr_exog": marks.float().to(DEVICE)})  # [B, pred_len, 1]
        loss = torch.nn.functional.mse_loss(out, y.float().to(DEVICE))
        loss.backward()
        optimiser.step()
        return loss.item()

    return step


def _unavailable(name: str):
    def fail(*args, **kwargs):
        raise RuntimeError(f"{name} is not installed: only TSL's Informer is benchmarked")
    return fail


def profile_steps(contestants: list, steps: int = 5) -> None:
    """torch.profiler over `steps` steps of each contestant: the operators by self CPU time."""
    for c in contestants:
        with torch.profiler.profile() as prof:
            run_block(c, 0, steps)
        print(f"\n--- {c.name}: {steps} steps, operators by self CPU time")
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))


# --------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------
def run_block(contestant: Contestant, start: int, steps: int) -> float:
    """`steps` training steps on the contestant's batches start, start+1, ... (cycling) → ms per step."""
    batches = contestant.batches
    began = time.perf_counter()
    for i in range(start, start + steps):
        batch, y = batches[i % len(batches)]
        contestant.losses.append(contestant.step(batch, y))
    return (time.perf_counter() - began) * 1e3 / steps


def time_loading(prepared, n_batches: int, passes: int = 3) -> float:
    """ms per batch of iterating our train loader (windowing + collate), best of `passes` full passes."""
    best = float("inf")
    for p in range(passes):
        loader = split_batches(prepared, "train", BATCH_SIZE, shuffle=True, generator=torch.Generator().manual_seed(p))
        began = time.perf_counter()
        for _ in loader:
            pass
        best = min(best, (time.perf_counter() - began) * 1e3 / n_batches)
    return best


def spread(values: list[float], fmt: str = "{:.1f}") -> str:
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def first_batches(prepared, n: int) -> tuple[list, int]:
    """The first n batches of the shuffled train loader (generator seed 0), and the loader's batches per epoch."""
    loader = split_batches(prepared, "train", BATCH_SIZE, shuffle=True, generator=torch.Generator().manual_seed(0))
    batches = []
    for item in loader:
        batches.append(item)
        if len(batches) == n:
            break
    return batches, len(loader)


def ratio_line(label: str, peer: Contestant, ours: Contestant) -> list[float]:
    """Print the per-block ratio peer / ours; → the ratios."""
    ratios = [p / m for p, m in zip(peer.block_ms, ours.block_ms)]
    print(f"per-block ratio {label:33s} {spread(ratios, '{:.2f}')} (ours faster in {sum(r > 1 for r in ratios)}/"
          f"{len(ratios)} blocks)")
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=ROOT.parent / "shared" / "data" / "ETT" / "ETTh1.csv")
    parser.add_argument("--blocks", type=int, default=12, help="timed blocks per contestant (after one warm-up)")
    parser.add_argument("--steps", type=int, default=10, help="training steps per block")
    parser.add_argument("--batches", type=int, default=40, help="distinct batches built up front (cycled)")
    parser.add_argument("--tsl", type=Path, help="a Time-Series-Library checkout: its Informer joins the contest")
    parser.add_argument("--neuralforecast", action="store_true",
                        help="neuralforecast's Informer joins the contest (against ours_S: univariate, same shapes)")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's own, e.g. OMP_NUM_THREADS)")
    parser.add_argument("--profile", action="store_true", help="also profile 5 steps of each contestant")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where every contestant trains")
    args = parser.parse_args()
    global DEVICE
    DEVICE = torch.device(args.device)
    if args.blocks < 1 or args.steps < 1 or args.batches < 1 or (args.threads is not None and args.threads < 1):
        sys.exit("error: --blocks, --steps, --batches and --threads must be at least 1")
    if not args.csv.is_file():
        sys.exit(f"error: {args.csv} not found (the ETT data sets live in ../shared/data/ETT/; or pass --csv)")
    if args.tsl is not None and not (args.tsl / "models" / "Informer.py").is_file():
        sys.exit(f"error: {args.tsl} has no models/Informer.py (pass a Time-Series-Library checkout)")
    if args.threads is not None:
        torch.set_num_threads(args.threads)

    frame = load_csv(args.csv)
    prepared = prepare(frame, DataSpec(target="OT", **SPEC))
    batches, epoch_batches = first_batches(prepared, args.batches)
    contestants = [Contestant("official", official_step(prepared), batches),
                   Contestant("ours", our_step(prepared), batches),
                   Contestant("ours_official_quirks", our_step(prepared, **OFFICIAL_QUIRKS), batches)]
    if args.tsl is not None:
        contestants.append(Contestant("tsl", tsl_step(prepared, args.tsl), batches))
    if args.neuralforecast:
        univariate = prepare(frame, DataSpec(target="OT", **{**SPEC, "features": "S"}))
        batches_s, _ = first_batches(univariate, args.batches)
        contestants += [Contestant("ours_S", our_step(univariate), batches_s),
                        Contestant("neuralforecast", neuralforecast_step(univariate), batches_s)]
    by_name = {c.name: c for c in contestants}
    where = torch.cuda.get_device_name() if DEVICE.type == "cuda" else "CPU"
    print(f"ETTh1 ({args.csv.name}): {epoch_batches} train batches of {BATCH_SIZE}; {len(batches)} distinct batches "
          f"cycled; model {SIZE}, e_layers 2, d_layers 1; {where}, {torch.get_num_threads()} threads, torch "
          f"{torch.__version__}")
    print(f"1 warm-up block + {args.blocks} timed blocks × {args.steps} steps per contestant, interleaved "
          "(the order rotates each block); every contestant sees the same batches (ours_S and neuralforecast the "
          "same univariate ones)")

    for block in range(args.blocks + 1):
        start = block * args.steps
        order = contestants[block % len(contestants):] + contestants[:block % len(contestants)]
        for c in order:
            ms = run_block(c, start, args.steps)
            if block > 0:  # block 0 is the warm-up
                c.block_ms.append(ms)

    print(f"\n{'contestant':22s} {'ms/step median (min–max)':>26s} {'est. s/epoch':>13s} "
          f"{'loss first→last block':>22s}")
    for c in contestants:
        first = statistics.mean(c.losses[:args.steps])
        last = statistics.mean(c.losses[-args.steps:])
        print(f"{c.name:22s} {spread(c.block_ms):>26s} {statistics.median(c.block_ms) * epoch_batches / 1e3:13.1f} "
              f"{first:10.3f} → {last:.3f}")

    print()
    ours = by_name["ours"]
    speedup = ratio_line("official / ours:", by_name["official"], ours)
    ratio_line("official / ours_official_quirks:", by_name["official"], by_name["ours_official_quirks"])
    vs_tsl = ratio_line("tsl / ours:", by_name["tsl"], ours) if args.tsl is not None else None
    vs_nf = (ratio_line("neuralforecast / ours_S:", by_name["neuralforecast"], by_name["ours_S"])
             if args.neuralforecast else None)
    if args.profile:
        profile_steps(contestants)

    load_ms = time_loading(prepared, epoch_batches)
    print(f"\nour data loading (split_batches, best of 3 full passes), not in the step times above: {load_ms:.2f} "
          f"ms/batch = {load_ms * epoch_batches / 1e3:.2f} s/epoch")
    print(f"ours_vs_official_train_step_speedup: {statistics.median(speedup):.2f}")
    if vs_tsl is not None:
        print(f"ours_vs_tsl_train_step_speedup: {statistics.median(vs_tsl):.2f}")
    if vs_nf is not None:
        print(f"ours_vs_neuralforecast_train_step_speedup: {statistics.median(vs_nf):.2f}")


if __name__ == "__main__":
    main()
