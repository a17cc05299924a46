"""The page registry. Sections group pages in the sidebar; a page's `url_path` is its address.

To add a page:
1. write `ui/pages/<name>.py`, a script that only draws:

       import streamlit as st
       from ui import cache, state, widgets

       st.title("Sparsity")
       model = state.require_model()              # or st.info + state.stop_page() when there is none
       data = state.require_data()
       prepared = state.require_prepared(model, data)
       result = cache.<your_cached_call>(model.key, data.key, <widget values>, state.seed(),
                                         model.checkpoint, prepared)
       widgets.chart(fig, "file-stem", "key");  widgets.table(df, "file-stem", "key")

   Cached calls go in `ui/cache*.py`: keyed by `model.key`, `data.key` and the widget values; the
   checkpoint and prepared data are passed as `_`-prefixed (unhashed) arguments; never mutate them.
2. add one `_page("<name>.py", "<Title>", ":material/<icon>:", "<url-path>")` line below;
3. add `tests/app/test_<name>_page.py` using the `open_app` fixture (tests/app/conftest.py):
   `at = open_app("ui/pages/<name>.py")`, then drive its main control and assert what changes.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

PAGES_DIR = Path(__file__).resolve().parent / "pages"


def _page(file: str, title: str, icon: str, url_path: str, *, default: bool = False) -> st.Page:
    return st.Page(PAGES_DIR / file, title=title, icon=icon, url_path=url_path, default=default)


def pages() -> dict[str, list[st.Page]]:
    return {
        "Model": [
            _page("data_model.py", "Data & model", ":material/dataset:", "data-model", default=True),
            _page("forecast.py", "Forecast", ":material/trending_up:", "forecast"),
            _page("compare.py", "Compare", ":material/compare_arrows:", "compare"),
        ],
        "Attention": [
            _page("head_masking.py", "Head masking", ":material/grid_on:", "head-masking"),
            _page("sparsity.py", "Sparsity explorer", ":material/scatter_plot:", "sparsity"),
            _page("pyramid.py", "Distilling pyramid", ":material/filter_list:", "pyramid"),
            _page("ablation.py", "Ablation studies", ":material/science:", "ablation"),
            _page("attribution.py", "Attribution", ":material/insights:", "attribution"),
        ],
    }
