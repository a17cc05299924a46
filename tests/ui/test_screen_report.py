"""Any screen as a report: what a page drew through ui.widgets is collected, and the sidebar's button builds one
self-contained page of it with the provenance."""
from __future__ import annotations

import hashlib
import re

from tests.conftest import SAMPLE_CSV
from tests.ui.helpers import MASK_PAGE, charts


def test_the_screen_report_holds_every_figure_drawn_and_the_provenance(open_app):
    from informer_lab.ui import screen_report
    at = open_app(MASK_PAGE)
    assert not at.exception, at.exception
    collected = at.session_state[screen_report.KEY]
    assert collected["title"] == "Head masking"
    assert len(collected["figures"]) == len(charts(at)) >= 1
    assert any(b.label.startswith("Download this screen as a report") for b in at.sidebar.get("download_button"))
    # build it as the button would
    from informer_lab.ui import state
    model = state.load_model(state.model_ref())
    data = state.load_data(state.sample_data_ref())
    raw = SAMPLE_CSV.read_bytes()
    page = screen_report.build_html(collected, screen_report.provenance(model, data, raw, 0), 0)
    assert page.count("Plotly.newPlot(") == len(collected["figures"])
    assert hashlib.sha256(raw).hexdigest() in page and "n_heads" in page
    from plotly.offline import get_plotlyjs
    assert page.count(get_plotlyjs()) == 1  # inline, once; outside it nothing points to the network
    assert not re.search(r'(src|href)\s*=\s*"https?://', page.replace(get_plotlyjs(), ""))


def test_a_rerun_replaces_the_collection_instead_of_adding_to_it(open_app):
    from informer_lab.ui import screen_report
    at = open_app(MASK_PAGE)
    first = len(at.session_state[screen_report.KEY]["figures"])
    at.selectbox(key="hm_column").set_value("price").run()
    assert len(at.session_state[screen_report.KEY]["figures"]) == first
    at.switch_page("ui/forecast/page.py").run()
    assert at.session_state[screen_report.KEY]["title"] == "Forecast"
