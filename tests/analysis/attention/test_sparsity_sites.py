"""The sparsity report a site at a time: each part equals the matching rows of the whole report."""
from __future__ import annotations

import pandas as pd
import pytest

from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.attention.sparsity import sparsity_report
from informer_lab.analysis.attention.sparsity_sites import record_window, site_agreement, site_exact, site_queries


@pytest.fixture(scope="module")
def whole(tiny_trained, tiny_prepared):
    return sparsity_report(tiny_trained[0].model, tiny_prepared, "test", [37], seed=5, seeds=4)


def test_a_recording_holds_every_sites_rows_and_the_head_summary(tiny_trained, tiny_prepared, whole):
    record = record_window(tiny_trained[0].model, tiny_prepared, "test", 37, seed=5)
    pd.testing.assert_frame_equal(record.heads, whole.heads)
    for ours, theirs in zip(record.rows, whole.rows):
        assert ours.site == theirs.site and (ours.rows == theirs.rows).all() and (ours.selected == theirs.selected).all()
    with pytest.raises(KeyError, match="no site"):
        record.site_rows("encoder.9.9")


@pytest.mark.parametrize("site", ["encoder.0.0", "encoder.0.1", "decoder_self.0", "cross.0"])
def test_one_sites_queries_and_agreement_are_the_reports_rows(tiny_trained, tiny_prepared, whole, site):
    model = tiny_trained[0].model
    record = record_window(model, tiny_prepared, "test", 37, seed=5)
    mine = site_queries(model, tiny_prepared, record, site)
    theirs = whole.queries[whole.queries["site"] == site].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, theirs)
    agreement = site_agreement(model, tiny_prepared, "test", 37, site, seed=5, seeds=4)
    want = whole.agreement[whole.agreement["site"] == site].reset_index(drop=True)
    if want.empty:  # a full-attention site samples nothing
        assert agreement.empty
    else:
        pd.testing.assert_frame_equal(agreement, want)
    # the exact M scored once for the recording and handed to both gives the same tables
    exact = site_exact(model, record, site)
    pd.testing.assert_frame_equal(site_queries(model, tiny_prepared, record, site, exact=exact), theirs)
    shared = site_agreement(model, tiny_prepared, "test", 37, site, seed=5, seeds=4, record=record, exact=exact)
    pd.testing.assert_frame_equal(shared, agreement)


def test_a_handed_exact_m_is_taken_only_where_the_sites_queries_and_keys_are_the_same(tiny_trained, tiny_prepared):
    """A wrong exact M handed in shows up only on the seeds whose pass has the recording's own queries and keys (to the
    bit): at a first layer every seed; at a later layer only the recording's own seed (other seeds choose other rows
    below it; a pass with or without recorded rows computes them with the same kernels, so its own seed repeats it)."""
    import numpy as np
    model = tiny_trained[0].model
    record = record_window(model, tiny_prepared, "test", 37, seed=5)

    def shows(exact, seed: int, seeds: int, site: str) -> bool:
        honest = site_agreement(model, tiny_prepared, "test", 37, site, seed=seed, seeds=seeds)
        fed = site_agreement(model, tiny_prepared, "test", 37, site, seed=seed, seeds=seeds, record=record,
                             exact=exact)
        numbers = [c for c in honest.columns if honest[c].dtype.kind == "f"]
        return not np.allclose(honest[numbers].to_numpy(float), fed[numbers].to_numpy(float), equal_nan=True)

    for site, elsewhere in (("encoder.0.0", True), ("encoder.0.1", False)):
        wrong = {name: -value for name, value in site_exact(model, record, site).items()}  # ranks reversed
        assert shows(wrong, 5, 1, site)  # the recording's own seed: its own queries and keys
        assert shows(wrong, 6, 2, site) is elsewhere  # seeds 6 and 7


def test_an_unknown_site_is_named(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    record = record_window(model, tiny_prepared, "test", 0)
    with pytest.raises(ConfigError, match="encoder.0.0"):
        site_queries(model, tiny_prepared, record, "encoder.7.0")
    with pytest.raises(ValueError, match="seeds"):
        site_agreement(model, tiny_prepared, "test", 0, "encoder.0.0", seeds=0)
