"""`sae`: a sparse dictionary (TopK SAE) of one residual site, its figures on test windows and its features, with
--concepts scored against a user's labels; writes metrics.json, features.csv (and concepts.csv) into --out."""
from __future__ import annotations

import json
import math
from pathlib import Path

from ._choices import FEATURE_SITE
from ._common import add_checkpoint_and_csv, int_in, number_in, seed_int, text

CONCEPT_COLUMNS = ["concept", "value", "level", "feature", "auroc", "auroc_low", "auroc_high", "neuron", "neuron_auroc"]


def register(sub) -> None:
    p = sub.add_parser("sae", help="a sparse dictionary of one residual site: its features, how well they explain "
                                   "the site and the forecast, and (--concepts) which label each picks out")
    add_checkpoint_and_csv(p)
    p.add_argument("--out", required=True, type=Path,
                   help="folder to write metrics.json, features.csv and (with --concepts) concepts.csv into")
    p.add_argument("--site", default=FEATURE_SITE, type=text(100),
                   help="the residual site: encoder.{r}.layer{l}.out, encoder.{r}.distil{l}.out, encoder.{r}.out "
                        "(several replicas), encoder.out (the memory the decoder reads; default), decoder.layer{l}.out")
    p.add_argument("--concepts", type=Path, default=None,
                   help="CSV of the data's time column and label columns (holidays, outages, regimes: categories; an "
                        "empty cell is no label); never an input of the model, only scored against its features")
    p.add_argument("--k", type=int_in(1, 65_536), default=16, help="latents kept per position (the L0 bound; 16)")
    p.add_argument("--expansion", type=int_in(1, 64), default=4, help="latents per d_model dimension (4)")
    p.add_argument("--steps", type=int_in(1, 200_000), default=2_000, help="training steps of 256 positions (2000)")
    p.add_argument("--learning-rate", type=number_in(0, 1, low_open=True), default=2e-3)
    p.add_argument("--seed", type=seed_int, default=0, help="the SAE's and every key sample's seed")
    p.add_argument("--train-windows", type=int_in(1, 100_000), default=1024,
                   help="train windows spread evenly over the split, the SAE's data (1024)")
    p.add_argument("--test-windows", type=int_in(1, 100_000), default=256,
                   help="test windows for FVU, L0, dead latents, the spliced MSE and the concepts (256)")
    p.add_argument("--effect-windows", type=int_in(1, 100_000), default=64,
                   help="test windows for every feature's direct effect (64)")
    p.add_argument("--ablation-windows", type=int_in(1, 4_096), default=16,
                   help="test windows on which every feature is ablated in turn (16)")
    p.set_defaults(func=run)


def _json_ready(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    return value


def run(args) -> int:
    from informer_lab.analysis.features.concepts import read_concepts, split_labels
    from informer_lab.analysis.features.run import run_features
    from informer_lab.analysis.features.sae import SAESettings
    from informer_lab.analysis.features.sites import check_site

    from ._common import ProgressLine, open_checkpoint_and_data, write_table
    from ._output import write_data

    checkpoint, prepared = open_checkpoint_and_data(args)
    model = checkpoint.model
    check_site(model, args.site)
    settings = SAESettings(k=args.k, expansion=args.expansion, steps=args.steps, learning_rate=args.learning_rate)
    settings.check(model.config.d_model)
    concepts = None
    if args.concepts is not None:  # read and aligned with the data before any training
        concepts = read_concepts(args.concepts)
        split_labels(concepts, prepared, "test")
    args.out.mkdir(parents=True, exist_ok=True)

    def say(phase: str) -> None:
        import sys

        sys.stderr.write(f"\r{phase[:100]:<100}")
        sys.stderr.flush()
        ProgressLine.open = True

    result = run_features(model, prepared, args.site, settings, seed=args.seed, train_windows=args.train_windows,
                          test_windows=args.test_windows, effect_windows=args.effect_windows,
                          ablation_windows=args.ablation_windows, concepts=concepts, say=say)
    ProgressLine.close()
    m = result.metrics
    metrics = {"fvu": m.fvu, "l0": m.l0, "dead_fraction": m.dead_fraction, "spliced_delta_mse": m.spliced_delta_mse,
               "spliced_delta_mse_low": m.spliced_delta_mse_low, "spliced_delta_mse_high": m.spliced_delta_mse_high,
               "model_mse": m.model_mse, "spliced_mse": m.spliced_mse, "relative_delta": m.relative_delta,
               "interval_reason": m.reason, "direct_effect": result.direct.reason or "computed",
               "settings": result.settings_dict(), "seconds": result.seconds}
    write_data(json.dumps(_json_ready(metrics), indent=1).encode("utf-8"), args.out / "metrics.json")
    write_table(result.table, args.out / "features.csv")
    written = ["metrics.json", "features.csv"]
    interval = (f"[{m.spliced_delta_mse_low:+.4f}, {m.spliced_delta_mse_high:+.4f}]" if m.reason == ""
                else f"(no interval: {m.reason.removeprefix('no interval: ')})")
    top = result.table.sort_values("ablation_rms", ascending=False).head(3)
    lines = [f"{args.site}: {result.trained.m} latents, k = {args.k}, trained on {result.trained.tokens:,} positions "
             f"in {result.seconds['train']:.1f} s",
             f"test ({m.windows} windows, {m.positions:,} positions): FVU {m.fvu:.4f}, L0 {m.l0:.1f}, dead "
             f"{m.dead_fraction:.1%}",
             f"forecast MSE {m.model_mse:.4f}, with the reconstruction spliced in {m.spliced_mse:.4f}: ΔMSE "
             f"{m.spliced_delta_mse:+.4f} {interval} ({m.relative_delta:+.1%} of the model's)",
             "features whose ablation moves the forecast most (RMS, standardised): "
             + "; ".join(f"{int(r.feature)} {r.ablation_rms:.3g}" for r in top.itertuples())]
    if result.direct.reason:
        lines.append(f"direct effects: {result.direct.reason}")
    if result.concepts is not None:
        table = result.concepts.table
        write_table(table[CONCEPT_COLUMNS + [c for c in table.columns if c not in CONCEPT_COLUMNS]],
                    args.out / "concepts.csv")
        written.append("concepts.csv")
        for r in table.dropna(subset=["auroc"]).sort_values("auroc", ascending=False).head(4).itertuples():
            lines.append(f"  {r.concept} = {r.value} ({r.level}): feature {r.feature} AUROC {r.auroc:.3f}"
                         + (f" [{r.auroc_low:.3f}, {r.auroc_high:.3f}]" if r.reason == "" else " (no interval)")
                         + f", best neuron {r.neuron} {r.neuron_auroc:.3f}")
    lines.append(f"written to {args.out}: {', '.join(written)}")
    print("\n".join(lines))
    return 0
