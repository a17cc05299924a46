"""What a notebook needs, in one import: `from informer_lab.api import load_checkpoint, load_csv, …`.

Load a checkpoint and data, prepare them as the model was trained, train, evaluate, forecast, check the model against
the baselines, and run one forward pass with its seed, head mask and scoped recorder. Every screen's analysis is a
pure function of `informer_lab.analysis` (docs/python-api.md lists them); this module names the ones every notebook
starts with. Importing it imports torch.

    SAMPLE_CSV, SAMPLE_CHECKPOINT   the sample series and model shipped with the lab (a checkout or an install)
    runs_dir()                      where the lab keeps its runs (a run's name works as `load_checkpoint(run("name"))`)
"""
from __future__ import annotations

from pathlib import Path

from informer_lab.analysis.attention.recording import record_forward, window_batch
from informer_lab.analysis.checkpoints.folder import Checkpoint, load_checkpoint
from informer_lab.analysis.compare.verdict import check_against_baselines
from informer_lab.analysis.data import DataSpec, PreparedData, ReadOptions, SeriesFrame, load_csv, prepare
from informer_lab.analysis.heads.masking import head_label, head_mask
from informer_lab.analysis.learning.forecasting import forecast_future
from informer_lab.analysis.learning.training import TrainSettings, evaluate, predict
from informer_lab.analysis.learning.workflow import ModelSize, prepare_for_checkpoint, train_on_csv, train_on_frame
from informer_lab.home import SAMPLE_CHECKPOINT, SAMPLE_CSV, resolve_run, runs_dir
from informer_lab.model import Batch, HeadMask, Informer, InformerConfig, Site, key_generator, patching, recording


def run(name: str) -> Path:
    """The folder of a run in the lab's home by its name (`sample`: the shipped sample model, until a run of that
    name exists), as `--checkpoint NAME` finds it."""
    return resolve_run(Path(name))


__all__ = ["Batch", "Checkpoint", "DataSpec", "HeadMask", "Informer", "InformerConfig", "ModelSize", "PreparedData",
           "ReadOptions", "SAMPLE_CHECKPOINT", "SAMPLE_CSV", "SeriesFrame", "Site", "TrainSettings",
           "check_against_baselines", "evaluate", "forecast_future", "head_label", "head_mask", "key_generator",
           "load_checkpoint", "load_csv", "patching", "predict", "prepare", "prepare_for_checkpoint", "record_forward",
           "recording", "run", "runs_dir", "train_on_csv", "train_on_frame", "window_batch"]
