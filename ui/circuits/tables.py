"""Pure shaping of the circuits analyses for the Circuits screen."""
from __future__ import annotations

import math

import pandas as pd


def _interval(lo: float, hi: float) -> str:
    return "—" if lo is None or (isinstance(lo, float) and math.isnan(lo)) else f"[{lo:+.4f}, {hi:+.4f}]"


def composition_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Highest scores first, with the random baseline beside each."""
    columns = [c for c in ("sender", "receiver", "kind", "score", "random_mean", "random_q95", "above_q95", "path",
                           "reason") if c in table.columns]
    return table[columns].sort_values("score", ascending=False, ignore_index=True)


def composition_note(result) -> str:
    table = result.table
    above = int(table["above_q95"].sum()) if "above_q95" in table else 0
    scored = int(table["score"].notna().sum())
    return (f"{above} of {scored} sender → receiver scores lie above the 95 % quantile of random matrices of the same "
            "shapes: about 5 % would by chance alone. LayerNorm gains are folded into the receivers and the "
            "distilling convolution's channel map (BatchNorm folded in) into the encoder's layer-to-layer pairs. "
            "Read a score against its random baseline, not against 1: random matrices score about 1/√d_model, two "
            "heads with D equal singular values, one reading exactly what the other writes, 1/√D, and a head with "
            "itself about the random level (it need not read what it writes).")


def atp_summary(result) -> str:
    rho = result.rho
    interval = f"[{rho.lo:+.3f}, {rho.hi:+.3f}]" if rho.lo == rho.lo else f"(no interval: {rho.reason})"
    disagree = result.heads[result.heads["disagree"]]
    named = ", ".join(f"{r.site}:{r.head}" for r in disagree.itertuples()) or "none"
    ratio = result.atp_seconds / result.exact_seconds if result.exact_seconds else float("nan")
    return (f"**Spearman ρ between AtP and exact patching** across the heads, mean over {len(result.pairs.clean)} "
            f"pairs: **{rho.estimate:+.3f}** {interval}. Heads where they disagree beyond the interval "
            f"(Benjamini–Hochberg at q = 0.05 across the {len(result.heads)} heads): **{named}**. Time: AtP "
            f"{result.atp_seconds:.2f} s, exact {result.exact_seconds:.2f} s ({ratio:.2f}×): AtP costs one forward "
            "and one backward pass whatever the number of heads, exact patching one run per head.")


def atp_heads(heads: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"head": heads["site"] + ":" + heads["head"].astype(str), "AtP (mean)": heads["atp"],
                         "exact (mean)": heads["exact"], "AtP − exact": heads["difference"],
                         "95 % interval": [_interval(a, b) for a, b in zip(heads["difference_low"],
                                                                          heads["difference_high"])],
                         "disagree (BH)": heads["disagree"], "disagree (raw)": heads["disagree_raw"],
                         "no interval because": heads["reason"]}).sort_values("exact (mean)", ascending=False,
                                                                               key=abs, ignore_index=True)
