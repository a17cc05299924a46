"""The checkpoint report's features section: a sparse dictionary of the memory the decoder reads, how much of it the
features explain, and the features whose ablation moves the forecast most (analysis.features)."""
from __future__ import annotations

import pandas as pd

from informer_lab.analysis.reports.html import ReportSection

LITTLE_FVU, LITTLE_SPLICE = 0.10, 0.05


def features_section(model, prepared, split: str, seed: int, *, steps: int = 1000, train_windows: int = 512,
                     test_windows: int = 128, top: int = 10) -> ReportSection:
    """Train a TopK SAE (the defaults but `steps`) on encoder.out over `train_windows` train windows, measure it on
    `test_windows` windows of `split`, and list the `top` features by the forecast's change when ablated."""
    from informer_lab.analysis.features.run import run_features
    from informer_lab.analysis.features.sae import SAESettings

    run = run_features(model, prepared, settings=SAESettings(steps=steps), seed=seed, train_windows=train_windows,
                       test_windows=test_windows, effect_windows=32, ablation_windows=8)
    m = run.metrics
    interval = (f"[{m.spliced_delta_mse_low:+.4f}, {m.spliced_delta_mse_high:+.4f}]" if not m.reason
                else "(no interval: too few independent stretches)")
    text = (f"A TopK sparse autoencoder of `{run.site}` (the memory the decoder reads): {run.trained.m} features, "
            f"k = {run.trained.settings.k}, trained on {run.trained.tokens:,} positions of {run.train_windows} train "
            f"windows (seed {seed}). On {m.windows} {split} windows: FVU {m.fvu:.3f}, L0 {m.l0:.1f}, dead features "
            f"{m.dead_fraction:.1%}; the forecast's MSE {m.model_mse:.4f}, with the reconstruction spliced in "
            f"{m.spliced_mse:.4f} (ΔMSE {m.spliced_delta_mse:+.4f} {interval}, {m.relative_delta:+.1%}).")
    if m.fvu > LITTLE_FVU or abs(m.relative_delta) > LITTLE_SPLICE:
        text += ("\n\nThese features explain little of the site: what they show is a partial picture (FVU over "
                 f"{LITTLE_FVU:.0%} or the spliced forecast off by more than {LITTLE_SPLICE:.0%}).")
    text += (f"\n\nThe table: the {top} features whose ablation (on {run.ablation_windows} windows; causal) moves the "
             "forecast most, with their density and direct effect through the frozen LayerNorms (descriptive). "
             "Feature pages, concepts and other sites: the Features screen, or the sae command.")
    columns = ["feature", "density", "mean_activation", "direct_rms", "ablation_rms", "ablation_delta_mse", "nearest",
               "nearest_cosine"]
    table = run.table.sort_values("ablation_rms", ascending=False).head(top)[columns].reset_index(drop=True)
    figures = pd.DataFrame([{"fvu": m.fvu, "l0": m.l0, "dead_fraction": m.dead_fraction, "model_mse": m.model_mse,
                             "spliced_mse": m.spliced_mse, "spliced_delta_mse": m.spliced_delta_mse,
                             "spliced_delta_mse_low": m.spliced_delta_mse_low,
                             "spliced_delta_mse_high": m.spliced_delta_mse_high}])
    return ReportSection("Features", text, (), [("dictionary", figures), ("features", table)])
