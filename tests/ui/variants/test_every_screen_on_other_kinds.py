"""Every screen opens on a model trained with other attention kinds (AppTest): LogSparse in the encoder, a Longformer
window in the decoder's self-attention, LSH across; then adaptive span and compressed attention with their learned
parts; then ProbSparse on the lags embedding. What each screen reads (recorded rows, M on the keys a kind reads, gates, the pyramid) must work on every kind,
not only on ProbSparse and full attention."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PAGES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "ui").glob("*/page.py"))
MIXES = {"logsparse-window-lsh": dict(encoder_attention="logsparse", decoder_attention="window", cross_attention="lsh",
                                      attention_options={"decoder_self": {"window": 4}}),
         "adaptive-compressed": dict(encoder_attention="adaptive", decoder_attention="compressed",
                                     attention_options={"encoder": {"max_span": 16}}),
         # the lags embedding (ProbSparse): the encoder reads the window after its first 24 rows, the decoder only
         # the forecast steps
         "lags-embedding": dict(embedding="lags")}


@pytest.fixture(params=list(MIXES))
def kinds_run(request, sample_frame, tiny_spec, runs_dir):
    """The runs folder's `sample` replaced by a tiny model trained a few steps with another mix of kinds."""
    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.learning.workflow import ModelSize, train_on_frame
    from tests.conftest import TINY_SIZE

    shutil.rmtree(runs_dir / "sample")
    train_on_frame(sample_frame, tiny_spec, ModelSize(**{**TINY_SIZE, **MIXES[request.param]}),
                   TrainSettings(epochs=1, batch_size=32, max_steps_per_epoch=8, seed=0), out=runs_dir / "sample")
    return request.param


def test_every_screen_opens_without_an_exception(open_app, kinds_run):
    at = open_app()
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, f"{page} on {kinds_run}: {at.exception}"
        assert not [e.value for e in at.error if "Traceback" in e.value or "cannot be computed" in e.value], page
        if page == "ui/sparsity/page.py" and "embedding" not in MIXES[kinds_run]:
            # a site of another kind is named as such, not as full attention
            said = " ".join(m.value for m in at.markdown)
            assert f"{kinds_run.split('-')[0]} attention, L_Q" in said, said[:400]
            assert "full attention, L_Q" not in said
        if page == "ui/sparsity/page.py" and kinds_run == "lags-embedding":
            at.session_state["sp_site"], at.session_state["sp_tab"] = "decoder_self.0", "Scores and selected queries"
            at.run()
            said = " ".join(c.value for c in at.caption)
            assert "the 12 forecast steps only" in said and "the window's last value" in said, said[-600:]
            assert "known history" not in said
        if page == "ui/anatomy/page.py" and kinds_run == "lags-embedding":  # no known steps in its decoder
            said = " ".join(m.value for m in at.markdown)
            assert "all on the 12 forecast steps" in said and "the window's last value" in said, said[:600]
