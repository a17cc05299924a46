"""A named corpus of CSV files as people export them: each is refused with a typed error whose message names the
problem and the way out, or read (and, where asked, repaired) into exactly the frame written beside it.

A case is (name, file content, read options, expectation). Expectations:
- `Refused(words, repairable)`: load_csv raises DataError; the message holds every word of `words` and is at most
  300 characters; `repairable` says whether the message names the repair option (and DataError.repairable);
- `Read(...)`: the frame's timestamps (first, count, freq), columns, and selected values; `repairs` the count of
  each kind of change in the repair report.

Used by tests/analysis/data/test_corpus.py (every case) and by the property tests as seeds.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

HOURS = pd.date_range("2024-01-01", periods=48, freq="h")


@dataclass(frozen=True)
class Refused:
    words: tuple[str, ...]
    repairable: bool = False


@dataclass(frozen=True)
class Read:
    first: str
    rows: int
    freq: str
    columns: tuple[str, ...]
    values: dict = field(default_factory=dict)  # column → the first values, or {(column, row): value}
    repairs: dict = field(default_factory=dict)  # change prefix → count
    notes: tuple[str, ...] = ()  # words that must appear in the notes
    datetime_column: str | None = None


@dataclass(frozen=True)
class Case:
    name: str
    content: bytes
    expect: Refused | Read
    options: dict = field(default_factory=dict)


def lines(*rows: str, end: str = "\n") -> bytes:
    return (end.join(rows) + end).encode("utf-8")


def hourly(n: int = 48, header: str = "date,x,y", start: str = "2024-01-01", stamp: str = "%Y-%m-%d %H:%M:%S",
           sep: str = ",", value=lambda i: f"{i}{{sep}}{10 * i}") -> list[str]:
    stamps = pd.date_range(start, periods=n, freq="h").strftime(stamp)
    return [header] + [f"{s}{sep}" + value(i).format(sep=sep) for i, s in enumerate(stamps)]


def series(stamps, values, header="date,x") -> bytes:
    return lines(header, *(f"{s},{v}" for s, v in zip(stamps, values)))


def drop(rows: list[str], *positions: int) -> list[str]:
    return [r for i, r in enumerate(rows) if i not in positions]


def with_cell(rows: list[str], row: int, column: int, text: str, sep: str = ",") -> list[str]:
    out = list(rows)
    fields = out[row].split(sep)
    fields[column] = text
    out[row] = sep.join(fields)
    return out


WEEKS = pd.date_range("2021-01-02", periods=30, freq="W-SAT")
MONTHS = pd.date_range("2015-01-01", periods=36, freq="MS")
DST_SPRING = [f"2021-03-28 {h:02d}:00" for h in (0, 1, 3, 4, 5, 6)]  # Europe: 02:00 does not exist
DST_AUTUMN = [f"2021-10-31 {h:02d}:00" for h in (0, 1, 2, 2, 3, 4)]  # Europe: 02:00 happens twice

CASES: list[Case] = [
    # ---------------------------------------------------------------------------------------- refused
    Case("empty file", b"", Refused(("empty",))),
    Case("whitespace only", b"  \n\n \n", Refused(("empty",))),
    Case("header without rows", lines("date,x,y"), Refused(("header", "no data rows"))),
    Case("latin-1 bytes", "date,température\n2024-01-01,1\n".encode("latin-1"),
         Refused(("not UTF-8", "0xe9", "line 1", "save the file as UTF-8"))),
    Case("broken utf-16", b"\xff\xfe" + b"d\x00a\x00\x00\xd8", Refused(("UTF-16",))),
    Case("no datetime column", lines("a,b", "1,2", "3,4", "5,6"), Refused(("no datetime column", "'a', 'b'",
                                                                          "--datetime-column"))),
    Case("asked-for column absent", lines(*hourly(5)), Refused(("no column named 'when'", "'date', 'x', 'y'")),
         {"datetime_column": "when"}),
    Case("asked-for column not dates", lines(*hourly(5)), Refused(("'x'", "does not hold dates")),
         {"datetime_column": "x"}),
    Case("unreadable timestamp", lines(*with_cell(hourly(10), 4, 0, "2024-13-45 99:00")),
         Refused(("'2024-13-45 99:00'", "is not a date/time", "row 4 (line 5 of the file)", "--repair"), True)),
    Case("missing timestamp", lines(*with_cell(hourly(10), 3, 0, "")),
         Refused(("missing timestamp", "'date'", "row 3 (line 4 of the file)", "--repair"), True)),
    Case("word in a numeric column", lines(*with_cell(hourly(10), 5, 1, "n/a?")),
         Refused(("column 'x'", "1 cell not a number", "'n/a?'", "row 5 (line 6 of the file)", "--repair"), True)),
    Case("several words in a numeric column", lines(*with_cell(with_cell(hourly(10), 2, 2, "err"), 7, 2, "err")),
         Refused(("column 'y'", "2 cells not a number", "rows 2, 7", "lines 3, 8"), True)),
    Case("infinity", lines(*with_cell(hourly(10), 2, 1, "inf")), Refused(("infinite", "'inf'", "column 'x'"), True)),
    Case("empty cell", lines(*with_cell(hourly(10), 6, 1, "")),
         Refused(("missing values: 1 in 'x'", "2024-01-01 05:00", "--repair interpolate"), True)),
    Case("NA cell", lines(*with_cell(hourly(10), 6, 2, "NA")), Refused(("missing values: 1 in 'y'",), True)),
    Case("NaN cell", lines(*with_cell(hourly(10), 6, 2, "NaN")), Refused(("missing values: 1 in 'y'",), True)),
    Case("missing cells in two columns",
         lines(*with_cell(with_cell(with_cell(hourly(12), 3, 1, ""), 4, 1, ""), 9, 2, "")),
         Refused(("missing values: 2 in 'x', 1 in 'y'", "the first in 'x'"), True)),
    Case("duplicated timestamp", lines(*hourly(6)[:4], hourly(6)[3], *hourly(6)[4:]),
         Refused(("duplicated timestamp", "'2024-01-01 02:00:00'", "1 repeated row", "--repair"), True)),
    Case("unsorted", lines(*[hourly(6)[i] for i in (0, 1, 2, 4, 3, 5, 6)]),
         Refused(("not in increasing order", "'2024-01-01 02:00:00'", "sort the file", "--repair"), True)),
    Case("a gap", lines(*drop(hourly(10), 5)),
         Refused(("irregular spacing", "'2024-01-01 05:00:00'", "comes after a gap", "1 missing step", "hourly",
                  "--repair"), True)),
    Case("daylight-saving spring gap", series(DST_SPRING, range(6)),
         Refused(("irregular spacing", "'2021-03-28 03:00'", "hourly", "--repair"), True)),
    Case("daylight-saving autumn repeat", series(DST_AUTUMN, range(6)),
         Refused(("duplicated timestamp", "'2021-10-31 02:00'", "--repair"), True)),
    Case("a stray timestamp", series(["2024-01-01 00:00", "2024-01-01 01:00", "2024-01-01 02:07",
                                      "2024-01-01 03:00", "2024-01-01 04:00"], range(5)),
         Refused(("'2024-01-01 02:07'", "off the hourly grid", "--repair"), True)),
    Case("only text", lines("date,label", "2024-01-01,a", "2024-01-02,b", "2024-01-03,c"),
         Refused(("no numeric column", "label"))),
    Case("only empty columns", lines("date,x", "2024-01-01,", "2024-01-02,", "2024-01-03,"),
         Refused(("no numeric column", "x"))),
    Case("repeated column name", lines("date,x,x", "2024-01-01,1,2", "2024-01-02,3,4"),
         Refused(("columns 2 and 3 are both named 'x'", "--repair"), True)),
    Case("ragged row", lines("date,x", "2024-01-01,1", "2024-01-02,2,3,4", "2024-01-03,3"),
         Refused(("could not read", "as CSV"))),
    Case("one extra field in the first row", lines("date,x", "2024-01-01,1,7", "2024-01-02,2", "2024-01-03,3"),
         Refused(("line 2 has more fields than the header's 2", "quoted"))),
    Case("mixed decimal marks", lines("date;a;b", "2024-01-01;1,5;1,234.5", "2024-01-02;2,5;2,345.5"),
         Refused(("mixes number formats", "--decimal"))),
    Case("mixed date orders", lines("date,x", "13/01/2021,1", "01/14/2021,2", "15/01/2021,3"),
         Refused(("mixes day-first", "'13/01/2021'", "month-first", "'01/14/2021'"))),
    Case("ambiguous date order", lines("date,x", "01/02/2021,1", "01/03/2021,2", "01/04/2021,3", "01/05/2021,4"),
         Refused(("day first or the month first", "--dayfirst"))),
    Case("one row", lines("date,x", "2024-01-01,1"), Refused(("at least 2 timestamps",))),
    Case("too irregular to repair", series(pd.to_datetime(np.cumsum(np.r_[0, np.random.default_rng(0).integers(
        1, 10_000, 40)]), unit="s", origin="2024-01-01").strftime("%Y-%m-%d %H:%M:%S"), range(41)),
         Refused(("too irregular", "--freq")), {"repair": "interpolate"}),
    Case("sub-second step", series(pd.date_range("2024-01-01", periods=5, freq="100ms").strftime(
        "%Y-%m-%d %H:%M:%S.%f"), range(5)), Refused(("cannot be used", "seconds, minutes"))),
    Case("a 100 kB cell", lines(*with_cell(hourly(5), 2, 1, "z" * 100_000)),
         Refused(("column 'x'", "100,000 characters"), True)),
    Case("a 100 kB timestamp", lines(*with_cell(hourly(5), 2, 0, "9" * 100_000)),
         Refused(("is not a date/time", "100,000 characters"), True)),
    Case("bad repair option", lines(*hourly(5)), Refused(("repair must be one of", "interpolate")),
         {"repair": "magic"}),
    Case("bad decimal option", lines(*hourly(5)), Refused(("decimal must be",)), {"decimal": ";"}),
    Case("ambiguous thousands in a comma file", lines('date,x', *(f'2024-01-0{i + 1},"{i + 1},234"' for i in range(5))),
         Refused(("column 'x'", "'1,234'", "1.234", "1234", "no cell of the file decides", "--decimal"))),
    Case("dates mostly garbage", lines("when,x", "2024-01-01,1", "garbage,2", "2024-01-03,3", "junk,4", "???,5"),
         Refused(("no datetime column",))),
    Case("timestamps only", lines("date", "2024-01-01", "2024-01-02"), Refused(("no numeric column",))),
    # ---------------------------------------------------------------------------------------- read as is
    Case("plain hourly", lines(*hourly()), Read("2024-01-01 00:00", 48, "h", ("x", "y"), {"x": [0, 1, 2],
                                                                                       "y": [0, 10, 20]})),
    Case("windows line endings", lines(*hourly(), end="\r\n"), Read("2024-01-01", 48, "h", ("x", "y"), {"x": [0, 1]})),
    Case("byte-order mark", b"\xef\xbb\xbf" + lines(*hourly(6)), Read("2024-01-01", 6, "h", ("x", "y"))),
    Case("utf-16 tab text", "\n".join(hourly(6, header="date\tx\ty", sep="\t")).encode("utf-16"),
         Read("2024-01-01", 6, "h", ("x", "y"), {"y": [0, 10]})),
    Case("semicolons and decimal commas", lines(*hourly(6, header="date;x;y", sep=";", value=lambda i: f"{i},5;{i}")),
         Read("2024-01-01", 6, "h", ("x", "y"), {"x": [0.5, 1.5, 2.5]}, notes=("decimal comma",))),
    Case("tabs", lines(*hourly(6, header="date\tx\ty", sep="\t")), Read("2024-01-01", 6, "h", ("x", "y"))),
    Case("thousands commas", lines('date,x', *(f'2024-01-0{i + 1},"{1000 * i + 1:,}.5"' for i in range(5))),
         Read("2024-01-01", 5, "D", ("x",), {"x": [1.5, 1001.5, 2001.5]})),
    Case("european thousands", lines("date;x", *(f"2024-01-0{i + 1};{i + 1}.234,5" for i in range(5))),
         Read("2024-01-01", 5, "D", ("x",), {"x": [1234.5, 2234.5]})),
    Case("space thousands", lines("date;x", *(f"2024-01-0{i + 1};{i + 1} 234,25" for i in range(5))),
         Read("2024-01-01", 5, "D", ("x",), {"x": [1234.25, 2234.25]})),
    Case("apostrophe thousands", lines("date,x", *(f"2024-01-0{i + 1},{i + 1}'234.5" for i in range(5))),
         Read("2024-01-01", 5, "D", ("x",), {"x": [1234.5, 2234.5]})),

    Case("decimal option settles it", lines('date,x', *(f'2024-01-0{i + 1},"{i + 1},234"' for i in range(5))),
         Read("2024-01-01", 5, "D", ("x",), {"x": [1.234, 2.234]}), {"decimal": ","}),
    Case("scientific notation", series(pd.date_range("2024-01-01", periods=4, freq="D").date, ["1e-3", "2E+2",
                                                                                               "-3.5e1", "4"]),
         Read("2024-01-01", 4, "D", ("x",), {"x": [0.001, 200, -35, 4]})),
    Case("day first with dots", lines("Datum;Wert", *(f"{d:02d}.01.2021 00:00;{d},0" for d in range(10, 20))),
         Read("2021-01-10", 10, "D", ("Wert",), {"Wert": [10, 11]}, notes=("day first",), datetime_column="Datum")),
    Case("month first with slashes", lines("date,x", *(f"01/{d:02d}/2021,{d}" for d in range(10, 20))),
         Read("2021-01-10", 10, "D", ("x",), {"x": [10, 11]}, notes=("month first",))),
    Case("dayfirst option settles it", lines("date,x", "01/02/2021,1", "01/03/2021,2", "01/04/2021,3"),
         Read("2021-02-01", 3, "MS", ("x",), {"x": [1, 2, 3]}), {"dayfirst": True}),
    Case("two-digit years", lines("date,x", *(f"{d:02d}/01/21,{d}" for d in range(13, 20))),
         Read("2021-01-13", 7, "D", ("x",))),
    Case("epoch seconds", lines("t,x", *(f"{1_700_000_000 + 3600 * i},{i}" for i in range(6))),
         Read("2023-11-14 22:13:20", 6, "h", ("x",), {"x": [0, 1]}, notes=("epoch seconds",), datetime_column="t")),
    Case("epoch milliseconds", lines("ts,x", *(f"{1_700_000_000_000 + 900_000 * i},{i}" for i in range(6))),
         Read("2023-11-14 22:13:20", 6, "15min", ("x",), notes=("epoch milliseconds",))),
    Case("YYYYMMDD integers", lines("day,x", *(f"202401{d:02d},{d}" for d in range(1, 11))),
         Read("2024-01-01", 10, "D", ("x",), {"x": [1, 2]}, datetime_column="day")),
    Case("column named ds, last", lines("y,ds", *(f"{i},2024-01-{i + 1:02d}" for i in range(8))),
         Read("2024-01-01", 8, "D", ("y",), {"y": [0, 1]}, datetime_column="ds")),
    Case("timestamp column in the middle", lines("a,when,b", *(f"{i},2024-01-01 {i:02d}:00,{2 * i}" for i in range(8))),
         Read("2024-01-01", 8, "h", ("a", "b"), {"b": [0, 2]}, datetime_column="when")),
    Case("a text column left out", lines("date,summary,temp", *(f"2024-01-{d:02d},sunny,{d}" for d in range(1, 9))),
         Read("2024-01-01", 8, "D", ("temp",))),
    Case("UTC offsets across daylight saving", lines("time,x", "2021-03-28T00:00:00+01:00,0",
                                                      "2021-03-28T01:00:00+01:00,1", "2021-03-28T03:00:00+02:00,2",
                                                      "2021-03-28T04:00:00+02:00,3"),
         Read("2021-03-27 23:00", 4, "h", ("x",), {"x": [0, 1, 2, 3]}, notes=("UTC",))),
    Case("monthly", series(MONTHS.strftime("%Y-%m-%d"), range(36)), Read("2015-01-01", 36, "MS", ("x",))),
    Case("month names", series(MONTHS.strftime("%b %Y"), range(36), header="month,x"),
         Read("2015-01-01", 36, "MS", ("x",), datetime_column="month")),
    Case("weekly on saturdays", series(WEEKS.strftime("%Y-%m-%d"), range(30)),
         Read("2021-01-02", 30, "W-SAT", ("x",))),
    Case("business days", series(pd.bdate_range("2024-01-01", periods=20).strftime("%Y-%m-%d"), range(20)),
         Read("2024-01-01", 20, "B", ("x",))),
    Case("quarterly", series(pd.date_range("2000-01-01", periods=12, freq="QS").strftime("%Y-%m-%d"), range(12)),
         Read("2000-01-01", 12, "QS-JAN", ("x",))),
    Case("yearly", series(pd.date_range("1990-01-01", periods=12, freq="YS").strftime("%Y-%m-%d"), range(12)),
         Read("1990-01-01", 12, "YS-JAN", ("x",))),
    Case("15 minutes", series(pd.date_range("2024-01-01", periods=8, freq="15min").strftime("%Y-%m-%d %H:%M"),
                              range(8)), Read("2024-01-01", 8, "15min", ("x",))),
    Case("seconds", series(pd.date_range("2024-01-01", periods=8, freq="s").strftime("%Y-%m-%d %H:%M:%S"), range(8)),
         Read("2024-01-01", 8, "s", ("x",))),
    Case("blank lines", lines(*hourly(4)[:3], "", *hourly(4)[3:], ""), Read("2024-01-01", 4, "h", ("x", "y"))),
    Case("spaces around cells and names", lines(" date , x ", *(f" 2024-01-0{d} , {d} " for d in range(1, 6))),
         Read("2024-01-01", 5, "D", ("x",), {"x": [1, 2]})),
    Case("a trailing comma on every line", lines("date,x,", *(f"2024-01-0{d},{d}," for d in range(1, 6))),
         Read("2024-01-01", 5, "D", ("x",))),
    Case("integers", series(pd.date_range("2024-01-01", periods=5, freq="D").date, [3, 1, 4, 1, 5]),
         Read("2024-01-01", 5, "D", ("x",), {"x": [3, 1, 4, 1, 5]})),
    Case("an unnamed row index", lines(",date,x", *(f"{i},2024-01-0{i + 1},{i}" for i in range(5))),
         Read("2024-01-01", 5, "D", ("x",), notes=("column 1 had no name", "is a row index"))),
    Case("an unnamed column of values", lines(",date,x", *(f"{v},2024-01-0{i + 1},{i}" for i, v in
                                                           enumerate((5, 3, 8, 1, 9)))),
         Read("2024-01-01", 5, "D", ("column_1", "x"), notes=("column 1 had no name",))),
    Case("quoted names", lines('"date","air temp (°C)"', *(f'"2024-01-0{d}","{d}.5"' for d in range(1, 6))),
         Read("2024-01-01", 5, "D", ("air temp (°C)",), {"air temp (°C)": [1.5, 2.5]})),
    Case("slashed ISO dates", lines("date,x", *(f"2024/01/{d:02d},{d}" for d in range(1, 6))),
         Read("2024-01-01", 5, "D", ("x",))),
    # ---------------------------------------------------------------------------------------- repaired
    Case("spring gap, interpolated", series(DST_SPRING, [0, 1, 3, 4, 5, 6]),
         Read("2021-03-28", 7, "h", ("x",), {"x": [0, 1, 2, 3, 4, 5, 6]},
              {"row added": 1, "cell filled (interpolated": 1}), {"repair": "interpolate"}),
    Case("spring gap, carried forward", series(DST_SPRING, [0, 1, 3, 4, 5, 6]),
         Read("2021-03-28", 7, "h", ("x",), {"x": [0, 1, 1, 3]}, {"row added": 1, "cell filled (carried forward": 1}),
         {"repair": "ffill"}),
    Case("autumn repeat, merged", series(DST_AUTUMN, [0, 1, 2, 4, 5, 6]),
         Read("2021-10-31", 5, "h", ("x",), {"x": [0, 1, 3, 5, 6]}, {"duplicate timestamps merged": 1}),
         {"repair": "interpolate"}),
    Case("weekly with empty cells", series(WEEKS.strftime("%Y-%m-%d"), [i if i % 7 else "" for i in range(30)]),
         Read("2021-01-02", 30, "W-SAT", ("x",), {"x": [1, 1, 2, 3, 4, 5, 6, 7, 8, 9]}, {"cell filled": 5}),
         {"repair": "interpolate"}),
    Case("weekly with a missing week and an empty cell",
         series(WEEKS.delete(4).strftime("%Y-%m-%d"), ["", *range(1, 29)]),
         Read("2021-01-02", 30, "W-SAT", ("x",), {"x": [1, 1, 2, 3, 3.5, 4]},
              {"row added": 1, "cell filled": 2}), {"repair": "interpolate"}),
    Case("monthly with a missing month", series(MONTHS.delete(5).strftime("%Y-%m-%d"), range(35)),
         Read("2015-01-01", 36, "MS", ("x",), {("x", 5): 4 + 31 / 61}, {"row added": 1}), {"repair": "interpolate"}),
    Case("duplicates merged", lines(*hourly(6)[:4], hourly(6)[3], *hourly(6)[4:]),
         Read("2024-01-01", 6, "h", ("x", "y"), {"x": [0, 1, 2, 3]}, {"duplicate timestamps merged": 1}),
         {"repair": "ffill"}),
    Case("unsorted, sorted", lines(*[hourly(6)[i] for i in (0, 1, 2, 4, 3, 5, 6)]),
         Read("2024-01-01", 6, "h", ("x", "y"), {"x": [0, 1, 2, 3, 4, 5]}, {"rows sorted": 1}),
         {"repair": "interpolate"}),
    Case("a word, treated as missing", lines(*with_cell(hourly(6), 3, 1, "?")),
         Read("2024-01-01", 6, "h", ("x", "y"), {"x": [0, 1, 2, 3, 4]},
              {"cell not a number": 1, "cell filled": 1}), {"repair": "interpolate"}),
    Case("infinity, treated as missing", lines(*with_cell(hourly(6), 3, 2, "-inf")),
         Read("2024-01-01", 6, "h", ("x", "y"), {"y": [0, 10, 20, 30]}, {"cell not a number": 1}),
         {"repair": "interpolate"}),
    Case("a stray timestamp, moved", series(["2024-01-01 00:00", "2024-01-01 01:00", "2024-01-01 02:07",
                                             "2024-01-01 03:00", "2024-01-01 04:00"], range(5)),
         Read("2024-01-01", 5, "h", ("x",), {"x": [0, 1, 2, 3, 4]}, {"timestamp moved": 1}), {"repair": "interpolate"}),
    Case("a row without timestamp, dropped", lines(*with_cell(hourly(6), 7 - 1, 0, "")),
         Read("2024-01-01", 5, "h", ("x", "y"), {"x": [0, 1, 2, 3, 4]}, {"row dropped": 1}), {"repair": "interpolate"}),
    Case("leading empty cells", series(pd.date_range("2024-01-01", periods=5, freq="D").date, ["", "", 3, 4, 5]),
         Read("2024-01-01", 5, "D", ("x",), {"x": [3, 3, 3, 4, 5]}, {"cell filled (carried back": 2}),
         {"repair": "ffill"}),
    Case("repeated names, numbered", lines("date,x,x", "2024-01-01,1,2", "2024-01-02,3,4", "2024-01-03,5,6"),
         Read("2024-01-01", 3, "D", ("x", "x_2"), {"x_2": [2, 4, 6]}, notes=("repeats 'x'",)), {"repair": "interpolate"}),
    Case("a chosen daily grid", series(["2024-01-01 00:00", "2024-01-02 00:00", "2024-01-04 00:00",
                                        "2024-01-05 00:00"], [1, 2, 4, 5]),
         Read("2024-01-01", 5, "D", ("x",), {"x": [1, 2, 3, 4, 5]}, {"row added": 1}),
         {"repair": "interpolate", "freq": "D"}),
    Case("a gap in a semicolon file with decimal commas",
         lines("Datum;Wert", "01.03.2021 00:00;1,5", "01.03.2021 01:00;2,5", "01.03.2021 03:00;4,5"),
         Read("2021-03-01", 4, "h", ("Wert",), {"Wert": [1.5, 2.5, 3.5, 4.5]}, {"row added": 1},
              datetime_column="Datum"), {"repair": "interpolate"}),
]


__all__ = ["CASES", "Case", "Read", "Refused"]
