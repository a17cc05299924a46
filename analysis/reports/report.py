"""The study report: one self-contained HTML file (figures, tables, provenance) for one model on one data set, for a
whole study folder, or for whatever a screen has drawn.

    report = checkpoint_report(checkpoint, frame, seed=0, data=csv_bytes, folder=checkpoint_folder)
    report = study_report("studies/ett")
    write_report(report, "report.html")

A report is data: `Report(title, sections, provenance)` of `ReportSection(title, text, figures, tables)`. Figures are
plain plotly figures (`go.Figure`, or a figure dict) made anywhere and tables are pandas DataFrames, so a screen can
gather what it drew into a Report and offer `render_html(report)` as a download:

    section = ReportSection("Sparsity", "what the figure shows", figures=[fig], tables=[("heads", table)])
    html = render_html(Report("Sparsity of run 7", [section], checkpoint_provenance(checkpoint)))

The page itself (plotly.js inline once, no network request, everything escaped) is `analysis.reports.html`'s; its
names are re-exported here. The provenance of a report: `checkpoint_provenance` (config, data schema, manifest
digests, project version), `frame_provenance` (the data and its SHA-256), `project_version`.

Pure: no Streamlit; torch is imported only by `checkpoint_report` (the figures and HTML need none of it).
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from informer_lab.analysis.intervals import METHOD
from informer_lab.analysis.reports.anatomy import STUDY_INSTRUMENTS, anatomy_section, evidence_section, model_sections
from informer_lab.analysis.reports.figures import grouped_bars, heatmap, interval_bars, series_bars
from informer_lab.analysis.reports.html import MAX_TABLE_ROWS, Report, ReportSection, figure_html, render_html, table_html, write_report
from informer_lab.analysis.reports.verdict import study_warning, verdict_section
from informer_lab.analysis.heads.names import head_name
from informer_lab.analysis.jsonfile import read_or_none
from informer_lab.source import FILES as ROOT  # the checkout, whose git commit a report names (an install has none)

SPARSITY_SEEDS = 5  # key-sample seeds of the top-u agreement in a checkpoint report
REMOVABLE_SHARE = "5 %"  # analysis.heads.ablation.REMOVABLE, as the study's findings use it (read, not imported: no torch)


# --------------------------------------------------------------------------------------------
# Provenance
# --------------------------------------------------------------------------------------------
def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def project_version(root: str | Path = ROOT) -> str:
    """The project's version: the git commit of `root` (marked when tracked files differ from it), else a VERSION
    file's first line or pyproject.toml's version there, else "unknown". Never raises: a report never fails on it."""
    root = Path(root)
    lines = (_git(root, "rev-parse", "--show-toplevel", "HEAD") or "").splitlines()
    if len(lines) == 2 and Path(lines[0]).resolve() == root.resolve():
        dirty = _git(root, "status", "--porcelain", "--untracked-files=no")
        return f"{lines[1]} (with uncommitted changes)" if dirty else lines[1]
    try:
        if (root / "VERSION").is_file() and (root / "VERSION").read_text().strip():
            return (root / "VERSION").read_text().strip().splitlines()[0][:100]
        if (root / "pyproject.toml").is_file():
            found = re.search(r"""^version\s*=\s*["']([^"']+)["']""", (root / "pyproject.toml").read_text(), re.M)
            if found:
                return found.group(1)
    except (OSError, UnicodeError):
        pass
    return "unknown"


def data_fingerprint(data: bytes) -> str:
    """SHA-256 (hex) of a CSV's bytes: the same as a study's fingerprint of its data (study.plan.fingerprint)."""
    return hashlib.sha256(bytes(data)).hexdigest()


def values_fingerprint(frame) -> str:
    """SHA-256 (hex) of what was read from a CSV (column names, timestamps, values): the data's identity when the
    file's bytes are not at hand."""
    digest = hashlib.sha256(json.dumps([frame.datetime_column, *map(str, frame.columns)]).encode())
    digest.update(np.ascontiguousarray(frame.timestamps.asi8).tobytes())
    digest.update(np.ascontiguousarray(frame.values.to_numpy(dtype=np.float64)).tobytes())
    return digest.hexdigest()


