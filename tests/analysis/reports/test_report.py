"""The study report (analysis.reports.report): one self-contained HTML page whose numbers are the analysis functions' own.

The page links nothing (no src/href to the network, plotly.js inline exactly once, every figure div drawn by its own
newPlot call), escapes every user text, and carries the provenance: every config field, the data's SHA-256, the
manifest digests, the project version. A study report is built from a real (tiny, in-process) study folder.
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import time
from dataclasses import asdict, fields, replace
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from plotly.offline import get_plotlyjs

from informer_lab.analysis.reports.report import (MAX_TABLE_ROWS, REMOVABLE_SHARE, SPARSITY_SEEDS, Report, ReportSection,
                             checkpoint_provenance, checkpoint_report, data_fingerprint, frame_provenance,
                             project_version, render_html, study_report, values_fingerprint, write_report)
from tests.conftest import ROOT, SAMPLE_CSV, TINY_SIZE, TINY_SPEC

NASTY = "<script>x</script>"
ESCAPED = "&lt;script&gt;x&lt;/script&gt;"


class Page(HTMLParser):
    """A page's tags with their attributes, and the text of each <script>."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self._script = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script = True
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = False

    def handle_data(self, data):
        if self._script:
            self.scripts[-1] += data


def check_self_contained(text: str, figures: int) -> str:
    """Assert the page links nothing and draws `figures` figures; returns the page without plotly.js."""
    bundle = get_plotlyjs()
    assert text.count(bundle) == 1, "plotly.js must be inline exactly once"
    page = Page(text)
    for tag, attrs in page.tags:
        for name in ("src", "href", "action", "data", "srcset", "poster"):
            value = (attrs.get(name) or "").strip().lower()
            assert not re.match(r"(https?:)?//", value), f"<{tag} {name}={value!r}> reaches the network"
        assert not (tag == "script" and "src" in attrs), "scripts are inline"
        assert tag not in ("link", "iframe", "object", "embed", "base"), f"<{tag}> in a self-contained page"
    assert sum(bundle in script for script in page.scripts) == 1
    csp = [a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0] and "connect-src 'none'" in csp[0]
    rest = text.replace(bundle, "")
    for word in ("http://", "https://", "cdn", "mathjax", "@import", "@font-face"):
        assert word not in rest.lower(), f"{word!r} outside plotly.js"
    divs = [a["id"] for t, a in page.tags if t == "div" and a.get("class") == "figure"]
    calls = re.findall(r'Plotly\.newPlot\("([^"]+)"', rest)
    assert len(divs) == figures and len(set(divs)) == figures and sorted(calls) == sorted(divs)
    return rest


def figure_specs(text: str) -> dict[str, dict]:
    """Each figure's JSON as the page hands it to Plotly.newPlot, by div id."""
    found = re.findall(r'var f = (\{.*?\}); Plotly\.newPlot\("([^"]+)"', text)
    return {fid: json.loads(spec) for spec, fid in found}


def nasty_report(rows: int = 3) -> Report:
    bars = go.Figure([go.Bar(x=[NASTY, "b"], y=[1.0, 2.0])], {"title": {"text": NASTY}})
    cells = go.Figure([go.Heatmap(z=[[1, 2], [3, 4]])])
    table = pd.DataFrame({NASTY: [NASTY] * rows, "value": [0.5] * rows})
    return Report(f"title {NASTY}", [ReportSection(NASTY, f"text {NASTY}\n\nsecond", [bars], [(NASTY, table)]),
                                     ReportSection("more", figures=[cells, bars.to_dict()])],
                  {"note": NASTY, "nested": {"list": [1, NASTY]}}, created="2024-01-01 00:00:00 UTC")


def test_a_page_is_self_contained_and_escapes_every_user_text():
    report = nasty_report()
    text = render_html(report)
    rest = check_self_contained(text, figures=3)
    assert NASTY not in rest and "<script>x" not in rest
    assert rest.count(ESCAPED) >= 7  # title ×2, section, text, table name, column, cells, provenance
    specs = figure_specs(text)  # the escaped JSON still reads back as the figure's own text
    assert specs["figure-1"]["layout"]["title"]["text"] == NASTY and specs["figure-1"]["data"][0]["x"][0] == NASTY
    assert specs["figure-2"]["data"][0]["type"] == "heatmap" and specs["figure-3"]["data"][0]["type"] == "bar"
    assert '"typesetMath": false' in rest and "generated 2024-01-01 00:00:00 UTC" in rest
    assert "<dt>note</dt>" in rest and "<p>second</p>" in rest


