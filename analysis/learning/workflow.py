"""The end-to-end steps shared by the CLI and the app: CSV → prepared data → trained checkpoint."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable

from informer_lab.model import InformerConfig

from informer_lab.analysis.checkpoints.folder import Checkpoint, DataSchema, load_checkpoint, save_checkpoint
from informer_lab.analysis.data import DataSpec, PreparedData, ReadOptions, SeriesFrame, describe_frequency, load_csv, prepare
from informer_lab.analysis.data.splits import windows_fit
from informer_lab.analysis.errors import DataError, InformerLabError
from informer_lab.analysis.learning.embedding import lag_history
from informer_lab.analysis.learning.settings import ModelSize
from informer_lab.analysis.learning.training import TrainProgress, TrainResult, TrainSettings, config_for, train
from informer_lab.analysis import jsonfile


def schema_misfit(schema: DataSchema, frame: SeriesFrame) -> str | None:
    """Why a frame cannot feed a model of this schema (its step, missing columns), or None when it can."""
    if frame.freq != schema.freq:
        return (f"the model was trained on {describe_frequency(schema.freq)} data ({schema.freq!r}), but "
                f"{frame.name} is {describe_frequency(frame.freq)} ({frame.freq!r})")
    missing = [c for c in schema.columns if c not in frame.columns]
    if missing:
        return (f"{frame.name} lacks column {missing[0]!r}{f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''}"
                f"; the model needs {', '.join(schema.columns)}")
    return None


def read_schema(folder: str | Path) -> DataSchema | None:
    """The data schema of a checkpoint folder from its schema.json alone (no weights read); None if unreadable."""
    path = Path(folder) / "schema.json"
    try:
        return DataSchema.from_dict(jsonfile.read(path, max_bytes=16 << 20))
    except (OSError, ValueError, TypeError, KeyError, AttributeError, InformerLabError):
        return None


def fitting_runs(runs: Path, frame: SeriesFrame) -> list[str]:
    """Checkpoint folders under `runs` whose models can read `frame` (by their schema.json), sorted by name."""
    if not Path(runs).is_dir():
        return []
    names = []
    for folder in sorted(p for p in Path(runs).iterdir() if p.is_dir() and not p.name.startswith(".")):
        schema = read_schema(folder)
        if schema is not None and schema_misfit(schema, frame) is None:
            names.append(folder.name)
    return names


def prepare_for_checkpoint(checkpoint: Checkpoint, frame: SeriesFrame) -> PreparedData:
    """Split and window a frame exactly as the checkpoint's model was trained, scaled with its own scaler.

    The scaler of the checkpoint is kept (not refitted), so evaluation uses the training statistics.
    """
    schema = checkpoint.schema
    misfit = schema_misfit(schema, frame)
    if misfit is not None:
        raise DataError(misfit, value=frame.freq)
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


def training_spec(frame: SeriesFrame, spec: DataSpec, size: ModelSize) -> DataSpec:
    """The windows a model of `size` trains on: `spec`, or, where the embedding "auto" needs rows before each window
    for its season's lag (analysis.learning.embedding.lag_history), `spec` with seq_len lengthened by them, when the
    file's splits hold such windows (else `spec`, and auto is the conv embedding with RevIN)."""
    extra = lag_history(size.embedding, frame.freq, spec.seq_len, spec.pred_len, revin=size.revin,
                        replicas=len(size.e_layers))
    if not extra:
        return spec
    longer = replace(spec, seq_len=spec.seq_len + extra)
    return longer if windows_fit(frame, longer) else spec


def train_on_frame(frame: SeriesFrame, spec: DataSpec, size: ModelSize, settings: TrainSettings, *,
                   out: str | Path | None = None, progress=None, should_stop=None,
                   config_overrides: dict | None = None, check_baselines: bool = False) -> tuple[Checkpoint, TrainResult]:
    """Prepare, train and (if `out`) save. With `check_baselines`, the model's test MSE against seasonal naive and
    the linear baseline (analysis.compare.verdict) is kept in its metrics as `baselines`, so that a list of runs
    says which beat them without reading any data again. The model's windows are `training_spec`'s (what its
    checkpoint records)."""
    if not (config_overrides or {}).get("embedding"):
        spec = training_spec(frame, spec, size)
    prepared = prepare(frame, spec)
    config: InformerConfig = config_for(prepared, **{**size.as_dict(), **(config_overrides or {})})
    result = train(prepared, config, settings, progress=progress, should_stop=should_stop)
    schema = DataSchema.of(prepared, frame.datetime_column)
    metrics = {"test": result.test.as_dict(), "history": [h.__dict__ for h in result.history],
               "stopped": result.stopped, "device": result.device, "seconds_per_epoch": result.seconds_per_epoch,
               "data": frame.name, "training": result.record(settings)}
    if frame.long is not None:  # the series read from a long table: its later readers read the same (--series)
        metrics["read"] = {"id_column": frame.long.id_column, "series": list(frame.long.chosen)}
    if check_baselines:
        from informer_lab.analysis.compare.verdict import check_against_baselines

        metrics["baselines"] = check_against_baselines(result.model, prepared, seed=settings.seed).record()
    repair = None if frame.repairs.empty else frame.repairs.to_dict()
    checkpoint = Checkpoint(model=result.model, schema=schema, metrics=metrics, repair=repair)
    if out is not None:
        save_checkpoint(out, result.model, schema, metrics, repair=repair)
    return checkpoint, result


__all__ = ["ModelSize", "fitting_runs", "load_checkpoint", "prepare_for_checkpoint", "read_schema", "rescale",
           "schema_misfit", "train_on_csv", "train_on_frame", "training_spec"]
