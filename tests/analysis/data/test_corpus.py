"""Every case of the CSV corpus (tests/corpus/csv_cases.py): refused with a short message naming the problem and
the way out, or read (and repaired) into exactly the frame the case names."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from informer_lab.analysis.data import load_csv
from informer_lab.analysis.errors import MESSAGE_CHARS, DataError
from tests.corpus.csv_cases import CASES as CSV_CASES
from tests.corpus.csv_cases import Read, Refused
from tests.corpus.form_cases import FORM_CASES

CASES = CSV_CASES + FORM_CASES


def test_the_corpus_is_large_and_named_uniquely():
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))
    assert len(CASES) >= 60


@pytest.mark.parametrize("case", [c for c in CASES if isinstance(c.expect, Refused)], ids=lambda c: c.name)
def test_refused(case):
    with pytest.raises(DataError) as info:
        load_csv(case.content, **case.options)
    message = str(info.value)
    assert len(message) <= MESSAGE_CHARS, message
    for word in case.expect.words:
        assert word in message, (word, message)
    assert info.value.repairable == case.expect.repairable, message
    assert ("--repair" in message) == case.expect.repairable, message


@pytest.mark.parametrize("case", [c for c in CASES if isinstance(c.expect, Read)], ids=lambda c: c.name)
def test_read(case):
    frame = load_csv(case.content, **case.options)
    expect: Read = case.expect
    assert frame.timestamps[0] == pd.Timestamp(expect.first)
    assert frame.n_rows == expect.rows and frame.freq == expect.freq
    assert frame.columns == expect.columns
    assert frame.values.notna().all().all() and np.isfinite(frame.values.to_numpy()).all()
    assert frame.timestamps.is_monotonic_increasing and frame.timestamps.is_unique
    assert (frame.timestamps == pd.date_range(frame.timestamps[0], periods=frame.n_rows, freq=frame.freq)).all()
    if expect.datetime_column:
        assert frame.datetime_column == expect.datetime_column
    for key, want in expect.values.items():
        if isinstance(key, tuple):
            assert frame.values[key[0]].iloc[key[1]] == pytest.approx(want)
        else:
            np.testing.assert_allclose(frame.values[key].to_numpy()[:len(want)], want)
    counts = frame.repairs.counts()
    for prefix, n in expect.repairs.items():
        assert sum(v for k, v in counts.items() if k.startswith(prefix)) == n, (prefix, counts)
    if not expect.repairs:
        assert frame.repairs.empty, frame.repairs.summary()
    notes = " ".join(frame.notes)
    for word in expect.notes:
        assert word in notes, (word, notes)