def test_a_long_table_shows_its_first_rows_and_counts_the_rest():
    text = render_html(nasty_report(rows=MAX_TABLE_ROWS + 50))
    body = text[text.index("<tbody>"):text.index("</tbody>")]
    assert body.count("<tr>") == MAX_TABLE_ROWS
    assert f"{MAX_TABLE_ROWS + 50} rows × 2 columns; the first {MAX_TABLE_ROWS} shown, 50 left out" in text


def test_a_section_takes_dataframes_only():
    with pytest.raises(TypeError, match="not a pandas DataFrame"):
        ReportSection("x", tables=[("numbers", [1, 2, 3])])


def test_write_report_replaces_the_file_whole_or_not_at_all(tmp_path):
    out = tmp_path / "deep" / "report.html"
    report = nasty_report()
    write_report(report, out)
    assert out.read_text(encoding="utf-8") == render_html(report)
    broken = Report("broken", [ReportSection("x", figures=[object()])])
    with pytest.raises((ValueError, TypeError)):
        write_report(broken, out)
    assert out.read_text(encoding="utf-8") == render_html(report)  # the old report is intact
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]  # and no temporary file is left


def test_project_version_is_the_commit_else_a_version_file_else_unknown(tmp_path, monkeypatch):
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:
        assert project_version(ROOT).startswith(head.stdout.strip())
    assert project_version(tmp_path) == "unknown"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0.4.0"\n')
    assert project_version(tmp_path) == "0.4.0"
    (tmp_path / "VERSION").write_text("1.2.3\n")
    assert project_version(tmp_path) == "1.2.3"

    def no_git(*args, **kwargs):
        raise FileNotFoundError("git")

    monkeypatch.setattr("informer_lab.analysis.reports.report.subprocess.run", no_git)
    assert project_version(tmp_path) == "1.2.3" and project_version(ROOT) == "unknown"


def test_provenance_holds_the_config_schema_digests_and_fingerprints(tiny_trained, sample_frame):
    from informer_lab.model import InformerConfig
    from informer_lab.study.plan import fingerprint

    checkpoint, _, folder = tiny_trained
    data = SAMPLE_CSV.read_bytes()
    assert data_fingerprint(data) == hashlib.sha256(data).hexdigest() == fingerprint(data)
    prov = checkpoint_provenance(checkpoint, folder)
    assert set(prov["model config"]) == {f.name for f in fields(InformerConfig)}
    assert prov["model config"] == asdict(checkpoint.config)
    schema = prov["data schema"]
    assert schema["columns"] == list(checkpoint.schema.columns) == list(sample_frame.columns)
    assert schema["target columns"] == list(checkpoint.schema.target_columns) and schema["spec"]["target"] == "load"
    assert schema["frequency"] == sample_frame.freq and schema["spec"] == TINY_SPEC
    digests = prov["checkpoint files sha256"]
    assert {"weights.safetensors", "config.json", "schema.json", "metrics.json"} <= set(digests)
    assert all(hashlib.sha256((folder / name).read_bytes()).hexdigest() == d for name, d in digests.items())
    assert prov["project version"] == project_version()
    assert "checkpoint files sha256" not in checkpoint_provenance(checkpoint)  # no folder, no manifest

    data_prov = frame_provenance(sample_frame, data)
    assert data_prov["sha256 of the file"] == hashlib.sha256(data).hexdigest()
    assert data_prov["rows"] == sample_frame.n_rows and data_prov["columns"] == list(sample_frame.columns)
    assert "sha256 of the file" not in frame_provenance(sample_frame)
    changed = replace(sample_frame, values=sample_frame.values.assign(load=sample_frame.values["load"] + 1e-9))
    assert values_fingerprint(changed) != values_fingerprint(sample_frame) == data_prov["sha256 of the values read"]


