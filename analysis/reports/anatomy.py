"""The study report's anatomy section: the forecast lens per layer and the largest direct shares, over seeds."""
from __future__ import annotations

import pandas as pd

from analysis.reports.figures import interval_bars
from analysis.reports.html import ReportSection


def anatomy_section(lens: pd.DataFrame | None, shares: pd.DataFrame | None) -> ReportSection | None:
    """The forecast lens per layer and the largest direct shares over seeds (study.findings)."""
    parts = [(name, table) for name, table in (("lens MSE over seeds", lens), ("direct shares over seeds", shares))
             if table is not None and len(table)]
    if not parts:
        return None
    figures = []
    if lens is not None and len(lens):
        labels = lens["setting"].astype(str) + " · " + lens["lens"] + " " + lens["layer"].astype(str)
        figures.append(interval_bars(labels, lens["mse_mean"], lens["mse_seeds_lo"], lens["mse_seeds_hi"],
                                     title="forecast lens: test MSE per layer over seeds", y_title="MSE"))
    text = ("The forecast lens (decoder lens per decoder layer, the encoder cut at each depth, plain and tuned): each "
            "layer's test MSE over seeds, mean and t interval. Direct shares: the mean |share| of each seed's "
            "largest decoder heads (by rank, so no matching of heads is needed) over seeds.")
    return ReportSection("Anatomy across seeds", text, figures, parts)
