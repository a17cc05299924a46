"""The README a newcomer reads and the documents it links: short, every link and command real, the notebook tour
runs, and no word about how the project was developed."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]


def test_readme_is_short_and_keeps_the_two_commands():
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    assert "pip install -r requirements.txt && streamlit run app.py" in text
    assert "bash .ci/run" in text
    assert "download.pytorch.org/whl/cpu" in text  # how to get the CPU build of the pinned torch


def test_every_relative_link_resolves():
    for doc in DOCS:
        for target in re.findall(r"\]\(([^)#\s]+)\)", doc.read_text()):
            if "://" in target:
                continue
            assert (doc.parent / target).exists(), f"{doc.name} links to a missing {target}"


def test_no_word_about_how_the_project_was_developed():
    for doc in DOCS:
        text = doc.read_text()
        for phrase in (r"\bsession\b(?! files)", r"closing note", r"\bissue \d", r"see the issue"):
            assert not re.search(phrase, text), f"{doc.name}: {phrase}"


def test_every_cli_command_in_the_readme_table_exists():
    from informer_lab import cli

    commands = set(cli.build_parser()._subparsers._group_actions[0].choices)
    table = README.read_text().split("## The `informer-lab` command", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`informer-lab (?:ui )?([a-z][a-z-]*)", table)) - {"ui"}
    named |= set(re.findall(r"`(evaluate|forecast|import|report|study)`", table))
    assert named and named <= commands | {"COMMAND"}, named - commands


def test_the_notebook_tour_runs():
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "notebook_tour.py")], capture_output=True,
                          text=True, timeout=600, cwd=ROOT / "docs")
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "test MSE" in out and "encoder.0.0.scores" in out and "delta_mse" in out


TOPS = ("analysis", "model", "ui", "study", "cli_commands", "informer_lab", "tests", "benchmarks", "docs", "examples",
        "sample_data", ".ci", ".streamlit")
MAPPED = ("analysis", "model", "ui", "study", "cli_commands", "sample_data")  # informer_lab/<these> in a wheel


def test_every_path_a_document_or_comment_names_exists():
    """A path of the repository named in a document, a comment or a docstring (`analysis/compare/verdict.py`) is
    there; the wheel's `informer_lab/analysis/…` is the checkout's `analysis/…`."""
    pattern = re.compile(r"(?<![\w./-])((?:%s)/[\w./-]*[\w/])" % "|".join(map(re.escape, TOPS)))
    files = [*ROOT.glob("*.md"), *ROOT.glob("*/*.md"), ROOT / "requirements.txt", ROOT / "requirements-dev.txt",
             ROOT / "pyproject.toml", ROOT / ".ci" / "run",
             *(p for p in ROOT.rglob("*.py") if not {".git", "build", ".venv"} & set(p.relative_to(ROOT).parts))]
    missing = {}
    for path in files:
        for found in pattern.findall(path.read_text()):
            named = found.rstrip(".")
            parts = named.split("/")
            if parts[0] == "informer_lab" and len(parts) > 1 and parts[1] in MAPPED:
                named = "/".join(parts[1:])
            if not any(c in named for c in "<>*{}") and not (ROOT / named).exists():
                missing.setdefault(str(path.relative_to(ROOT)), []).append(found)
    assert missing == {}


def test_the_python_api_page_runs_in_a_checkout(tmp_path):
    """The Python blocks of docs/python-api.md in order, from an empty folder, against this checkout (the install
    test runs them against the installed wheel)."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "python-api.md").read_text(), re.S)
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", "\n".join(blocks)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Test MSE (standardised)" in done.stdout and "delta_mse" in done.stdout
