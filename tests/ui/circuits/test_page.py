"""Circuits page: composition against its random baseline, AtP against exact patching after its button, path
patching once receivers are chosen."""
from __future__ import annotations

import numpy as np

from informer_lab.analysis.circuits.composition import composition_scores
from tests.ui.helpers import array, figure, grid


def test_composition_atp_and_paths(open_app, tiny_trained):
    at = open_app("ui/circuits/page.py")
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    expected = composition_scores(tiny_trained[0].model).table
    heat = figure(at, "Q-composition")["data"][0]
    shown = grid(heat["customdata"], float)
    q = expected[expected["kind"] == "Q"]
    assert np.isclose(np.nanmax(shown), q["score"].max())
    table = next(d.value for d in at.dataframe if "random_q95" in d.value.columns)
    assert len(table) == len(expected) and table["score"].is_monotonic_decreasing

    at.session_state["ci_tab"] = "Attribution patching"
    at.run()
    assert not at.exception and any("AtP needs one forward" in i.value for i in at.info)
    at.selectbox(key="ci_pairs").set_value(16).run()
    at.button(key="ci_atp_run").click().run()
    assert not at.exception
    scatter = figure(at, "Attribution patching against exact patching")
    points = sum(len(array(t["x"])) for t in scatter["data"] if t["name"] != "AtP = exact")
    assert points == 16 * len(tiny_trained[0].model.sites) * 4
    assert any("Spearman ρ between AtP and exact patching" in m.value for m in at.markdown)

    at.session_state["ci_tab"] = "Path patching"
    at.run()
    assert any("Choose receivers" in i.value for i in at.info)
    at.selectbox(key="ci_sender").set_value("decoder_self.0:1").run()
    offered = at.multiselect(key="ci_receivers").options  # only what a path from the sender reaches
    assert "cross.0:0:q" in offered and not any(o.endswith((":k", ":v")) or o.startswith(("encoder", "decoder_self"))
                                                for o in offered), offered
    at.multiselect(key="ci_receivers").set_value(["cross.0:0:q", "cross.0:2:q"]).run()
    assert not at.exception, at.exception
    path = figure(at, "Path patching")
    assert len(path["data"]) == 1 and len(array(path["data"][0]["x"])) == 12  # one path, every horizon step
