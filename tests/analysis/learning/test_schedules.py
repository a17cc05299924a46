"""Learning-rate schedules, the range test's choice, the time budget, and what a checkpoint records of its training."""
import json
import math

import numpy as np
import pytest

from informer_lab.analysis.learning.schedules import FLOOR, START, choose_rate, learning_rate_at, range_rates
from informer_lab.analysis.learning.training import TrainSettings


def test_the_cosine_schedule_warms_up_holds_and_decays_to_its_floor():
    peak = 3e-3
    at = [learning_rate_at("cosine", peak, progress=p, epoch=1, warmup=0.05, hold=0.3) for p in np.linspace(0, 1, 201)]
    assert at[0] == pytest.approx(START * peak) and at[-1] == pytest.approx(FLOOR * peak)
    warm, held, decay = at[:10], at[10:60], at[60:]
    assert all(b > a for a, b in zip(warm, warm[1:]))
    assert all(v == peak for v in held)
    assert all(b <= a for a, b in zip(decay, decay[1:]))
    midway = learning_rate_at("cosine", peak, progress=0.65, epoch=1, warmup=0.05, hold=0.3)
    assert midway == pytest.approx(peak * (FLOOR + (1 - FLOOR) * 0.5))  # half-way through the decay: cos = 0


def test_the_paper_schedule_halves_every_epoch_and_constant_stays():
    assert [learning_rate_at("paper", 1e-4, progress=0.9, epoch=e) for e in (1, 2, 3)] == [1e-4, 5e-5, 2.5e-5]
    assert learning_rate_at("constant", 1e-3, progress=0.99, epoch=9) == 1e-3
    with pytest.raises(ValueError, match="schedule"):
        TrainSettings(schedule="linear")


def test_the_range_test_takes_a_tenth_of_the_rate_at_the_smoothed_minimum():
    rates = range_rates(80)
    assert rates[0] == pytest.approx(1e-5) and rates[-1] == pytest.approx(1e-1)
    # a loss that falls until 1e-2 and then blows up
    losses = [1.0 - 0.5 * max(0.0, min(1.0, (math.log10(r) + 5) / 3)) + (20 * (math.log10(r) + 2) if r > 1e-2 else 0)
              for r in rates]
    chosen = choose_rate(rates, losses)
    assert 5e-4 <= chosen <= 1.5e-3  # smoothing lags the minimum a little: ~1e-2 / 10
    assert choose_rate(rates, [float("nan")] * 80) == 1e-4  # nothing to read: the floor
    assert choose_rate(rates, [1.0 - 0.01 * k for k in range(80)]) == 3e-3  # still falling at 1e-1: capped


def test_a_time_budget_ends_training_and_the_checkpoint_records_what_trained_it(sample_frame, tiny_spec, tmp_path,
                                                                                  monkeypatch):
    """Against a clock this test controls (every reading 0.1 s later than the last), not the machine's: the budget of
    3 s stops the run before a step that would leave no room for the validation pass, whatever else the machine
    is doing; the checkpoint records the budget and the steps it allowed."""
    import informer_lab.analysis.learning.training as training
    from informer_lab.analysis.learning.workflow import ModelSize, train_on_frame

    ticks = {"now": 0.0}

    def clock():
        ticks["now"] += 0.1
        return ticks["now"]

    monkeypatch.setattr(training, "clock", clock)
    settings = TrainSettings(epochs=50, batch_size=16, max_minutes=0.05, seed=0, patience=50)  # (a GPU may converge)
    _, result = train_on_frame(sample_frame, tiny_spec, ModelSize(d_model=8, n_heads=2, d_ff=16),
                               settings, out=tmp_path / "budget")
    assert result.stopped == "time_budget"
    assert 1 <= len(result.history) < 50 and 1 <= result.steps < 50 * 100
    assert result.seconds <= 0.05 * 60 + 1.0  # the budget in the clock's own seconds (a validation pass is 0.2 s)
    record = json.loads((tmp_path / "budget" / "metrics.json").read_text())["training"]
    assert record["schedule"] == "cosine" and record["learning_rate"] == settings.learning_rate
    assert record["max_minutes"] == 0.05 and record["steps"] == result.steps
    assert "cosine" in record["description"] and record["peak_learning_rate"] == settings.learning_rate


def test_the_range_test_sets_the_peak_it_chose(tiny_prepared):
    from informer_lab.analysis.learning.training import config_for, train

    config = config_for(tiny_prepared, d_model=8, n_heads=2, d_ff=16, e_layers=(2,), d_layers=1)
    result = train(tiny_prepared, config, TrainSettings(epochs=1, max_steps_per_epoch=3, find_lr=True, seed=1))
    assert result.range_test is not None and result.learning_rate == result.range_test.chosen
    assert 1e-4 <= result.learning_rate <= 3e-3 and result.range_test.steps <= 60
    assert result.record(TrainSettings(find_lr=True))["range_test"]["chosen"] == result.learning_rate
