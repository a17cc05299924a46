"""Training learns, checkpoints round-trip exactly and refuse tampering, forecasts continue the series."""
import json
import shutil

import numpy as np
import pandas as pd
import pytest
import torch

from informer_lab.analysis.checkpoints.folder import load_checkpoint, read_checkpoint_files, save_checkpoint
from informer_lab.analysis.errors import CheckpointError, DataError
from informer_lab.analysis.learning.forecasting import forecast_future
from informer_lab.analysis.learning.training import TrainSettings, evaluate, metrics_of, predict, train, config_for
from informer_lab.model import Informer


def test_training_beats_the_untrained_model_and_keeps_the_best_epoch(tiny_trained, tiny_prepared):
    checkpoint, result, _ = tiny_trained
    assert [h.epoch for h in result.history] == [1, 2]
    assert [h.learning_rate for h in result.history] == [1e-3, 5e-4]  # halved per epoch
    torch.manual_seed(0)
    untrained = Informer(checkpoint.config).eval()
    assert result.test.mse < 0.8 * evaluate(untrained, tiny_prepared).mse
    best = min(h.val_loss for h in result.history)
    val = evaluate(checkpoint.model, tiny_prepared, "val", seed=0).mse
    assert val == pytest.approx(best, rel=1e-5)


def test_metrics_in_original_units_use_the_inverse_scaler(tiny_prepared):
    preds = np.zeros((3, 12, 4))
    trues = np.ones((3, 12, 4))
    m = metrics_of(preds, trues, tiny_prepared)
    std = tiny_prepared.scaler.std  # scaled error 1 is `std` in original units
    assert m.mse == 1.0 and m.mae == 1.0
    assert m.mse_original == pytest.approx(float(np.mean(std ** 2)))
    assert m.mae_original == pytest.approx(float(np.mean(std)))


def test_training_is_reproducible_with_a_seed(tiny_prepared):
    config = config_for(tiny_prepared, d_model=8, n_heads=2, d_ff=16, dropout=0.1)
    settings = TrainSettings(epochs=1, max_steps_per_epoch=5, seed=3)
    a, b = train(tiny_prepared, config, settings), train(tiny_prepared, config, settings)
    for (name, x), y in zip(a.model.state_dict().items(), b.model.state_dict().values()):
        assert torch.equal(x, y), name
    c = train(tiny_prepared, config, TrainSettings(epochs=1, max_steps_per_epoch=5, seed=4))
    assert not torch.equal(a.model.projection.weight, c.model.projection.weight)


def test_stop_request_keeps_the_best_weights(tiny_prepared):
    config = config_for(tiny_prepared, d_model=8, n_heads=2, d_ff=16)
    calls = []
    steps = lambda: [c for c in calls if c.stage == "train" and c.val_loss is None]  # noqa: E731
    result = train(tiny_prepared, config, TrainSettings(epochs=3, max_steps_per_epoch=4),
                   progress=calls.append, should_stop=lambda: len(steps()) >= 5)
    assert result.stopped == "user"
    # epoch 1 ran its 4 steps; epoch 2 stopped after 1 step and its partial weights were validated too
    assert [h.epoch for h in result.history] == [1, 2]
    assert sum(1 for c in steps() if c.epoch == 2) == 1
    kept = evaluate(result.model, tiny_prepared, "val", seed=0).mse
    assert kept == pytest.approx(min(h.val_loss for h in result.history), rel=1e-5)


def test_checkpoint_round_trip_is_exact(tiny_trained, tiny_prepared):
    checkpoint, _, folder = tiny_trained
    loaded = load_checkpoint(folder)
    assert loaded.config == checkpoint.config
    assert loaded.schema.to_dict() == checkpoint.schema.to_dict()
    for (name, x), y in zip(checkpoint.model.state_dict().items(), loaded.model.state_dict().values()):
        assert torch.equal(x.cpu(), y), name
    a, _ = predict(checkpoint.model, tiny_prepared, "test", seed=1)
    # On the device the model was trained on (a checkpoint loads on the CPU; a GPU's kernels round otherwise)
    b, _ = predict(loaded.model.to(next(checkpoint.model.parameters()).device), tiny_prepared, "test", seed=1)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("victim", ["weights.safetensors", "config.json", "schema.json", "metrics.json"])
def test_tampered_checkpoint_is_refused(tiny_trained, tmp_path, victim):
    _, _, folder = tiny_trained
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    data = bytearray((copy / victim).read_bytes())
    data[len(data) // 2] ^= 0x01
    (copy / victim).write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=f"{victim} does not match its SHA-256"):
        load_checkpoint(copy)


def test_checkpoint_with_consistent_but_wrong_config_is_refused(tiny_trained):
    _, _, folder = tiny_trained
    files = {p.name: p.read_bytes() for p in folder.iterdir()}
    config = json.loads(files["config.json"])
    config["d_ff"] = 64  # weights say 32
    files["config.json"] = json.dumps(config).encode()
    import hashlib

    manifest = json.loads(files["manifest.json"])
    manifest["sha256"]["config.json"] = hashlib.sha256(files["config.json"]).hexdigest()
    files["manifest.json"] = json.dumps(manifest).encode()
    with pytest.raises(CheckpointError, match=r"has shape \[32, 16, 1\], the config implies \[64, 16, 1\]"):
        read_checkpoint_files(files)
    del files["weights.safetensors"]
    with pytest.raises(CheckpointError, match="missing weights.safetensors"):
        read_checkpoint_files(files)


def test_checkpoint_write_is_atomic_and_replaces_an_old_one(tiny_trained, tmp_path):
    checkpoint, _, _ = tiny_trained
    target = tmp_path / "ck"
    save_checkpoint(target, checkpoint.model, checkpoint.schema, {"n": 1})
    save_checkpoint(target, checkpoint.model, checkpoint.schema, {"n": 2})
    assert load_checkpoint(target).metrics == {"n": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]  # no temporary or old folders left


def test_forecast_continues_after_the_last_row_in_original_units(tiny_trained, sample_frame):
    checkpoint, _, _ = tiny_trained
    table = forecast_future(checkpoint, sample_frame)
    assert list(table.columns) == ["date", "temperature", "humidity", "price", "load"]
    assert len(table) == 12
    assert table["date"].iloc[0] == sample_frame.timestamps[-1] + pd.Timedelta(hours=1)
    assert (table["date"].diff().dropna() == pd.Timedelta(hours=1)).all()
    # original units: the forecast lives near the data's own range, not near 0 ± 1
    load = sample_frame.values["load"]
    assert load.min() - load.std() < table["load"].mean() < load.max() + load.std()
    assert abs(table["load"].mean()) > 5


def test_forecast_refuses_a_frame_of_another_frequency(tiny_trained, sample_frame):
    from dataclasses import replace

    checkpoint, _, _ = tiny_trained
    with pytest.raises(DataError, match="trained on data every 'h'"):
        forecast_future(checkpoint, replace(sample_frame, freq="15min"))
