"""Where a command's results go, and how a command runs: outputs checked before any work, `--out -` as standard
output, one line for every error a user can cause (after a progress bar, on a line of its own), no warning text.

Every `*_out` argument of a command is checked before the command starts (analysis.outputs): a file output may
be a new name, a regular file (replaced atomically), a device or a pipe (written through), or `-` (standard
output: the CSV goes there and the command's own lines go to stderr); a folder output (train, import,
counterfactual, study) must be a folder we can write into, and for a checkpoint an empty one or a checkpoint.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import warnings
from pathlib import Path

from typing import TYPE_CHECKING

from informer_lab.analysis.errors import DataError, InformerLabError
from informer_lab.analysis.outputs import OutputError, check_file_target, check_folder_target, describe_os_error, write_bytes
from informer_lab.home import resolve_run

if TYPE_CHECKING:
    import pandas as pd

STDOUT = "-"
_STDOUT: list = []  # the standard output a running command's CSV goes to (its own lines may be sent to stderr)
AFTER: list = []  # what a command asked to print once it has succeeded (the model's check against baselines)
FOLDERS = {"train": "checkpoint", "import": "checkpoint", "counterfactual": "folder", "study": "folder",
           "circuits": "folder", "benchmark": "folder", "sae": "folder"}
# the files a command writes into its --out folder, put in place whole (analysis.outputs.write_folder)
FOLDER_FILES = {"counterfactual": ("forecast.csv", "selection.csv", "scores.csv", "inputs.csv"),
                "circuits": ("composition.csv", "atp.csv", "atp_heads.csv", "path.csv"),
                "benchmark": ("scores.csv", "instruments.csv", "models.csv", "horizon.csv", "agreement.csv",
                              "report.html")}


class ProgressLine:
    """Whether a progress bar left its line open (the cursor after it, no newline yet)."""

    open = False

    @classmethod
    def close(cls, stream=None) -> None:
        if cls.open:
            (stream or sys.stderr).write("\n")
            cls.open = False


def output_arguments(args: argparse.Namespace) -> dict[str, object]:
    """The command's output arguments given: option → value ('--out' → Path('runs/x'))."""
    return {f"--{name.replace('_', '-')}": value for name, value in vars(args).items()
            if (name == "out" or name.endswith("_out")) and value is not None}


def check_outputs(args: argparse.Namespace) -> None:
    """Every output of the command checked before it starts (OutputError naming the option)."""
    outputs = output_arguments(args)
    to_stdout = [option for option, value in outputs.items() if str(value) == STDOUT]
    if len(to_stdout) > 1:
        raise OutputError(f"{' and '.join(to_stdout)} both write to standard output; give one of them a file")
    same = _same_file(outputs)
    if same:
        raise OutputError(f"{' and '.join(same[1])} both name {same[0]}: one table would replace the other; give "
                          "each its own file")
    command = getattr(args, "command", "")
    for option, value in outputs.items():
        folder = FOLDERS.get(command) if option == "--out" else None
        if folder is not None:
            check_folder_target(value, option, checkpoint=folder == "checkpoint", holds=FOLDER_FILES.get(command))
        elif str(value) != STDOUT:
            check_file_target(value, option)


def _same_file(outputs: dict[str, object]) -> tuple[str, list[str]] | None:
    """(path, options) of the first file two output options name (the same path, a link to it, or a hard link);
    /dev/null may take many."""
    seen: dict[object, list[str]] = {}
    for option, value in outputs.items():
        if str(value) == STDOUT:
            continue
        real = os.path.realpath(value)
        if real == os.devnull:
            continue
        try:
            st = os.stat(real)
            key = (st.st_dev, st.st_ino)
        except OSError:
            key = real
        seen.setdefault(key, []).append(option)
    for key, options in seen.items():
        if len(options) > 1:
            return str(outputs[options[0]]), options
    return None


def write_table(table: pd.DataFrame, out: Path | str) -> str:
    """Write a CSV to `out`: standard output for '-', through a device or pipe, else atomically. Returns where,
    for the command's message ('standard output' or the path)."""
    data = table.to_csv(index=False).encode("utf-8")
    return write_data(data, out)


def write_data(data: bytes, out: Path | str, option: str = "--out") -> str:
    if str(out) == STDOUT:
        stream = _STDOUT[-1] if _STDOUT else sys.stdout
        stream.buffer.write(data) if hasattr(stream, "buffer") else stream.write(data.decode("utf-8"))
        stream.flush()
        return "standard output"
    write_bytes(out, data, option)
    return str(out)


def check_inputs(args: argparse.Namespace) -> None:
    """A data file or checkpoint that is not there is named before a command imports its analyses (torch alone
    takes seconds of CPU): the same words the readers use."""
    checkpoint = getattr(args, "checkpoint", None)
    if isinstance(checkpoint, Path) and not resolve_run(checkpoint).exists():
        raise DataError(f"checkpoint folder {str(checkpoint)[:120]} does not exist")
    data = getattr(args, "csv", None)
    if isinstance(data, Path) and not data.exists():
        raise DataError(f"file not found: {str(data)[:120]!r}")


EVIDENCE = {"rollout": ("rollout", "flow"), "lens": ("lens", "direct_share"), "attribute": ("integrated_gradients",),
            "ablate": ("ablation",), "importance": ("gradient_importance",), "patch": ("patching",),
            "circuits": ("composition", "atp", "path_patching"), "sparsity": ("attention", "sparsity"),
            "pyramid": ("pyramid",), "faithfulness": ("faithfulness",), "counterfactual": ("counterfactual",),
            "qk-map": ("qk_map",), "variants": ("variants",), "sae": ("features",)}  # the instruments each command runs


def evidence_notes(args: argparse.Namespace) -> None:
    """After an analysis: each instrument's kind of evidence and its score against planted answers where measured
    (analysis.planted.evidence), one `evidence:` line each."""
    names = EVIDENCE.get(getattr(args, "command", ""), ())
    if not names:
        return
    from informer_lab.analysis.planted.evidence import current_verdicts, evidence_line

    table, source = current_verdicts()
    for name in names:
        line = evidence_line(name, table)
        print(f"evidence: {line}" + (f" (scores: {source})" if source and "On planted answers" in line else ""))


def run_command(args: argparse.Namespace) -> int:
    """Run a parsed command: outputs checked first; with an output to '-', the command's own lines go to stderr;
    warnings never reach the terminal (logged with --verbose); an OSError becomes one line (OutputError); an error
    after a progress bar starts on a line of its own."""
    with warnings.catch_warnings():
        if getattr(args, "verbose", False):
            logging.captureWarnings(True)
        else:
            warnings.simplefilter("ignore")
        try:
            check_outputs(args)
            check_inputs(args)
            quiet = any(str(v) == STDOUT for v in output_arguments(args).values())
            _STDOUT.append(sys.stdout)
            try:
                with contextlib.redirect_stdout(sys.stderr) if quiet else contextlib.nullcontext():
                    code = int(args.func(args) or 0)
                    for note in AFTER:
                        note()
                    evidence_notes(args)
                    return code
            finally:
                _STDOUT.pop()
                AFTER.clear()
        except OSError as err:
            ProgressLine.close()
            raise OutputError(describe_os_error(err, doing="use")) from None
        except (InformerLabError, ValueError, KeyboardInterrupt):
            ProgressLine.close()
            raise


__all__ = ["AFTER", "FOLDERS", "ProgressLine", "STDOUT", "check_outputs", "output_arguments", "run_command", "write_data",
           "write_table"]
