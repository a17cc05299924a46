"""The study report's anatomy section: the forecast lens per layer and the largest direct shares, over seeds."""
from __future__ import annotations

import pandas as pd

from analysis.reports.figures import interval_bars
from analysis.reports.html import ReportSection


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
