"""Time written as calendar numbers: integer years (1700, 1701, …), and a year split from its quarter, month or
week over two columns (`year,quarter` as in many economic tables).

- years → the first day of each year (a yearly series, 'YS-JAN');
- year + quarter (1–4, 'Q1', '2') → the quarter's first day ('QS-JAN'); year + month (1–12, 'Jan', 'January') →
  the month's first day ('MS'); year + week (ISO weeks 1–53) → that week's Monday ('W-MON').

Future timestamps continue the same frequency (`frequency.future_timestamps`). Timestamps are held in microseconds
(`TIME_DTYPE`), so every year from 1 to 9999 can be read: sunspot counts since 1700, a chronicle from 1066.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from informer_lab.analysis.errors import DataError

from .messages import cell
from .table import is_text, text_cells

FIRST_YEAR, LAST_YEAR = 1, 9999  # the years a timestamp of the lab holds (microseconds: ±290,000 years in range)
TIME_DTYPE = "datetime64[us]"  # every timestamp the lab reads (pandas' default nanoseconds end in 1677 and 2262)
YEAR_NAME = re.compile(r"^(year|years|yr|yyyy|jahr|ano|año|anno|annee|année|fy|fiscal.?year|.*_year|year_.*)$",
                       re.IGNORECASE)
PART_NAMES = {"quarter": re.compile(r"^(quarter|qtr|q|quartal|trimestre)s?$", re.IGNORECASE),
              "month": re.compile(r"^(month|mon|mo|m|monat|mes|mois|mese)s?$", re.IGNORECASE),
              "week": re.compile(r"^(week|wk|w|kw|woche|semana|semaine|iso.?week)s?$", re.IGNORECASE)}
MONTHS = {name: i + 1 for i, name in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                                "nov", "dec"))}
RANGES = {"quarter": (1, 4), "month": (1, 12), "week": (1, 53)}


def named_like_year(name: str) -> bool:
    return bool(YEAR_NAME.match(str(name).strip()))


def part_kind(name: str) -> str | None:
    """'quarter', 'month' or 'week' when a column's name says so."""
    return next((kind for kind, pattern in PART_NAMES.items() if pattern.match(str(name).strip())), None)


def whole_numbers(column: pd.Series) -> pd.Series | None:
    """A column's cells as float whole numbers (NaN where missing), or None when some present cell is not one."""
    if is_text(column):
        text = text_cells(column)
        numbers = pd.to_numeric(text, errors="coerce")
        if (numbers.isna() & text.notna()).any():
            return None
    elif pd.api.types.is_numeric_dtype(column) and column.dtype != bool:
        numbers = column.astype("float64")
    else:
        return None
    present = numbers.dropna().to_numpy()
    if not len(present) or not np.all(np.mod(present, 1) == 0):
        return None
    return numbers.astype("float64")


def month_starts(years: np.ndarray, months: np.ndarray) -> np.ndarray:
    """The first day of each (year, month) as TIME_DTYPE, any year 1–9999 (numpy's calendar months, no strings)."""
    since = (np.asarray(years, dtype=np.int64) - 1970) * 12 + np.asarray(months, dtype=np.int64) - 1
    return since.astype("datetime64[M]").astype(TIME_DTYPE)


def years_to_times(numbers: pd.Series, column: str) -> pd.DatetimeIndex:
    """Whole-number years → 1 January of each (NaT where missing). DataError outside 1–9999."""
    present = numbers.dropna()
    low, high = int(present.min()), int(present.max())
    if low < FIRST_YEAR or high > LAST_YEAR:
        raise DataError(f"column {cell(column)} holds years from {low} to {high}; timestamps can hold the years "
                        f"{FIRST_YEAR}–{LAST_YEAR} only: keep the rows within them", column=column)
    out = pd.Series(pd.NaT, index=numbers.index, dtype=TIME_DTYPE)
    out[present.index] = month_starts(present.to_numpy(), np.ones(len(present)))
    return pd.DatetimeIndex(out)


