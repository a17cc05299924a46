"""What a report is and how it is written: `Report` / `ReportSection` (plotly figures and DataFrames, made
anywhere) and `render_html`, ONE self-contained HTML page, with `write_report` (atomic).

The page embeds plotly.js once, inline, and each figure's JSON beside its `Plotly.newPlot` call. It links nothing (no
CDN, no MathJax, no web font; the figure config turns math typesetting off) and carries a Content-Security-Policy
that forbids every fetch, so it opens offline and makes no network request. All text (titles, column names, cells,
provenance) is HTML-escaped; in figure JSON <, > and & are written as \\u escapes, so that no string can close the
script it sits in. Tables longer than `MAX_TABLE_ROWS` show their first rows and say how many were left out.

`analysis.reports.report` builds reports (one model on one data set, a study folder) and their provenance; a screen can
build its own from the figures it drew. No Streamlit, no torch.
"""
from __future__ import annotations

import html
import itertools
import json
import os
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.io as pio
from plotly.offline import get_plotlyjs

MAX_TABLE_ROWS = 200  # rows of a table written into the page; the rest are counted, not shown
PLOTLY_CONFIG = {"typesetMath": False, "displaylogo": False, "showLink": False, "responsive": True}
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
       "font-src data:; connect-src 'none'")


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


# --------------------------------------------------------------------------------------------
# The data model
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ReportSection:
    """One heading of a report: text (paragraphs split by blank lines), plotly figures and named DataFrames."""

    title: str
    text: str = ""
    figures: tuple = ()
    tables: tuple = ()  # (name, DataFrame) pairs

    def __post_init__(self):
        tables = tuple((str(name), table) for name, table in self.tables)
        for name, table in tables:
            if not isinstance(table, pd.DataFrame):
                raise TypeError(f"table {name!r} is a {type(table).__name__}, not a pandas DataFrame")
        object.__setattr__(self, "figures", tuple(self.figures))
        object.__setattr__(self, "tables", tables)


@dataclass(frozen=True, eq=False)
class Report:
    """A whole report: its sections in order, the provenance (nested dicts of plain values) and when it was made."""

    title: str
    sections: tuple = ()
    provenance: dict = field(default_factory=dict)
    created: str = field(default_factory=utc_now)

    def __post_init__(self):
        object.__setattr__(self, "sections", tuple(self.sections))

    @property
    def figure_count(self) -> int:
        return sum(len(s.figures) for s in self.sections)


