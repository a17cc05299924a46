"""The study folder on the driver's disk: the only place a study's results live, written only by the driver.

    NAME/study.json             the plan (seeds × grid, data fingerprint, base settings)
    NAME/status.json            where the study stands (the driver rewrites it as runs move; read by --status and
                                the Studies screen)
    NAME/stop                   a stop request (the driver honours it between tasks)
    NAME/runs/RUN/checkpoint/   the run's checkpoint (written atomically, manifest of SHA-256s)
    NAME/runs/RUN/train.json    its training summary: written last, after the checkpoint, so it marks "trained"
    NAME/runs/RUN/params.json, log.txt, tables/ANALYSIS.csv
    NAME/tables/, findings.json the joined tables and the findings across runs

Every file is written to a temporary name and renamed (a reader or a killed driver never sees half a file). What a
run holds is *checked*, not assumed: trained means train.json is a JSON object and the checkpoint matches its
manifest; an analysis is done when its table parses as a CSV with rows. Anything damaged is named and redone.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from informer_lab.analysis.errors import CheckpointError, ConfigError
from informer_lab.analysis.jsonfile import read_or_none


def checkpoint_folder_files(folder: Path) -> dict[str, bytes]:
    """analysis.checkpoints.folder.checkpoint_folder_files, imported at use (as write_folder below): the checkpoint
    modules import the model and torch (2-3 s of CPU), which reading a study folder's state does not need."""
    from informer_lab.analysis.checkpoints.folder import checkpoint_folder_files as files

    return files(folder)

STOP = "stop"
LOG = "log.txt"


# ------------------------------------------------------------------------------------------ files
def write_bytes(path: Path, data: bytes) -> None:
    """Write `data` at `path` through a temporary sibling and a rename (never half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def write_json(path: Path, data) -> None:
    write_bytes(path, json.dumps(data, indent=2, sort_keys=True, default=str).encode())


def read_json_object(path: Path) -> dict | None:
    """The JSON object in `path`; None when it is missing, unreadable, not JSON or not an object ([1, 2], [])."""
    return read_or_none(path)


def csv_bytes(table: pd.DataFrame) -> bytes:
    buffer = io.StringIO()
    table.to_csv(buffer, index=False)
    return buffer.getvalue().encode()


def read_table(path: Path) -> pd.DataFrame:
    """A per-run or joined table; ConfigError naming the file when it is not a readable CSV with rows."""
    try:
        table = pd.read_csv(path)
    except FileNotFoundError:
        raise ConfigError(f"{path} is missing") from None
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError) as err:
        raise ConfigError(f"{path} is damaged (not a CSV table: {str(err)[:80]})") from None
    if table.empty or len(table.columns) < 2:
        raise ConfigError(f"{path} is damaged (no rows)")
    return table


# ------------------------------------------------------------------------------------------ a run
@dataclass
class RunState:
    """What a run's folder on the driver's disk holds, checked."""

    trained: bool = False
    summary: dict = field(default_factory=dict)
    done_analyses: tuple[str, ...] = ()
    damaged: list[str] = field(default_factory=list)  # files found damaged, by path: redone


def run_folder(out: Path, name: str) -> Path:
    return out / "runs" / name


def inspect_run(out: Path, name: str, analyses) -> RunState:
    folder = run_folder(out, name)
    state = RunState()
    if not folder.is_dir():
        if folder.exists():
            state.damaged.append(f"{folder} is not a folder")
        return state
    summary = read_json_object(folder / "train.json")
    if summary is None and (folder / "train.json").exists():
        state.damaged.append(str(folder / "train.json"))
    checkpoint = folder / "checkpoint"
    if summary is not None:
        try:
            checkpoint_folder_files(checkpoint)
        except (CheckpointError, OSError) as err:
            state.damaged.append(f"{checkpoint} ({err})")
        else:
            state.trained, state.summary = True, summary
    done = []
    if state.trained:
        for analysis in analyses:
            path = folder / "tables" / f"{analysis}.csv"
            if not path.exists():
                continue
            try:
                read_table(path)
            except ConfigError:
                state.damaged.append(str(path))
            else:
                done.append(analysis)
    state.done_analyses = tuple(done)
    return state


def checkpoint_files_of(out: Path, name: str) -> dict[str, bytes]:
    """The run's checkpoint files, checked against its manifest (sent to a task that analyses it)."""
    return checkpoint_folder_files(run_folder(out, name) / "checkpoint")


def clear_for_training(out: Path, name: str) -> None:
    """Before a run is trained (again): remove what an earlier, damaged or interrupted attempt left, and a file that
    stands where its folder goes. The folder is the study's own (under NAME/runs/)."""
    folder = run_folder(out, name)
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.is_dir():
        shutil.rmtree(folder)


def write_trained(out: Path, name: str, files: dict[str, bytes], summary: dict, params: dict, log: str) -> None:
    """The run's training results, brought home by Ray, on the driver's disk: checkpoint (atomic folder), params,
    log, and train.json last (the mark that the run is trained)."""
    folder = run_folder(out, name)
    folder.mkdir(parents=True, exist_ok=True)
    from informer_lab.analysis.checkpoints.store import write_folder

    write_folder(folder / "checkpoint", files)
    write_json(folder / "params.json", params)
    write_bytes(folder / LOG, log.encode())
    write_json(folder / "train.json", summary)


def write_tables(out: Path, name: str, tables: dict[str, bytes]) -> None:
    where = run_folder(out, name) / "tables"
    if where.is_symlink() or (where.exists() and not where.is_dir()):
        where.unlink()  # something else stands where the run's tables go (the run folder is the study's own)
    for analysis, data in tables.items():
        write_bytes(run_folder(out, name) / "tables" / f"{analysis}.csv", data)


def append_log(out: Path, name: str, text: str) -> None:
    path = run_folder(out, name) / LOG
    try:
        before = path.read_text(errors="replace")
    except OSError:
        before = ""
    write_bytes(path, (before + text).encode())


# ------------------------------------------------------------------------------------------ the study
def prepare_out(out: Path) -> Path:
    """The study folder, made if missing; a file or something that is not a folder at --out is refused."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, not a study folder; choose a folder (a new name makes a new study)")
    try:
        (out / "runs").mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"cannot make the study folder {out}: {err.strerror or err}") from None
    if not os.access(out, os.W_OK):
        raise ConfigError(f"the study folder {out} is not writable")
    return out


def stop_requested(out: Path) -> bool:
    return (Path(out) / STOP).exists()


def request_stop(out: Path) -> None:
    write_bytes(Path(out) / STOP, f"stop requested at {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode())


def clear_stop(out: Path) -> None:
    try:
        (Path(out) / STOP).unlink()
    except FileNotFoundError:
        pass


__all__ = ["RunState", "append_log", "checkpoint_files_of", "clear_for_training", "clear_stop", "csv_bytes", "inspect_run", "prepare_out",
           "read_json_object", "read_table", "request_stop", "run_folder", "stop_requested", "write_bytes",
           "write_json", "write_tables", "write_trained"]
