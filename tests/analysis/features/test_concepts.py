"""Concept scores against brute force: AUROC is the share of (positive, negative) pairs ordered right (ties ½), its
interval holds it, position and window labels are the modes over the steps read, a feature planted to be the label
scores 1 at both levels and beats every neuron, and a concept file is read with its time column found."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.features import concepts as cc
from informer_lab.analysis.features.metrics import FeatureCodes
from informer_lab.analysis.features.sites import SiteActivations


def brute_auroc(score, positive):
    pos, neg = score[positive], score[~positive]
    return np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg])


def test_auroc_is_the_pair_count_with_ties_half():
    rng = np.random.default_rng(0)
    score = rng.integers(0, 5, size=(60, 3)).astype(float)  # many ties
    positive = rng.random(60) < 0.3
    expected = [brute_auroc(score[:, j], positive) for j in range(3)]
    assert np.allclose(cc.auroc(score, positive), expected)
    a, lo, hi, reason = cc.auroc_interval(score[:, 0], positive, np.arange(60) // 2, 30, span=1)
    assert a == pytest.approx(expected[0]) and (reason or lo <= a <= hi)


def test_labels_are_the_values_of_the_steps_read():
    labels = np.array([None, "a", "a", "b", "b", "b", None, None, "c", "c"], dtype=object)
    spans = np.array([[0, 1], [2, 4], [6, 7], [-1, -1]])
    got = cc.position_labels(labels, np.array([0, 2]), spans)
    assert got[0].tolist() == [{"a"}, {"a", "b"}, set(), set()]
    assert got[1].tolist() == [{"a", "b"}, {"b"}, {"c"}, set()]
    assert cc.window_labels(labels, np.array([0, 1]), seq_len=8, stretch=3).tolist() == [{"b"}, {"c"}]
    assert cc.stretch_positions(spans, seq_len=8, stretch=3).tolist() == [False, False, True, False]


def test_a_concept_file_is_read_with_its_time_column_found():
    data = b"label,date,regime\nx,2024-01-01 00:00:00,A\n,2024-01-01 01:00:00,B\ny,2024-01-01 02:00:00,\n"
    read = cc.read_concepts(data)
    assert list(read.columns) == ["label", "regime"] and read.times[1] == pd.Timestamp("2024-01-01 01:00")
    assert read.labels["regime"].tolist() == ["A", "B", None] and read.labels["label"][1] is None
    many = pd.DataFrame({"t": pd.date_range("2024", periods=60, freq="h").astype(str), "v": [str(i) for i in range(60)]})
    with pytest.raises(ConfigError, match="'v' has 60 distinct values"):
        cc.concepts_from_frame(many)
    with pytest.raises(ConfigError, match="time column"):
        cc.read_concepts(b"a,b\n1,2\n")


def test_a_planted_feature_scores_one_at_both_levels(tiny_prepared):
    times = tiny_prepared.test.timestamps
    night = np.where(times.hour < 6, "night", "day").astype(object)
    concepts = cc.Concepts(pd.DatetimeIndex(times), {"part": night})
    windows = np.arange(0, 200, 5)
    spans = np.stack([np.arange(0, 48, 2), np.arange(1, 48, 2)], axis=1)  # 24 positions of 2 steps
    labels = cc.position_labels(night, windows, spans)  # [S, L]
    planted = np.vectorize(lambda v: "night" in v)(labels).astype(np.float32)
    rng = np.random.default_rng(0)
    z = np.stack([planted, rng.random(planted.shape).astype(np.float32) * 0.5], axis=-1)  # feature 0 = the label
    indices = np.broadcast_to(np.arange(2, dtype=np.int32), z.shape).copy()
    codes = FeatureCodes(z, indices, 2)
    x = torch.from_numpy(rng.normal(size=(len(windows), 24, 3)).astype(np.float32))
    acts = SiteActivations("encoder.out", "test", windows, 5, 400, x, spans, 0)
    scores = cc.score_concepts(concepts, tiny_prepared, acts, codes, stretch=2)  # the last position alone
    table = scores.table.set_index(["value", "level"])
    row = table.loc[("night", "position")]
    assert row.feature == 0 and row.auroc == 1.0 and row.neuron_auroc < 0.75
    assert row.positives == int(planted.sum())
    assert table.loc[("night", "window")].auroc == 1.0 and table.loc[("night", "window")].feature == 0
    assert table.loc[("day", "position")].feature == 1  # one-vs-rest: 'day' is not what feature 0 marks
    # a position that reads a night step and a day step is a positive of both: feature 0 fires on it
    assert list(cc.search(scores, "part", "night").feature[:1]) == [0]
    assert scores.features.shape == (len(scores.table), 2)
