"""One model, every attention kind (analysis.variants, analysis.attention_cost), against the maths:

- exact M(q, K) from a row alone (−mean log p) equals log-sum-exp minus the mean of the scores it came from;
- the weight a kind keeps is the row's sum over the kind's allowed keys (brute force here, a loop over pairs); a
  pattern that allows every key keeps all of it, ProbSparse keeps the u rows of highest M whole;
- on a trained model: its own kind has ΔMSE exactly 0, full attention keeps all the weight, every share lies in
  [0, 1] with an interval around it, the per-head table covers every kind, self-attention site and head;
- the CLI writes one row per kind and refuses an unknown kind in one line.
"""
import math

import numpy as np
import pandas as pd
import pytest
import torch

from analysis.attention_cost import pairs, time_kinds
from analysis.variants import compare_kinds, exact_m, kept_weight
from model.attention import sample_sizes
from model.attention import dense_pattern, positional_table
from tests.cli.helpers import cli
from tests.conftest import SAMPLE_CSV


def _rows(B=2, H=3, L=20, causal=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(B, H, L, L, generator=g) * 2
    if causal:
        scores = scores.masked_fill(torch.ones(L, L, dtype=torch.bool).triu(1), float("-inf"))
    return scores, torch.softmax(scores, -1)


@pytest.mark.parametrize("causal", [False, True])
def test_exact_m_from_the_rows_is_log_sum_exp_minus_the_mean_score(causal):
    scores, rows = _rows(causal=causal)
    L = scores.shape[-1]
    for i in (0, 7, L - 1):
        seen = scores[..., i, : (i + 1 if causal else L)]
        want = torch.logsumexp(seen, -1) - seen.mean(-1)
        torch.testing.assert_close(exact_m(rows, causal)[..., i], want, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("kind, options", [("window", {"window": 3}), ("strided", {}), ("block", {"blocks": 4}),
                                           ("logsparse", {})])
def test_the_kept_weight_is_the_rows_sum_over_the_allowed_pairs(kind, options):
    _, rows = _rows()
    B, H, L, _ = rows.shape
    allowed = dense_pattern(positional_table(kind, L, H, causal=False, options=options), L)
    allowed = allowed.expand(H, L, L) if allowed.dim() == 2 else allowed
    want = torch.zeros(B, H, L)
    for b in range(B):
        for h in range(H):
            for i in range(L):
                want[b, h, i] = sum(float(rows[b, h, i, j]) for j in range(L) if allowed[h, i, j])
    got = kept_weight(kind, rows, None, None, causal=False, factor=5, options=options)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_a_pattern_of_every_key_keeps_everything_and_probsparse_keeps_its_top_u_rows():
    _, rows = _rows(L=40)
    everything = kept_weight("window", rows, None, None, causal=False, factor=5, options={"window": 40})
    torch.testing.assert_close(everything, torch.ones_like(everything))
    prob = kept_weight("prob", rows, None, None, causal=False, factor=2)
    u = sample_sizes(2, 40, 40)[1]
    torch.testing.assert_close(prob.sum(-1), torch.full((2, 3), float(u)))  # u whole rows (each sums to 1)
    top = exact_m(rows, False).topk(u, -1).indices
    torch.testing.assert_close(torch.gather(prob, -1, top), torch.ones(2, 3, u))


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
        assert (t[f"{metric}_lo"] <= t[metric] + 1e-12).all() and (t[metric] <= t[f"{metric}_hi"] + 1e-12).all()
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
