"""Every option of every command is bounded while the arguments are parsed: numbers have a range, lists a cap, free
text a length. Extremes (0, negatives, NaN, infinities, 2⁶³, 10³⁰, a 30-digit seed, a 5,000-digit number, a list of
100,000 items) give one line naming the option, the value and the bound, exit 2, before anything heavy is imported
and with no allocation beyond a small bound."""
from __future__ import annotations

import argparse
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from informer_lab.cli import build_parser
from tests.cli.helpers import ROOT

EXTREMES = ("0", "-1", "-0", "nan", "NaN", "inf", "-inf", "1e30", str(2**63), str(2**64), "1" * 30, "9" * 5000,
            "1_0", " 7 ", "", "0x10", "1.5", "١٢")
FLAGS = (argparse._HelpAction, argparse._VersionAction, argparse._StoreTrueAction, argparse._StoreFalseAction,
         argparse.BooleanOptionalAction, argparse._SubParsersAction)


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def options():
    for name, parser in commands().items():
        for action in parser._actions:
            if not isinstance(action, FLAGS):
                yield name, action


def label(action) -> str:
    return action.option_strings[0] if action.option_strings else action.dest


def test_every_option_has_a_bound_a_cap_a_length_or_its_choices():
    unbounded = [f"{name} {label(a)}" for name, a in options()
                 if a.type is not Path and a.choices is None
                 and not any(hasattr(a.type, k) for k in ("bounds", "items", "chars"))]
    assert not unbounded, unbounded


@pytest.mark.parametrize("name,action", [pytest.param(n, a, id=f"{n} {label(a)}") for n, a in options()
                                         if hasattr(a.type, "bounds")])
def test_numeric_options_refuse_or_bound_every_extreme(name, action):
    low, high = action.type.bounds
    tracemalloc.start()
    try:
        for text in EXTREMES:
            try:
                value = action.type(text)
            except argparse.ArgumentTypeError as err:
                message = str(err)
                assert "\n" not in message and len(message) < 250, (text, message)
                continue
            values = value if isinstance(value, (tuple, list)) else [value]
            numbers = [v for v in values if isinstance(v, (int, float))]
            assert all(low <= v <= high for v in numbers), (text, value)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak  # no list of a hundred million seeds, nothing beyond a small bound


@pytest.mark.parametrize("name,action", [pytest.param(n, a, id=f"{n} {label(a)}") for n, a in options()
                                         if hasattr(a.type, "items")])
def test_list_options_are_capped_without_building_the_list(name, action):
    tracemalloc.start()
    try:
        most = action.type.items
        for text in (",".join(["0"] * (most + 1)), ",".join(f"{i}" for i in range(most + 1)),
                     ",".join(["0"] * 100_000)):
            with pytest.raises(argparse.ArgumentTypeError):
                action.type(text)
        if "seeds" in action.dest:  # a range is counted from its ends, never built
            with pytest.raises(argparse.ArgumentTypeError):
                action.type("0-99999999")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, peak  # the text's own split pieces at most


