"""Windows that fit a short series: from its season, the batch shrunk before the windows, and a note when the test
split is too short for an interval."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from informer_lab.analysis.data import DataSpec, fitting_sizes, window_budget
from informer_lab.analysis.data.budget import MIN_BATCH
from informer_lab.analysis.intervals import cosine_dof, MIN_DOF, overlap_span

PAPER = DataSpec("y", "S", 96, 48, 24)


def test_a_short_monthly_series_gets_two_years_of_history_and_a_year_ahead_not_two_steps():
    fit = fitting_sizes(144, PAPER, 32, freq="MS")
    assert (fit.spec.seq_len, fit.spec.label_len, fit.spec.pred_len) == (24, 12, 12) and fit.seasonal
    assert MIN_BATCH <= fit.batch_size < 32  # the batch shrank, the windows stayed seasonal
    assert window_budget(144, fit.spec, fit.batch_size).ok
    # without a step the ladder still shrinks the batch before the windows: never the 2 / 1 / 2 of batch 32
    plain = fitting_sizes(144, PAPER, 32)
    assert plain.spec.seq_len >= 12 and plain.batch_size >= MIN_BATCH


def test_the_seasons_of_other_steps():
    assert fitting_sizes(200, PAPER, 32, freq="D").spec.seq_len == 14  # two weeks of days, a week ahead
    assert fitting_sizes(200, PAPER, 32, freq="D").spec.pred_len == 7
    assert fitting_sizes(60, PAPER, 32, freq="QS-JAN").spec.pred_len == 4  # a year of quarters
    hourly = fitting_sizes(300, PAPER, 32, freq="h")
    assert (hourly.spec.seq_len, hourly.spec.pred_len) == (48, 24)  # two days of hours, one ahead


def test_sizes_that_already_fit_are_kept():
    fit = fitting_sizes(8760, PAPER, 32, freq="h")
    assert fit.spec == PAPER and fit.batch_size == 32 and not fit.seasonal


@settings(max_examples=60, deadline=None)
@given(n_rows=st.integers(8, 3000), freq=st.sampled_from([None, "h", "D", "MS", "QS-JAN", "YS-JAN", "W-SUN"]),
       seq=st.integers(2, 200), pred=st.integers(1, 100), batch=st.sampled_from([1, 4, 8, 16, 32, 64]))
def test_a_proposal_always_fits_and_never_asks_for_more_than_was_asked(n_rows, freq, seq, pred, batch):
    spec = DataSpec("y", "S", seq, max(1, seq // 2), pred)
    fit = fitting_sizes(n_rows, spec, batch, freq=freq)
    if fit is None:
        assert not window_budget(n_rows, DataSpec("y", "S", 2, 1, 1), 1).ok  # not even the smallest fits
        return
    assert window_budget(n_rows, fit.spec, fit.batch_size).ok
    assert fit.spec.seq_len <= seq and fit.spec.pred_len <= pred and fit.batch_size <= batch
    assert fit.spec.label_len <= fit.spec.seq_len


def test_a_test_split_too_short_for_an_interval_is_noted_and_intervals_agree():
    short = window_budget(144, DataSpec("y", "S", 24, 12, 12), 16)
    assert short.ok and short.notes and "17 windows" in short.notes[0] and "no interval" in short.notes[0]
    assert cosine_dof(short.windows["test"], overlap_span(24, 12)) < MIN_DOF  # the intervals give none either
    long = window_budget(8760, PAPER, 32)
    assert not long.notes and cosine_dof(long.windows["test"], overlap_span(96, 24)) >= MIN_DOF
    edge = long.interval_windows  # the note's count is where the intervals start
    assert cosine_dof(edge, overlap_span(96, 24)) >= MIN_DOF > cosine_dof(edge - 1, overlap_span(96, 24))
