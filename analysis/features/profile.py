"""What one feature looks like on held-out windows (descriptive), and the table of all features.

- density: the share of positions at which it fires (z_f > 0); its activation histogram over those positions;
- top activations: the windows where it fires most (each window's strongest position), with the input span that
  position reads (sites.py: the distilling pyramid's tiling) and their timestamps;
- nearest features: by the cosine of decoder directions (columns of W_dec, unit norm), the feature itself left out.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.features.metrics import FeatureCodes
from informer_lab.analysis.features.sae import TopKSAE
from informer_lab.analysis.features.sites import SiteActivations


def check_feature(codes: FeatureCodes, feature: int) -> int:
    from informer_lab.analysis.errors import ConfigError

    if not 0 <= int(feature) < codes.m:
        raise ConfigError(f"feature {feature} does not exist: the dictionary has features 0 … {codes.m - 1}")
    return int(feature)


def densities(codes: FeatureCodes) -> np.ndarray:
    """[m] the share of positions each feature fires at."""
    return codes.fires() / max(1, codes.positions)


def histogram(codes: FeatureCodes, feature: int, bins: int = 30) -> pd.DataFrame:
    """low, high, count: feature f's activations where it fires (empty where it never does)."""
    z = codes.feature(check_feature(codes, feature))
    fired = z[z > 0]
    if not len(fired):
        return pd.DataFrame({"low": [], "high": [], "count": []})
    counts, edges = np.histogram(fired, bins=bins)
    return pd.DataFrame({"low": edges[:-1], "high": edges[1:], "count": counts})


def top_activations(codes: FeatureCodes, activations: SiteActivations, prepared: PreparedData, feature: int,
                    n: int = 10) -> pd.DataFrame:
    """The `n` windows where feature f fires most, each at its strongest position: rank, window (the split's index),
    position, activation, first / last (window steps the position reads), first_time / last_time."""
    z = codes.feature(check_feature(codes, feature))  # [S, L]
    best = z.argmax(axis=1)
    peak = z[np.arange(len(z)), best]
    order = [i for i in np.argsort(-peak, kind="stable") if peak[i] > 0][:n]
    times = prepared.split(activations.split).timestamps
    rows = []
    for rank, i in enumerate(order, start=1):
        w, p = int(activations.windows[i]), int(best[i])
        first, last = (int(s) for s in activations.spans[p])
        known = first >= 0 and w + last < len(times)
        rows.append({"rank": rank, "window": w, "position": p, "activation": float(peak[i]), "first": first,
                     "last": last, "first_time": times[w + first] if known else pd.NaT,
                     "last_time": times[w + last] if known else pd.NaT})
    return pd.DataFrame(rows, columns=["rank", "window", "position", "activation", "first", "last", "first_time",
                                       "last_time"])


def window_profile(codes: FeatureCodes, activations: SiteActivations, prepared: PreparedData, feature: int,
                   window_row: int) -> pd.DataFrame:
    """Feature f along one scored window (its row among activations.windows): position, first, last, activation,
    first_time, last_time — what a chart draws over the series."""
    z = codes.feature(check_feature(codes, feature))[window_row]  # [L]
    w = int(activations.windows[window_row])
    times = prepared.split(activations.split).timestamps
    spans = activations.spans
    ok = (spans[:, 0] >= 0) & (w + spans[:, 1] < len(times))
    return pd.DataFrame({"position": np.arange(len(z)), "first": spans[:, 0], "last": spans[:, 1], "activation": z,
                         "first_time": [times[w + a] if k else pd.NaT for a, k in zip(spans[:, 0], ok)],
                         "last_time": [times[w + b] if k else pd.NaT for b, k in zip(spans[:, 1], ok)]})


def nearest(sae: TopKSAE, feature: int, n: int = 5) -> pd.DataFrame:
    """feature, cosine: the n features whose decoder directions are nearest to f's."""
    W = sae.W_dec.detach().double()
    W = W / W.norm(dim=0, keepdim=True).clamp_min(1e-12)
    cosine = (W.T @ W[:, feature]).numpy()
    cosine[feature] = -np.inf
    order = np.argsort(-cosine, kind="stable")[:n]
    return pd.DataFrame({"feature": order, "cosine": cosine[order]})


def features_table(sae: TopKSAE, codes: FeatureCodes, direct_rms: np.ndarray | None = None,
                   ablation: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per feature: feature, density, fires, mean_activation (where it fires), max_activation, nearest,
    nearest_cosine; direct_rms (data units; NaN where the site has no direct path) and ablation_rms /
    ablation_delta_mse (effects.ablation_effects) when given."""
    fires = codes.fires()
    m = codes.m
    sums = np.bincount(codes.indices.reshape(-1), weights=codes.values.reshape(-1).astype(np.float64), minlength=m)
    peaks = np.zeros(m)
    np.maximum.at(peaks, codes.indices.reshape(-1), codes.values.reshape(-1).astype(np.float64))
    W = sae.W_dec.detach().double()
    W = W / W.norm(dim=0, keepdim=True).clamp_min(1e-12)
    cosine = (W.T @ W).numpy()
    np.fill_diagonal(cosine, -np.inf)
    near = cosine.argmax(axis=1)
    table = pd.DataFrame({"feature": np.arange(m), "density": fires / max(1, codes.positions), "fires": fires,
                          "mean_activation": np.divide(sums, fires, out=np.zeros(m), where=fires > 0),
                          "max_activation": peaks, "nearest": near, "nearest_cosine": cosine[np.arange(m), near]})
    table["direct_rms"] = np.asarray(direct_rms, dtype=np.float64) if direct_rms is not None and len(direct_rms) \
        else np.nan
    if ablation is not None:
        table = table.merge(ablation, on="feature", how="left")
    return table


__all__ = ["check_feature", "densities", "features_table", "histogram", "nearest", "top_activations",
           "window_profile"]