def test_argument_errors_are_one_line_naming_option_value_and_bound_before_any_heavy_import():
    """In one fresh interpreter: each case exits 2 with one line naming the option and the bound; after them all,
    neither torch, pandas, numpy nor Ray has been imported, and the CPU spent stays small."""
    cases = [
        (["train", "--csv", "x.csv", "--target", "y", "--out", "o", "--seed", str(2**64)], "--seed", "4,294,967,295"),
        (["train", "--csv", "x.csv", "--target", "y", "--out", "o", "--threads", "100000"], "--threads", "from 1 to"),
        (["train", "--csv", "x.csv", "--target", "y", "--out", "o", "--d-model", str(2**63)], "--d-model", "8,192"),
        (["train", "--csv", "x.csv", "--target", "y", "--out", "o", "--e-layers", "999999999"], "--e-layers", "16"),
        (["train", "--csv", "x.csv", "--target", "y", "--out", "o", "--e-layers", ",".join(["1"] * 9)], "--e-layers",
         "1 to 8"),
        (["train", "--csv", "x.csv", "--target", "y", "--out", "o", "--attention-option", "window=1e400"],
         "--attention-option", "finite"),
        (["rollout", "--checkpoint", "c", "--csv", "x", "--out", "o", "--step", str(2**63)], "--step", "100,000"),
        (["benchmark", "--out", "b", "--seeds", "0-100000000"], "--seeds", "at most 100"),
        (["study", "--csv", "x", "--target", "y", "--out", "s", "--seeds", "0-99999999"], "--seeds", "at most 2,000"),
        (["study", "--csv", "x", "--target", "y", "--out", "s", "--grid", "d_model=1" + "0" * 30], "--grid", "8,192"),
        (["circuits", "--checkpoint", "c", "--csv", "x", "--out", "o", "--receivers",
          ",".join(f"cross.0:{h}:{w}" for h in range(40) for w in ("q", "k"))], "--receivers", "1 to 64"),
        (["compare", "--checkpoint", "c", "--csv", "x", "--out", "o", "--learning-rate", "nan"], "--learning-rate",
         "finite"),
        (["ablate", "--checkpoint", "c", "--csv", "x", "--out", "o", "--tolerance", "inf"], "--tolerance", "finite"),
        (["sparsity", "--checkpoint", "c", "--csv", "x", "--out", "o", "--seeds", "1000000000"], "--seeds", "1,000"),
        (["synth", "--rows", "1000000000000", "--out", "y.csv"], "--rows", "2,000,000"),
        (["synth", "--lags", "1" + "0" * 30, "--out", "y.csv"], "--lags", "2,000,000"),
        (["stop", "9" * 40], "PORT|all", "65,535"),
    ]
    probe = ("import contextlib, io, resource, sys\n"
             "from informer_lab.cli import main\n"
             "cases = %r\n"
             "for argv, option, bound in cases:\n"
             "    err = io.StringIO()\n"
             "    with contextlib.redirect_stderr(err):\n"
             "        code = main(argv)\n"
             "    lines = [l for l in err.getvalue().splitlines() if l.strip()]\n"
             "    assert code == 2 and len(lines) == 1 and lines[0].startswith('error: argument ' + option), (argv, lines)\n"
             "    assert bound in lines[0], (bound, lines[0])\n"
             "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'pandas', 'numpy', 'ray', 'scipy'})\n"
             "usage = resource.getrusage(resource.RUSAGE_SELF)\n"
             "print('HEAVY', ','.join(heavy) or '-', 'CPU', usage.ru_utime + usage.ru_stime)\n") % (cases,)
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    words = out.stdout.split()
    assert words[1] == "-", words
    # the interpreter's start and the parser's modules included: a few tenths of a second, not the ~5 s that
    # importing torch and Ray before the check cost each of these cases
    assert float(words[3]) < 0.5 * len(cases), words


def test_a_studys_status_and_stop_answer_without_the_model_stack(tmp_path):
    """`study --status DIR` and `--stop DIR` read a plan and a status file: a folder without a study is named at once,
    and a real study's status and stop are answered, all without importing torch or Ray."""
    probe = ("import contextlib, io, resource, sys\n"
             "from pathlib import Path\n"
             "from informer_lab.cli import main\n"
             "root = Path(%r)\n"
             "err = io.StringIO()\n"
             "with contextlib.redirect_stderr(err):\n"
             "    codes = [main(['study', flag, str(root / 'none')]) for flag in ('--status', '--stop')]\n"
             "assert codes == [2, 2] and err.getvalue().count('holds no study') == 2, (codes, err.getvalue())\n"
             "usage = resource.getrusage(resource.RUSAGE_SELF)\n"
             "print('MISSING_CPU', usage.ru_utime + usage.ru_stime)\n"
             "from informer_lab.analysis.data import DataSpec, ReadOptions\n"
             "from informer_lab.analysis.learning.settings import ModelSize, TrainSettings\n"
             "from informer_lab.study import folder\n"
             "from informer_lab.study.plan import StudyPlan\n"
             "plan = StudyPlan('x.csv', 'f', ReadOptions(), DataSpec('y', 'S', 24, 12, 6), ModelSize(),\n"
             "                 TrainSettings(), seeds=(0, 1), grid={'attention': ('prob', 'full')})\n"
             "(root / 'study').mkdir()\n"
             "folder.write_json(root / 'study' / 'study.json', plan.to_dict())\n"
             "out = io.StringIO()\n"
             "with contextlib.redirect_stdout(out):\n"
             "    codes = [main(['study', flag, str(root / 'study')]) for flag in ('--status', '--stop')]\n"
             "assert codes == [0, 0] and 'not started' in out.getvalue() and 'stop requested' in out.getvalue(), out\n"
             "print('HEAVY', ','.join(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'ray'})) or '-')\n"
             ) % (str(tmp_path),)
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    words = out.stdout.split()
    assert float(words[1]) < 0.5, words  # importing the model stack first cost about 4 s of CPU here
    assert words[3] == "-", words
