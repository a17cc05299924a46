"""The Features screen's pure shaping: the figures' summary, the tables as drawn, the evidence each part gives."""
from __future__ import annotations

import numpy as np
import pandas as pd

EVIDENCE = {
    "descriptive": "**Descriptive**: what the model computed on these windows (activations, densities, top windows).",
    "direct": "**Descriptive** (a linear path of this pass): the feature's decoder direction carried to the forecast "
              "with every LayerNorm's σ and every cross-attention row frozen; FFNs and distilling steps left out.",
    "causal": "**Causal**: an intervention on the model — the feature ablated or scaled at the site, every other "
              "part of the activation kept, same windows and key samples, with a 95 % interval over windows.",
    "heads": "**Correlational**: a linear split of the feature's pre-activation into each head's write (frozen "
             "norms), one pass; the remainder holds the embeddings, FFNs and biases.",
    "concepts": "**Correlational**: AUROC of the feature against your labels; the best of many features is chosen on "
                "the windows it is scored on, so it is optimistic.",
    "validated": "**Validated**: scored against the labels the generator planted (the regimes or spikes it kept as "
                 "its answer), not against a reading of the model.",
}
LITTLE_FVU = 0.10
LITTLE_SPLICE = 0.05


def _interval(low: float, high: float, reason: str, fmt: str = "{:+.4f}") -> str:
    if reason or not np.isfinite(low):
        return "(no interval: " + (reason.removeprefix("no interval: ") or "too few windows") + ")"
    return f"[{fmt.format(low)}, {fmt.format(high)}]"


def summary(run) -> str:
    """The dictionary's figures in two sentences, and a plain warning where its features explain little."""
    m = run.metrics
    lines = [f"**{run.trained.m} latents** (k = {run.trained.settings.k}) on `{run.site}`, trained on "
             f"{run.trained.tokens:,} positions of {run.train_windows} train windows in {run.seconds['train']:.1f} s. "
             f"On {m.windows} test windows ({m.positions:,} positions): FVU **{m.fvu:.3f}**, L0 **{m.l0:.1f}**, dead "
             f"**{m.dead_fraction:.1%}**; the forecast's MSE {m.model_mse:.4f}, with the reconstruction spliced in "
             f"{m.spliced_mse:.4f} (ΔMSE {m.spliced_delta_mse:+.4f} "
             f"{_interval(m.spliced_delta_mse_low, m.spliced_delta_mse_high, m.reason)}, "
             f"{m.relative_delta:+.1%} of the model's)."]
    little = []
    if m.fvu > LITTLE_FVU:
        little.append(f"they leave {m.fvu:.0%} of the site's variance unexplained")
    if abs(m.relative_delta) > LITTLE_SPLICE:
        little.append(f"the forecast moves by {m.relative_delta:+.0%} of its MSE when they replace the site")
    if little:
        lines.append("These features explain little: " + " and ".join(little) + ". Read what they show as a partial "
                     "picture of the site.")
    return "\n\n".join(lines)


FEATURE_COLUMNS = {"feature": "feature", "density": "density", "mean_activation": "mean act.",
                   "max_activation": "max act.", "direct_rms": "direct effect (RMS)", "ablation_rms": "ablation (RMS)",
                   "ablation_delta_mse": "ablation ΔMSE", "best_concept": "best concept",
                   "best_concept_auroc": "concept AUROC", "nearest": "nearest", "nearest_cosine": "cosine"}


def features_view(table: pd.DataFrame) -> pd.DataFrame:
    """The table of all features as drawn (raw numbers: the grid sorts them by a click on a header)."""
    columns = [c for c in FEATURE_COLUMNS if c in table.columns and not table[c].isna().all()]
    return table[columns].rename(columns=FEATURE_COLUMNS)


def top_view(top: pd.DataFrame) -> pd.DataFrame:
    out = top.copy()
    for c in ("first_time", "last_time"):
        out[c] = out[c].astype(str)
    return out.rename(columns={"first": "first step", "last": "last step", "first_time": "reads from",
                               "last_time": "to"})


def effect_frame(per_step: pd.DataFrame | None, intervention, column: str) -> pd.DataFrame:
    """step, direct (+ low, high), contribution (+ low, high) for one column (data units). contribution: the forecast's
    change under the intervention per unit of change of the feature, Δ / (α − 1) — for an ablation (α = 0) what the
    feature adds, f(x) − f(x without it) — on the same footing as the direct effect."""
    part = intervention.table[intervention.table.column == column].set_index("step")
    per_unit = 1.0 / (intervention.scale - 1.0)
    low, high = part.delta_low.values * per_unit, part.delta_high.values * per_unit
    out = pd.DataFrame({"step": part.index, "contribution": part.delta.values * per_unit,
                        "contribution_low": np.minimum(low, high), "contribution_high": np.maximum(low, high)})
    if per_step is not None:
        d = per_step[per_step.column == column].set_index("step").reindex(part.index)
        out["direct"], out["direct_low"], out["direct_high"] = d.effect.values, d.effect_low.values, d.effect_high.values
    return out


def intervention_line(iv) -> str:
    what = "ablated" if iv.scale == 0 else f"scaled by {iv.scale:g}"
    return (f"With the feature {what}: the forecast's MSE changes by {iv.delta_mse:+.5f} "
            f"{_interval(iv.delta_mse_low, iv.delta_mse_high, iv.reason, '{:+.5f}')} (standardised), RMS change "
            f"{iv.rms:.4f}, on {iv.windows} test windows.")


def concept_view(table: pd.DataFrame) -> pd.DataFrame:
    out = table[["concept", "value", "level", "positives", "feature", "auroc", "auroc_low", "auroc_high", "neuron",
                 "neuron_auroc"]].copy()
    out["features better"] = np.where(out.auroc > out.neuron_auroc, "yes", "no")
    return out.rename(columns={"auroc_low": "low", "auroc_high": "high", "neuron_auroc": "neuron AUROC"})