# --------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------
STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       margin: 0 auto; max-width: 1200px; padding: 1em 2em 4em; color: #222; line-height: 1.45; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 2em; }
h3 { font-size: 1em; margin: 1.5em 0 0.3em; }
.meta, .note { color: #666; font-size: 0.9em; } .figure { width: 100%; min-height: 260px; margin: 1em 0; }
.table-wrap { overflow: auto; max-height: 36em; border: 1px solid #e4e4e4; }
table { border-collapse: collapse; font-size: 0.82em; font-variant-numeric: tabular-nums; }
th, td { padding: 0.2em 0.6em; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }
th { position: sticky; top: 0; background: #f6f6f6; } td:first-child, th:first-child { text-align: left; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.15em 1.2em; margin: 0.3em 0; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; } dd dl { font-size: 0.95em; }
"""


def _esc(value) -> str:
    return html.escape(str(value), quote=True)


def _plain(value, *, exact: bool = False) -> str:
    """A value as text: floats to 6 significant digits (all of them when `exact`; blank for NaN), the rest as str."""
    if isinstance(value, (float, np.floating)):
        return "" if np.isnan(value) else repr(float(value)) if exact else f"{value:.6g}"
    if isinstance(value, np.generic):
        return str(value.item())
    return str(value)


def _script_json(text: str) -> str:
    """JSON made safe inside a <script>: <, >, & (only ever inside JSON strings) and the JS line separators escaped."""
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def figure_html(figure, figure_id: str) -> str:
    """A figure as its div and the `Plotly.newPlot` call that draws it from the figure's JSON."""
    spec = _script_json(pio.to_json(figure, validate=True, pretty=False))
    config = json.dumps(PLOTLY_CONFIG)
    return (f'<div class="figure" id="{figure_id}"></div>\n<script>(function () {{ var f = {spec}; '
            f'Plotly.newPlot("{figure_id}", f.data || [], f.layout || {{}}, {config}); }})();</script>\n')


def table_html(name: str, table: pd.DataFrame, max_rows: int = MAX_TABLE_ROWS) -> str:
    """A DataFrame as an escaped HTML table under its name (none when empty): its first `max_rows` rows, with how
    many were left out."""
    if not isinstance(table.index, pd.RangeIndex):
        table = table.reset_index()
    head = "".join(f"<th>{_esc(c)}</th>" for c in table.columns)
    rows = "".join("<tr>" + "".join(f"<td>{_esc(_plain(v))}</td>" for v in row) + "</tr>\n"
                   for row in table.head(max_rows).itertuples(index=False, name=None))
    size = f"{len(table)} rows × {len(table.columns)} columns"
    if len(table) > max_rows:
        size += f"; the first {max_rows} shown, {len(table) - max_rows} left out"
    title = f"<h3>{_esc(name)}</h3>\n" if name else ""
    return (f'{title}<p class="note">{size}</p>\n<div class="table-wrap"><table><thead><tr>{head}'
            f"</tr></thead>\n<tbody>\n{rows}</tbody></table></div>\n")


def _value_html(value) -> str:
    """A provenance value (numbers in full): dicts as nested definition lists, lists of dicts as tables, lists joined
    by commas."""
    if isinstance(value, dict):
        return _definitions(value) if value else "–"
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, dict) for v in value):
        return table_html("", pd.DataFrame(list(value)))
    if isinstance(value, (list, tuple)):
        return _esc(", ".join(_plain(v, exact=True) if not isinstance(v, (dict, list, tuple))
                              else json.dumps(v, default=str) for v in value)) or "–"
    return _esc(_plain(value, exact=True))


def _definitions(mapping: dict) -> str:
    return "<dl>" + "".join(f"<dt>{_esc(k)}</dt><dd>{_value_html(v)}</dd>" for k, v in mapping.items()) + "</dl>"


def _paragraphs(text: str) -> str:
    return "".join(f"<p>{_esc(p.strip()).replace(chr(10), '<br>')}</p>\n" for p in text.split("\n\n") if p.strip())


def render_html(report: Report, *, max_rows: int = MAX_TABLE_ROWS) -> str:
    """The report as ONE self-contained HTML page (see the module's docstring): contents, sections, provenance."""
    numbers = itertools.count(1)
    contents = "".join(f'<li><a href="#section-{i}">{_esc(s.title)}</a></li>'
                       for i, s in enumerate(report.sections, 1))
    parts = []
    for i, section in enumerate(report.sections, 1):
        parts.append(f'<section id="section-{i}"><h2>{_esc(section.title)}</h2>\n{_paragraphs(section.text)}')
        parts.extend(figure_html(fig, f"figure-{next(numbers)}") for fig in section.figures)
        parts.extend(table_html(name, table, max_rows) for name, table in section.tables)
        parts.append("</section>\n")
    version = report.provenance.get("project version", "unknown")
    plotly_js = get_plotlyjs().replace("</script", "<\\/script")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{_esc(report.title)}</title>\n<style>{STYLE}</style>\n"
            f"<script>{plotly_js}</script>\n</head>\n<body>\n<header><h1>{_esc(report.title)}</h1>\n"
            f'<p class="meta">generated {_esc(report.created)} · project version {_esc(version)} · '
            f"{report.figure_count} figures, {sum(len(s.tables) for s in report.sections)} tables</p>\n"
            f'<nav><ol>{contents}<li><a href="#provenance">Provenance</a></li></ol></nav></header>\n'
            + "".join(parts)
            + f'<section id="provenance"><h2>Provenance</h2>\n{_definitions(report.provenance)}</section>\n'
            + f'<footer><p class="meta">generated {_esc(report.created)}</p></footer>\n</body>\n</html>\n')


def write_report(report: Report, path: str | Path) -> Path:
    """Write the report's HTML to `path` atomically (a temporary file in the same folder, then os.replace)."""
    path = Path(path)
    page = render_html(report)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(page)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


__all__ = ["CSP", "MAX_TABLE_ROWS", "PLOTLY_CONFIG", "Report", "ReportSection", "figure_html", "render_html",
           "table_html", "utc_now", "write_report"]
