"""Every run in a runs folder, read from its JSON files alone (no weights, no torch): what it was trained on, how,
its training and validation curves and its test error. The Runs screen and `informer-lab`'s users read these.

A folder that is not a readable checkpoint (no manifest, a file too large, nested too deeply or not JSON, a list
where an object belongs, a setting of the wrong type) is listed with the reason instead of being skipped silently
or taking the list down. Values are read by their type, never by truthiness: `"revin": "false"` is a damaged
setting, not RevIN on.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from informer_lab.analysis import jsonfile

MAX_JSON_BYTES = 8 << 20  # a run's config, schema or metrics file larger than this is not read (metrics: ~1 KB/epoch)


@dataclass(frozen=True)
class RunRecord:
    name: str
    path: Path
    modified: float  # the manifest's modification time (seconds since the epoch)
    config: dict = field(default_factory=dict)
    schema: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)
    problem: str | None = None  # why the run could not be read; None when it was

    @property
    def history(self) -> pd.DataFrame:
        """epoch, train_loss, val_loss (standardised MSE), learning_rate; empty for an imported model."""
        rows = self.metrics.get("history") or []
        table = pd.DataFrame([r for r in rows if isinstance(r, dict)])
        for column in ("epoch", "train_loss", "val_loss", "learning_rate"):
            if column not in table:
                table[column] = pd.Series(dtype=float)
        table = table[["epoch", "train_loss", "val_loss", "learning_rate"]].apply(pd.to_numeric, errors="coerce")
        return table.dropna(subset=["epoch"]).reset_index(drop=True)

    @property
    def baselines(self) -> dict:
        """What training kept of the check against seasonal naive and the linear baseline (metrics.json's
        `baselines`, analysis.compare.verdict.BaselineCheck.record); empty when it was not checked."""
        value = self.metrics.get("baselines")
        return value if isinstance(value, dict) else {}

    def test_metric(self, name: str) -> float:
        value = (self.metrics.get("test") or {}).get(name)
        return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else math.nan


def _read_json(path: Path) -> dict:
    return jsonfile.read(path, max_bytes=MAX_JSON_BYTES)


_NUMBER = (int, float)
CONFIG_TYPES = {"revin": bool, "distil": bool, "d_model": int, "n_heads": int, "d_layers": int, "d_ff": int,
                "factor": int, "dropout": _NUMBER, "seq_len": int, "label_len": int, "pred_len": int,
                "encoder_attention": str, "decoder_attention": str, "cross_attention": str, "embedding": str}
SPEC_TYPES = {"seq_len": int, "label_len": int, "pred_len": int, "target": str, "features": str}
METRIC_TYPES = {"data": str, "stopped": str, "history": list, "test": dict, "training": dict}


def _type_problem(value, kind) -> bool:
    if kind is int or kind == _NUMBER:  # a bool is no number; a float no whole number
        return isinstance(value, bool) or not isinstance(value, kind)
    return not isinstance(value, kind)


def _kind(value) -> str:
    return "null" if value is None else {bool: "true/false", int: "a whole number", float: "a number", str: "a text",
                                         list: "an array", dict: "an object"}.get(type(value), type(value).__name__)


def shape_problem(parts: dict[str, dict]) -> str | None:
    """Why a run's files cannot be shown as they are (a setting of the wrong type, a list where an object belongs),
    naming the file, the key and what it holds; None when every value the Runs screen reads has its type."""
    checks = [("config.json", parts["config"], CONFIG_TYPES), ("schema.json", parts["schema"], {"spec": dict}),
              ("metrics.json", parts["metrics"], METRIC_TYPES)]
    spec = parts["schema"].get("spec")
    if isinstance(spec, dict):
        checks.append(("schema.json spec", spec, SPEC_TYPES))
    for file, data, types in checks:
        for key, kind in types.items():
            if key in data and data[key] is not None and _type_problem(data[key], kind):
                want = {bool: "true or false", int: "a whole number", str: "a text", list: "an array",
                        dict: "an object"}.get(kind, "a number")
                return f"{file}: {key} is {_kind(data[key])} ({str(data[key])[:30]!r}), not {want}"
    for row in parts["metrics"].get("history") or ():
        if not isinstance(row, dict) or any(_type_problem(v, _NUMBER) for v in row.values() if v is not None):
            return f"metrics.json: history holds {str(row)[:40]!r}, not an epoch's numbers"
    for key, value in (parts["metrics"].get("test") or {}).items():
        if key == "original_by_column":  # [{column, mse, mae}, …]: the errors of each column in its own units
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                return f"metrics.json: test {key} is {_kind(value)}, not a list of each column's errors"
        elif value is not None and _type_problem(value, _NUMBER):
            return f"metrics.json: test {key} is {_kind(value)}, not a number"
    return None


def read_run(folder: Path) -> RunRecord:
    folder = Path(folder)
    manifest = folder / "manifest.json"
    try:
        modified = manifest.stat().st_mtime
    except OSError:
        return RunRecord(folder.name, folder, math.nan, problem="no manifest.json: not a checkpoint folder")
    parts = {}
    for name in ("config", "schema", "metrics"):
        path = folder / f"{name}.json"
        if not path.is_file():
            if name == "metrics":  # an imported model has no training record
                parts[name] = {}
                continue
            return RunRecord(folder.name, folder, modified, problem=f"{name}.json is missing")
        try:
            parts[name] = _read_json(path)
        except (OSError, ValueError, UnicodeDecodeError) as err:
            return RunRecord(folder.name, folder, modified, problem=f"{name}.json cannot be read: {err}")
    problem = shape_problem(parts)
    if problem is not None:
        return RunRecord(folder.name, folder, modified, problem=problem)
    return RunRecord(folder.name, folder, modified, **parts)


def read_runs(root: Path) -> list[RunRecord]:
    """Every sub-folder of `root` that has a manifest (hidden ones skipped), newest first."""
    root = Path(root)
    try:
        folders = [p for p in root.iterdir()
                   if p.is_dir() and not p.name.startswith(".") and (p / "manifest.json").exists()]
    except OSError:  # missing, a file, a loop, unreadable: no runs (the caller names the folder's problem)
        return []
    return sorted((_read_guarded(p) for p in folders),
                  key=lambda r: (-(r.modified if math.isfinite(r.modified) else 0), r.name))


def _read_guarded(folder: Path) -> RunRecord:
    """read_run, and a record with the reason for whatever else one folder raises: one run never hides the others."""
    try:
        return read_run(folder)
    except (OSError, ValueError, TypeError, AttributeError, KeyError, RecursionError) as err:
        return RunRecord(folder.name, folder, math.nan, problem=f"cannot be read: {type(err).__name__} {err}"[:200])


def run_name_from(text: str) -> str:
    """A run name made of `text` (a file's stem and a time): letters, digits, '_', '-' and '.', at most 56
    characters (room for a "-2" suffix), starting with a letter or a digit."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_.-")[:56].rstrip("_.-")
    return name or "run"


