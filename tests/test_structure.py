"""The layout rules the code is built in (docs/model.md, "Layout"; ARCHITECTURE.md), checked on the source itself.

- no import circles between the project's modules (imports inside functions count: they run too);
- one-way layers: `model/` imports nothing of the project's other packages, `analysis/` and `model/` never import
  Streamlit, `analysis/` never imports the UI or the CLI, and the UI reaches the model only through the `model`
  package's public API;
- no source file of `model/`, `analysis/`, `ui/` or `cli_commands/` is over 400 lines.

The import graph is read with `ast` (nothing is imported), so the check sees every import, however deep.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("model", "analysis", "ui", "cli_commands", "study")  # top-level folders, `informer_lab.<name>` installed
OTHER_PACKAGES = ("informer_lab", "benchmarks")
TOP_MODULES = ("app", "cli")  # a checkout's entry files (`streamlit run app.py`, `python cli.py`)
SIZE_LIMITED = ("model", "analysis", "ui", "cli_commands", "study", "informer_lab")
MAX_LINES = 400
BARE = set(PACKAGES) | {"hugepages", "lab", "cli", "app", "sample_data"}  # names the lab never imports bare


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    return ".".join(("informer_lab", *parts) if parts[0] in PACKAGES else parts)


def project_files() -> dict[str, Path]:
    files = {name: ROOT / f"{name}.py" for name in TOP_MODULES if (ROOT / f"{name}.py").is_file()}
    for package in PACKAGES + OTHER_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")) if (ROOT / package).is_dir() else ():
            files[module_name(path)] = path
    return files


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules `name` imports, anywhere in its file: `from a import b` names module a.b when it is
    one, else a; relative imports are resolved against the module's package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import a.b.c` of a non-module attribute: its module
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    files = project_files()
    known = set(files)
    return {name: imported_modules(name, path, known) for name, path in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def test_the_cycle_finder_finds_a_circle_and_nothing_else():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_the_graph_sees_relative_and_function_level_imports(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "one.py").write_text("def f():\n    from . import two\n")
    (package / "two.py").write_text("from pkg.one import f\n")
    known = {"pkg", "pkg.one", "pkg.two"}
    assert imported_modules("pkg.one", package / "one.py", known) == {"pkg.two"}
    assert imported_modules("pkg.two", package / "two.py", known) == {"pkg.one"}


def test_the_project_has_no_import_circles():
    graph = import_graph()
    assert len(graph) > 50, "the graph should cover the whole project"
    assert cycles(graph) == []


def _imports_of(package: str) -> dict[str, set[str]]:
    """Every top-level module name (project or not) imported by each module of `package`."""
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names.add(node.module or "")
        out[module_name(path)] = names
    return out


def _layer(name: str) -> str:
    """`informer_lab.analysis.x` → `analysis`; an outside module → its top-level name (`streamlit`)."""
    parts = name.split(".")
    return parts[1] if parts[0] == "informer_lab" and len(parts) > 1 and parts[1] in PACKAGES else parts[0]


@pytest.mark.parametrize("package, forbidden", [
    ("model", ("streamlit", "analysis", "ui", "cli_commands", "study")),
    ("analysis", ("streamlit", "ui", "cli_commands", "study", "ray")),
    ("study", ("streamlit", "ui", "cli_commands")),
])
def test_the_layers_import_one_way(package, forbidden):
    bad = {module: sorted(n for n in names if _layer(n) in forbidden)
           for module, names in _imports_of(package).items()}
    assert {m: b for m, b in bad.items() if b} == {}


def test_the_ui_reaches_the_model_only_through_its_public_api():
    bad = {module: sorted(n for n in names if n.startswith("informer_lab.model."))
           for module, names in _imports_of("ui").items()}
    assert {m: b for m, b in bad.items() if b} == {}


def test_nothing_imports_the_lab_by_a_bare_name():
    """Every import of the lab's own code says `informer_lab.…` (tests, benchmarks and examples too): a bare
    `analysis` or `model` would be a user's module of that name beside an installed lab, or a second copy of ours."""
    bad = {}
    for path in sorted(ROOT.rglob("*.py")):
        if {".git", "build", ".venv"} & set(path.relative_to(ROOT).parts):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            hits = [n for n in names if n.split(".")[0] in BARE]
            if hits:
                bad[str(path.relative_to(ROOT))] = hits
    assert bad == {}


def test_no_source_file_is_over_400_lines():
    sizes = {str(path.relative_to(ROOT)): len(path.read_text().splitlines())
             for package in SIZE_LIMITED for path in (ROOT / package).rglob("*.py")}
    assert sizes and {f: n for f, n in sizes.items() if n > MAX_LINES} == {}


def test_analysis_is_grouped_by_subject_and_the_project_uses_the_new_names():
    """analysis/ holds subject folders and the seven modules they share, nothing else side by side; no project file
    imports a module by its former flat name (analysis.FORMER keeps those working for outside code only)."""
    from informer_lab.analysis import FORMER
    loose = sorted(p.name for p in (ROOT / "analysis").glob("*.py"))
    assert loose == ["__init__.py", "discoveries.py", "errors.py", "intervals.py", "jsonfile.py", "outputs.py",
                     "row_memory.py", "seeds.py"]
    subjects = sorted(p.name for p in (ROOT / "analysis").iterdir() if p.is_dir() and p.name != "__pycache__")
    assert subjects == ["anatomy", "attention", "checkpoints", "circuits", "compare", "data", "features", "heads",
                        "instruments", "learning", "planted", "reports"]
    assert all((ROOT / "analysis" / s / "__init__.py").is_file() for s in subjects)
    former = {f"informer_lab.analysis.{name}" for name in FORMER}
    used = {}
    for name, path in project_files().items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                       [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            hits = [t for t in targets if ".".join(t.split(".")[:3]) in former]
            if hits:
                used[name] = hits
    assert used == {}
