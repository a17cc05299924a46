"""`train` says, before it trains, when the sizes leave few steps an epoch (with sizes that fit the file's season)
and when the test split is too short for an interval on the errors it will print."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd

from informer_lab.analysis.data import DataSpec, load_csv
from informer_lab.cli_commands.train import say_budget


def _months(n: int):
    months = pd.date_range("1949-01-01", periods=n, freq="MS")
    text = pd.DataFrame({"Month": months.strftime("%Y-%m"), "passengers": 100 + np.arange(n) * 2.0}).to_csv(index=False)
    return load_csv(io.BytesIO(text.encode()))


def test_a_short_monthly_file_hears_of_seasonal_sizes_and_of_its_missing_interval(capsys):
    say_budget(_months(257), DataSpec("passengers", "S", 96, 48, 24), 32)
    err = capsys.readouterr().err
    assert "2 steps an epoch at batch size 32" in err and "--seq-len 24 --label-len 12 --pred-len 12" in err
    say_budget(_months(144), DataSpec("passengers", "S", 24, 12, 12), 16)
    err = capsys.readouterr().err
    assert "test split gives 17 windows" in err and "no interval" in err and "steps an epoch" not in err