def frame_provenance(frame, data: bytes | None = None) -> dict:
    """The data of a report: file name, rows, columns, frequency, time range, repairs, and its fingerprints."""
    out = {"file": frame.name, "rows": frame.n_rows, "columns": list(frame.columns),
           "datetime column": frame.datetime_column, "frequency": frame.freq}
    if frame.n_rows:
        out["first timestamp"], out["last timestamp"] = str(frame.timestamps[0]), str(frame.timestamps[-1])
    if frame.dropped_columns:
        out["dropped columns"] = list(frame.dropped_columns)
    if not frame.repairs.empty:
        out["repairs"] = frame.repairs.counts()
    if data is not None:
        out["sha256 of the file"] = data_fingerprint(data)
    out["sha256 of the values read"] = values_fingerprint(frame)
    return out


def manifest_digests(folder: str | Path | None) -> dict:
    """The SHA-256 of every file of a checkpoint folder, from its manifest.json ({} when there is none)."""
    if folder is None:
        return {}
    try:
        digests = (read_or_none(Path(folder) / "manifest.json", max_bytes=1 << 20) or {}).get("sha256", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return dict(digests) if isinstance(digests, dict) else {}


def checkpoint_provenance(checkpoint, folder: str | Path | None = None) -> dict:
    """A model's provenance: the project version, every InformerConfig field, the data schema (columns, targets,
    frequency, windows, scaler), the training metrics and, given its folder, the manifest's SHA-256 digests."""
    schema = checkpoint.schema
    out = {"project version": project_version(), "model config": asdict(checkpoint.config),
           "data schema": {"columns": list(schema.columns), "target columns": list(schema.target_columns),
                           "datetime column": schema.datetime_column, "frequency": schema.freq,
                           "spec": asdict(schema.spec), "scaler": schema.scaler.to_dict()},
           "training metrics": dict(checkpoint.metrics or {})}
    if checkpoint.repair:
        out["training data repairs"] = checkpoint.repair
    digests = manifest_digests(folder)
    if digests:
        out["checkpoint files sha256"] = digests
    return out


# --------------------------------------------------------------------------------------------
# One model on one data set
# --------------------------------------------------------------------------------------------
def checkpoint_report(checkpoint, frame, *, seed: int = 0, split: str = "test", max_windows: int | None = 256,
                      window: int = 0, data: bytes | None = None, folder: str | Path | None = None) -> Report:
    """One model on one data set: has it learned (against the baselines), errors, the single-head sweep (intervals
    over the split's first `max_windows` windows; None: all), window `window`'s sparsity, pyramid and anatomy,
    circuits, features. `data` (the CSV's bytes) adds its fingerprint, `folder` (the checkpoint's) its digests."""
    from informer_lab.analysis.learning.windows import limit_windows
    from informer_lab.analysis.learning.workflow import prepare_for_checkpoint

    prepared = prepare_for_checkpoint(checkpoint, frame)
    model = checkpoint.model
    sections = [verdict_section(model, prepared, seed),
                _errors_section(model, limit_windows(prepared, split, max_windows), split, seed),
                _sweep_section(model, prepared, split, seed, max_windows),
                _sparsity_section(model, prepared, split, window, seed),
                _pyramid_section(model, prepared, split, window, seed),
                *model_sections(model, prepared, split, window, seed)]
    c = model.config
    model_provenance = checkpoint_provenance(checkpoint, folder)
    provenance = {"project version": model_provenance.pop("project version"),
                  "seeds": {"key samples": seed,
                            "top-u agreement": list(range(seed, seed + SPARSITY_SEEDS))},
                  "evaluation": {"split": split, "windows scored": int(sections[1].tables[0][1]["windows"].iloc[0]),
                                 "window of sparsity and pyramid": window},
                  "data": frame_provenance(frame, data), **model_provenance}
    title = (f"Informer on {frame.name}: {c.seq_len}/{c.label_len}/{c.pred_len}, d_model {c.d_model}, "
             f"{c.n_heads} heads, {c.encoder_attention} attention")
    return Report(title, sections, provenance)


def _unknown_intervals(table: pd.DataFrame, column: str) -> str:
    """A sentence when the table's intervals are unknown (NaN: too few windows for an honest interval)."""
    if not table[column].isna().all():
        return ""
    why = next((r for r in table.get("interval", pd.Series(dtype=str)).fillna("") if r), "")
    return (f" No interval is shown (blank): {why or str(int(table['windows'].iloc[0])) + ' windows are too few'}; no "
            "finding on this page is stated with an interval.")


def _errors_section(model, prepared, split: str, seed: int) -> ReportSection:
    from informer_lab.analysis.compare.comparison import headline_errors

    table = headline_errors(model, prepared, split=split, seed=seed)
    figure = interval_bars(table["model"], table["mse"], table["mse_lo"], table["mse_hi"],
                           title=f"{split} MSE (standardised) with 95 % intervals", y_title="MSE")
    text = (f"Standardised errors of the model and the naive forecasts on the first {int(table['windows'].iloc[0])} "
            f"windows of the {split} split. Intervals: {METHOD}; delta_mse is each forecast's MSE minus the model's on "
            "the same windows, window by window."
            + _unknown_intervals(table, "mse_lo"))
    return ReportSection("Errors", text, [figure], [("errors", table)])


def _sweep_section(model, prepared, split: str, seed: int, max_windows: int | None) -> ReportSection:
    from informer_lab.analysis.heads.ablation import head_sweep
    from informer_lab.analysis.heads.lists import head_lists
    from informer_lab.analysis.heads.masking import BASELINE

    table = head_sweep(model, prepared, split, seed=seed, max_windows=max_windows).table
    heads = table[table["site"] != BASELINE]
    figure = interval_bars([head_name(s, h) for s, h in zip(heads["site"], heads["head"])], heads["delta_mse"],
                           heads["delta_mse_lo"], heads["delta_mse_hi"],
                           title="ΔMSE when one head is removed (zero ablation), 95 % intervals", y_title="ΔMSE")
    text = (f"Each head removed alone (zero ablation) and scored on the same {int(table['windows'].iloc[0])} windows "
            f"and key samples as the baseline (MSE {float(table['mse'].iloc[0]):.6g}). "
            f"Heads listed: {head_lists(table).summary()} (removable: ΔMSE shown to be under {REMOVABLE_SHARE} of "
            "the baseline by a one-sided test)." + _unknown_intervals(table, "delta_mse_lo"))
    return ReportSection("Single-head ablation", text, [figure], [("single-head sweep", table)])


def _sparsity_section(model, prepared, split: str, window: int, seed: int) -> ReportSection:
    from informer_lab.analysis.attention.sparsity import sparsity_report

    report = sparsity_report(model, prepared, split, [window], seed=seed, seeds=SPARSITY_SEEDS)
    heads = report.heads.assign(relative_entropy=report.heads["mean_entropy"] / report.heads["uniform_entropy"])
    sites = list(dict.fromkeys(heads["site"]))
    grid = heads.pivot(index="site", columns="head", values="relative_entropy").reindex(sites)
    figure = heatmap(grid.to_numpy(), [f"h{h}" for h in grid.columns], sites, colorbar="entropy / flat",
                     text=np.round(grid.to_numpy(), 2),
                     title=f"attention entropy relative to a flat row, window {window}")
    text = (f"Window {window} of the {split} split, key-sample seed {seed}: each head's mean attention entropy over "
            "the entropy of a flat row (1: attends evenly; near 0: to one key), its dominant lag and attended "
            f"distance. The agreement table compares the sampled top-u with the exact one over {SPARSITY_SEEDS} "
            "key-sample seeds (chance_overlap: a random top-u's expected overlap).")
    tables = [("heads", report.heads)] + ([("top-u agreement", report.agreement)] if len(report.agreement) else [])
    return ReportSection("Sparsity", text, [figure], tables)


def _pyramid_section(model, prepared, split: str, window: int, seed: int) -> ReportSection:
    from informer_lab.analysis.attention.pyramid import pyramid_report

    report = pyramid_report(model, prepared, split, window, seed=seed)
    lengths = report.lengths
    labels = [f"replica {r} · level {v}" for r, v in zip(lengths["replica"], lengths["level"])]
    figure = series_bars(labels, {"recorded": lengths["recorded_length"], "by the formula": lengths["analytic_length"]},
                         title="encoder length per level (distilling halves it)", y_title="positions")
    analytic, recorded = report.encoder_output_length
    text = (f"The distilling pyramid of window {window}: the recorded lengths "
            f"{'equal' if report.lengths_match else 'DIFFER FROM'} the formula's; the joined encoder output has "
            f"{recorded} positions ({analytic} by the formula).")
    return ReportSection("Distilling pyramid", text, [figure], [("lengths", lengths)])


# --------------------------------------------------------------------------------------------
# A whole study (its folder's files; analysis never imports study/)
# --------------------------------------------------------------------------------------------
def _read_json(path: Path) -> dict | None:
    return read_or_none(path)


def _read_csv(path: Path) -> pd.DataFrame | None:
    try:
        return pd.read_csv(path) if path.is_file() else None
    except (OSError, ValueError):
        return None


def _utc(seconds) -> str:
    """A Unix time as a UTC date and time ("–" when it is missing or not a number)."""
    try:
        return datetime.fromtimestamp(float(seconds), timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (TypeError, ValueError, OverflowError, OSError):
        return "–"


def _setting_labels(table: pd.DataFrame) -> list[str]:
    """Each row's setting as the study's findings name it ("attention=full, factor=3"; "all" without a grid)."""
    keys = [c for c in table.columns if c.startswith("setting_")]
    if not keys:
        return ["all"] * len(table)
    return [", ".join(f"{k[len('setting_'):]}={v}" for k, v in zip(keys, row)) for row in table[keys].itertuples(
        index=False, name=None)]


def study_report(study_dir: str | Path) -> Report:
    """A report of a study folder: its plan, every run, the findings across seeds, removable heads and head roles."""
    folder = Path(study_dir)
    plan = _read_json(folder / "study.json")
    if plan is None:
        raise FileNotFoundError(f"{folder} is not a study folder: it has no readable study.json")
    left_out: list[str] = []

    def read(path: Path, reader, expected: bool):
        value = reader(path)
        if value is None and (path.exists() or expected):
            left_out.append(f"{path.relative_to(folder)}: {'cannot be read (damaged)' if path.exists() else 'missing'}")
        return value

    status = read(folder / "status.json", _read_json, False) or {}
    done = bool(status.get("finished"))
    runs = read(folder / "runs.csv", _read_csv, done)
    runs = pd.DataFrame(status.get("runs", [])) if runs is None else runs
    tables = folder / "tables"
    analyses = plan.get("analyses") or []
    sections = [_runs_section(runs, read(tables / "errors.csv", _read_csv, done and "errors" in analyses), status),
                _findings_section(read(folder / "findings.json", _read_json, done) or {}),
                _removable_section(read(tables / "findings_removable.csv", _read_csv, done and "sweep" in analyses)),
                _roles_section(read(tables / "findings_roles.csv", _read_csv, done and "roles" in analyses)),
                anatomy_section({name: read(tables / f"findings_{name}.csv", _read_csv, done and name in analyses)
                                 for name in ("lens", "shares", "composition")}), evidence_section(STUDY_INSTRUMENTS)]
    if left_out:
        sections.append(ReportSection("Left out of this report", "These files of the study could not be shown:\n\n"
                                      + "\n".join(f"- {line}" for line in left_out), [], []))
    provenance = {"project version": project_version(), "seeds": plan.get("seeds"),
                  "data": {"csv": plan.get("csv"), "sha256 of the file": plan.get("fingerprint"),
                           "reading options": plan.get("options", {})},
                  "plan": {k: v for k, v in plan.items() if k not in ("csv", "fingerprint", "options", "seeds")},
                  "status": {"finished": bool(status.get("finished")), "updated": _utc(status.get("updated"))},
                  "study folder": str(folder)}
    return Report(f"Study {folder.resolve().name}", [s for s in sections if s is not None], provenance)


def _runs_section(runs: pd.DataFrame, errors: pd.DataFrame | None, status: dict) -> ReportSection:
    states = runs["state"].value_counts().to_dict() if "state" in runs else {}
    lines = [f"{len(runs)} runs: " + (", ".join(f"{n} {state}" for state, n in states.items()) or "no status")
             + ("" if status.get("finished") else " (the study has not finished)") + "."]
    if "state" in runs:
        lines += [f"{r.run} failed: {r.error}" for r in runs[runs["state"] == "failed"].itertuples()]
    figures, tables = [], [("runs", runs)]
    if errors is not None and {"model", "mse", "mse_lo", "mse_hi", "seed"} <= set(errors.columns):
        ours = errors[errors["model"] == "informer"]
        ours = ours.assign(setting=_setting_labels(ours), seed_label=[f"seed {s}" for s in ours["seed"]])
        figures.append(grouped_bars(ours, "seed_label", "setting", "mse", "mse_lo", "mse_hi",
                                    title="test MSE per seed (standardised), 95 % intervals over windows",
                                    y_title="MSE"))
        tables.append(("test errors per run", errors))
    elif "test_mse" in runs:
        figures.append(interval_bars(runs["run"], runs["test_mse"], title="test MSE per run", y_title="MSE"))
    return ReportSection("Runs", "\n\n".join(lines), figures, tables)


def _findings_section(findings: dict) -> ReportSection | None:
    rows = []
    for setting, entry in findings.get("settings", {}).items():
        mse, removable = entry.get("test_mse", {}), entry.get("removable", {})
        sweep, grad = entry.get("sweep_rank_stability", {}), entry.get("importance_rank_stability", {})
        roles = entry.get("roles_in_every_seed", {})
        rows.append({"setting": setting, "seeds": mse.get("seeds"), "test MSE mean": mse.get("mse_mean"),
                     "sd over seeds": mse.get("mse_std"), "95% lo": mse.get("mse_seeds_lo"),
                     "95% hi": mse.get("mse_seeds_hi"), "removable with interval": removable.get("with_interval_mean"),
                     "removable raw": removable.get("raw_mean"),
                     "runs with an interval": removable.get("runs_with_interval"),
                     "removable min": removable.get("with_interval_min"),
                     "removable max": removable.get("with_interval_max"),
                     "removable by point": removable.get("by_point_mean"), "heads": removable.get("heads"),
                     "stable role": entry.get("heads_with_a_stable_role"),
                     "roles in every seed": "; ".join(f"{k}: {v}" for k, v in roles.items()),
                     "ΔMSE rank ρ": sweep.get("rho"), "ρ lo": sweep.get("rho_lo"), "ρ hi": sweep.get("rho_hi"),
                     "gradient rank ρ": grad.get("rho"), "gradient ρ lo": grad.get("rho_lo"),
                     "gradient ρ hi": grad.get("rho_hi")})
    if not rows:
        return None
    table = pd.DataFrame(rows)
    figure = interval_bars(table["setting"], table["test MSE mean"], table["95% lo"], table["95% hi"],
                           title="test MSE over seeds: mean and 95 % t interval", y_title="MSE")
    text = study_warning(findings) + (
        "Per setting, over seeds: the test MSE (mean, spread, t interval), the heads removable alone (mean, min and "
        "max over the runs with an interval: a one-sided test with Benjamini–Hochberg at q = 0.05 across each run's "
        "heads, the raw count beside it, and the count by point estimates), the heads whose role holds in every "
        "seed, and the rank stability (Spearman ρ between seeds, a t interval over seeds from the jackknife) of "
        "each head's ΔMSE and gradient importance.")
    return ReportSection("Findings across seeds", text, [figure], [("findings", table)])


def _removable_section(removable: pd.DataFrame | None) -> ReportSection | None:
    if removable is None or removable.empty:
        return None
    series = {"after Benjamini–Hochberg": removable["removable_with_interval"]}
    if "removable_raw" in removable:
        series["raw (interval alone)"] = removable["removable_raw"]
    series["by point estimates"] = removable["removable_by_point"]
    figure = series_bars(removable["run"], series, title="heads removable alone, per run", y_title="heads")
    missing = int(removable["removable_with_interval"].isna().sum())
    text = (f"Per run, the heads whose removal alone is shown to cost under {REMOVABLE_SHARE} of the baseline MSE: a "
            "one-sided test per head with Benjamini–Hochberg at q = 0.05 across the run's heads, the raw count (the "
            "interval alone) and the count by point estimates."
            + (f" {missing} run(s) scored too few windows for an interval: blank, no head counted." if missing else ""))
    return ReportSection("Removable heads", text, [figure], [("removable heads per run", removable)])


def _roles_section(roles: pd.DataFrame | None) -> ReportSection | None:
    if roles is None or roles.empty:
        return None
    seeds = [c for c in roles.columns if c.startswith("seed ")]
    figures = []
    for setting, part in roles.groupby("setting", sort=False) if "setting" in roles else [("all", roles)]:
        names = sorted({str(r) for c in seeds for r in part[c].dropna()})
        codes = [[names.index(str(r)) if isinstance(r, str) else np.nan for r in part[c]] for c in seeds]
        text = part[seeds].fillna("").astype(str).to_numpy()
        figures.append(heatmap(np.array(codes, dtype=np.float64).T, seeds,
                               [f"{s} · h{h}" for s, h in zip(part["site"], part["ref_head"])],
                               title=f"head roles per seed ({setting})", colorbar=None, text=text,
                               colorscale="Turbo"))
    text = ("Heads matched across seeds by their lag profiles (to the first seed's heads): the role of each matched "
            "head in every seed, its most common role and whether it holds in every seed.")
    return ReportSection("Head roles", text, figures, [("roles", roles)])


__all__ = ["MAX_TABLE_ROWS", "Report", "ReportSection", "checkpoint_provenance", "checkpoint_report",
           "data_fingerprint", "figure_html", "frame_provenance", "manifest_digests", "project_version",
           "render_html", "study_report", "table_html", "values_fingerprint", "write_report"]
