"""Corpus cases for the forms data comes in beyond a plain wide CSV: long tables, calendar columns,
spreadsheets, Parquet, compressed files, decimal marks that only every cell decides, values that overflow, and
what the reading announces. Same `Case` / `Read` / `Refused` as tests/corpus/csv_cases.py; test_corpus.py runs both.
"""
from __future__ import annotations

import gzip
import io
import zipfile

import pandas as pd

from tests.corpus.csv_cases import Case, Read, Refused, lines
from tests.corpus.long_tables import SPANS, TRICKY, csv_of, long_frame, price


def xlsx_bytes(frame: pd.DataFrame, sheet: str = "data", other: pd.DataFrame | None = None,
               formula: bool = False) -> bytes:
    """A workbook written by openpyxl: `frame` on `sheet` (dates as dates), `other` on a first sheet before it;
    `formula`: a last column of formulas with no saved value (never evaluated by the reader)."""
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    if other is not None:
        ws = book.create_sheet("notes")
        ws.append(list(other.columns))
        for row in other.itertuples(index=False):
            ws.append(list(row))
    ws = book.create_sheet(sheet)
    ws.append(list(frame.columns) + (["formula"] if formula else []))
    for i, row in enumerate(frame.itertuples(index=False), start=2):
        ws.append([v.to_pydatetime() if isinstance(v, pd.Timestamp) else v for v in row]
                  + ([f"=B{i}*2"] if formula else []))
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def parquet_bytes(frame: pd.DataFrame, index: bool = False) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=index)
    return buffer.getvalue()


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


DAYS = pd.date_range("2024-01-01", periods=20, freq="D")
WIDE = pd.DataFrame({"date": DAYS, "x": [i + 0.5 for i in range(20)], "y": [10.0 * i for i in range(20)]})
WIDE_CSV = WIDE.assign(date=DAYS.strftime("%Y-%m-%d")).to_csv(index=False).encode()
LONG = long_frame()
LONG_CSV = csv_of(LONG)
SHARED = ("2021-01-11", 35)  # the span all three series share: MSFT's start to the tricky id's end
QUOTED = TRICKY.replace('"', '""')

