"""Starting a study from the app: the lab's `study` command as a process of its own (Ray starts inside it, apart
from the Streamlit server), writing into a study folder whose status.json the screen polls."""
from __future__ import annotations

import csv
import io
import subprocess
import threading
from pathlib import Path

from informer_lab.analysis.data import ReadOptions
from informer_lab.source import child_command, child_env
from informer_lab.ui import settings


def read_flags(options: ReadOptions) -> list[str]:
    """The CLI flags that read a CSV as `options` says."""
    flags = ["--repair", options.repair]
    if options.datetime_column:
        flags += ["--datetime-column", options.datetime_column]
    if options.freq:
        flags += ["--freq", options.freq]
    if options.dayfirst is not None:
        flags.append("--dayfirst" if options.dayfirst else "--no-dayfirst")
    if options.decimal:
        flags += ["--decimal", options.decimal]
    if options.sheet:
        flags += ["--sheet", options.sheet]
    if options.id_column:
        flags += ["--id-column", options.id_column]
    if options.series:
        buffer = io.StringIO()  # the ids as one CSV row: an id holding a comma or a quote stays one id
        csv.writer(buffer, lineterminator="").writerow(options.series)
        flags += ["--series", buffer.getvalue()]
    return flags


def start(name: str, csv_name: str, data: bytes, options: ReadOptions, train_flags: list[str], seeds: str,
          grid: list[str], analyses: list[str], max_windows: int) -> subprocess.Popen:
    """Write the data into the study folder and start the study there (its output goes to study.log)."""
    folder = settings.studies_dir() / name
    folder.mkdir(parents=True, exist_ok=True)
    csv = folder / (Path(csv_name).name or "data.csv")
    if not csv.is_file() or csv.read_bytes() != data:
        csv.write_bytes(data)
    command = [*child_command("study"), "--csv", str(csv), *read_flags(options), *train_flags, "--seeds", seeds, "--analyses", ",".join(analyses), "--max-windows", str(max_windows),
               "--out", str(folder)]
    if grid:
        command += ["--grid", *grid]
    with open(folder / "study.log", "w") as log:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(command, cwd=folder, env=child_env(), stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    # Reaped as soon as it ends: a finished study left unwaited stays a zombie until the server exits (the page
    # that started it may never run again).
    threading.Thread(target=process.wait, name=f"reap-study-{process.pid}", daemon=True).start()
    return process


def log_tail(folder: Path, lines: int = 12) -> str:
    try:
        return "\n".join((folder / "study.log").read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
