"""What one Ray task does: train one run and analyse it, or analyse a checkpoint it is given, all in memory.

A task never needs the driver's disk (cluster nodes share no file system): it receives the run's settings (a
dict), the data's bytes (a Ray object reference on the driver's side) and, to analyse a run trained earlier, the
checkpoint's files; it returns what the run produced — the checkpoint's files, the training summary, its log and
the analyses' tables as CSV bytes — and the driver writes them into the study folder (study/folder.py). Plain
functions (runner.py wraps them in `ray.remote`), so they also run in-process and in tests.
"""
from __future__ import annotations

import io
import json
import logging
import socket
import time
import warnings
from typing import Callable

import pandas as pd
import torch

from informer_lab.analysis.heads.ablation import head_sweep
from informer_lab.analysis.anatomy.direct import direct_shares, top_heads
from informer_lab.analysis.anatomy.lens import forecast_lens
from informer_lab.analysis.circuits.composition import composition_scores
from informer_lab.analysis.features.run import study_table
from informer_lab.analysis.attention.agreement import topu_agreement
from informer_lab.analysis.checkpoints.folder import Checkpoint, checkpoint_files, read_checkpoint_files
from informer_lab.analysis.compare.comparison import headline_errors
from informer_lab.analysis.data import ReadOptions, load_csv
from informer_lab.analysis.heads.roles import head_profiles
from informer_lab.analysis.heads.importance import head_importance
from informer_lab.analysis.learning.training import TrainProgress
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint, train_on_frame

from .plan import RunSpec

Report = Callable[[str, str, float, str, str], None]  # (run, stage, fraction, text, node)


_FRAMES: dict[tuple, object] = {}  # (fingerprint, name, options) → SeriesFrame, per worker process


def _frame(data: bytes, name: str, options: dict, fingerprint: str | None = None):
    """The data as a SeriesFrame; parsed once per worker process for a given fingerprint (many runs share it)."""
    key = (fingerprint, name, json.dumps(options, sort_keys=True, default=str))
    if fingerprint is not None and key in _FRAMES:
        return _FRAMES[key]
    buffer = io.BytesIO(data)
    buffer.name = name
    frame = load_csv(buffer, ReadOptions(**options))
    if fingerprint is not None:
        _FRAMES.clear()  # one data set at a time: a worker serves one study
        _FRAMES[key] = frame
    return frame


def _csv(table: pd.DataFrame) -> bytes:
    out = io.StringIO()
    table.to_csv(out, index=False)
    return out.getvalue().encode()


