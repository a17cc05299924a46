"""Shared fixtures: the bundled sample data and a tiny model trained on it in seconds (CPU)."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_CSV = ROOT / "sample_data" / "sample.csv"

# A model small enough to train in a few seconds, big enough to have every site: 2 encoder layers
# (one distilling step), 1 decoder layer, 4 heads.
TINY_SPEC = dict(target="load", features="M", seq_len=48, label_len=24, pred_len=12)
TINY_SIZE = dict(d_model=16, n_heads=4, e_layers=(2,), d_layers=1, d_ff=32, dropout=0.0)


@pytest.fixture(scope="session")
def sample_frame():
    from analysis.data import load_csv

    return load_csv(SAMPLE_CSV)


@pytest.fixture(scope="session")
def tiny_spec():
    from analysis.data import DataSpec

    return DataSpec(**TINY_SPEC)


@pytest.fixture(scope="session")
def tiny_prepared(sample_frame, tiny_spec):
    from analysis.data import prepare

    return prepare(sample_frame, tiny_spec)


@pytest.fixture(scope="session")
def tiny_trained(sample_frame, tiny_spec, tmp_path_factory):
    """(Checkpoint, TrainResult, folder): a tiny model trained 2 epochs × 40 steps and saved."""
    from analysis.training import TrainSettings
    from analysis.workflow import ModelSize, train_on_frame

    folder = tmp_path_factory.mktemp("ckpt") / "tiny"
    checkpoint, result = train_on_frame(sample_frame, tiny_spec, ModelSize(**TINY_SIZE),
                                        TrainSettings(epochs=2, batch_size=32, learning_rate=1e-3,
                                                      max_steps_per_epoch=40, seed=0),
                                        out=folder)
    return checkpoint, result, folder


@pytest.fixture(scope="session")
def tiny_second(sample_frame, tmp_path_factory):
    """(Checkpoint, folder): a second tiny model on the same data, another seed and a shorter window (seq 36 /
    label 18 / pred 12), for the side-by-side views."""
    from analysis.data import DataSpec
    from analysis.training import TrainSettings
    from analysis.workflow import ModelSize, train_on_frame

    folder = tmp_path_factory.mktemp("ckpt") / "other"
    spec = DataSpec(**dict(TINY_SPEC, seq_len=36, label_len=18))
    checkpoint, _ = train_on_frame(sample_frame, spec, ModelSize(**TINY_SIZE),
                                   TrainSettings(epochs=1, batch_size=32, learning_rate=1e-3, max_steps_per_epoch=30,
                                                 seed=1), out=folder)
    return checkpoint, folder
