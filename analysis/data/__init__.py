"""The data pipeline, tabular half: CSV → validated series → scaled splits (pandas and numpy only).

Everything here is a pure function or a frozen dataclass; nothing imports Streamlit, and nothing imports
torch: the app reads and plots a CSV before torch has loaded (cold start). The tensor half, windows and
batches, is `analysis.learning.windows`. This package's modules, by stage (import the names from here):

    reading      load_csv(source, ReadOptions) -> SeriesFrame   read, validate, repair (table, timestamps,
                                                                numbers, repair: its stages)
    frequency    infer_frequency, fit_frequency, describe_frequency, future_timestamps   the series' step
    calendar     time_features, seasonal_periods                what a step means on the calendar
    scaling      Scaler, fit_scaler                             standardisation on the train rows
    splits       prepare(frame, DataSpec)    -> PreparedData    order columns, split in time, scale on train
    analysis.learning.windows                                            (Batch, y) windows for training, evaluation, forecasting

Row numbers in error messages: "row N" is the N-th data row counting from 1 (the header is not
a row), followed by the line of the file it sits on, e.g. "row 5 (line 6 of the file)".
`DataError.row` holds the same row 0-based (4 here), so it indexes `SeriesFrame.values.iloc`.

Shapes use the paper's names: N rows of a split, C = enc_in input columns, C_out = c_out target
columns, F = n_marks time features.
"""
from __future__ import annotations

from .drift import RangeDeparture, column_departure, range_departure
from .budget import MIN_STEPS_PER_EPOCH, Fit, WindowBudget, fitting_sizes, suggest_sizes, window_budget
from .calendar import n_time_features, seasonal_period, seasonal_periods, time_feature_names, time_features
from .frequency import describe_frequency, fit_frequency, future_timestamps, infer_frequency
from .long_tables import LongTable, SeriesError, SeriesInfo, describe_series
from .reading import DATETIME_NAMES, ReadOptions, SeriesFrame, Source, load_csv
from .repair import FILLS, RepairReport, empty_report
from .scaling import Scaler, fit_scaler
from .splits import (ETT_COLUMNS, ETT_HOURLY_BORDERS, ETT_STEPS_PER_HOUR, SPLITS, DataSpec, Features, PreparedData,
                     Split, column_layout, ett_steps_per_hour, prepare, split_borders)

__all__ = ["RangeDeparture", "column_departure", "range_departure", "MIN_STEPS_PER_EPOCH", "Fit", "WindowBudget", "fitting_sizes", "LongTable", "suggest_sizes", "window_budget", "DATETIME_NAMES", "DataSpec", "FILLS", "ReadOptions", "RepairReport", "describe_frequency", "empty_report",
           "fit_frequency", "SeriesError", "SeriesInfo", "describe_series", "ETT_COLUMNS", "ETT_HOURLY_BORDERS", "ETT_STEPS_PER_HOUR", "Features",
           "PreparedData", "SPLITS", "Scaler", "SeriesFrame", "Source", "Split", "column_layout", "ett_steps_per_hour",
           "fit_scaler", "future_timestamps", "infer_frequency", "load_csv", "n_time_features", "prepare",
           "seasonal_period", "seasonal_periods", "split_borders", "time_feature_names", "time_features"]
