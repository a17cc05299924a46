"""Matching across seeds against known answers: the Hungarian pairing recovers a permuted dictionary, a shuffle keeps
each column's entries, stability of noisy copies is above the shuffled control, and a generated series' planted regimes
and spikes become concept labels at its rows."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.features import seeds
from informer_lab.analysis.planted.synth import SynthSpec, generate


def test_hungarian_matching_recovers_a_permuted_dictionary():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(8, 20))
    perm = rng.permutation(20)
    m = seeds.match(W, W[:, perm] * 3.0)  # column norms do not matter
    assert np.array_equal(perm[m.pairs[:, 1]], m.pairs[:, 0]) and np.allclose(m.cosine, 1.0)
    assert m.matched_share == 1.0
    s = seeds.shuffled(W, 0)
    assert np.allclose(np.sort(s, axis=0), np.sort(seeds.unit_columns(W), axis=0))


def test_stability_of_noisy_copies_is_above_the_shuffled_control():
    rng = np.random.default_rng(1)
    W = rng.normal(size=(16, 32))
    copies = [W + 0.2 * rng.normal(size=W.shape) for _ in range(3)]
    st = seeds.stability(copies, seed=0)
    assert st.cosine.shape == (3, 3) and st.stability.estimate > 0.9 and st.shuffled.estimate < 0.6
    assert st.above_control and st.matched_share > 0.9
    unrelated = seeds.stability([rng.normal(size=(16, 32)) for _ in range(3)], seed=0)
    assert unrelated.stability.estimate < 0.6
    with pytest.raises(ConfigError):
        seeds.stability([W])


def test_planted_regimes_and_spikes_become_labels():
    frame, answer = generate(SynthSpec(kind="regime", rows=600, regime_length=100, seed=2))
    concepts = seeds.answer_concepts(pd.to_datetime(frame["date"]), answer)
    regime = concepts.labels["regime"]
    for first, g in answer.regime_of_row:
        assert regime[first] == "AB"[g]
    assert set(regime) == {"A", "B"} and regime[0] == "A"
    frame, answer = generate(SynthSpec(kind="spikes", rows=600, events=5, seed=2))
    spike = seeds.answer_concepts(pd.to_datetime(frame["date"]), answer).labels["spike"]
    assert sorted(np.flatnonzero(spike != "no")) == sorted(e["row"] for e in answer.events)
    assert all(spike[e["row"]] == ("up" if e["size"] > 0 else "down") for e in answer.events)
    frame, answer = generate(SynthSpec(kind="seasonal_ar", rows=300))
    with pytest.raises(ConfigError, match="plants no concept"):
        seeds.answer_concepts(pd.to_datetime(frame["date"]), answer)
    table = pd.DataFrame({"concept": ["regime"] * 4, "value": ["A", "A", "B", "B"],
                          "level": ["position", "window"] * 2, "feature": [1, 2, 3, 4], "auroc": [0.6, 0.9, 0.95, 0.7],
                          "auroc_low": np.nan, "auroc_high": np.nan, "neuron": "+0", "neuron_auroc": 0.5})
    best = seeds.recovery(table, "regime")
    assert best.feature.tolist() == [2, 3] and best.level.tolist() == ["window", "position"]
    unscored = seeds.recovery(table.assign(auroc=np.nan), "regime")  # no value scored: nothing recovered
    assert unscored.empty and "auroc" in unscored.columns
