"""What kind of evidence each instrument of the lab gives, and how well it finds planted answers where the lab has
measured it: the line every screen, CLI command and report shows beside an instrument.

Kinds (TSFM-Interp's ladder, shortened):

    descriptive    what the model computed on this window (attention rows, sparsity scores, top-u, rollout, flow,
                   the lens, direct shares, the pyramid): true of the computation, silent on what caused the forecast
    correlational  how the forecast moves with a small change (gradients, Integrated Gradients, AtP's first-order
                   estimate) or what the weights could do (composition scores)
    causal         an intervention on the model or its input and the forecast's change (ablation, patching, path
                   patching, occlusion, blank-out, counterfactual edits, replaced attention rows)
    validated      scored against planted answers (`informer-lab benchmark`): an instrument of any kind above gets
                   this too, with its score beside the random control's

The benchmark's scores (its scores.csv) are turned into one verdict per instrument (`instrument_verdicts`): only
models that learned (test MSE ≤ 1.5× Bayes) count; each (kind, seed) model is one independent unit; the instrument's
score and the random control's (random cells for input maps, a random ranking of the heads for head instruments) are
paired per model, and the verdict reads the paired difference's 95 % t interval over models: "better than random"
(above 0), "worse than random" (below 0), "no better than random" (it holds 0). Fewer than 3 models: no interval, and
the verdict says so. The table the lab ships (measured/instruments.csv beside this module: which command made it, on
which machine, docs/measurements.md) is read unless the lab home holds a benchmark of the user's own.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

KINDS = {
    "descriptive": "what the model computed",
    "correlational": "how the forecast moves with a small change, or what the weights allow",
    "causal": "an intervention on the model and the forecast's change",
    "validated": "scored against planted answers",
}
LEARNED = 1.5  # a model counts when its test MSE is at most this many times the Bayes MSE (the self-test's bound)
MIN_MODELS = 3  # models needed for an interval over models
# a lower value is better: the planted head's rank; sufficiency, the error added when only the top cells are kept
LOWER_IS_BETTER = frozenset({"rank", "sufficiency", "sufficiency_excess", "cpp", "cpp_excess"})
UNIT_RANGE = frozenset({"aup", "aur", "auprc", "mass_accuracy", "rank_accuracy", "top1"})  # figures in [0, 1]
BINARY = frozenset({"top1"})  # per model 1 (the planted head ranked first) or 0
MEASURED = Path(__file__).resolve().parent / "measured" / "instruments.csv"
VERDICT_COLUMNS = ("instrument", "evidence", "metric", "value", "low", "high", "random", "models", "verdict")


@dataclass(frozen=True)
class Instrument:
    name: str
    label: str
    kind: str  # one of KINDS but "validated" (that one is earned in the benchmark)
    benchmark: str | None = None  # its name in the benchmark, where it is scored
    metric: str | None = None  # the benchmark metric its verdict reads


INSTRUMENTS = {i.name: i for i in (
    Instrument("attention", "Raw attention rows", "descriptive", "attention", "auprc"),
    Instrument("sparsity", "Sparsity scores M̄ and the top-u queries", "descriptive"),
    Instrument("pyramid", "The distilling pyramid", "descriptive"),
    Instrument("rollout", "Attention rollout", "descriptive", "rollout", "auprc"),
    Instrument("flow", "Attention flow", "descriptive", "flow", "auprc"),
    Instrument("lens", "The forecast lens", "descriptive"),
    Instrument("direct_share", "Direct shares of the decoder heads", "descriptive", "direct_share", "top1"),
    Instrument("qk_map", "The query/key map", "descriptive"),
    Instrument("features", "Sparse dictionary features (TopK SAE)", "descriptive"),
    Instrument("integrated_gradients", "Integrated Gradients", "correlational", "integrated_gradients", "auprc"),
    Instrument("gradient_importance", "Gradient head importance", "correlational", "gradient_importance", "top1"),
    Instrument("composition", "Composition scores", "correlational"),
    Instrument("atp", "Attribution patching (AtP)", "correlational", "atp", "top1"),
    Instrument("occlusion", "Occlusion", "causal", "occlusion", "auprc"),
    Instrument("blank_out", "Blank-out ΔMSE", "causal", "blank_out", "auprc"),
    Instrument("ablation", "Head ablation", "causal", "ablation", "top1"),
    Instrument("patching", "Activation patching", "causal"),
    Instrument("path_patching", "Path patching", "causal"),
    Instrument("counterfactual", "Counterfactual edits", "causal"),
    Instrument("faithfulness", "Uniform and permuted attention rows", "causal", "faithfulness", "top1"),
    Instrument("variants", "Other attention kinds, same weights", "causal"),
)}


def learned_models(scores: pd.DataFrame) -> set[tuple[str, int]]:
    fit = scores[(scores["instrument"] == "model") & (scores["metric"] == "mse_over_bayes")]
    return {(k, int(s)) for k, s, v in zip(fit["kind"], fit["seed"], fit["value"].astype(float)) if v <= LEARNED}


def instrument_verdicts(scores: pd.DataFrame) -> tuple[pd.DataFrame, int, int]:
    """(one row per scored instrument and metric: VERDICT_COLUMNS, models that learned, models in all) from a
    benchmark's scores (analysis.circuits.benchmark's scores.csv)."""
    from scipy.stats import t as student

    models = scores[["kind", "seed"]].drop_duplicates()
    learned = learned_models(scores)
    rows = []
    for inst in INSTRUMENTS.values():
        if inst.benchmark is None:
            continue
        for metric in sorted(set(scores.loc[scores["instrument"] == inst.benchmark, "metric"])):
            mine = _per_model(scores, inst.benchmark, metric, learned)
            theirs = _per_model(scores, "random", metric, learned)
            paired = pd.concat([mine.rename("mine"), theirs.rename("random")], axis=1, join="inner").dropna()
            n = len(paired)
            value = float(mine.mean()) if len(mine.dropna()) else math.nan
            hits = paired.iloc[:, 0]
            if n >= MIN_MODELS and metric in BINARY and set(hits.unique()) <= {0.0, 1.0}:
                lo_v, hi_v, verdict = _binary_verdict(int(hits.sum()), n, float(paired.iloc[:, 1].mean()))
            elif n >= MIN_MODELS:
                difference = paired.iloc[:, 0] - paired.iloc[:, 1]
                half = float(student.ppf(0.975, n - 1) * difference.std(ddof=1) / math.sqrt(n))
                low, high = float(difference.mean()) - half, float(difference.mean()) + half
                better = metric not in LOWER_IS_BETTER
                above, below = (low > 0, high < 0) if better else (high < 0, low > 0)
                verdict = ("better than random" if above else "worse than random" if below else
                           "no better than random")
                verdict += f" (difference {difference.mean():+.3g} [{low:+.3g}, {high:+.3g}] over {n} models)"
                s_half = float(student.ppf(0.975, n - 1) * hits.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
                lo_v, hi_v = float(hits.mean()) - s_half, float(hits.mean()) + s_half
                if metric in UNIT_RANGE:  # never an interval outside the values the figure can take
                    lo_v, hi_v = max(lo_v, 0.0), min(hi_v, 1.0)
            else:
                lo_v = hi_v = math.nan
                verdict = (f"not judged: {n} model{'s' if n != 1 else ''} that learned scored it (an interval over "
                           f"models needs {MIN_MODELS})")
            rows.append({"instrument": inst.name, "evidence": inst.kind, "metric": metric, "value": value,
                         "low": lo_v, "high": hi_v, "random": float(theirs.mean()) if len(theirs.dropna()) else math.nan,
                         "models": n, "verdict": verdict})
    return pd.DataFrame(rows, columns=list(VERDICT_COLUMNS)), len(learned), len(models)


def _binary_verdict(hits: int, n: int, chance: float) -> tuple[float, float, str]:
    """A share of models where the instrument found the planted head (0 or 1 each): its exact (Clopper–Pearson) 95 %
    interval against the random ranking's chance of the same (1 / heads; the mean over models where they differ).
    A t interval over 5 zeros and ones is no interval: it called 3 of 5 against a chance of 1/16 undecided."""
    from scipy.stats import binomtest

    ci = binomtest(hits, n).proportion_ci(0.95, method="exact")
    verdict = ("better than random" if ci.low > chance else "worse than random" if ci.high < chance else
               "no better than random")
    return float(ci.low), float(ci.high), (f"{verdict} ({hits} of {n} models, exact interval [{ci.low:.3g}, "
                                           f"{ci.high:.3g}] against a chance of {chance:.3g})")


def _per_model(scores: pd.DataFrame, instrument: str, metric: str, learned: set) -> pd.Series:
    part = scores[(scores["instrument"] == instrument) & (scores["metric"] == metric)]
    keep = [(k, int(s)) in learned for k, s in zip(part["kind"], part["seed"])]
    part = part[keep]
    return pd.Series(part["value"].astype(float).to_numpy(),
                     index=pd.MultiIndex.from_arrays([part["kind"], part["seed"].astype(int)]), name=instrument)


def read_verdicts(path: Path | None = None) -> pd.DataFrame | None:
    """A verdict table (instruments.csv) from `path` (default: the shipped one); None when it cannot be read."""
    try:
        table = pd.read_csv(MEASURED if path is None else path)
    except (OSError, ValueError, pd.errors.ParserError):
        return None
    return table if set(VERDICT_COLUMNS) <= set(table.columns) else None


def newest_benchmark(root: Path | None = None) -> Path | None:
    """The instruments.csv of the newest benchmark folder in `root` (default: the lab home's benchmarks), or None."""
    if root is None:
        from informer_lab.home import benchmarks_dir

        root = benchmarks_dir()
    try:
        found = [p / "instruments.csv" for p in Path(root).iterdir() if (p / "instruments.csv").is_file()]
    except OSError:
        return None
    return max(found, key=lambda p: p.stat().st_mtime, default=None)


def current_verdicts() -> tuple[pd.DataFrame | None, str]:
    """(the verdicts to show, where they come from): the newest benchmark of the lab's home, else the shipped table;
    (None, "") when neither can be read."""
    own = newest_benchmark()
    table = read_verdicts(own) if own is not None else None
    if table is not None:
        return table, f"your benchmark {own.parent.name}"
    table = read_verdicts()
    return (table, "the lab's benchmark, docs/measurements.md") if table is not None else (None, "")


def evidence_line(name: str, verdicts: pd.DataFrame | None = None) -> str:
    """One sentence: the instrument's kind of evidence and, where the benchmark scored it, its score against the
    random control with the verdict ("Attention flow — descriptive evidence (what the model computed). On planted
    answers: AUPRC 0.010 against 0.035 for random cells: no better than random (…)")."""
    inst = INSTRUMENTS[name]
    line = f"{inst.label} — {inst.kind} evidence ({KINDS[inst.kind]})."
    if inst.benchmark is None:
        return line + " Not scored against planted answers."
    row = None
    if verdicts is not None:
        match = verdicts[(verdicts["instrument"] == name) & (verdicts["metric"] == inst.metric)]
        row = match.iloc[0] if len(match) else None
    if row is None:
        return line + " Its benchmark against planted answers has not been run here."
    control = "random cells" if inst.metric != "top1" else "a random ranking of the heads"
    what = {"auprc": "AUPRC for the planted cells", "top1": "share of models where it ranks the planted head first"}
    interval = f" [{row['low']:.3g}, {row['high']:.3g}]" if np.isfinite(row["low"]) else ""
    return (line + f" On planted answers: {what.get(inst.metric, inst.metric)} {row['value']:.3g}{interval} against "
                   f"{row['random']:.3g} for {control}: {row['verdict']}.")


__all__ = ["INSTRUMENTS", "Instrument", "KINDS", "LEARNED", "MEASURED", "VERDICT_COLUMNS", "current_verdicts",
           "evidence_line", "instrument_verdicts", "learned_models", "newest_benchmark", "read_verdicts"]
