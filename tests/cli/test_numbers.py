"""Numbers a newcomer reads right: original-unit errors per column (their scales differ by orders of magnitude), a
checkpoint that remembers the series it was trained on, counts with their noun in the right number."""
from __future__ import annotations

import numpy as np

from informer_lab.analysis.errors import count


def _long_table(path, rows: int = 400) -> None:
    rng = np.random.default_rng(0)
    t = np.arange(rows)
    lines = ["city,date,load,pop"]
    for city, scale in (("north", 1.0), ("south", 1e6)):
        load = np.sin(2 * np.pi * t / 24) + 0.1 * rng.normal(size=rows)
        pop = scale * (5 + np.cos(2 * np.pi * t / 24) + 0.1 * rng.normal(size=rows))
        hours = [f"2024-01-{1 + i // 24:02d} {i % 24:02d}:00" for i in t]
        lines += [f"{city},{h},{a:.4f},{b:.4f}" for h, a, b in zip(hours, load, pop)]
    path.write_text("\n".join(lines) + "\n")


def test_a_checkpoint_remembers_its_series_and_errors_are_per_column_in_original_units(tmp_path, capsys):
    from informer_lab.cli import main

    data = tmp_path / "cities.csv"
    _long_table(data)
    out = tmp_path / "north"
    code = main(["train", "--csv", str(data), "--series", "north", "--target", "pop", "--seq-len", "24",
                 "--label-len", "12", "--pred-len", "6", "--epochs", "1", "--max-steps", "2", "--d-model", "8",
                 "--n-heads", "2", "--d-ff", "8", "--out", str(out)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "in original units, per column: load mse" in printed.out and "; pop mse" in printed.out
    code = main(["evaluate", "--checkpoint", str(out), "--csv", str(data), "--no-baseline-check"])
    printed = capsys.readouterr()
    assert code == 0, printed.err  # before, the whole table was read and "lacks column 'pop'" refused it
    assert "read --series north of the long table, as the model's training data was" in printed.err
    assert "per column: load mse" in printed.out and "mean over columns" in printed.out


def test_counts_take_their_noun_in_the_right_number():
    assert count(1, "window") == "1 window" and count(2, "test window") == "2 test windows"
    assert count(1024, "window") == "1,024 windows" and count(0, "series", "series") == "0 series"
