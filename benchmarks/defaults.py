"""Which training recipe learns planted structure at the lab's model size: recipes × planted families × seeds, each
model's test MSE against the Bayes MSE, seasonal naive and the linear baseline on the same test windows.

    python benchmarks/defaults.py [--recipes default batch16 revin_batch16] [--families …] [--seeds 0 1 2]
                                  [--processes 2] [--csv runs.csv]

Families (analysis.planted.synth, 10,080 rows, seq_len 96 / label 48 / pred 24, every one with its Bayes MSE):

    seasonal_decoy   hourly y_t = 0.9·y_{t−24} + e_t, one irrelevant AR(1) column and one decoy with the same season
    driver           hourly y_t = 0.9·y_{t−24} + 0.8·d_{t−6} + e_t, d an AR(1) driver (ρ 0.8), three irrelevant columns
    spikes           seasonal_decoy with 20 spikes of ±8σ in the innovation
    quarter_hour     15-minute y_t = 0.9·y_{t−96} + e_t (one day back), one irrelevant column and one decoy
    multivariate     the driver family, every column forecast (features M)
    random_walk      seasonal_decoy with one more input column, a random walk (unit steps) the target never reads:
                     its standardised level leaves the training range on the test split

Recipes: `default` (ModelSize(), TrainSettings(): what `informer-lab train` uses, the embedding "auto": the lags
embedding, on 15-minute data at seq_len 96 with the day's rows put before each window), `batch16` (batch size 16: twice
the optimiser steps in the same epochs), `revin_batch16` (batch16 with RevIN), `epochs12` (12 epochs), `dropout0`,
`dropout10`, `dropout20` (dropout 0, 0.1, 0.2 instead of 0.05), `factor8` (u = 8·⌈ln L⌉ active queries instead of
5·⌈ln L⌉; `factor8_dropout10` with dropout 0.1), `decoder_full` (full causal self-attention in the decoder),
`epochs14` (14 epochs, patience 4: the schedule stretched over them), `conv` (the paper's embedding, no RevIN;
`revin_batch16` is conv with RevIN), `last_weights` (the last step's weights, no moving average: `--average 0`),
`ema95` … `ema995` (the weights' moving average at a decay of 0.95, 0.98, 0.99, 0.995 a step), `epochs2`, `epochs3`
(at most 2 or 3 epochs), `lags` (the lags embedding with the season's lag on the family's own features), `lags_S` and
`lags_S_std` (the lags embedding (0, 24) on the target alone, without and with each window's standardisation; the
hourly seasonal families only), `withhold` (`--unit-roots withhold`: the level of each input column with a unit root
in the training split is not read), `zero_placeholders` (HF's zeros at the decoder's forecast steps, −loc/scale
once each window is scaled, in place of the lab's last value: `InformerConfig.placeholders`). Each run is
one process of one torch thread; `--processes` run side by side (2 on a 2-core machine). The model's MSE, the Bayes
forecast's, seasonal naive's and the linear baseline's are means over the same evenly spread test windows (the
self-test's `chosen_windows`), standardised, over every forecast column.

Prints one row per run as it ends, then per recipe: the median over runs of MSE / Bayes, each family's mean over
seeds, whether the model beats seasonal naive in every family and the linear baseline in at least half, and the
median seconds per training (one thread; `--time-2-threads` also times one training of `default` and of the best
recipe at 2 threads, the goal's ≤ 2 min for 10,000 rows on 2 cores). Last line `best_recipe_median_mse_over_bayes: X (recipe)`.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FAMILIES = ("seasonal_decoy", "driver", "spikes", "quarter_hour", "multivariate", "random_walk")
WALK = "walk"  # the random_walk family's extra column
RECIPES = {"default": ({}, {}), "batch16": ({}, {"batch_size": 16}),
           # the weights' moving average: none (the last step's), or this decay a step
           "last_weights": ({}, {"average": 0.0}), "ema95": ({}, {"average": 0.95}), "ema98": ({}, {"average": 0.98}),
           "ema99": ({}, {"average": 0.99}), "ema995": ({}, {"average": 0.995}),
           "revin_batch16": ({"revin": True}, {"batch_size": 16}), "epochs12": ({}, {"epochs": 12}),
           # regularisation, the share of active queries, the decoder's attention and a longer run, each alone
           "dropout0": ({"dropout": 0.0}, {}), "dropout10": ({"dropout": 0.1}, {}), "dropout20": ({"dropout": 0.2}, {}),
           "factor5": ({"factor": 5}, {}), "factor8": ({"factor": 8}, {}),
           "factor8_dropout10": ({"factor": 8, "dropout": 0.1}, {}),
           "width32": ({"d_model": 32, "d_ff": 64}, {}), "decoder_full": ({"decoder_attention": "full"}, {}),
           "epochs14": ({}, {"epochs": 14, "patience": 4}),
           # shorter runs: the cosine schedule decays within them, before the models start to overfit
           "epochs2": ({}, {"epochs": 2}), "epochs3": ({}, {"epochs": 3}),
           # the paper's conv embedding without RevIN
           "conv": ({"embedding": "conv"}, {}),
           # the lags embedding on the family's own features (MS or M: every column's lags in, the target out)
           "lags": ({"embedding": "lags"}, {}),
           # the level of each input column with a unit root in the training split withheld
           "withhold": ({"unit_roots": "withhold"}, {})}
# The lags embedding (model/lags.py) on the target alone (features S, lags given here): each step embedded
# from its own value and the value one day back, so the decoder's forecast steps read y[t − 24] directly. Only for
# the hourly families whose target reads nothing but itself (its lags must be ≥ pred_len and < seq_len).
LAG_RECIPES = {"lags_S": {"embedding": "lags", "lags": (0, 24), "instance_scaling": "none"},
               "lags_S_std": {"embedding": "lags", "lags": (0, 24), "instance_scaling": "std"}}
LAG_FAMILIES = ("seasonal_decoy", "spikes", "random_walk")
# InformerConfig fields over the default's, on the family's own features: HF's zero placeholders at the decoder's
# forecast steps in place of the lab's last value (model/lags.py)
CONFIG_RECIPES = {"zero_placeholders": {"placeholders": "zero"}}
RECIPES.update({name: ({}, {}) for name in (*LAG_RECIPES, *CONFIG_RECIPES)})


def family_spec(family: str, seed: int):
    from informer_lab.analysis.planted.synth import SynthSpec

    if family in ("driver", "multivariate"):
        return SynthSpec(kind="driver", rows=10_080, seed=seed, irrelevant=3), ("M" if family == "multivariate" else "MS")
    if family == "quarter_hour":
        return SynthSpec(kind="seasonal_ar", rows=10_080, freq="15min", lags=(96,), seed=seed, decoys=1), "MS"
    kind = "spikes" if family == "spikes" else "seasonal_ar"  # seasonal_decoy, spikes, random_walk
    return SynthSpec(kind=kind, rows=10_080, seed=seed, decoys=1), "MS"


def one_run(recipe: str, family: str, seed: int, threads: int = 1) -> dict:
    import torch

    torch.set_num_threads(threads)
    from informer_lab.analysis.compare.verdict import baseline_forecasts, chosen_windows, forecast_windows
    from informer_lab.analysis.data import DataSpec, load_csv, prepare
    from informer_lab.analysis.learning.embedding import describe_embedding, withheld_columns
    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.learning.windows import WindowDataset
    from informer_lab.analysis.learning.workflow import ModelSize, train_on_frame
    from informer_lab.analysis.planted.known_answer import bayes_window_forecasts
    from informer_lab.analysis.planted.synth import generate

    size, training = RECIPES[recipe]
    spec, features = family_spec(family, seed)
    table, answer = generate(spec)
    if family == "random_walk":  # y never reads it, so the answer (and its Bayes MSE) is the same
        walk = np.random.default_rng([seed, 1]).standard_normal(len(table)).cumsum()
        table.insert(table.columns.get_loc(answer.target), WALK, walk)
    frame = load_csv(table.to_csv(index=False).encode("utf-8"))
    overrides = LAG_RECIPES.get(recipe)
    if overrides is not None and family not in LAG_FAMILIES:
        raise ValueError(f"recipe {recipe} runs on the families {', '.join(LAG_FAMILIES)} only")
    data = DataSpec(answer.target, "S" if overrides else features, 96, 48, 24)
    started = time.perf_counter()
    checkpoint, result = train_on_frame(frame, data, ModelSize(**size), TrainSettings(seed=seed, **training),
                                        config_overrides=overrides or CONFIG_RECIPES.get(recipe))
    seconds = time.perf_counter() - started
    prepared = prepare(frame, checkpoint.schema.spec)  # the auto embedding may lengthen the windows
    model = checkpoint.model.eval()
    windows = chosen_windows(len(WindowDataset(prepared, "test")), 96)
    lags = [t.lag for e in (*answer.equations, *answer.regimes) for t in e.terms]
    windows = windows[prepared.test.start + windows + prepared.spec.seq_len - max(lags) >= 0]
    preds, truth = forecast_windows(model, prepared, "test", windows, seed=seed)
    bayes = bayes_window_forecasts(answer, frame, prepared, "test", windows)
    others, _ = baseline_forecasts(prepared, "test", windows)
    mse = {name: float(((f - truth) ** 2).mean()) for name, f in
           {"model": preds, "bayes": bayes, **others}.items()}
    return {"recipe": recipe, "family": family, "seed": seed, **{f"{k}_mse": v for k, v in mse.items()},
            "over_bayes": mse["model"] / mse["bayes"], "epochs": len(result.history), "seconds": seconds,
            "embedding": describe_embedding(vars(model.config)), "window_rows": prepared.spec.seq_len,
            "withheld": withheld_columns(model.config.level_free, prepared.columns)}


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for recipe, part in runs.groupby("recipe", sort=False):
        fam = part.groupby("family")[["over_bayes", "model_mse", "seasonal_naive_mse", "linear_mse"]].mean()
        rows.append({"recipe": recipe, "runs": len(part), "median_over_bayes": float(part["over_bayes"].median()),
                     "worst_family": f"{fam['over_bayes'].idxmax()} {fam['over_bayes'].max():.3f}",
                     "families_beating_naive": int((fam["model_mse"] < fam["seasonal_naive_mse"]).sum()),
                     "families_not_worse_than_linear": int((fam["model_mse"] <= fam["linear_mse"]).sum()),
                     "families": len(fam), "median_seconds_1_thread": float(part["seconds"].median())})
    return pd.DataFrame(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--recipes", nargs="+", choices=tuple(RECIPES), default=["default", "batch16", "revin_batch16"])
    p.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--processes", type=int, default=2)
    p.add_argument("--csv", type=Path, default=None, help="also write every run here")
    p.add_argument("--time-2-threads", action="store_true")
    args = p.parse_args()
    jobs = [(r, f, s) for s in args.seeds for f in args.families for r in args.recipes
            if r not in LAG_RECIPES or f in LAG_FAMILIES]
    rows = []
    with ProcessPoolExecutor(max_workers=args.processes) as pool:
        futures = [pool.submit(one_run, *job) for job in jobs]
        for future in as_completed(futures):
            row = future.result()
            rows.append(row)
            print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}), flush=True)
    runs = pd.DataFrame(rows).sort_values(["recipe", "family", "seed"])
    if args.csv:
        runs.to_csv(args.csv, index=False)
    fam = runs.pivot_table(index="family", columns="recipe", values="over_bayes", aggfunc="mean")
    print("\nMSE / Bayes, mean over seeds:\n" + fam.to_string(float_format=lambda v: f"{v:.3f}"))
    table = summary(runs)
    print("\n" + table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    best = table.sort_values("median_over_bayes").iloc[0]
    if args.time_2_threads:
        for recipe in dict.fromkeys(["default", best["recipe"]]):
            row = one_run(recipe, "seasonal_decoy", 0, threads=2)
            print(f"{recipe}: one training of 10,080 rows at 2 threads: {row['seconds']:.0f} s "
                  f"({row['epochs']} epochs, MSE / Bayes {row['over_bayes']:.3f})")
    print(f"best_recipe_median_mse_over_bayes: {best['median_over_bayes']:.4g} ({best['recipe']})")


if __name__ == "__main__":
    main()
