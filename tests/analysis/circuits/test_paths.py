"""Path patching (analysis/circuits/paths.py) against activation patching and the architecture's wiring."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from informer_lab.model import Informer

from informer_lab.analysis.circuits.paths import (COLUMNS, GRID_COLUMNS, grid_forecasts, path_forecasts, path_grid, path_patching,
                                     window_pairs)
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.instruments.patching import activation_patching
from informer_lab.analysis.instruments.window_edits import Edit, edited_batches
from informer_lab.analysis.learning.training import config_for
from informer_lab.analysis.row_memory import data_span, split_memory
from tests.conftest import TINY_SIZE

SPLIT, CLEAN, CORRUPT = "test", 0, 400


@pytest.fixture(scope="module")
def setting(tiny_prepared):
    """A random model of the tiny checkpoint's shape (seq 48 / label 24 / pred 12, d_model 16, 4 heads, ProbSparse
    with u < L), BatchNorm statistics that are not the identity, in eval mode: the identities tested hold for any
    weights, and training one would cost more than the tests."""
    torch.manual_seed(0)
    model = Informer(config_for(tiny_prepared, **TINY_SIZE))
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.BatchNorm1d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
    model.eval()
    clean = edited_batches(tiny_prepared, SPLIT, CLEAN, Edit())[0]
    corrupt = edited_batches(tiny_prepared, SPLIT, CORRUPT, Edit())[0]
    return model, tiny_prepared, clean, corrupt


@pytest.fixture(scope="module")
def ordinary(setting):
    model, prepared = setting[:2]
    return activation_patching(model, prepared, SPLIT, CLEAN, CORRUPT, seed=0)


def every_head(model, what="out"):
    return [(site.name, h, what) for site in model.sites for h in range(model.config.n_heads)]


@pytest.mark.parametrize("sender", [("encoder.0.0", 1), ("decoder_self.0", 2), ("cross.0", 0)])
def test_every_head_an_out_receiver_is_activation_patching(setting, ordinary, sender):
    model, _, clean, corrupt = setting
    with pytest.raises(ConfigError, match="no path from"):  # the sender itself and the heads before it are refused
        path_forecasts(model, clean, corrupt, sender, every_head(model), seed=0)
    f_A, f_B, f_P = path_forecasts(model, clean, corrupt, sender, every_head(model), seed=0, unreached=True)
    np.testing.assert_allclose(f_A[0], ordinary.clean, atol=1e-6)
    np.testing.assert_allclose(f_B[0], ordinary.corrupt, atol=1e-6)
    k = ordinary.labels.index(sender)
    np.testing.assert_allclose(f_P[0], ordinary.patched[k], atol=1e-5)
    assert np.abs(f_P - f_B).max() > 1e-4  # the patch does something


def test_a_q_receiver_downstream_of_other_receivers_reads_what_its_site_computes(setting, ordinary):
    """decoder_self.0's heads put out (the sender A's, the others B's) and cross.0 head 0 reads its query from step 1:
    the whole query input of cross.0 is then the activation-patched one, so the forecast is activation patching's —
    only if cross.0's other heads read the queries this run computes, not B's."""
    model, _, clean, corrupt = setting
    sender = ("decoder_self.0", 1)
    receivers = [("decoder_self.0", h, "out") for h in range(4)] + [("cross.0", 0, "q")]
    f_P = path_forecasts(model, clean, corrupt, sender, receivers, seed=0, unreached=True)[2]
    np.testing.assert_allclose(f_P[0], ordinary.patched[ordinary.labels.index(sender)], atol=1e-5)


def test_no_receiver_and_upstream_receivers_change_nothing(setting):
    """Which is why receivers upstream of the sender are refused, each named: their patch would read as a measured 0."""
    model, _, clean, corrupt = setting
    _, f_B, f_P = path_forecasts(model, clean, corrupt, ("decoder_self.0", 1), [], seed=0)
    assert np.array_equal(f_P, f_B)
    upstream = [("encoder.0.1", 2, "q"), ("encoder.0.0", 0, "out"), ("encoder.0.1", 3, "v")]
    _, f_B, f_P = path_forecasts(model, clean, corrupt, ("decoder_self.0", 1), upstream, seed=0, unreached=True)
    assert np.array_equal(f_P, f_B)
    with pytest.raises(ConfigError) as err:
        path_forecasts(model, clean, corrupt, ("decoder_self.0", 1), upstream, seed=0)
    assert all(name in str(err.value) for name in ("encoder.0.1:2.q", "encoder.0.0:0.out", "encoder.0.1:3.v"))


def test_decoder_self_reaches_cross_attention_only_through_its_queries(setting):
    """Keys and values of cross-attention read the encoder's memory: no path from the decoder reaches them, so they
    are refused by name (their patch would read as a measured 0), as is the sender itself and a site before it."""
    model, prepared, clean, corrupt = setting
    sender = ("decoder_self.0", 0)
    for receivers, named in (([("cross.0", 1, "k"), ("cross.0", 2, "v"), ("cross.0", 0, "q")], "cross.0:1.k"),
                             ([("decoder_self.0", 0, "out")], "side by side"),
                             ([("encoder.0.1", 3, "out")], "encoder runs before")):
        with pytest.raises(ConfigError, match=named) as err:
            path_patching(model, prepared, SPLIT, sender, receivers, pairs=2)
        assert "cross.0:0.q" not in str(err.value)
        with pytest.raises(ConfigError):
            path_forecasts(model, clean, corrupt, sender, receivers)
    _, f_B, f_P = path_forecasts(model, clean, corrupt, sender, [("cross.0", h, "q") for h in range(4)])
    assert np.abs(f_P - f_B).max() > 1e-5


def test_path_patching_over_pairs_has_intervals_around_the_mean(setting):
    model, prepared = setting[:2]
    r = path_patching(model, prepared, SPLIT, ("encoder.0.1", 2), [("cross.0", h, "k") for h in range(4)],
                      pairs=8, seed=0)  # one in 109 windows: further apart than seq_len + pred_len + the rows' memory
    table = r.table
    assert tuple(table.columns) == COLUMNS
    T = model.config.pred_len
    assert list(table.step) == list(range(1, T + 1)) and (table.pairs == len(r.pairs)).all()
    assert r.patched.shape == (len(r.pairs), T, model.config.c_out)
    np.testing.assert_array_equal(r.pairs[:, 1] - r.pairs[:, 0], r.pairs[0, 1])
    shown = table.low.notna()
    assert shown.any()
    assert (table.low[shown] <= table.delta[shown]).all() and (table.delta[shown] <= table.high[shown]).all()
    np.testing.assert_allclose(table.delta, (r.patched - r.corrupt).mean(axis=(0, 2)), atol=1e-12)
    given = table.restored_low.notna()
    assert given.any()
    assert (table.restored_low[given] <= table.restored[given]).all()
    assert (table.restored[given] <= table.restored_high[given]).all()
    assert (table.reason[~shown] != "").all()


def test_pairs_are_evenly_spread_and_checked(tiny_prepared):
    index, stride, span = window_pairs(tiny_prepared, SPLIT, 12)
    assert len(index) == 12 and (np.diff(index[:, 0]) == stride).all()
    # one in 73 windows: a whole seq_len + pred_len apart, but within the rows' memory of one another
    assert span == data_span(tiny_prepared, SPLIT, stride) == math.ceil((60 + split_memory(tiny_prepared, SPLIT)) / 73)
    assert split_memory(tiny_prepared, SPLIT) > 13 and span == 2
    with pytest.raises(ConfigError):
        window_pairs(tiny_prepared, SPLIT, 12, offset=0)


def test_grid_cells_are_single_receiver_path_patches(setting):
    model, prepared, clean, corrupt = setting
    f_A, f_B, grid = grid_forecasts(model, clean, corrupt, "decoder_self.0", "cross.0", "q")
    assert grid.shape == (4, 4) + f_B.shape
    for s, r in ((0, 0), (2, 3)):
        alone = path_forecasts(model, clean, corrupt, ("decoder_self.0", s), [("cross.0", r, "q")])[2]
        np.testing.assert_allclose(grid[s, r], alone, atol=1e-6)
    result = path_grid(model, prepared, SPLIT, "decoder_self.0", "cross.0", "q", pairs=4)
    assert tuple(result.table.columns) == GRID_COLUMNS and len(result.table) == 16 and (result.table.rms > 0).any()
    for receiver, what in (("cross.0", "k"), ("decoder_self.0", "q"), ("encoder.0.0", "out")):
        with pytest.raises(ConfigError, match="no path from decoder_self.0"):
            path_grid(model, prepared, SPLIT, "decoder_self.0", receiver, what, pairs=4)


def test_senders_and_receivers_are_read_from_text(setting):
    from informer_lab.analysis.circuits.paths import Receiver, resolve_receivers, resolve_sender

    model = setting[0]
    assert resolve_sender(model, "decoder_self.0:1") == (model.sites[2], 1)
    got = resolve_receivers(model, ["cross.0:2:q", "cross.0:2.q", ("cross.0", 1, "k")])
    assert got == (Receiver("cross.0", 2, "q"), Receiver("cross.0", 1, "k"))
    for bad in (["cross.0:9:q"], ["cross.0:1:z"], ["nowhere.0:1:q"]):
        with pytest.raises(ConfigError):
            resolve_receivers(model, bad)


def test_reach_follows_the_wiring_of_stacks_and_decoder_layers():
    """Built, not trained: an encoder stack (replicas 2 and 1 layers) and two decoder layers."""
    import torch

    from informer_lab.analysis.circuits.reach import reachable, why_unreached
    from informer_lab.model import Informer, InformerConfig

    torch.manual_seed(0)
    model = Informer(InformerConfig(enc_in=2, dec_in=2, c_out=2, seq_len=32, label_len=16, pred_len=8, d_model=16,
                                    n_heads=2, e_layers=(2, 1), d_layers=2, d_ff=16, n_marks=4)).eval()
    sites = {s.name: s for s in model.sites}
    reach = {(s.name, w) for s, w in reachable(model, sites["encoder.0.0"])}
    assert ("encoder.0.1", "q") in reach and ("encoder.1.0", "out") not in reach  # another replica
    assert ("cross.0", "k") in reach and ("cross.0", "q") not in reach and ("cross.0", "out") in reach
    assert ("decoder_self.0", "q") not in reach and ("decoder_self.1", "k") in reach and ("cross.1", "q") in reach
    reach = {(s.name, w) for s, w in reachable(model, sites["cross.0"])}
    assert reach == {("decoder_self.1", w) for w in "qkv"} | {("decoder_self.1", "out"), ("cross.1", "q"),
                                                                 ("cross.1", "out")}
    assert reachable(model, sites["cross.1"]) == []
    assert why_unreached(sites["decoder_self.1"], sites["cross.1"], "q") is None
    assert "memory" in why_unreached(sites["decoder_self.1"], sites["cross.1"], "v")