def test_a_checkpoint_report_holds_the_analysis_functions_numbers(tiny_trained, sample_frame):
    from informer_lab.analysis.heads.ablation import REMOVABLE, head_sweep
    from informer_lab.analysis.compare.comparison import headline_errors
    from informer_lab.analysis.attention.pyramid import pyramid_report
    from informer_lab.analysis.attention.sparsity import sparsity_report
    from informer_lab.analysis.learning.windows import limit_windows
    from informer_lab.analysis.learning.workflow import prepare_for_checkpoint

    checkpoint, _, folder = tiny_trained
    data = SAMPLE_CSV.read_bytes()
    report = checkpoint_report(checkpoint, sample_frame, seed=3, max_windows=150, window=2, data=data, folder=folder)
    sections = {s.title: s for s in report.sections}
    tables = {name: table for s in report.sections for name, table in s.tables}
    model, prepared = checkpoint.model, prepare_for_checkpoint(checkpoint, sample_frame)

    errors = headline_errors(model, limit_windows(prepared, "test", 150), split="test", seed=3)
    pd.testing.assert_frame_equal(tables["errors"], errors)
    assert (errors["windows"] == 150).all() and errors["mse_lo"].isna().all()  # 2.5 spans of 60: no interval
    sweep = head_sweep(model, prepared, "test", seed=3, max_windows=150).table
    pd.testing.assert_frame_equal(tables["single-head sweep"], sweep)
    sparsity = sparsity_report(model, prepared, "test", [2], seed=3, seeds=SPARSITY_SEEDS)
    pd.testing.assert_frame_equal(tables["heads"], sparsity.heads)
    pd.testing.assert_frame_equal(tables["top-u agreement"], sparsity.agreement)
    pd.testing.assert_frame_equal(tables["lengths"], pyramid_report(model, prepared, "test", 2, seed=3).lengths)

    bars = sections["Errors"].figures[0].data[0]  # the figure draws the table's numbers with its intervals
    assert list(bars.y) == list(errors["mse"]) and list(bars.x) == list(errors["model"])
    assert f"MSE {float(sweep['mse'].iloc[0]):.6g}" in sections["Single-head ablation"].text
    from informer_lab.analysis.anatomy.rollout import record_pieces, rollout, window_graph
    from informer_lab.analysis.attention.recording import window_batch
    from informer_lab.analysis.circuits.composition import composition_scores

    pieces = record_pieces(model, window_batch(prepared, "test", [2]), 3)
    expected = rollout(window_graph(model, pieces, 0), range(1, 13)).inputs.mean(axis=0)
    np.testing.assert_allclose(tables["rollout"]["relevance"], expected)  # the anatomy section reads the analysis
    top = composition_scores(model, seed=3).table.dropna(subset=["score"])["score"].max()
    assert tables["composition"]["score"].iloc[0] == top and "Spearman ρ" in sections["Circuits"].text
    assert REMOVABLE_SHARE == f"{REMOVABLE:.0%}".replace("%", " %")
    for title in ("Errors", "Single-head ablation"):  # no interval: said so, with the reason, and no head is listed
        assert "No interval is shown" in sections[title].text and "independent stretches" in sections[title].text
    assert "no head is listed" in sections["Single-head ablation"].text
    evidence = tables["instruments"].set_index("instrument")["evidence"]
    assert evidence["Head ablation"] == "causal" and evidence["Attention rollout"] == "descriptive"
    assert evidence["Composition scores"] == "correlational"
    whole = checkpoint_report(checkpoint, sample_frame, seed=3, max_windows=None, window=2)
    whole = {s.title: s for s in whole.sections}
    shown = dict(whole["Errors"].tables)["errors"]
    assert shown["mse_lo"].notna().any() and "No interval is shown" not in whole["Errors"].text
    bars = whole["Errors"].figures[0].data[0]  # the figure draws the table's numbers with its intervals
    assert list(bars.error_y.array) == pytest.approx(list(np.nan_to_num(shown["mse_hi"] - shown["mse"])))

    prov = report.provenance
    assert prov["seeds"]["key samples"] == 3 and prov["evaluation"]["windows scored"] == 150
    assert prov["data"]["sha256 of the file"] == hashlib.sha256(data).hexdigest()
    assert prov["model config"] == asdict(checkpoint.config) and prov["checkpoint files sha256"]

    text = render_html(report)
    rest = check_self_contained(text, figures=report.figure_count)
    assert report.figure_count == 7  # the model against the baselines, errors, sweep, sparsity, pyramid, rollout, lens
    informer = errors[errors["model"] == "informer"].iloc[0]
    assert f"<td>informer</td><td>{informer['mse']:.6g}</td><td></td>" in rest  # no interval: a blank cell
    assert hashlib.sha256(data).hexdigest() in rest and prov["project version"] in rest


