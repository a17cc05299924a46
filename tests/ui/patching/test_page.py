"""Activation patching page: the heatmap is the analysis' restored share; the all-heads statement and the exact
checks (embeddings, memory) are drawn from the same result."""
from __future__ import annotations

import numpy as np

from informer_lab.analysis.data import load_csv
from informer_lab.analysis.instruments.patching import activation_patching
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from tests.conftest import SAMPLE_CSV
from tests.ui.helpers import charts, grid

PAGE = "ui/patching/page.py"


def _heatmap(at) -> dict:
    return next(f for f in charts(at) if f["layout"]["title"]["text"].startswith("Share of the forecast"))


def _result(tiny_trained, **kwargs):
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    return activation_patching(checkpoint.model, prepared, "test", **kwargs)


def test_the_heatmap_is_every_heads_restored_share(open_app, tiny_trained):
    at = open_app(PAGE)
    at.slider(key="pt_clean_window_test").set_value(10).run()
    at.number_input(key="pt_corrupt_test").set_value(300).run()
    assert not at.exception, at.exception
    want = _result(tiny_trained, clean=10, corrupt=300, seed=0)
    cells = _heatmap(at)["data"][0]
    assert len(cells["y"]) == 16 + 1 and cells["y"][-1] == "every head at once"
    z = grid(cells["z"], float)
    np.testing.assert_allclose(z.reshape(-1), want.table["restored"].to_numpy(), rtol=1e-6, equal_nan=True)
    said = " ".join(m.value for m in at.markdown)
    assert "does not give A" in said and f"{want.all_heads_distance:.2f}" in said


def test_patching_the_memory_gives_the_clean_forecast(open_app, tiny_trained):
    at = open_app(PAGE)
    at.radio(key="pt_how").set_value("A edited").run()
    at.radio(key="pt_point").set_value("memory").run()
    assert not at.exception, at.exception
    z = grid(_heatmap(at)["data"][0]["z"], float)
    np.testing.assert_allclose(z[np.isfinite(z)], 1.0, atol=1e-4)  # memory carries everything: A restored
    assert "largest difference from A's forecast" in " ".join(m.value for m in at.markdown)


def test_a_corrupted_input_equal_to_the_clean_one_is_refused_in_words(open_app):
    at = open_app(PAGE)
    at.radio(key="pt_how").set_value("A edited").run()
    at.text_input(key="pt_edit").set_value("none").run()
    assert not at.exception, at.exception
    assert at.error and "patching cannot be run" in at.error[0].value


def test_a_revin_model_is_not_promised_an_exact_memory_patch(open_app, runs_dir, sample_frame, tiny_spec):
    """RevIN maps the forecast back with B's own statistics, around every hook site: the page must not call the
    memory patch exact, and the difference it shows is really not 0."""
    import shutil

    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.learning.workflow import ModelSize, train_on_frame
    from tests.conftest import TINY_SIZE

    shutil.rmtree(runs_dir / "sample")
    train_on_frame(sample_frame, tiny_spec, ModelSize(**TINY_SIZE, revin=True),
                   TrainSettings(epochs=1, batch_size=32, max_steps_per_epoch=5, seed=0), out=runs_dir / "sample")
    at = open_app(PAGE)
    at.radio(key="pt_point").set_value("memory").run()
    assert not at.exception, at.exception
    said = " ".join(m.value for m in at.markdown)
    labels = " ".join(at.radio(key="pt_point").options)
    assert "memory" not in labels and "the encoder output and the decoder input" in labels
    assert "gives A exactly" not in labels + said
    gap = float(said.split("largest difference from A's forecast is ")[1].split(" ")[0])
    assert gap > 1e-3 and "with B's own statistics" in said
