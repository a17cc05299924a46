"""One site's dictionary trained and measured in one call: what the `sae` command and the Features screen run.

Train windows (spread evenly over the train split) → activations → the TopK SAE; test windows → FVU, L0, dead, the
spliced MSE (metrics.py); every feature's direct effect (where the site has a direct path) and its ablation on a few
test windows (effects.py); the table of all features (profile.py). Optional: concepts scored (concepts.py).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pandas as pd

from informer_lab.model import Informer

from informer_lab.analysis.anatomy.lens import check_eval
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.features.concepts import ConceptScores, Concepts, score_concepts
from informer_lab.analysis.features.effects import DirectEffects, ablation_effects, direct_effects
from informer_lab.analysis.features.metrics import Evaluation, evaluate
from informer_lab.analysis.features.profile import features_table
from informer_lab.analysis.features.sae import SAESettings, TrainedSAE, train_sae
from informer_lab.analysis.features.sites import DEFAULT_SITE, check_site, collect

MAX_WINDOWS = 100_000


@dataclass(frozen=True, eq=False)
class FeatureRun:
    """A trained dictionary of `site` and everything measured of it. table: one row per feature (profile.py's
    columns, then the direct and ablation effects); concepts: with a concept file, else None; seconds: per stage."""

    site: str
    seed: int
    trained: TrainedSAE
    train_windows: int
    evaluation: Evaluation
    direct: DirectEffects
    ablation: pd.DataFrame
    table: pd.DataFrame
    concepts: ConceptScores | None
    seconds: dict
    ablation_windows: int = 16

    @property
    def metrics(self):
        return self.evaluation.metrics

    def settings_dict(self) -> dict:
        s = self.trained.settings
        return {"site": self.site, "k": s.k, "expansion": s.expansion, "latents": self.trained.m, "steps": s.steps,
                "batch_size": s.batch_size, "learning_rate": s.learning_rate, "seed": self.seed,
                "train_windows": self.train_windows, "train_positions": self.trained.tokens,
                "test_windows": self.metrics.windows, "test_positions": self.metrics.positions,
                "ablation_windows": self.ablation_windows}


# The windows a run reads at seq_len 96 (run_features' defaults) and the fewest it reads at any length.
WINDOWS_AT_96 = {"train_windows": 1024, "test_windows": 256, "effect_windows": 64, "ablation_windows": 16}
FEWEST_WINDOWS = {"train_windows": 64, "test_windows": 32, "effect_windows": 16, "ablation_windows": 8}


def windows_for_length(seq_len: int) -> dict[str, int]:
    """run_features' window counts for inputs of `seq_len` rows: the defaults hold up to 96 rows; longer windows read
    the same number of input rows (fewer windows, each longer: a dictionary of a seq_len-1440 model trains on 68
    windows of 720 encoder positions, about 49,000 activations), never fewer than FEWEST_WINDOWS."""
    scale = min(1.0, 96 / max(1, int(seq_len)))
    return {name: max(FEWEST_WINDOWS[name], round(n * scale)) for name, n in WINDOWS_AT_96.items()}


def check_windows(**counts: int) -> None:
    for name, value in counts.items():
        if not 1 <= int(value) <= MAX_WINDOWS:
            raise ConfigError(f"--{name.replace('_', '-')} must be in 1 … {MAX_WINDOWS:,}, got {value}")


def run_features(model: Informer, prepared: PreparedData, site: str = DEFAULT_SITE,
                 settings: SAESettings = SAESettings(), *, seed: int = 0, train_windows: int = 1024,
                 test_windows: int = 256, effect_windows: int = 64, ablation_windows: int = 16,
                 concepts: Concepts | None = None, say: Callable[[str], None] | None = None) -> FeatureRun:
    """Train and measure a dictionary of `site` (module docstring); `seed` seeds the SAE and every key sample."""
    check_eval(model)
    check_site(model, site)
    check_windows(train_windows=train_windows, test_windows=test_windows, effect_windows=effect_windows,
                  ablation_windows=ablation_windows)
    settings = replace(settings, seed=int(seed))
    settings.check(model.config.d_model)
    say = say or (lambda _: None)
    seconds = {}

    def timed(name: str, phase: str, work):
        say(phase)
        start = time.perf_counter()
        out = work()
        seconds[name] = time.perf_counter() - start
        return out

    train = timed("collect", f"recording {site} on up to {train_windows} train windows",
                  lambda: collect(model, prepared, "train", site, windows=train_windows, seed=seed))
    trained = timed("train", f"training {settings.expansion * model.config.d_model} latents, k = {settings.k}, "
                             f"{settings.steps} steps",
                    lambda: train_sae(train.values, settings,
                                      progress=lambda s, n: say(f"training: step {s} of {n}")))
    sae = trained.sae
    evaluation = timed("evaluate", "FVU, L0, dead latents and the spliced forecast on test windows",
                       lambda: evaluate(model, prepared, sae, site, windows=test_windows, seed=seed))
    direct = timed("direct", "direct effects through the frozen norms",
                   lambda: direct_effects(model, prepared, sae, site, windows=effect_windows, seed=seed))
    ablation = timed("ablation", f"every feature ablated on {ablation_windows} test windows",
                     lambda: ablation_effects(model, prepared, sae, site, windows=ablation_windows, seed=seed))
    table = features_table(sae, evaluation.codes, direct.rms() if direct.values is not None else None, ablation)
    scores = None
    if concepts is not None:
        scores = timed("concepts", "concepts scored", lambda: score_concepts(concepts, prepared,
                                                                            evaluation.activations, evaluation.codes))
        table = with_best_concepts(table, scores)
    return FeatureRun(site, int(seed), trained, len(train.windows), evaluation, direct, ablation, table, scores,
                      seconds, int(ablation_windows))


STUDY_STEPS = 1_000


def study_table(model: Informer, prepared: PreparedData, *, split: str = "test", seed: int = 0, windows: int = 256,
                site: str = DEFAULT_SITE, settings: SAESettings = SAESettings(steps=STUDY_STEPS)) -> pd.DataFrame:
    """A study's `features` analysis of one run: the dictionary of `site` (SAE seed = the run's seed; 512 train
    windows, `windows` windows of `split`), one row per feature — feature, density, then the run's figures (site, fvu,
    l0, dead_fraction, model_mse, spliced_delta_mse, its interval, relative_delta) repeated, then its decoder
    direction w0 … w{d−1} (unit norm), which the study's findings match across seeds."""
    train = collect(model, prepared, "train", site, windows=512, seed=seed)
    sae = train_sae(train.values, replace(settings, seed=int(seed))).sae
    evaluation = evaluate(model, prepared, sae, site, split=split, windows=windows, seed=seed)
    m = evaluation.metrics
    directions = sae.W_dec.detach().double().numpy()  # [d, M], unit columns
    table = pd.DataFrame({"feature": np.arange(sae.m),
                          "density": evaluation.codes.fires() / max(1, evaluation.codes.positions)})
    for name, value in (("site", site), ("fvu", m.fvu), ("l0", m.l0), ("dead_fraction", m.dead_fraction),
                        ("model_mse", m.model_mse), ("spliced_delta_mse", m.spliced_delta_mse),
                        ("spliced_delta_mse_low", m.spliced_delta_mse_low),
                        ("spliced_delta_mse_high", m.spliced_delta_mse_high), ("relative_delta", m.relative_delta)):
        table[name] = value
    weights = pd.DataFrame(directions.T, columns=[f"w{i}" for i in range(directions.shape[0])])
    return pd.concat([table, weights], axis=1)


def with_best_concepts(table: pd.DataFrame, scores: ConceptScores) -> pd.DataFrame:
    """The table with each feature's best concept at the position level: best_concept ('column=value'),
    best_concept_auroc."""
    rows = scores.table.index[scores.table.level == "position"]
    if not len(rows):
        return table.assign(best_concept="", best_concept_auroc=np.nan)
    aurocs = np.nan_to_num(scores.features[rows], nan=-1.0)  # [values, m]
    best = aurocs.argmax(axis=0)
    names = [f"{scores.table.concept[r]}={scores.table.value[r]}" for r in rows]
    return table.assign(best_concept=[names[b] for b in best],
                        best_concept_auroc=aurocs[best, np.arange(aurocs.shape[1])])


__all__ = ["FEWEST_WINDOWS", "FeatureRun", "MAX_WINDOWS", "STUDY_STEPS", "WINDOWS_AT_96", "check_windows",
           "run_features", "study_table", "windows_for_length", "with_best_concepts"]
