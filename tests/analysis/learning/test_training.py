

def test_validation_and_test_passes_report_their_windows(tiny_prepared):
    """Long inputs: a pass over every window takes minutes, so it reports how far it has got; the step reports
    stay what they were."""
    from informer_lab.analysis.learning.training import TrainProgress, TrainSettings, config_for, train
    from informer_lab.analysis.learning.windows import WindowDataset
    reports: list[TrainProgress] = []
    config = config_for(tiny_prepared, d_model=8, n_heads=2, e_layers=(1,), d_layers=1, d_ff=8, dropout=0.0)
    train(tiny_prepared, config, TrainSettings(epochs=1, max_steps_per_epoch=2, batch_size=16),
          progress=reports.append)
    stages = [r.stage for r in reports]
    assert stages[:2] == ["train", "train"] and "validate" in stages and stages[-1] == "test"
    val = [r for r in reports if r.stage == "validate"]
    assert val[-1].windows_done == val[-1].windows_total == len(WindowDataset(tiny_prepared, "val"))
    assert [r.windows_done for r in val] == sorted(r.windows_done for r in val)
    epoch_end = [r for r in reports if r.val_loss is not None]
    assert len(epoch_end) == 1 and stages.index("validate") < reports.index(epoch_end[0])
    test = [r for r in reports if r.stage == "test"]
    assert test[-1].windows_done == len(WindowDataset(tiny_prepared, "test"))


def test_unset_epochs_plan_the_fewest_whole_epochs_that_reach_the_step_target():
    """Auto: ⌈AUTO_STEPS / steps per epoch⌉ epochs, clamped to AUTO_EPOCHS; a set `epochs` is taken as it is."""
    import math

    from informer_lab.analysis.learning.settings import AUTO_EPOCHS, AUTO_STEPS, TrainSettings
    auto, low, high = TrainSettings(), *AUTO_EPOCHS
    for steps in (1, 10, AUTO_STEPS // 5, AUTO_STEPS // 3, AUTO_STEPS // 2 - 1, AUTO_STEPS // 2, 437, AUTO_STEPS, 10**6):
        planned = auto.planned_epochs(steps)
        assert low <= planned <= high
        if planned not in (low, high):  # inside the clamp: the fewest whole epochs reaching the target
            assert planned * steps >= AUTO_STEPS > (planned - 1) * steps
        assert planned == min(high, max(low, math.ceil(AUTO_STEPS / steps)))
    assert auto.planned_epochs(437) == 2  # 10,000 hourly rows at batch 16
    assert auto.planned_epochs(90) == 6  # a short series: weekly rows over 44 years
    assert TrainSettings(epochs=9).planned_epochs(10**6) == 9 and TrainSettings(epochs=1).planned_epochs(1) == 1


def test_auto_epochs_run_and_record_the_planned_count(tiny_prepared):
    """A run with epochs unset decays its schedule over the planned epochs, runs them (patience above them) and
    records how many were planned beside `epochs: None`."""
    from informer_lab.analysis.learning.training import TrainSettings, config_for, train
    config = config_for(tiny_prepared, d_model=8, n_heads=2, e_layers=(1,), d_layers=1, d_ff=8, dropout=0.0)
    settings = TrainSettings(max_steps_per_epoch=2, batch_size=16, patience=10)
    result = train(tiny_prepared, config, settings)
    assert result.planned_epochs == settings.planned_epochs(2) == 6
    assert len(result.history) == 6 and result.steps == 12
    record = result.record(settings)
    assert record["epochs"] is None and record["planned_epochs"] == 6 and "6 planned" in record["description"]


def test_the_moving_average_step_follows_its_warm_up_on_float_and_integer_tensors():
    """δ = min(decay, (1 + n)/(10 + n)) after n updates: w̄ ← δ·w̄ + (1 − δ)·w, integer buffers rounded toward 0."""
    import torch

    from informer_lab.analysis.learning.training import moving_average
    for n, delta in ((1, 2 / 11), (80, 0.9), (10_000, 0.98)):
        mean, value = [torch.tensor([1.0, -2.0])], [torch.tensor([3.0, 4.0])]
        moving_average(0.98, mean, value, torch.tensor(n))
        torch.testing.assert_close(mean[0], delta * torch.tensor([1.0, -2.0]) + (1 - delta) * torch.tensor([3.0, 4.0]))
    count = [torch.tensor(10)]
    moving_average(0.98, count, [torch.tensor(25)], torch.tensor(80))  # 0.9·10 + 0.1·25 = 11.5
    assert count[0].dtype == torch.int64 and int(count[0]) == 11


def test_averaged_weights_are_the_moving_average_of_the_steps(tiny_prepared, monkeypatch):
    """With `average` = d the kept weights are w̄_k = δ_k·w̄_{k−1} + (1 − δ_k)·w_k over the optimiser steps (w̄_1 = w_1,
    δ_k = min(d, k / (9 + k)): the warm-up), recomputed here from a run of the same seed without averaging."""
    import torch

    from informer_lab.analysis.learning import training as module
    from informer_lab.analysis.learning.training import TrainSettings, config_for, train
    config = config_for(tiny_prepared, d_model=8, n_heads=2, e_layers=(1,), d_layers=1, d_ff=8, dropout=0.0)
    built, snapshots, informer = [], [], module.Informer

    def build(cfg):  # the plain run's model, whose weights are read after each step
        built.append(informer(cfg))
        return built[-1]

    def keep(report):
        if report.stage == "train" and report.val_loss is None:
            snapshots.append({k: v.detach().clone() for k, v in built[-1].state_dict().items()})
    with monkeypatch.context() as patch:
        patch.setattr(module, "Informer", build)
        train(tiny_prepared, config, TrainSettings(epochs=1, max_steps_per_epoch=40, batch_size=16, average=0.0),
              progress=keep)
    decay = 0.7  # reached at step 21 of the warm-up
    averaged = train(tiny_prepared, config, TrainSettings(epochs=1, max_steps_per_epoch=40, batch_size=16,
                                                          average=decay)).model.state_dict()
    expected = snapshots[0]
    for k, later in enumerate(snapshots[1:], start=2):
        delta = min(decay, k / (9 + k))
        expected = {key: delta * expected[key] + (1 - delta) * later[key] if later[key].is_floating_point()
                    else later[key] for key in later}
    assert len(snapshots) == 40
    for key, value in averaged.items():
        torch.testing.assert_close(value, expected[key], rtol=1e-5, atol=1e-6)
    # and it is not the last step's weights
    assert any(not torch.allclose(averaged[k], snapshots[-1][k]) for k in averaged if averaged[k].is_floating_point())
