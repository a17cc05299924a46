"""Shaping for the Counterfactual editor: the edit from the widgets, and the views of the two runs."""
from __future__ import annotations

import pandas as pd

from informer_lab.analysis.instruments.window_edits import Edit, check_edit

PRESETS = {"none": "no edit", "spike": "a spike at t", "shift": "a level shift from t", "scale": "scale from t",
           "trend": "a trend from t", "zero": "a covariate zeroed", "shuffle": "a covariate shuffled",
           "paste": "paste rows of another window", "table": "edit by hand"}


def build_edit(kind: str, values: dict) -> Edit:
    """The Edit of preset `kind` from the widget values it takes (None values dropped); ConfigError if invalid."""
    edit = Edit(kind, **{k: v for k, v in values.items() if v is not None})
    check_edit(edit)
    return edit


def column_view(cf_inputs: pd.DataFrame, column: str) -> pd.DataFrame:
    """One input column of the encoder window: position, timestamp, original, edited, changed."""
    part = cf_inputs[cf_inputs["column"] == column]
    return part[["position", "timestamp", "original", "edited", "changed"]].reset_index(drop=True)


def forecast_view(forecast: pd.DataFrame, column: str) -> pd.DataFrame:
    part = forecast[forecast["column"] == column]
    return part[["step", "timestamp", "truth", "original", "edited", "difference"]].reset_index(drop=True)


def head_scores(scores: pd.DataFrame, site: str, head: int) -> pd.DataFrame:
    """One ProbSparse head's M̄ and top-u membership per query in both runs."""
    part = scores[(scores["site"] == site) & (scores["head"] == head)]
    return part.sort_values("position").reset_index(drop=True)


def moved_heads(selection: pd.DataFrame) -> pd.DataFrame:
    """The ProbSparse heads, those whose top-u set moved most first."""
    prob = selection[selection["attention"] == "prob"]
    return prob.sort_values(["jaccard", "site", "head"], kind="stable").reset_index(drop=True)
