"""One model, every attention kind (analysis.instruments.variants, analysis.instruments.attention_cost), against the maths:

- exact M(q, K) from a row alone (−mean log p) equals log-sum-exp minus the mean of the scores it came from;
- the weight a kind keeps is the row's sum over the kind's allowed keys (brute force here, a loop over pairs); a
  pattern that allows every key keeps all of it, ProbSparse keeps the u rows of highest M whole;
- on a trained model: its own kind has ΔMSE exactly 0, full attention keeps all the weight, every share lies in
  [0, 1] with an interval around it, the per-head table covers every kind, self-attention site and head;
- the CLI writes one row per kind and refuses an unknown kind in one line.
"""
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from informer_lab.analysis.instruments.attention_cost import pairs, peak_mib, peak_mibs, time_kinds
from informer_lab.analysis.instruments.variants import compare_kinds, kept_weights, kind_table
from informer_lab.model.attention import sample_sizes
from informer_lab.model.attention import dense_pattern, positional_table
from tests.cli.helpers import cli
from tests.conftest import SAMPLE_CSV


def _qk(B=2, H=3, L=20, D=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(B, H, L, D, generator=g) * 1.5, torch.randn(B, H, L, D, generator=g) * 1.5


def _rows(Q, K, causal):
    """softmax(QKᵀ/√D) written out (causal: over j ≤ i)."""
    s = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-1], s.shape[-1], dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, -1)


@pytest.mark.parametrize("causal", [False, True])
def test_exact_m_is_minus_the_mean_log_weight_of_the_row(causal):
    """M = LSE − mean s over the keys a query sees, and log p_ij = s_ij − LSE, so M = −mean_j log p_ij."""
    Q, K = _qk()
    rows = _rows(Q, K, causal)
    L = Q.shape[2]
    _, M = kept_weights(["full"], Q, K, causal=causal, factor=5)
    for i in (0, 7, L - 1):
        seen = rows[..., i, : (i + 1 if causal else L)]
        torch.testing.assert_close(M[..., i], -seen.log().mean(-1), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kind, options", [("window", {"window": 3}), ("strided", {}), ("block", {"blocks": 4}),
                                           ("logsparse", {}), ("fixed", {"block": 5})])
def test_the_kept_weight_is_the_rows_sum_over_the_allowed_pairs(kind, options, causal, monkeypatch):
    monkeypatch.setattr("informer_lab.analysis.instruments.variants.SCORE_NUMBERS", 200)  # several chunks of queries
    Q, K = _qk()
    rows = _rows(Q, K, causal)
    B, H, L, _ = Q.shape
    allowed = dense_pattern(positional_table(kind, L, H, causal=causal, options=options), L)
    allowed = allowed.expand(H, L, L) if allowed.dim() == 2 else allowed
    want = torch.zeros(B, H, L)
    for b in range(B):
        for h in range(H):
            for i in range(L):
                want[b, h, i] = sum(float(rows[b, h, i, j]) for j in range(L) if allowed[h, i, j])
    kept, _ = kept_weights([kind], Q, K, causal=causal, factor=5, options={kind: options})
    torch.testing.assert_close(kept[kind], want, atol=1e-5, rtol=1e-5)


def test_lsh_keeps_the_weight_on_its_buckets_and_adaptive_its_soft_mask(monkeypatch):
    monkeypatch.setattr("informer_lab.analysis.instruments.variants.SCORE_NUMBERS", 300)
    Q, K = _qk(L=24)
    rows = _rows(Q, K, False)
    table = kind_table("lsh", Q, K, causal=False, seed=3, options={"buckets": 4, "chunk": 4})
    allowed = dense_pattern(table, 24)  # [B, H, L, L]
    kept, _ = kept_weights(["lsh"], Q, K, causal=False, factor=5, seed=3, options={"lsh": {"buckets": 4, "chunk": 4}})
    torch.testing.assert_close(kept["lsh"], (rows * allowed).sum(-1), atol=1e-5, rtol=1e-5)
    distance = (torch.arange(24).view(-1, 1) - torch.arange(24).view(1, -1)).abs().float()
    soft = ((8.0 + 5.0 - distance) / 8.0).clamp(0, 1)  # m_z(x) with span z = 5, ramp R = 8 (Sukhbaatar et al.)
    kept, _ = kept_weights(["adaptive"], Q, K, causal=False, factor=5,
                           options={"adaptive": {"span": 5.0, "ramp": 8.0, "max_span": 64}})
    torch.testing.assert_close(kept["adaptive"], (rows * soft).sum(-1), atol=1e-5, rtol=1e-5)


