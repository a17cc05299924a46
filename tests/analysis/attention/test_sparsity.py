"""Sampled vs exact query sparsity, checked against brute-force recomputation from the recorded Q and K."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
import torch

from informer_lab.analysis.attention.stats import lag_profile, row_entropy
from informer_lab.analysis.data import seasonal_periods
from informer_lab.analysis.attention.positions import distilled_spans
from informer_lab.analysis.attention.recording import record_forward
from informer_lab.analysis.attention.sparsity import exact_sparsity, sparsity_report, spearman, topk_agreement
from informer_lab.model import Informer, KeySample, probsparse_attention

WINDOWS = [0, 5]


@pytest.fixture(scope="module")
def model(tiny_trained):
    return tiny_trained[0].model


@pytest.fixture(scope="module")
def report(model, tiny_prepared):
    return sparsity_report(model, tiny_prepared, "test", WINDOWS, seed=0, seeds=3)


@pytest.fixture(scope="module")
def records(model, tiny_prepared):
    """The same forward pass as the report's seed 0, recording Q, K and the key sample."""
    from informer_lab.analysis.attention.recording import window_batch

    batch = window_batch(tiny_prepared, "test", WINDOWS)
    return record_forward(model, batch, 0, "*.queries", "*.keys", "*.key_index", "*.scores")


def table_value(report, site, window, head, position, column):
    q = report.queries
    row = q[(q.site == site) & (q.window == window) & (q["head"] == head) & (q.position == position)]
    assert len(row) == 1
    return row[column].iloc[0]


def brute_scores(records, site, b, h, i, keys):
    """q_i·k_j/√D for the given keys j, by Python loops."""
    q = records[f"{site}.queries"][b, i, h].tolist()
    K = records[f"{site}.keys"][b, :, h]
    D = len(q)
    return [sum(q[d] * float(K[j, d]) for d in range(D)) / math.sqrt(D) for j in keys]


# (site, causal) for every kind of site of the tiny model: encoder layer 0, a distilled layer, decoder, cross
SITES = [("encoder.0.0", False), ("encoder.0.1", False), ("decoder_self.0", True), ("cross.0", False)]
PICKS = [(0, 0, 0), (1, 3, 7), (0, 2, 17), (1, 1, 23)]  # (batch row, head, query)


@pytest.mark.parametrize("site,causal", SITES)
def test_exact_m_and_mbar_equal_brute_force(report, records, site, causal):
    L_K = records[f"{site}.keys"].shape[1]
    for b, h, i in PICKS:
        s = brute_scores(records, site, b, h, i, range(i + 1) if causal else range(L_K))
        mean = sum(s) / len(s)
        m = math.log(sum(math.exp(x) for x in s)) - mean
        mbar = max(s) - mean
        assert table_value(report, site, WINDOWS[b], h, i, "exact_m") == pytest.approx(m, rel=1e-6, abs=1e-6)
        assert table_value(report, site, WINDOWS[b], h, i, "exact_mbar") == pytest.approx(mbar, rel=1e-6, abs=1e-6)
        s_all = brute_scores(records, site, b, h, i, range(L_K))  # the mask ignored, as the sampled M̄ does
        m_all = math.log(sum(math.exp(x) for x in s_all)) - sum(s_all) / L_K
        assert table_value(report, site, WINDOWS[b], h, i, "exact_m_all_keys") == pytest.approx(m_all, rel=1e-6,
                                                                                                abs=1e-6)


def test_exact_sparsity_bounds_hold():
    """M̄ ≤ M ≤ M̄ + ln L_K (the paper's Lemma 1 bracket), on random float64 inputs, causal and not."""
    g = torch.Generator().manual_seed(0)
    Q, K = torch.randn(2, 3, 30, 8, generator=g, dtype=torch.float64), torch.randn(2, 3, 30, 8, generator=g,
                                                                                    dtype=torch.float64)
    for causal in (False, True):
        M, Mbar = exact_sparsity(Q, K, causal)
        allowed = torch.arange(1, 31, dtype=torch.float64) if causal else torch.full((30,), 30.0, dtype=torch.float64)
        assert (Mbar <= M + 1e-12).all() and (M <= Mbar + allowed.log() + 1e-12).all()
    with pytest.raises(ValueError, match="expected Q"):
        exact_sparsity(Q[0], K, False)