FORM_CASES: list[Case] = [
    # ---------------------------------------------------------------------------------------- long tables
    Case("long table, three spans", LONG_CSV,
         Read(SHARED[0], SHARED[1], "D", tuple(f"{s}.{c}" for s in SPANS for c in ("price", "volume")),
              {"AAPL.price": [price("AAPL", "2021-01-11")], f"{TRICKY}.price": [price(TRICKY, "2021-01-11")]},
              notes=("'symbol' read as the series id", "3 series", "cut to the span they share", "'AAPL' by 25"))),
    Case("long table interleaved by time", csv_of(long_frame(order="time")),
         Read(SHARED[0], SHARED[1], "D", tuple(f"{s}.{c}" for s in ("AAPL", TRICKY, "MSFT")  # first seen first
                                               for c in ("price", "volume")),
              {"MSFT.price": [price("MSFT", "2021-01-11"), price("MSFT", "2021-01-12")]})),
    Case("long table, one series", LONG_CSV, Read("2021-01-11", 50, "D", ("price", "volume"),
                                                  {"price": [price("MSFT", "2021-01-11")]},
                                                  notes=("1 series of 3 read",)), {"series": ("MSFT",)}),
    Case("long table, an id with a comma picked", LONG_CSV,
         Read("2021-01-06", 40, "D", ("AAPL.price", "AAPL.volume", f"{TRICKY}.price", f"{TRICKY}.volume"),
              {f"{TRICKY}.price": [price(TRICKY, "2021-01-06")]}), {"series": (f'AAPL,"{QUOTED}"',)}),
    Case("long table, the id named", LONG_CSV, Read(SHARED[0], SHARED[1], "D", tuple(
        f"{s}.{c}" for s in SPANS for c in ("price", "volume"))), {"id_column": "symbol"}),
    Case("long table, unknown series", LONG_CSV, Refused(("no series 'TSLA'", "'symbol'", "3 series", "'AAPL'")),
         {"series": ("TSLA",)}),
    Case("long table, a gap in one series", csv_of(long_frame(drop={"MSFT": 20})),
         Refused(("series 'MSFT'", "irregular spacing", "'2021-02-01'", "--repair", "--series"), True)),
    Case("long table, a gap repaired", csv_of(long_frame(drop={"MSFT": 20})),
         Read(SHARED[0], SHARED[1], "D", tuple(f"{s}.{c}" for s in SPANS for c in ("price", "volume")),
              {("MSFT.price", 20): price("MSFT", "2021-01-31")}, {"row added": 1, "cell filled": 2}),
         {"repair": "interpolate"}),
    Case("long table, spans that never meet", csv_of(long_frame({"a": ("2021-01-01", 10), "b": ("2021-03-01", 10)})),
         Refused(("share no time span", "'a'", "'b'", "--series")), {"id_column": "symbol"}),
    Case("long table, a missing id", lines("unique_id,ds,y", "a,2021-01-01,1", "a,2021-01-02,2", "b,2021-01-01,3",
                                           ",2021-01-02,4", "a,2021-01-03,5", "b,2021-01-03,6"),
         Refused(("missing series id", "'unique_id'", "row 4", "--repair"), True), {"id_column": "unique_id"}),
    Case("long table, ids NA and null kept", lines("unique_id,ds,y", "NA,2021-01-01,1", "NA,2021-01-02,2",
                                                   "null,2021-01-01,3", "null,2021-01-02,4"),
         Read("2021-01-01", 2, "D", ("NA.y", "null.y"), {"NA.y": [1, 2], "null.y": [3, 4]})),
    Case("series without a long table", lines("date,x", "2021-01-01,1", "2021-01-02,2"),
         Refused(("--series picks series of a long table", "--id-column")), {"series": ("a",)}),
    # ---------------------------------------------------------------------------------------- calendar columns
    Case("integer years", lines("YEAR,SUNACTIVITY", *(f"{1700 + i},{i * 1.5}" for i in range(30))),
         Read("1700-01-01", 30, "YS-JAN", ("SUNACTIVITY",), {"SUNACTIVITY": [0, 1.5]}, notes=("read as years",),
              datetime_column="YEAR")),
    Case("integer years asked for", lines("t,v", *(f"{1990 + i},{i}" for i in range(12))),
         Read("1990-01-01", 12, "YS-JAN", ("v",)), {"datetime_column": "t"}),
    Case("years before 1677", lines("year,v", *(f"{1500 + i},{i}" for i in range(5))),
         Read("1500-01-01", 5, "YS-JAN", ("v",)), {"datetime_column": "year"}),
    Case("years of the first century", lines("year,v", *(f"{1 + i},{i}" for i in range(5))),
         Read("0001-01-01", 5, "YS-JAN", ("v",)), {"datetime_column": "year"}),
    Case("years out of range", lines("year,v", *(f"{9998 + i},{i}" for i in range(5))),
         Refused(("10002", "1–9999"),), {"datetime_column": "year"}),
    Case("sunspots: yearly over three centuries", lines("YEAR,SUNACTIVITY", *(f"{1700 + i},{i % 11}" for i in range(309))),
         Read("1700-01-01", 309, "YS-JAN", ("SUNACTIVITY",), notes=("read as years",))),
    Case("five-yearly years", lines("year,pop", *(f"{1950 + 5 * i},{i}" for i in range(15))),
         Read("1950-01-01", 15, "5YS-JAN", ("pop",))),
    Case("a year column without a name", lines(",value", *(f"{1900 + i},{i}" for i in range(40))),
         Read("1900-01-01", 40, "YS-JAN", ("value",), notes=("no name in the file) read as years",))),
    Case("pandas' index column", lines(",date,x", *(f"{i},2021-01-{i + 1:02d},{i}" for i in range(20))),
         Read("2021-01-01", 20, "D", ("x",), notes=("is a row index",))),
    Case("quarters with a space", lines("quarter,gdp", *(f"{1970 + i // 4} Q{i % 4 + 1},{i}" for i in range(12))),
         Read("1970-01-01", 12, "QS-JAN", ("gdp",))),
    Case("quarters first", lines("q,gdp", *(f"Q{i % 4 + 1} {1970 + i // 4},{i}" for i in range(12))),
         Read("1970-01-01", 12, "QS-JAN", ("gdp",)), {"datetime_column": "q"}),
    Case("year and quarter", lines("year,quarter,gdp", *(f"{1974 + i // 4},{i % 4 + 1},{i}" for i in range(12))),
         Read("1974-01-01", 12, "QS-JAN", ("gdp",), {"gdp": [0, 1, 2]}, notes=("'year' and 'quarter'",),
              datetime_column="year,quarter")),
    Case("year and Q-quarters asked for", lines("yr,qtr,gdp", *(f"{1974 + i // 4},Q{i % 4 + 1},{i}" for i in range(8))),
         Read("1974-01-01", 8, "QS-JAN", ("gdp",)), {"datetime_column": "yr,qtr"}),
    Case("year and month names", lines("year,month,v", *(f"{2000 + i // 12},{m},{i}" for i, m in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"] * 2))),
         Read("2000-01-01", 24, "MS", ("v",), {"v": [0, 1]}), {"datetime_column": "year,month"}),
    Case("year and ISO week", lines("year,week,v", "2020,52,0", "2020,53,1", "2021,1,2", "2021,2,3", "2021,3,4"),
         Read("2020-12-21", 5, "W-MON", ("v",), {"v": [0, 1, 2]})),
    Case("a quarter that is none", lines("year,quarter,v", "2000,1,0", "2000,5,1"),
         Refused(("'quarter'", "'5'", "is not a quarter"),), {"datetime_column": "year,quarter"}),
    Case("years in a long table", lines("country,year,gdp", *(f"{c},{2000 + i},{i * (k + 1)}"
                                                             for k, c in enumerate("AB") for i in range(10))),
         Read("2000-01-01", 10, "YS-JAN", ("A.gdp", "B.gdp"), {"B.gdp": [0, 2, 4]})),
    # ---------------------------------------------------------------------------------------- spreadsheets, Parquet, archives
    Case("xlsx", xlsx_bytes(WIDE), Read("2024-01-01", 20, "D", ("x", "y"), {"x": [0.5, 1.5], "y": [0, 10]})),
    Case("xlsx, a named sheet", xlsx_bytes(WIDE, other=pd.DataFrame({"a": ["note"]})),
         Read("2024-01-01", 20, "D", ("x", "y")), {"sheet": "data"}),
    Case("xlsx, an unknown sheet", xlsx_bytes(WIDE), Refused(("no sheet named 'nope'", "'data'")), {"sheet": "nope"}),
    Case("xlsx, formulas never evaluated", xlsx_bytes(WIDE, formula=True),
         Read("2024-01-01", 20, "D", ("x", "y"), notes=("'formula' (empty)",))),
    Case("xlsx long table", xlsx_bytes(LONG.assign(date=pd.to_datetime(LONG["date"]))),
         Read(SHARED[0], SHARED[1], "D", tuple(f"{s}.{c}" for s in SPANS for c in ("price", "volume")))),
    Case("parquet", parquet_bytes(WIDE), Read("2024-01-01", 20, "D", ("x", "y"), {"x": [0.5, 1.5]})),
    Case("parquet, time in the index", parquet_bytes(WIDE.set_index("date"), index=True),
         Read("2024-01-01", 20, "D", ("x", "y"), datetime_column="date")),
    Case("parquet, UTC timestamps", parquet_bytes(WIDE.assign(date=DAYS.tz_localize("Europe/Berlin"))),
         Read("2023-12-31 23:00", 20, "D", ("x", "y"), notes=("converted to UTC",))),
    Case("csv.gz", gzip.compress(WIDE_CSV), Read("2024-01-01", 20, "D", ("x", "y"))),
    Case("zip of one csv", zip_bytes({"folder/data.csv": WIDE_CSV}), Read("2024-01-01", 20, "D", ("x", "y"))),
    Case("zip of one xlsx", zip_bytes({"data.xlsx": xlsx_bytes(WIDE)}), Read("2024-01-01", 20, "D", ("x", "y"))),
    Case("zip of two files", zip_bytes({"a.csv": WIDE_CSV, "b.csv": WIDE_CSV}),
         Refused(("holds 2 files", "'a.csv'", "exactly one"),)),
    Case("zip with a path outside it", zip_bytes({"../evil.csv": WIDE_CSV}),
         Refused(("path outside the archive", "'../evil.csv'"),)),
    Case("an old .xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600, Refused((".xls", "save it as .xlsx or CSV"),)),
    Case("a sheet asked of a CSV", WIDE_CSV, Refused(("--sheet", "spreadsheets"),), {"sheet": "data"}),
    # ---------------------------------------------------------------------------------------- numbers and notes
    Case("tab file, decimal commas with three decimals", lines("date\tx", "2024-01-01\t0,584", "2024-01-02\t1,234",
                                                               "2024-01-03\t12,500"),
         Read("2024-01-01", 3, "D", ("x",), {"x": [0.584, 1.234, 12.5]}, notes=("decimal comma", "'0,584'"))),
    Case("semicolons, a thousands point pandas took for a decimal", lines("date;x;y", "2024-01-01;1,5;1.000",
                                                                          "2024-01-02;2,5;2.000", "2024-01-03;3,5;3.500"),
         Read("2024-01-01", 3, "D", ("x", "y"), {"y": [1000, 2000, 3500]})),
    Case("only three-decimal commas, nothing decides", lines("date\tx", "2024-01-01\t1,584", "2024-01-02\t1,234"),
         Refused(("column 'x'", "'1,584'", "1.584", "1584", "--decimal"),)),
    Case("a value that overflows the statistics", lines("date,x", "2024-01-01,1", "2024-01-02,1e308", "2024-01-03,3"),
         Refused(("column 'x'", "too large", "'1e+308'", "row 2"), True)),
    Case("an overflowing value treated as missing", lines("date,x", "2024-01-01,1", "2024-01-02,-1e308",
                                                          "2024-01-03,3"),
         Read("2024-01-01", 3, "D", ("x",), {"x": [1, 2, 3]}, {"cell not a number": 1, "cell filled": 1}),
         {"repair": "interpolate"}),
    Case("columns left out, and why", lines("date,x,label,flag,spare", "2024-01-01,1,a,true,", "2024-01-02,2,b,false,",
                                            "2024-01-03,3,c,true,"),
         Read("2024-01-01", 3, "D", ("x",), notes=("left out", "'label' (text, e.g. 'a')", "'flag' (true/false)",
                                                   "'spare' (empty)"))),
    Case("naive and offset timestamps mixed", lines("date,x", "2024-01-01 00:00,1", "2024-01-01 01:00+00:00,2",
                                                    "2024-01-01 04:00+02:00,3"),
         Read("2024-01-01", 3, "h", ("x",), notes=("1 timestamp without a UTC offset", "taken as UTC"))),
    Case("a 10 kB file name in a short message", b"date,x\n", Refused(("header but no data rows",),)),
]


__all__ = ["FORM_CASES", "parquet_bytes", "xlsx_bytes", "zip_bytes"]
