"""Presentation helpers shared by the screens (no Streamlit)."""
from __future__ import annotations

import pandas as pd

from tests.ui.helpers import parse_markdown_table
from informer_lab.ui.tables import markdown_table


def test_a_markdown_table_shows_every_cell_as_its_text():
    """Markup characters (| splits a row, $ opens maths in Streamlit, :red[...] colours, * emphasis, backslash)
    and line breaks stay literal text in their own cell; formats apply per column; numbers align right."""
    df = pd.DataFrame({"a|b": [1, 22], "text": ["x|y \\ z", "$5 *b* :red[z]\nnext"], "v": [0.12345, 2.0],
                       "when": pd.to_datetime(["2024-01-02 03:04", "2024-12-31 23:00"])})
    text = markdown_table(df, {"v": "{:.3f}", "when": "{:%m-%d %H:%M}"})
    assert text.splitlines()[1] == "| ---: | :--- | ---: | :--- |"
    shown = parse_markdown_table(text)
    assert list(shown.columns) == ["a|b", "text", "v", "when"]
    assert shown.values.tolist() == [["1", "x|y \\ z", "0.123", "01-02 03:04"],
                                     ["22", "$5 *b* :red[z] next", "2.000", "12-31 23:00"]]
    assert "\\$5 \\*b\\*" in text  # escaped, so not read as maths or emphasis


def test_mean_ablation_averages_a_bounded_number_of_input_rows():
    from informer_lab.ui.cache import MEAN_ROWS, mean_windows
    assert mean_windows(48) == mean_windows(96) == 256
    assert mean_windows(1440) == 32 and mean_windows(5760) == 32  # never fewer than 32 windows
    assert mean_windows(384) == 64 and mean_windows(384) * 384 <= MEAN_ROWS
