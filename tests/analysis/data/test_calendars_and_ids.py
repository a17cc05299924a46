"""Calendars and long tables as people keep them. Generated calendars: any start year from 1 to 9999, steps of
several years, quarters, months, weeks, days or hours, any length. The file written from the generator reads back to exactly its timestamps and a step
whose grid is the generator's (never a finer step with invented rows in between)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings, strategies as st

from informer_lab.analysis.data import load_csv

KINDS = {"years": ("YS", 10), "quarters": ("QS", 4), "months": ("MS", 6), "weeks": ("W-MON", 4), "days": ("D", 10),
         "hours": ("h", 12)}


def stamps(kind: str, k: int, start_year: int, n: int) -> pd.DatetimeIndex:
    base, _ = KINDS[kind]
    first = pd.Timestamp(year=start_year, month=1, day=1).as_unit("us")
    if kind == "weeks":
        first = first + pd.offsets.Week(weekday=0)  # the first Monday
    return pd.date_range(first, periods=n, freq=f"{k}{base}", unit="us")


@st.composite
def calendars(draw):
    kind = draw(st.sampled_from(sorted(KINDS)))
    k = draw(st.integers(1, KINDS[kind][1]))
    n = draw(st.integers(3, 80))
    years_spanned = {"years": k * n, "quarters": k * n // 4 + 1, "months": k * n // 12 + 1, "weeks": k * n // 52 + 1,
                     "days": k * n // 365 + 1, "hours": 1}[kind]
    start = draw(st.integers(1, 9998 - years_spanned))
    return kind, k, start, n


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calendars(), st.sampled_from(["iso", "years"]))
def test_a_generated_calendar_reads_back_to_its_timestamps_and_its_step(calendar, written):
    kind, k, start, n = calendar
    expected = stamps(kind, k, start, n)
    if written == "years" and kind == "years":
        cells = [str(t.year) for t in expected]  # integer years, as a column named 'year'
        header = "year"
    else:
        cells = [t.strftime("%Y-%m-%d %H:%M:%S").rjust(19, "0") for t in expected]
        header = "date"
    rng = np.random.default_rng(n)
    text = "\n".join([f"{header},value"] + [f"{c},{v:.3f}" for c, v in zip(cells, rng.normal(size=n))]) + "\n"
    frame = load_csv(text.encode())
    assert (frame.timestamps == expected).all(), (frame.timestamps[:3], expected[:3])
    regrown = pd.date_range(frame.timestamps[0], periods=n, freq=frame.freq, unit="us")
    assert (regrown == expected).all(), (kind, k, frame.freq)  # the step is the generator's, not a finer one
    assert frame.repairs.empty


def test_five_yearly_data_is_read_as_five_yearly_and_never_repaired_into_invented_rows():
    text = "year,population\n" + "\n".join(f"{1800 + 5 * i},{i}" for i in range(40)) + "\n"
    frame = load_csv(text.encode())
    assert frame.freq == "5YS-JAN" and frame.n_rows == 40 and frame.repairs.empty
    from informer_lab.analysis.data import describe_frequency

    assert describe_frequency(frame.freq) == "every 5 years (year start)"


def _countries(n: int, shared: bool) -> bytes:
    lines = ["country,iso,year,population"]
    for k in range(n):
        iso = "C%03d" % (k - 1 if shared and k == n - 1 else k)  # the last two countries share one code
        lines += [f"Country {k},{iso},{1950 + 5 * i},{k + i}" for i in range(15)]
    return ("\n".join(lines) + "\n").encode()


def test_the_id_column_that_keeps_each_row_apart_is_chosen_and_the_choice_is_said():
    """200 countries every five years; two share an ISO code (0.5 % of rows repeat an (iso, year) pair): the country
    column is the series id, the note names the other candidate and --id-column."""
    frame = load_csv(_countries(200, shared=True))
    assert frame.freq == "5YS-JAN" and frame.long.id_column == "country"
    note = next(n for n in frame.notes if "read as the series id" in n)
    assert "also possible: 'iso'" in note and "--id-column" in note


def test_a_refusal_after_an_id_column_found_by_content_names_the_flag():
    from informer_lab.analysis.errors import DataError

    text = _countries(200, shared=True).decode().replace("Country 199,", "Country 198,")  # two rows per (name, year)
    import pytest

    with pytest.raises(DataError) as caught:
        load_csv(text.encode())
    assert "found by content; --id-column names another" in str(caught.value)