def test_a_pattern_of_every_key_keeps_everything_and_probsparse_keeps_its_top_u_rows():
    Q, K = _qk(L=40)
    kept, M = kept_weights(["window", "prob", "full"], Q, K, causal=False, factor=2,
                           options={"window": {"window": 40}})
    torch.testing.assert_close(kept["window"], torch.ones(2, 3, 40))
    assert torch.equal(kept["full"], torch.ones(2, 3, 40))
    u = sample_sizes(2, 40, 40)[1]
    assert torch.equal(kept["prob"].sum(-1), torch.full((2, 3), float(u)))
    assert torch.equal(torch.gather(kept["prob"], -1, M.topk(u, -1).indices), torch.ones(2, 3, u))


def test_every_kind_on_a_trained_model(tiny_trained, tiny_prepared):
    checkpoint, _, _ = tiny_trained
    kinds = ["prob", "full", "window", "lsh", "adaptive"]
    result = compare_kinds(checkpoint.model, tiny_prepared, kinds=kinds, max_windows=40, cost=False)
    t = result.table.set_index("kind")
    assert list(t.index) == kinds and bool(t.loc["prob", "own"])
    assert t.loc["prob", ["delta_mse", "delta_mse_lo", "delta_mse_hi"]].abs().max() == 0
    assert t.loc["full", "mass_kept"] == pytest.approx(1.0) and t.loc["full", "topu_overlap"] == pytest.approx(1.0)
    for metric in ("mass_kept", "topu_overlap"):
        assert t[metric].between(0, 1 + 1e-6).all()
    for metric in ("mse", "delta_mse", "mass_kept"):
        lo, hi = t[f"{metric}_lo"], t[f"{metric}_hi"]  # NaN: no honest interval over 40 windows
        assert ((lo <= t[metric] + 1e-12) | lo.isna()).all() and ((t[metric] <= hi + 1e-12) | hi.isna()).all()
    assert t.loc["window", "delta_mse"] != 0  # the swap changes the forecast
    c = checkpoint.model.config
    self_sites = sum(1 for s in checkpoint.model.sites if s.kind != "cross")
    assert len(result.heads) == len(kinds) * self_sites * c.n_heads


def test_the_cost_table_against_sdpa_in_the_same_process():
    table = time_kinds(["prob", "window"], heads=2, head_dim=8, length=256, rounds=2)
    assert list(table["kind"]) == ["prob", "window"] and (table["ms"] > 0).all() and (table["sdpa_ms"] > 0).all()
    assert table.loc[1, "pairs"] == pairs("window", 2, 256) == positional_table("window", 256, 2, causal=False,
                                                                                 options={}).pairs()
    u = 5 * math.ceil(math.log(256))
    assert pairs("prob", 2, 256) == 256 * u + u * 256


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="one child for many calls: Linux only")
def test_many_peaks_in_one_child_are_each_calls_own():
    """A call measured after a larger one in the same child shows its own peak: the same kind twice gives the same
    rise (if the first call's freed memory stayed resident, the second would rise by almost nothing), a small kind
    after a large one what it shows alone, and the keys are the calls asked for, in order."""
    big, again, small = peak_mibs(["strided", "strided", "block"], heads=4, head_dim=8, lengths=[1440])
    alone = peak_mib("block", heads=4, head_dim=8, length=1440)
    assert big > 20 and abs(again - big) <= max(1.0, 0.05 * big), (big, again)
    assert abs(small - alone) <= 1.0, (small, alone)
    with pytest.raises(ValueError, match="lengths"):
        peak_mibs(["block", "strided"], lengths=[96, 192, 384])


def test_cli_variants_writes_one_row_per_kind(tiny_trained, tmp_path):
    _, _, folder = tiny_trained
    out, heads = tmp_path / "variants.csv", tmp_path / "heads.csv"
    run = cli("variants", "--checkpoint", folder, "--csv", SAMPLE_CSV, "--kinds", "prob,full,logsparse",
              "--max-windows", 24, "--no-baseline-check", "--out", out, "--heads-out", heads)
    assert run.returncode == 0, run.stderr
    table = pd.read_csv(out)
    assert list(table["kind"]) == ["prob", "full", "logsparse"]
    assert {"mse_lo", "delta_mse_hi", "mass_kept", "topu_overlap", "ms", "peak_mib"} <= set(table.columns)
    assert np.isfinite(table["peak_mib"]).all() and len(pd.read_csv(heads)) == 3 * 3 * 4  # kinds × self-attention sites × heads
    bad = cli("variants", "--checkpoint", folder, "--csv", SAMPLE_CSV, "--kinds", "prob,sparse", "--out", out)
    assert bad.returncode == 2 and "'sparse'" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
