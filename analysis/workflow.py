"""The end-to-end steps shared by the CLI and the app: CSV → prepared data → trained checkpoint."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from model import InformerConfig

from .checkpoint import Checkpoint, DataSchema, load_checkpoint, save_checkpoint
from .data import DataSpec, PreparedData, ReadOptions, SeriesFrame, load_csv, prepare
from .errors import DataError
from .training import TrainProgress, TrainResult, TrainSettings, config_for, train


@dataclass(frozen=True)
class ModelSize:
    """The knobs a user sets for a model; everything else follows from the data or the defaults."""

    d_model: int = 64
    n_heads: int = 4
    e_layers: tuple[int, ...] = (2,)
    d_layers: int = 1
    d_ff: int = 128
    factor: int = 5
    dropout: float = 0.05
    encoder_attention: str = "prob"
    decoder_attention: str = "prob"
    cross_attention: str = "full"

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def prepare_for_checkpoint(checkpoint: Checkpoint, frame: SeriesFrame) -> PreparedData:
    """Split and window a frame exactly as the checkpoint's model was trained, scaled with its own scaler.

    The scaler of the checkpoint is kept (not refitted), so evaluation uses the training statistics.
    """
    schema = checkpoint.schema
    if frame.freq != schema.freq:
        raise DataError(f"the model was trained on data every {schema.freq!r}, but {frame.name} is every "
                        f"{frame.freq!r}", value=frame.freq)
    prepared = prepare(frame, schema.spec)
    if tuple(prepared.columns) != schema.columns:
        raise DataError(f"{frame.name} gives columns {', '.join(prepared.columns)}, "
                        f"the model needs {', '.join(schema.columns)}")
    return rescale(prepared, schema)


def rescale(prepared: PreparedData, schema: DataSchema) -> PreparedData:
    """The same splits with values re-standardised by the schema's scaler instead of a refitted one."""
    def redo(split):
        raw = prepared.scaler.inverse_transform(split.values)
        return replace(split, values=schema.scaler.transform(raw))

    return replace(prepared, scaler=schema.scaler, train=redo(prepared.train), val=redo(prepared.val),
                   test=redo(prepared.test))


def train_on_csv(csv: str | Path | bytes, spec: DataSpec, size: ModelSize, settings: TrainSettings, *,
                 out: str | Path | None = None, options: ReadOptions | None = None,
                 progress: Callable[[TrainProgress], None] | None = None,
                 should_stop: Callable[[], bool] | None = None,
                 config_overrides: dict | None = None) -> tuple[Checkpoint, TrainResult]:
    """Load (with the reading options), prepare, train and (if `out`) save a checkpoint. Returns it with the
    training record."""
    frame = load_csv(csv, options)
    return train_on_frame(frame, spec, size, settings, out=out, progress=progress, should_stop=should_stop,
                          config_overrides=config_overrides)


def train_on_frame(frame: SeriesFrame, spec: DataSpec, size: ModelSize, settings: TrainSettings, *,
                   out: str | Path | None = None, progress=None, should_stop=None,
                   config_overrides: dict | None = None) -> tuple[Checkpoint, TrainResult]:
    prepared = prepare(frame, spec)
    config: InformerConfig = config_for(prepared, **size.as_dict(), **(config_overrides or {}))
    result = train(prepared, config, settings, progress=progress, should_stop=should_stop)
    schema = DataSchema.of(prepared, frame.datetime_column)
    metrics = {"test": result.test.as_dict(), "history": [h.__dict__ for h in result.history],
               "stopped": result.stopped, "device": result.device, "seconds_per_epoch": result.seconds_per_epoch,
               "data": frame.name}
    checkpoint = Checkpoint(model=result.model, schema=schema, metrics=metrics)
    if out is not None:
        save_checkpoint(out, result.model, schema, metrics)
    return checkpoint, result


__all__ = ["ModelSize", "load_checkpoint", "prepare_for_checkpoint", "rescale", "train_on_csv", "train_on_frame"]
