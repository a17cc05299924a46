"""The check against the baselines above every analysis page: started in the background, never waited for, and then
the analysis' own verdict on the model, with the linear fit shared with Compare."""
from __future__ import annotations

from informer_lab.analysis.compare.baselines import fit_linear_baseline
from informer_lab.analysis.compare.verdict import check_against_baselines
from informer_lab.analysis.data import load_csv
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint
from tests.conftest import SAMPLE_CSV


def test_the_banner_draws_the_verdict_of_the_check_it_started(open_app, tiny_trained):
    import numpy as np

    from informer_lab.ui import cache, model_check
    model_check._JOBS.clear()
    cache._LINEAR.clear()
    at = open_app("ui/head_masking/page.py")  # any analysis page starts the check and does not wait for it
    assert not at.exception, at.exception
    jobs = list(model_check._JOBS._values.values())
    assert len(jobs) == 1
    job = jobs[0]
    assert job.wait(120) and job.status == "done", job.error
    at.run()  # the next run draws the verdict itself (the polling fragment is only for the wait)
    assert not at.exception, at.exception
    shown = [w.value for w in at.warning] + [c.value for c in at.caption]
    checkpoint = tiny_trained[0]
    prepared = prepare_for_checkpoint(checkpoint, load_csv(SAMPLE_CSV))
    want = check_against_baselines(checkpoint.model, prepared, seed=model_check.SEED)
    expected = want.warning() or "Better than seasonal naive and the linear baseline"
    assert any(expected in text for text in shown), shown
    assert any(want.summary() in text for text in shown), shown
    # the linear baseline it fitted is the one Compare takes (kept per model and data), the same as a fresh fit
    fitted = list(cache._LINEAR._values.values())
    assert len(fitted) == 1
    fresh = fit_linear_baseline(prepared)
    assert np.array_equal(fitted[0].seasonal_weights, fresh.seasonal_weights)
    assert np.array_equal(fitted[0].bias, fresh.bias)