@pytest.mark.parametrize("site", ["encoder.0.0", "encoder.0.1", "decoder_self.0"])
def test_recorded_sampled_mbar_equals_brute_force_over_key_index(report, records, model, site):
    index = records[f"{site}.key_index"]  # [L_Q, U]
    L_K = records[f"{site}.keys"].shape[1]
    causal = site.startswith("decoder_self") and model.config.causal_sampling
    for b, h, i in PICKS:
        keys = index[i].tolist()
        if causal:  # only the sampled keys the query may attend to, plus its own key
            keys = [j for j in keys if j <= i] + [i]
        s = brute_scores(records, site, b, h, i, keys)
        if model.config.mean_divisor == "U":
            divisor = len(keys)
        else:
            divisor = i + 1 if causal else L_K
        expected = max(s) - sum(s) / divisor
        recorded = table_value(report, site, WINDOWS[b], h, i, "sampled_mbar")
        assert recorded == pytest.approx(expected, rel=1e-5, abs=1e-5)


def test_selected_queries_are_the_sampled_top_u(report, model):
    """u = factor·⌈ln L_Q⌉ (capped at L_Q), and the selected flags mark the u largest sampled M̄."""
    prob = report.queries[report.queries.lazy_rule != "full attention"]
    for (site, window, head), group in prob.groupby(["site", "window", "head"]):
        L_Q = len(group)
        u = min(L_Q, model.config.factor * math.ceil(math.log(L_Q)))
        assert group.selected.sum() == u
        top = set(group.nlargest(u, "sampled_mbar").position)
        assert set(group[group.selected].position) == top
        assert set(group[group.rank_sampled <= u].position) == top
    cross = report.queries[report.queries.site == "cross.0"]
    assert cross.selected.all() and cross.sampled_mbar.isna().all() and (cross.lazy_rule == "full attention").all()


def test_encoder_and_decoder_timestamps_are_the_split_timestamps(report, tiny_prepared):
    spec, stamps = tiny_prepared.spec, tiny_prepared.test.timestamps
    q = report.queries
    for w in WINDOWS:
        layer0 = q[(q.site == "encoder.0.0") & (q["head"] == 0) & (q.window == w)].sort_values("position")
        assert list(layer0.timestamp) == list(stamps[w:w + spec.seq_len])
        distilled = q[(q.site == "encoder.0.1") & (q["head"] == 0) & (q.window == w)].sort_values("position")
        p = distilled.position.to_numpy()
        assert list(distilled.timestamp) == list(stamps[w + 2 * p])  # the START of the span
        assert list(distilled.span_end) == list(stamps[w + np.minimum(2 * p + 1, spec.seq_len - 1)])
        dec = q[(q.site == "decoder_self.0") & (q["head"] == 0) & (q.window == w)].sort_values("position")
        start = w + spec.seq_len - spec.label_len
        assert list(dec.timestamp) == list(stamps[start:start + spec.label_len + spec.pred_len])
        assert list(dec.segment) == ["label"] * spec.label_len + ["future"] * spec.pred_len


def test_rows_are_recorded_softmax_rows_with_lazy_rule(report, model):
    for sr in report.rows:
        B, H, u, L_K = sr.rows.shape
        assert sr.selected.shape == (B, H, u) and len(sr.key_steps) == L_K
        assert np.allclose(sr.rows.sum(-1), 1.0, atol=1e-5)
        assert sr.lazy_rows  # says in words what an unselected row is
    dec = report.site_rows("decoder_self.0")
    future = np.arange(dec.rows.shape[-1])[None, None, None, :] > dec.selected[..., None]
    assert (dec.rows[future] == 0).all()  # causal: no weight on j > i
    assert dec.lazy_rule == {"cummean": "running mean(V)", "cumsum": "running sum(V)"}[model.config.decoder_lazy]
    assert report.site_rows("encoder.0.0").lazy_rule == "mean(V)"
    assert report.site_rows("cross.0").rows.shape[2] == model.config.dec_len  # full: every query


def test_heads_summary_against_brute_force(report, model):
    periods = seasonal_periods("h")
    for _, row in report.heads.iterrows():
        sr = report.site_rows(row.site)
        p = sr.rows[:, row["head"]].reshape(-1, sr.rows.shape[-1])
        entropy = np.mean([-sum(x * math.log(x) for x in r if x > 0) for r in p.tolist()])
        assert row.mean_entropy == pytest.approx(entropy, rel=1e-9)
        assert row.mean_max_weight == pytest.approx(p.max(-1).mean(), rel=1e-9)
        assert row.dominant_lag_steps == row.dominant_lag * 2 ** row.level
        assert row.previous_step == (row.dominant_lag == 1)
        assert row.seasonal_lag == any(abs(abs(row.dominant_lag_steps) - s) <= 1 for s in periods)


