"""The study report's anatomy section: the forecast lens per layer and the largest direct shares, over seeds."""
from __future__ import annotations

import pandas as pd

from informer_lab.analysis.reports.figures import interval_bars
from informer_lab.analysis.reports.html import ReportSection


def anatomy_section(found: dict[str, pd.DataFrame | None]) -> ReportSection | None:
    """The forecast lens per layer, the largest direct shares and the composition of matched heads, over seeds
    (study.findings); found: "lens", "shares", "composition" → its findings table or None."""
    names = {"lens": "lens MSE over seeds", "shares": "direct shares over seeds",
             "composition": "composition over seeds"}
    parts = [(names[key], table) for key, table in found.items() if table is not None and len(table)]
    if not parts:
        return None
    figures = []
    lens = found.get("lens")
    if lens is not None and len(lens):
        labels = lens["setting"].astype(str) + " · " + lens["lens"] + " " + lens["layer"].astype(str)
        figures.append(interval_bars(labels, lens["mse_mean"], lens["mse_seeds_lo"], lens["mse_seeds_hi"],
                                     title="forecast lens: test MSE per layer over seeds", y_title="MSE"))
    text = ("The forecast lens (decoder lens per decoder layer, the encoder cut at each depth, plain and tuned): each "
            "layer's test MSE over seeds, mean and t interval. Direct shares: the mean |share| of each seed's "
            "largest decoder heads (by rank, so no matching of heads is needed) over seeds. Composition: each "
            "sender → receiver score of heads matched across seeds, beside random matrices' 95 % quantile.")
    return ReportSection("Anatomy and circuits across seeds", text, figures, parts)


def model_sections(model, prepared, split: str, window: int, seed: int, *, lens_windows: int = 128,
                   pairs: int = 16) -> list[ReportSection]:
    """The checkpoint report's anatomy, circuits and features: the rollout of window `window` (routed P, α ½, mean of
    the heads), the forecast lens per layer over `lens_windows` windows, the composition scores beside random matrices,
    attribution patching against exact patching on `pairs` pairs of windows, and a dictionary of the memory."""
    import numpy as np

    from informer_lab.analysis.anatomy.lens import forecast_lens
    from informer_lab.analysis.anatomy.rollout import record_pieces, rollout, window_graph
    from informer_lab.analysis.attention.recording import window_batch
    from informer_lab.analysis.circuits.attribution import atp_vs_exact
    from informer_lab.analysis.circuits.composition import composition_scores

    pieces = record_pieces(model, window_batch(prepared, split, [window]), seed)
    relevance = rollout(window_graph(model, pieces, 0), range(1, prepared.spec.pred_len + 1))
    inputs = relevance.inputs.mean(axis=0)
    L = len(inputs)
    rollout_table = pd.DataFrame({"lag": L - np.arange(L), "relevance": inputs})
    figures = [interval_bars([str(lag) for lag in rollout_table["lag"]], rollout_table["relevance"],
                             title=f"attention rollout of window {window}: relevance of each input lag (mean over the "
                                   "horizon)", y_title="share")]
    lens = forecast_lens(model, prepared, split, windows=lens_windows, seed=seed, fit_windows=lens_windows).overall
    labels = lens["lens"] + " " + lens["layer"].astype(str)
    figures.append(interval_bars(labels, lens["mse"], lens["mse_low"], lens["mse_high"],
                                 title="forecast lens: test MSE per layer (95 % interval over windows)",
                                 y_title="MSE"))
    anatomy = ReportSection(
        "Anatomy of the forecast",
        f"Rollout (α ½, the distilling step's routed transfer, the heads' mean of the rows the model used): "
        f"{float(relevance.label.mean()):.1%} of the relevance stays with the decoder's own tokens (the label share), "
        f"the rest reaches the input steps. The forecast lens: what each decoder layer would forecast, and the "
        f"decoder reading the encoder cut at each depth (plain and tuned).", figures,
        [("rollout", rollout_table), ("lens", lens)])
    composition = composition_scores(model, seed=seed).table
    atp = atp_vs_exact(model, prepared, split, pairs=pairs, seed=seed)
    rho = atp.rho
    interval = f"[{rho.lo:+.3f}, {rho.hi:+.3f}]" if rho.lo == rho.lo else f"(no interval: {rho.reason})"
    disagree = ", ".join(f"{r.site}:{r.head}" for r in atp.heads[atp.heads["disagree"]].itertuples()) or "none"
    scored = composition.dropna(subset=["score"])
    circuits = ReportSection(
        "Circuits",
        f"Composition from the weights: {int(scored['above_q95'].sum())} of {len(scored)} sender → receiver scores "
        f"above the 95 % quantile of random matrices of the same shapes (about 5 % by chance). Attribution patching "
        f"against exact patching on {len(atp.pairs.clean)} pairs of {split} windows: Spearman ρ across heads "
        f"{rho.estimate:+.3f} {interval}; heads where they disagree (Benjamini–Hochberg): {disagree}.",
        [], [("composition", scored.sort_values("score", ascending=False).head(40)[
            ["sender", "receiver", "kind", "score", "random_mean", "random_q95"]]), ("attribution patching", atp.heads)])
    from informer_lab.analysis.reports.features import features_section

    return [anatomy, circuits, features_section(model, prepared, split, seed), evidence_section(CHECKPOINT_INSTRUMENTS)]


CHECKPOINT_INSTRUMENTS = ("ablation", "attention", "sparsity", "pyramid", "rollout", "lens", "features", "composition",
                          "atp")
STUDY_INSTRUMENTS = ("ablation", "gradient_importance", "lens", "direct_share", "composition")


def evidence_section(names) -> ReportSection:
    """What kind of evidence each instrument of the report gives and, where the benchmark scored it, how well it finds
    planted answers (analysis.planted.evidence)."""
    from informer_lab.analysis.planted.evidence import INSTRUMENTS, current_verdicts, evidence_line

    table, source = current_verdicts()
    rows = pd.DataFrame({"instrument": [INSTRUMENTS[n].label for n in names],
                         "evidence": [INSTRUMENTS[n].kind for n in names],
                         "what is known of it": [evidence_line(n, table) for n in names]})
    return ReportSection("The evidence each instrument gives",
                         "Descriptive: what the model computed; correlational: how the forecast moves with a small "
                         "change, or what the weights allow; causal: an intervention and the forecast's change. Where "
                         "an instrument was scored against planted answers, its score beside the random control's"
                         + (f" ({source})." if source else "; no benchmark table could be read here."),
                         [], [("instruments", rows)])
