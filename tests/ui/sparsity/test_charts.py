"""The exact-vs-sampled scatter: every query drawn once, in its group; WebGL when the queries are many."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.sparsity.charts import MAX_SVG_POINTS, exact_vs_sampled_figure


def _queries(n: int, u: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    exact, sampled = rng.normal(size=n), rng.normal(size=n)
    selected = np.zeros(n, bool)
    selected[np.argsort(-sampled)[:u]] = True
    in_top = np.zeros(n, bool)
    in_top[np.argsort(-exact)[:u]] = True
    hq = pd.DataFrame({"position": np.arange(n), "timestamp": pd.date_range("2024-01-01", periods=n, freq="15min"),
                       "exact_m": exact, "sampled_mbar": sampled, "selected": selected,
                       "rank_sampled": np.argsort(np.argsort(-sampled)) + 1,
                       "rank_exact": np.argsort(np.argsort(-exact)) + 1})
    return hq, in_top


def test_each_query_is_one_point_of_its_group_and_long_inputs_draw_in_webgl():
    for n, u, kind in ((96, 25, go.Scatter), (5760, 45, go.Scattergl)):
        hq, in_top = _queries(n, u)
        fig = exact_vs_sampled_figure(hq, "exact_m", "exact M", in_top, "t")
        assert all(isinstance(t, kind) for t in fig.data)
        positions = np.concatenate([np.asarray(t.customdata)[:, 0].astype(int) for t in fig.data])
        assert sorted(positions) == list(range(n))  # every query once
        for t in fig.data:  # each point sits at its query's numbers, in the group its name says
            at = np.asarray(t.customdata)[:, 0].astype(int)
            np.testing.assert_allclose(t.x, hq["exact_m"].to_numpy()[at])
            np.testing.assert_allclose(t.y, hq["sampled_mbar"].to_numpy()[at])
            assert hq["selected"].to_numpy()[at].all() == t.name.startswith("selected")
            assert in_top[at].all() == ("in exact top-u" in t.name and "not in" not in t.name)
    assert 96 <= MAX_SVG_POINTS < 5760