class _Log:
    """The run's log: what it printed as it went (epochs, analyses) and any warning, returned with its results."""

    def __init__(self, name: str):
        self.lines = [f"{time.strftime('%Y-%m-%d %H:%M:%S')} run {name} on {socket.gethostname()}"]

    def __call__(self, text: str) -> None:
        self.lines.append(f"{time.strftime('%H:%M:%S')} {text}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _profiles_long(profiles) -> pd.DataFrame:
    """The lag profiles as a long table: site, head, lag, mass (only lags with mass)."""
    rows = []
    sites = list(profiles.table["site"].unique())
    for s, site in enumerate(sites):
        for h in range(profiles.mass.shape[1]):
            m = profiles.mass[s, h]
            keep = m > 0
            rows.append(pd.DataFrame({"site": site, "head": h, "lag": profiles.lags[keep], "mass": m[keep]}))
    return pd.concat(rows, ignore_index=True)


def _analyses(checkpoint: Checkpoint, frame, spec: RunSpec, wanted: list[str], max_windows: int, split: str,
              report: Report | None, log: _Log) -> dict[str, bytes]:
    """Each analysis of `wanted` as CSV bytes ('roles' also gives 'profiles')."""
    prepared = prepare_for_checkpoint(checkpoint, frame)
    model, seed, windows = checkpoint.model, spec.seed, max_windows or None
    out: dict[str, bytes] = {}
    for k, name in enumerate(wanted):
        if report is not None:
            report(spec.name, "analyse", k / len(wanted), f"{name} ({k + 1} of {len(wanted)})", _node())
        started = time.perf_counter()
        if name == "errors":
            table = headline_errors(model, prepared, split=split, seed=seed)
        elif name == "sweep":
            table = head_sweep(model, prepared, split, seed=seed, max_windows=windows).table
        elif name == "importance":
            table = head_importance(model, prepared, split, seed=seed, max_windows=windows).table
        elif name == "agreement":
            table = topu_agreement(model, prepared, split, max_windows=windows or 10**9, seed=seed)
        elif name == "roles":
            profiles = head_profiles(model, prepared, "val", max_windows=windows or 10**9, seed=seed)
            out["profiles"] = _csv(_profiles_long(profiles))
            table = profiles.table.assign(seasonal_lags=";".join(map(str, profiles.seasonal_lags)))
        elif name == "lens":  # the forecast lens per layer, the horizon's mean (analysis.anatomy.lens)
            table = forecast_lens(model, prepared, split, windows=windows or 256, seed=seed,
                                  fit_windows=min(256, windows or 256)).overall
        elif name == "shares":  # every decoder head's mean |direct share| over the horizon, ranked per column
            shares = direct_shares(model, prepared, split, windows=windows or 64, seed=seed)
            table = top_heads(shares, k=len(shares.heads))
        elif name == "composition":  # from the weights alone (analysis.circuits.composition)
            table = composition_scores(model, seed=seed).table[["sender", "receiver", "kind", "score", "random_mean",
                                                                "random_q95", "above_q95"]]
        elif name == "features":  # a dictionary of the memory per run; findings match them across seeds
            table = study_table(model, prepared, split=split, seed=seed, windows=min(256, windows or 256))
        else:
            raise ValueError(f"unknown analysis {name!r}")
        out[name] = _csv(table)
        log(f"analysis {name}: {len(table)} rows in {time.perf_counter() - started:.1f} s")
    return out


def _node() -> str:
    """The Ray node this task runs on (its id), or the host name outside Ray."""
    try:
        import ray

        if ray.is_initialized():
            return ray.get_runtime_context().get_node_id()
    except Exception:  # noqa: BLE001
        pass
    return socket.gethostname()


def _setup(threads: int | None) -> None:
    if threads:
        torch.set_num_threads(threads)
    logging.getLogger("analysis").setLevel(logging.WARNING)


def train_run(run: dict, data: bytes, csv_name: str, options: dict, analyses: list[str], max_windows: int,
              split: str, report: Report | None = None, threads: int | None = 1, fingerprint: str | None = None) -> dict:
    """Train the run and analyse it. Returns {files (the checkpoint), summary, params, log, tables, analysis_error,
    node}. A failure to train raises (the run fails with it); a failure of an analysis after training is returned
    as `analysis_error`, with the trained checkpoint, so the training is never lost."""
    _setup(threads)
    spec = RunSpec.from_dict(run)
    log = _Log(spec.name)
    started = time.perf_counter()
    node = _node()

    def progress(p: TrainProgress) -> None:
        if p.stage == "train" and p.val_loss is not None:
            log(f"epoch {p.epoch}/{p.epochs}: train {p.train_loss:.4f}, val {p.val_loss:.4f}, best "
                f"{p.best_val_loss:.4f} ({p.seconds:.1f} s)")
        if report is not None:
            done_steps = (p.epoch - 1) * p.steps + p.step
            where = (f"step {p.step}/{p.steps}, loss {p.train_loss:.4f}" if p.stage == "train" else
                     f"{'validating' if p.stage == 'validate' else 'test'}: {p.windows_done}/{p.windows_total} windows")
            report(spec.name, "train", done_steps / max(1, p.epochs * p.steps), f"epoch {p.epoch}/{p.epochs}, {where}",
                   node)

    frame = _frame(data, csv_name, options, fingerprint)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checkpoint, result = train_on_frame(frame, spec.spec, spec.size, spec.train, progress=progress)
    for warning in caught:
        log(f"warning: {warning.message}")
    files = checkpoint_files(checkpoint.model, checkpoint.schema, checkpoint.metrics, repair=checkpoint.repair)
    summary = {"run": spec.name, "seed": spec.seed, **{f"setting_{k}": v for k, v in spec.setting.items()},
               **{f"test_{k}": v for k, v in result.test.as_dict().items()}, "epochs": len(result.history),
               "stopped": result.stopped, "seconds": time.perf_counter() - started, "device": result.device,
               "host": socket.gethostname(), "node": _node()}
    log(f"trained: test mse {result.test.mse:.4f}, {len(result.history)} epochs, {summary['seconds']:.1f} s")
    tables, error = {}, None
    try:
        tables = _analyses(checkpoint, frame, spec, list(analyses), max_windows, split, report, log)
    except Exception as err:  # noqa: BLE001  the training is kept; the analysis failure is reported with it
        error = f"{type(err).__name__}: {str(err)[:300]}"
        log(f"analysis failed: {error}")
    return {"name": spec.name, "files": files, "summary": summary, "params": run, "log": log.text(), "tables": tables,
            "analysis_error": error, "node": _node()}


def analyse_run(run: dict, files: dict[str, bytes], data: bytes, csv_name: str, options: dict, analyses: list[str],
                max_windows: int, split: str, report: Report | None = None, threads: int | None = 1,
                fingerprint: str | None = None) -> dict:
    """Analyse a run trained earlier, from its checkpoint's files. Returns {tables, log, node}; raises on failure."""
    _setup(threads)
    spec = RunSpec.from_dict(run)
    log = _Log(spec.name)
    checkpoint = read_checkpoint_files(files)
    tables = _analyses(checkpoint, _frame(data, csv_name, options, fingerprint), spec, list(analyses), max_windows,
                       split, report, log)
    return {"name": spec.name, "tables": tables, "log": log.text(), "node": _node()}


def result_bytes(result: dict) -> int:
    """The bytes a task's result carries home (files and tables; the small summary dicts are not counted)."""
    return (sum(len(b) for b in result.get("files", {}).values()) + sum(len(b) for b in result.get("tables", {}).values())
            + len(result.get("log", "")))


__all__ = ["analyse_run", "result_bytes", "train_run"]