def free_run_name(root: Path, base: str) -> str:
    """`base`, or `base-2`, `base-3`, … : the first name no folder of `root` has."""
    name, n = base, 2
    while (Path(root) / name).exists():
        name, n = f"{base}-{n}", n + 1
    return name


def _attention(config: dict) -> str:
    kinds = [config.get(k, "?") for k in ("encoder_attention", "decoder_attention", "cross_attention")]
    return "/".join(map(str, kinds))


def runs_table(records: list[RunRecord]) -> pd.DataFrame:
    """One row per run: its data and shape, training, and test MSE/MAE (standardised, every test window)."""
    rows = []
    for r in records:
        spec = r.schema.get("spec") or {}
        history = r.history
        best_val = history["val_loss"].min() if len(history) else math.nan
        rows.append({
            "run": r.name, "data": r.metrics.get("data", ""), "target": spec.get("target", ""),
            "features": spec.get("features", ""), "seq_len": spec.get("seq_len"), "label_len": spec.get("label_len"),
            "pred_len": spec.get("pred_len"), "attention (enc/dec/cross)": _attention(r.config),
            "RevIN": r.config.get("revin") is True, "epochs": len(history),
            "stopped": r.metrics.get("stopped", ""), "best val loss": best_val,
            "test MSE": r.test_metric("mse"), "test MAE": r.test_metric("mae"),
            "seasonal naive MSE": _baseline_mse(r, "seasonal_naive"), "linear MSE": _baseline_mse(r, "linear"),
            "against the baselines": against_baselines(r.baselines),
            "modified": pd.Timestamp(r.modified, unit="s") if math.isfinite(r.modified) else pd.NaT,
            "problem": r.problem or "",
        })
    return pd.DataFrame(rows)


def _baseline_mse(record: RunRecord, name: str) -> float:
    value = (record.baselines.get("mse") or {}).get(name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def against_baselines(record: dict) -> str:
    """A few words on a run's check against the baselines: 'better than both', 'worse than seasonal naive', …"""
    names = {"seasonal_naive": "seasonal naive", "linear": "the linear baseline"}
    if not isinstance(record.get("mse"), dict):
        return "not checked"

    def listed(key: str) -> list[str]:  # read by type: a damaged file's string is not a list of names
        value = record.get(key)
        return [str(n) for n in value] if isinstance(value, list) else []

    worse = [names.get(n, n) for n in listed("worse")]
    even = [names.get(n, n) for n in listed("not_better") if n not in listed("worse")]
    undecided = [names.get(n, n) for n in listed("undecided")]
    parts = ([f"worse than {' and '.join(worse)}"] if worse else []) + ([f"not better than {' and '.join(even)}"]
                                                                       if even else []) + \
        ([f"not measured against {' and '.join(undecided)} (too few windows for an interval)"] if undecided else [])
    windows = record.get("windows")
    on = f" ({windows:,} test windows)" if isinstance(windows, int) and not isinstance(windows, bool) else ""
    return ("; ".join(parts) or "better than both") + on


def curves(records: list[RunRecord]) -> pd.DataFrame:
    """Long table of every run's curves: run, epoch, split (train | val), loss."""
    parts = []
    for r in records:
        history = r.history
        for split in ("train", "val"):
            part = history[["epoch", f"{split}_loss"]].rename(columns={f"{split}_loss": "loss"}).dropna()
            parts.append(part.assign(run=r.name, split=split))
    if not parts:
        return pd.DataFrame(columns=["run", "epoch", "split", "loss"])
    return pd.concat(parts, ignore_index=True)[["run", "epoch", "split", "loss"]]


__all__ = ["MAX_JSON_BYTES", "RunRecord", "against_baselines", "curves", "free_run_name", "read_run", "read_runs",
           "run_name_from", "runs_table", "shape_problem"]
