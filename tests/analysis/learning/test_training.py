

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