def plausible_years(column: pd.Series) -> pd.Series | None:
    """The whole numbers of a column when they all lie in the years a timestamp holds, else None."""
    numbers = whole_numbers(column)
    if numbers is None or numbers.notna().sum() < 2:
        return None
    present = numbers.dropna()
    return numbers if FIRST_YEAR <= present.min() and present.max() <= LAST_YEAR else None


def _part_numbers(column: pd.Series, kind: str, name: str) -> pd.Series:
    """Quarter, month or week numbers of a column (NaN where missing); DataError naming a cell that is none."""
    text = text_cells(column) if is_text(column) else column.astype(object).where(column.notna(), None)
    low, high = RANGES[kind]
    out = pd.Series(np.nan, index=column.index)
    for i, value in text.dropna().items():
        token = str(value).strip().lower()
        if kind == "quarter":
            token = re.sub(r"^q(?:tr)?\s*|\s*q$", "", token)
        number = MONTHS.get(token[:3]) if kind == "month" and token[:3] in MONTHS and token.isalpha() else None
        if number is None:
            try:
                number = float(token)
            except ValueError:
                number = None
        if number is None or number != int(number) or not low <= number <= high:
            raise DataError(f"column {cell(name)}: {cell(value)} is not a {kind} ({low}–{high}"
                            f"{', Q1–Q4' if kind == 'quarter' else ', Jan–Dec' if kind == 'month' else ''})",
                            column=name, row=int(i), value=value)
        out[i] = int(number)
    return out


def combine(year_column: pd.Series, part_column: pd.Series, names: tuple[str, str], kind: str | None = None
            ) -> tuple[pd.DatetimeIndex, str, pd.Series]:
    """(timestamps, form, the cells as written) of a year column and its quarter / month / week column."""
    year_name, part_name = names
    years = whole_numbers(year_column)
    if years is None:
        raise DataError(f"column {cell(year_name)} does not hold whole-number years; --datetime-column YEAR,PART "
                        "names the year first", column=year_name)
    kind = kind or part_kind(part_name)
    if kind is None:
        raise DataError(f"cannot tell whether column {cell(part_name)} holds quarters, months or weeks; rename it "
                        "quarter, month or week", column=part_name)
    parts = _part_numbers(part_column, kind, part_name)
    years_to_times(years, year_name)  # the range check
    ok = years.notna() & parts.notna()
    out = pd.Series(pd.NaT, index=years.index, dtype=TIME_DTYPE)
    y, p = years[ok].astype(int), parts[ok].astype(int)
    if kind == "week":
        out[ok] = [_iso_monday(int(a), int(b)) for a, b in zip(y, p)]
    else:
        out[ok] = month_starts(y.to_numpy(), (p * 3 - 2 if kind == "quarter" else p).to_numpy())
    raw = (_shown(year_column) + " " + _shown(part_column)).str.strip()
    return pd.DatetimeIndex(out), f"year and {kind}", raw.where(raw != "", None)


def _iso_monday(year: int, week: int):
    """The Monday of ISO week `week` of `year` (NaT when the year has no such week)."""
    import datetime

    try:
        return np.datetime64(datetime.date.fromisocalendar(year, week, 1), "us")
    except ValueError:
        return np.datetime64("NaT", "us")


def _shown(column: pd.Series) -> pd.Series:
    """Cells as written ('' where missing; 1974.0 as '1974')."""
    def text(v) -> str:
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return ""
        return str(int(v)) if isinstance(v, (float, np.floating)) and float(v).is_integer() else str(v).strip()
    return column.astype(object).map(text)


__all__ = ["FIRST_YEAR", "LAST_YEAR", "TIME_DTYPE", "combine", "month_starts", "named_like_year", "part_kind", "plausible_years",
           "whole_numbers", "years_to_times"]