# --------------------------------------------------------------------------------------------
# A study folder
# --------------------------------------------------------------------------------------------
def make_study(out: Path):
    """A finished study folder written as study.runner.run_study writes it (study.json, status.json, runs.csv,
    runs/<run>/, tables/*.csv, findings.json), its tasks run in-process instead of on Ray: seeds 0 and 1 trained
    and analysed, seed 2 recorded as failed. Returns the plan."""
    from informer_lab.analysis.data import DataSpec, ReadOptions
    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.learning.workflow import ModelSize
    from informer_lab.study import folder as disk
    from informer_lab.study.findings import summarise
    from informer_lab.study.plan import StudyPlan, fingerprint
    from informer_lab.study.tables import join_tables
    from informer_lab.study.tasks import train_run

    data = SAMPLE_CSV.read_bytes()
    plan = StudyPlan(csv=str(SAMPLE_CSV), fingerprint=fingerprint(data), options=ReadOptions(),
                     spec=DataSpec(**TINY_SPEC), size=ModelSize(**TINY_SIZE),
                     train=TrainSettings(epochs=1, batch_size=16, learning_rate=1e-3, max_steps_per_epoch=4),
                     seeds=(0, 1, 2), analyses=("errors", "sweep", "roles"), max_windows=64)
    out.mkdir(parents=True)
    disk.write_json(out / "study.json", plan.to_dict())
    options, status = asdict(plan.options), []
    for run in plan.runs():
        row = {"run": run.name, "seed": run.seed, "state": "done", "stage": "", "fraction": 1.0, "text": "",
               "error": ""}
        if run.seed == 2:
            row.update(state="failed", error="FileExistsError: runs/seed2 is a file")
        else:
            result = train_run(run.to_dict(), data, SAMPLE_CSV.name, options, list(plan.analyses), plan.max_windows,
                               plan.split, threads=None)
            disk.write_trained(out, run.name, result["files"], result["summary"], result["params"], result["log"])
            disk.write_tables(out, run.name, result["tables"])
            row.update(result["summary"])
        status.append(row)
    disk.write_json(out / "status.json", {"updated": time.time(), "runs": status, "finished": True})
    disk.write_bytes(out / "runs.csv", disk.csv_bytes(pd.DataFrame(status)))
    join_tables(out, plan.runs(), plan.analyses)
    summarise(out)
    return plan


@pytest.fixture(scope="module")
def study_folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("study") / "tiny-study"
    return out, make_study(out)


def test_a_study_report_lists_every_run_and_its_findings(study_folder):
    out, plan = study_folder
    report = study_report(out)
    tables = {name: table for s in report.sections for name, table in s.tables}
    pd.testing.assert_frame_equal(tables["runs"], pd.read_csv(out / "runs.csv"))
    assert list(tables["runs"]["run"]) == ["seed0", "seed1", "seed2"]
    for name in ("findings_removable", "findings_roles", "errors"):
        expected = pd.read_csv(out / "tables" / f"{name}.csv")
        shown = {"findings_removable": "removable heads per run", "findings_roles": "roles",
                 "errors": "test errors per run"}[name]
        pd.testing.assert_frame_equal(tables[shown], expected)
    findings = json.loads((out / "findings.json").read_text())["settings"]["all"]
    row = tables["findings"].iloc[0]
    assert row["setting"] == "all" and row["seeds"] == findings["test_mse"]["seeds"] == 2
    assert row["test MSE mean"] == findings["test_mse"]["mse_mean"]
    removable = findings["removable"]
    assert row["runs with an interval"] == removable["runs_with_interval"]
    if removable["runs_with_interval"]:
        assert row["removable with interval"] == removable["with_interval_mean"]
    else:  # 64 windows a run: no interval, no head counted as removable, and the findings say so
        assert pd.isna(row["removable with interval"]) and "no interval" in removable["no_interval"]
    assert row["stable role"] == findings["heads_with_a_stable_role"]

    runs = next(s for s in report.sections if s.title == "Runs")
    assert "3 runs: 2 done, 1 failed." in runs.text and "seed2 failed: FileExistsError" in runs.text
    errors = pd.read_csv(out / "tables" / "errors.csv").query("model == 'informer'")
    assert list(runs.figures[0].data[0].y) == list(errors["mse"])  # test MSE per seed, with its interval

    assert report.provenance["seeds"] == [0, 1, 2]
    assert report.provenance["data"]["sha256 of the file"] == hashlib.sha256(SAMPLE_CSV.read_bytes()).hexdigest()
    assert report.provenance["plan"]["max_windows"] == 64 and report.provenance["status"]["finished"] is True
    text = render_html(report)
    rest = check_self_contained(text, figures=report.figure_count)
    assert all(f"<td>{run.name}</td>" in rest for run in plan.runs())


def test_a_folder_without_a_plan_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a study folder"):
        study_report(tmp_path)
