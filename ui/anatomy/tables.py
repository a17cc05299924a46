"""Pure pandas shaping of the anatomy analyses for the Anatomy screen."""
from __future__ import annotations

import numpy as np
import pandas as pd

from informer_lab.analysis.anatomy.relevance import spearman_rows
from informer_lab.analysis.attention.positions import distilled_spans


def level_grid(levels: pd.DataFrame, inputs: np.ndarray, lengths: dict[int, int], seq_len: int, padding: int
               ) -> tuple[list[str], np.ndarray]:
    """(row titles, z [rows, seq_len]): per encoder (replica, level) the relevance of each position drawn over the
    input steps it tiles, the deepest level on top, and the input steps at the bottom. levels: `Relevance.levels`
    already averaged over the target steps (replica, level, position, relevance); lengths: replica → its input
    length."""
    titles, rows = [], []
    for (replica, level), part in sorted(levels.groupby(["replica", "level"]), key=lambda kv: (kv[0][0], -kv[0][1])):
        L_r = lengths[int(replica)]
        spans = distilled_spans(L_r, int(level), padding) + (seq_len - L_r)
        z = np.full(seq_len, np.nan)
        values = part.sort_values("position")["relevance"].to_numpy()
        for (start, end), value in zip(spans, values):
            z[start:end + 1] = value
        titles.append(f"replica {replica} · layer {level}" if len(lengths) > 1 else f"layer {level}")
        rows.append(z)
    titles.append("input steps")
    rows.append(np.asarray(inputs, dtype=np.float64))
    return titles, np.vstack(rows)


def input_frame(stamps, values: np.ndarray, rollout: np.ndarray, flow: np.ndarray | None) -> pd.DataFrame:
    """Per input step: timestamp, lag, value (the target column, data units), rollout (and flow) relevance."""
    L = len(rollout)
    out = pd.DataFrame({"timestamp": stamps, "lag": L - np.arange(L), "value": values, "rollout": rollout})
    if flow is not None:
        out["flow"] = flow
    return out


def form_table(inputs: dict[str, np.ndarray], labels: dict[str, float], reference: str = "routed") -> pd.DataFrame:
    """How the three P forms disagree: per form its label share, its three most relevant lags, the total-variation
    distance of its input relevance from the reference form's and their Spearman ρ."""
    ref = inputs[reference]
    rows = []
    for form, vector in inputs.items():
        L = len(vector)
        top = np.argsort(vector)[::-1][:3]
        rows.append({"form": form, "label share": labels[form],
                     "top lags": ", ".join(str(L - int(s)) for s in top),
                     f"TV distance to {reference}": 0.5 * float(np.abs(vector - ref).sum()),
                     f"ρ with {reference}": float(spearman_rows(vector[None], ref[None])[0])})
    return pd.DataFrame(rows)
