"""Property tests over generated CSVs (tests/corpus/csv_strategies.py): valid files are read exactly; damaged files
are read (then regular and complete) or refused with a typed error, quickly; never anything else.
benchmarks/fuzz_csv.py runs the same properties over thousands of examples."""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings

from informer_lab.analysis.data import load_csv
from informer_lab.analysis.errors import MESSAGE_CHARS, InformerLabError
from tests.corpus.csv_strategies import any_csvs, valid_csvs

SECONDS = 5.0  # far above what any of these small files takes: a hang, not a slow read


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_csvs())
def test_valid_files_are_read_exactly(case):
    data, stamps, values, names = case
    frame = load_csv(data)
    assert frame.columns == tuple(names) and frame.n_rows == len(stamps)
    assert (frame.timestamps == stamps).all()
    np.testing.assert_array_equal(frame.values.to_numpy(), values)
    assert frame.repairs.empty


def check_read_or_refused(data: bytes, **options) -> str:
    started = time.process_time()  # CPU time: a hang or a blow-up shows, a busy machine does not
    try:
        frame = load_csv(data, **options)
    except InformerLabError as err:
        assert len(str(err)) <= MESSAGE_CHARS
        outcome = "refused"
    else:
        values = frame.values.to_numpy()
        assert np.isfinite(values).all() and frame.n_rows >= 2
        assert (frame.timestamps == pd.date_range(frame.timestamps[0], periods=frame.n_rows, freq=frame.freq)).all()
        outcome = "read"
    assert time.process_time() - started < SECONDS
    return outcome


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_csvs())
def test_damaged_files_are_read_or_refused_with_a_typed_error(data):
    check_read_or_refused(data)
    check_read_or_refused(data, repair="interpolate")
