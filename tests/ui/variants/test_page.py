"""The Attention variants screen (AppTest): every kind on the active model behind its button, the table, the
per-head heatmap; the cost sweep behind its own."""
from __future__ import annotations

from tests.ui.helpers import run_until

PAGE = "ui/variants/page.py"


def _table_with(at, column: str):
    return next((d.value for d in at.dataframe if column in d.value.columns), None)


def test_every_kind_of_the_active_model_with_intervals_and_the_heads_heatmap(open_app):
    at = open_app(PAGE)
    assert _table_with(at, "ΔMSE vs own") is None, "nothing runs before the button"
    at.multiselect(key="va_kinds").set_value(["prob", "full", "window", "lsh"])
    at.number_input(key="va_windows").set_value(16)
    at.button(key="va_run").click().run()
    run_until(at, lambda a: _table_with(a, "ΔMSE vs own") is not None)
    table = _table_with(at, "ΔMSE vs own")
    assert list(table["kind"]) == ["prob (own)", "full", "window", "lsh"]
    assert table["ΔMSE vs own"].iloc[0] == "+0.0000" and table["mass kept"].iloc[1] == "1.000"
    assert table["ΔMSE 95 %"].iloc[0] == "[0, 0]"  # the own attention against itself
    missing = [k for k, v in zip(table["kind"], table["ΔMSE 95 %"]) if v == "none"]
    assert all(v.startswith("[") or v == "none" for v in table["ΔMSE 95 %"])
    if missing:  # 16 windows 109 steps apart still share rows: the page says which kinds have no interval, and why
        note = next((c.value for c in at.caption if c.value.startswith("No interval for")), "")
        assert all(k.split()[0] in note for k in missing) and "no interval:" in note, (note, list(table["kind"]))
    assert len(at.get("plotly_chart")) >= 2  # ΔMSE and mass kept; the per-head heatmap
    assert any("own attention" in m.value and "prob / prob / full" in m.value for m in at.markdown)


def test_the_cost_sweep_against_sdpa(open_app):
    at = open_app(PAGE)
    at.multiselect(key="va_kinds").set_value(["prob", "window"])
    at.multiselect(key="va_lengths").set_value([96, 384])
    at.button(key="va_sweep").click().run()
    run_until(at, lambda a: _table_with(a, "sdpa_ms") is not None)
    sweep = _table_with(at, "sdpa_ms")
    assert sorted(set(sweep["length"])) == [96, 384] and set(sweep["kind"]) == {"prob", "window"}
    assert (sweep["peak_mib"] >= 0).all()