def test_agreement_table_shape_and_chance(report, model):
    a = report.agreement
    assert set(a.site) == {"encoder.0.0", "encoder.0.1", "decoder_self.0"}  # cross is full attention
    assert len(a) == 3 * model.config.n_heads and (a.seeds == 3).all()
    assert np.allclose(a.chance_overlap, a.u / a.L_Q)
    by_seed = report.agreement_by_seed
    assert len(by_seed) == 3 * model.config.n_heads * 3 * len(WINDOWS)
    one = by_seed[(by_seed.site == "encoder.0.0") & (by_seed["head"] == 1)]
    per_seed = one.groupby("seed").overlap_at_u.mean()
    row = a[(a.site == "encoder.0.0") & (a["head"] == 1)].iloc[0]
    assert row.overlap_at_u_mean == pytest.approx(per_seed.mean()) and row.overlap_at_u_std == pytest.approx(
        per_seed.std(ddof=1))
    assert a[[c for c in a.columns if c.startswith(("overlap", "jaccard"))]].stack().between(0, 1).all()


def test_overlap_is_one_when_every_query_is_active(tiny_trained, tiny_prepared):
    """factor 100 makes u = L_Q at every site: the sampled and exact top-u are both all queries."""
    model = tiny_trained[0].model
    wide = Informer(model.config.replace(factor=100))
    wide.load_state_dict(model.state_dict())
    wide.eval()
    r = sparsity_report(wide, tiny_prepared, "test", [0], seeds=2)
    a = r.agreement
    assert (a.u == a.L_Q).all()
    assert np.allclose(a[["overlap_at_u_mean", "jaccard_mean", "overlap_at_u_mbar_mean"]], 1.0)
    assert np.allclose(a.overlap_at_u_std, 0.0)
    assert r.queries[r.queries.lazy_rule != "full attention"].selected.all()
    # Spearman stays below 1 here: U = L_K keys are drawn WITH replacement (≈ 63% distinct), so the
    # sampled M̄ is still an estimate. The next test covers a sample holding every key.
    assert (a.spearman_mean <= 1.0).all()


def test_sample_of_every_key_reproduces_exact_mbar_and_ranks():
    g = torch.Generator().manual_seed(1)
    Q, K, V = (torch.randn(2, 3, 40, 8, generator=g, dtype=torch.float64) for _ in range(3))
    every_key = KeySample(draws=torch.arange(40).repeat(40, 1), block=1, L_Q=40)  # [L_Q, U = L_K]
    result = probsparse_attention(Q, K, V, factor=2, causal=False, mean_divisor="U", decoder_lazy="cummean",
                                  sample_block=1, sample=every_key)
    M, Mbar = exact_sparsity(Q, K, False)
    assert torch.allclose(result.scores, Mbar, atol=1e-12)
    u = result.selected.shape[-1]
    assert np.allclose(topk_agreement(result.scores, Mbar, u).overlap, 1.0)
    assert np.allclose(spearman(result.scores, Mbar), 1.0)


def test_topk_agreement_by_hand():
    sampled = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.0])
    exact = np.array([0.0, 9.0, 8.0, 1.0, 7.0, 2.0])  # exact top-3 = {1, 2, 4}; sampled top-3 = {0, 1, 2}
    agreement = topk_agreement(sampled, exact, 3)
    assert agreement.overlap == pytest.approx(2 / 3) and agreement.jaccard == pytest.approx(2 / 4)
    assert topk_agreement(exact, exact, 3).overlap == 1.0
    x = np.random.default_rng(0).normal(size=(4, 5, 30))
    assert np.allclose(topk_agreement(x, x, 7).overlap, 1.0) and np.allclose(topk_agreement(x, x, 7).jaccard, 1.0)
    with pytest.raises(ValueError):
        topk_agreement(sampled, exact, 7)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40), st.integers(1, 5), st.integers(0, 2**31 - 1), st.sampled_from(["normal", "ties", "nan"]))
def test_the_top_u_mask_is_the_stable_sorts_first_u(L, rows, seed, kind):
    """The partition-based top-u mask selects what a stable descending sort's first u entries are (earliest among ties,
    NaN last), for every u, with heavy ties and NaN."""
    from informer_lab.analysis.attention.sparsity import _top_mask
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, L)) if kind == "normal" else rng.integers(0, 3, size=(rows, L)).astype(float)
    if kind == "nan":
        x[rng.random(x.shape) < 0.3] = np.nan
    for u in range(1, L + 1):
        order = np.argsort(-x, axis=-1, kind="stable")[..., :u]
        expected = np.zeros(x.shape, dtype=bool)
        np.put_along_axis(expected, order, True, axis=-1)
        got = _top_mask(x, u)
        assert (got.sum(-1) == u).all()
        np.testing.assert_array_equal(got, expected)


