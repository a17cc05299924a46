"""The page registry. Sections group pages in the sidebar; a page's `url_path` is its address.

To add a screen `<name>`:
1. make a folder `ui/<name>/` holding everything only this screen uses: `page.py`, the Streamlit script, which
   only draws; `charts.py` (its figures, built in one `go.Figure(traces, ui.charts.layout(...))` call),
   `tables.py` (pure pandas shaping of analysis output), `cache.py` (its cached calls of `analysis`):

       import streamlit as st
       from informer_lab.ui import state, widgets
       from informer_lab.ui.<name> import cache, charts, tables

       st.title("…")
       model, data, prepared, seed = state.require_page()     # a message and a stop when something is missing
       result = cache.<your_call>(model.key, data.key, <widget values>, seed, model.checkpoint, prepared)
       widgets.chart(charts.<figure>(tables.<shape>(result)), "file-stem", "key")

   Cached calls are keyed by `model.key`, `data.key` and the widget values; the checkpoint and prepared data are
   passed as `_`-prefixed (unhashed) arguments; never mutate them.
2. add one `_page("<name>", "<Title>", ":material/<icon>:", "<url-path>")` line below;
3. add `tests/ui/<name>/test_page.py` using the `open_app` fixture (tests/ui/conftest.py):
   `at = open_app("ui/<name>/page.py")`, then drive its main control and assert what changes.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

UI_DIR = Path(__file__).resolve().parent


def page_file(screen: str) -> str:
    """A screen's script as `st.page_link` and `st.switch_page` take it: its absolute path. (A path relative to the
    script every tab runs, informer_lab/lab.py, names ui/ inside the package: right in an install, not in a
    checkout, where ui/ is a top-level folder.)"""
    return str(UI_DIR / screen / "page.py")


def _page(screen: str, title: str, icon: str, url_path: str, *, default: bool = False) -> st.Page:
    return st.Page(UI_DIR / screen / "page.py", title=title, icon=icon, url_path=url_path, default=default)


def _alias(page: st.Page, url_path: str) -> st.Page:
    """A hidden page at `url_path` that opens `page`. The default page lives at "/" whatever its url_path says,
    so that /data-model, typed or bookmarked, would first show Streamlit's "Page not found" dialog."""
    return st.Page(lambda: st.switch_page(page), title=page.title, url_path=url_path, visibility="hidden")


def pages() -> dict[str, list[st.Page]]:
    home = _page("data_model", "Data & model", ":material/dataset:", "home", default=True)
    return {
        "Model": [
            home,
            _alias(home, "data-model"),
            _page("runs", "Runs", ":material/history:", "runs"),
            _page("forecast", "Forecast", ":material/trending_up:", "forecast"),
            _page("compare", "Compare", ":material/compare_arrows:", "compare"),
        ],
        "Attention": [
            _page("head_masking", "Head masking", ":material/grid_on:", "head-masking"),
            _page("sparsity", "Sparsity explorer", ":material/scatter_plot:", "sparsity"),
            _page("pyramid", "Distilling pyramid", ":material/filter_list:", "pyramid"),
            _page("anatomy", "Anatomy", ":material/account_tree:", "anatomy"),
            _page("features", "Features", ":material/category:", "features"),
            _page("ablation", "Ablation studies", ":material/science:", "ablation"),
            _page("attribution", "Attribution", ":material/insights:", "attribution"),
        ],
        "Instruments": [
            _page("qk_map", "Query/key map", ":material/bubble_chart:", "qk-map"),
            _page("counterfactual", "Counterfactual editor", ":material/edit_note:", "counterfactual"),
            _page("patching", "Activation patching", ":material/swap_horiz:", "patching"),
            _page("circuits", "Circuits", ":material/hub:", "circuits"),
            _page("known_answers", "Known answers", ":material/verified:", "known-answers"),
            _page("variants", "Attention variants", ":material/alt_route:", "variants"),
        ],
        "Many models": [
            _page("studies", "Studies", ":material/stacked_line_chart:", "studies"),
        ],
    }
