"""The Features screen (AppTest): nothing trains before the button; the dictionary trains in the background, the
summary and the table of all features appear; the feature page draws its histogram, top windows, effect per step
(direct and ablated) and heads; a concept file gives the concepts tab its scores and a search."""
from __future__ import annotations

import numpy as np
import pandas as pd

import os
from pathlib import Path

import informer_lab.ui
from tests.conftest import SAMPLE_CSV
from tests.ui.conftest import APP
from tests.ui.helpers import charts, run_until, table_with

# the page as AppTest resolves it, relative to the script every tab runs (informer_lab/lab.py): in a checkout the ui/
# folder sits beside informer_lab/, in an install inside it
PAGE = os.path.relpath(Path(informer_lab.ui.__file__).parent / "features" / "page.py", APP.parent)


def _summary(at) -> str:
    return next((m.value for m in at.markdown if "latents" in m.value and "FVU" in m.value), "")


def _quick(at) -> None:
    at.number_input(key="fe_k").set_value(4)
    at.number_input(key="fe_expansion").set_value(2)
    at.number_input(key="fe_steps").set_value(100)


def _titles(at) -> list[str]:
    return [f["layout"]["title"]["text"] for f in charts(at)]


def test_a_dictionary_trains_on_demand_and_every_view_draws(open_app):
    at = open_app(PAGE)
    assert not at.exception and not _summary(at), "nothing trains before the button"
    _quick(at)
    at.button(key="fe_run").click().run()
    run_until(at, lambda a: bool(_summary(a)))
    assert "32 latents" in _summary(at) and "encoder.out" in _summary(at)
    features = table_with(at, "density")
    assert len(features) == 32 and {"feature", "ablation (RMS)", "direct effect (RMS)"} <= set(features.columns)
    assert any("Causal" in c.value for c in at.caption)

    at.session_state["fe_tab"] = "Feature"
    at.run()
    assert not at.exception, at.exception
    assert len(table_with(at, "reads from")) >= 1  # the top windows, with the timestamps each position reads
    effect = next(f for f in charts(at) if "effect on the forecast per horizon step" in f["layout"]["title"]["text"])
    names = [t["name"] for t in effect["data"]]
    assert "direct effect (frozen norms)" in names and any("measured with the feature ablated" in n for n in names)
    assert any(t.startswith("Window") for t in _titles(at))
    table_with(at, "attribution")
    table_with(at, "cosine")
    assert any(m.value.startswith("With the feature ablated") for m in at.markdown)
    at.toggle(key="fe_measure_True").set_value(False).run()  # short windows: measured at once, off on request
    assert not at.exception and not any("effect on the forecast" in t for t in _titles(at))
    assert any(c.value.startswith("Off: the feature's page above") for c in at.caption)


def test_concepts_are_scored_and_searched(open_app):
    at = open_app(PAGE)
    dates = pd.read_csv(SAMPLE_CSV, usecols=["date"])["date"]
    hours = pd.to_datetime(dates).dt.hour
    labels = pd.DataFrame({"date": dates, "part": np.where(hours < 6, "night", "day")}).to_csv(index=False).encode()
    _quick(at)
    at.file_uploader(key="fe_concepts").set_value(("labels.csv", labels, "text/csv")).run()
    at.session_state["fe_tab"] = "Concepts"
    at.button(key="fe_run").click().run()
    run_until(at, lambda a: bool(_summary(a)))
    scores = table_with(at, "neuron AUROC")
    assert set(scores.value) == {"night", "day"} and set(scores.level) == {"position", "window"}
    assert ((scores.auroc >= 0) & (scores.auroc <= 1)).all()
    found = next(d.value for d in at.dataframe if list(d.value.columns) == ["feature", "auroc"])
    assert len(found) == 20 and found.auroc.is_monotonic_decreasing
    assert any("Correlational" in c.value for c in at.caption)