def test_spearman_by_the_textbook_formula():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=25), rng.normal(size=25)
    d = np.argsort(np.argsort(a)) - np.argsort(np.argsort(b))
    assert spearman(a, b) == pytest.approx(1 - 6 * (d ** 2).sum() / (25 * (25 ** 2 - 1)))
    assert spearman(a, np.exp(a)) == pytest.approx(1.0) and spearman(a, -a) == pytest.approx(-1.0)
    assert np.isnan(spearman(a, np.ones(25)))
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(np.corrcoef([1, 2.5, 2.5, 4], [1, 2, 3, 4])[0, 1])


def test_dominant_lag_finds_a_seasonal_lag_of_24():
    """Rows that put 0.6 of their mass on the key 24 steps back, the rest spread over the allowed past."""
    L = 96
    queries = np.arange(30, L)
    rows = np.zeros((len(queries), L))
    for n, i in enumerate(queries):
        rows[n, :i + 1] = 0.4 / (i + 1)
        rows[n, i - 24] += 0.6
    profile = lag_profile(rows, queries, np.arange(L))
    assert profile.lag == 24 and profile.lag_mass == pytest.approx(0.6 + np.mean(0.4 / (queries + 1)))
    assert profile.mass.sum() == pytest.approx(1.0)
    assert profile.distance == pytest.approx(np.mean([(rows[n] * np.abs(i - np.arange(L))).sum()
                                                      for n, i in enumerate(queries)]))
    assert any(abs(profile.lag - p) <= 1 for p in seasonal_periods("h"))
    previous = np.eye(L)[queries - 1]  # all mass one step back
    assert lag_profile(previous, queries, np.arange(L)).lag == 1


def test_seasonal_periods():
    assert seasonal_periods("h") == (24, 168)
    assert 96 in seasonal_periods("15min")
    assert seasonal_periods("D") == (7,)


def test_row_entropy_of_uniform_and_one_hot():
    assert row_entropy(np.full(8, 1 / 8)) == pytest.approx(math.log(8))
    assert row_entropy(np.eye(5)[2]) == 0.0


@pytest.mark.parametrize("length", [48, 51, 1, 2, 3, 17, 96])
def test_distilled_spans_tile_the_input(length):
    for level in range(6):
        spans = distilled_spans(length, level)
        covered = np.concatenate([np.arange(a, b + 1) for a, b in spans])
        assert list(covered) == list(range(length))  # in order, no gap, no overlap
        i = np.arange(len(spans))
        assert (spans[:, 0] == i * 2 ** level).all()
        assert (spans[:, 1] == np.minimum((i + 1) * 2 ** level, length) - 1).all()


def test_bad_inputs_are_refused(model, tiny_prepared):
    with pytest.raises(ValueError, match="outside"):
        sparsity_report(model, tiny_prepared, "test", [10 ** 6], seeds=1)
    with pytest.raises(ValueError, match="distinct"):
        sparsity_report(model, tiny_prepared, "test", [1, 1], seeds=1)
    with pytest.raises(ValueError, match="seeds"):
        sparsity_report(model, tiny_prepared, "test", [1], seeds=0)
    training = Informer(model.config)
    with pytest.raises(ValueError, match="eval mode"):
        sparsity_report(training, tiny_prepared, "test", [0], seeds=1)


def test_exact_sparsity_shared_between_threads_is_the_same_to_the_bit(monkeypatch):
    """Long sites score their blocks of queries on several threads: each block's numbers are the ones one thread
    gives, causal and not."""
    from informer_lab.analysis.attention import sparsity
    g = torch.Generator().manual_seed(3)
    Q, K = torch.randn(1, 2, 1500, 8, generator=g), torch.randn(1, 2, 1500, 8, generator=g)  # 18 blocks of 87
    for causal in (False, True):
        monkeypatch.setattr(sparsity, "PARALLEL_SCORES", 1 << 60)
        one = exact_sparsity(Q, K, causal)
        monkeypatch.setattr(sparsity, "PARALLEL_SCORES", 1)
        many = exact_sparsity(Q, K, causal)
        assert all(torch.equal(a, b) for a, b in zip(one, many))
