"""The coverage benchmark's confirmation of the cells under its goal: every cell maps back to the setting that made it,
only the lab's counted cells under the goal are run again, the second stream is another stream, and a cell passes
only on its confirmation's own rate."""
import contextlib
import io

import numpy as np

from benchmarks import coverage
from benchmarks.coverage_cells import GOAL, MIN_SHOWN, Tally, cell_rate, print_confirmation, setting_of, under_goal


def cell(shown: int, covered: int, units: int | None = None) -> list:
    return [shown, shown, covered, 0.1 * shown, shown if units is None else units]


def test_every_cell_of_a_run_names_a_setting_of_that_run():
    settings = coverage.settings_of(type("A", (), {"quick": True, "seq_lens": [96], "windows": [256],
                                                  "processes": ["white"]})())
    keys = set()
    for index, setting in enumerate(settings):
        cells, _, _ = coverage.run_setting(setting, index, 0, 2, False, {})
        keys |= set(cells)
    assert {setting_of(key) for key in keys} == set(settings)
    statistics = {key[0] for key in keys}
    assert {"head_null", "head_effect", "mse", "paired", "ratio", "seeds_rho"} <= statistics


def test_the_confirmation_draws_another_stream_of_the_same_setting():
    setting = ("windows", "white", 96, 24, 256, 8)
    first, _, _ = coverage.run_setting(setting, 3, 0, 3, False, {})
    again, _, _ = coverage.run_setting(setting, 3, 0, 3, False, {})
    other, _, _ = coverage.run_setting(setting, 3, 0, 3, False, {}, stage=1)
    assert first == again  # a stage's stream is its own, repeatable
    assert set(other) == set(first) and other != first


def test_only_the_labs_counted_cells_under_the_goal_are_run_again():
    low = int(0.9 * 400)
    cells = {("mse", "ar1", 96, 24, 256, 8, "lab"): cell(400, low),  # under: confirmed
             ("mse", "ar1", 96, 24, 256, 8, "mbb"): cell(400, low),  # the old method: reported, not the goal
             ("mse", "daily_15min_strong", 96, 24, 256, 8, "lab"): cell(400, low),  # the stress case
             ("mse", "white", 96, 24, 256, 8, "lab"): cell(400, low, units=MIN_SHOWN - 1),  # too few to measure
             ("mse", "white", 96, 24, 4096, 1, "lab"): cell(400, int(GOAL * 400))}  # at the goal
    assert under_goal(cells, {"daily_15min_strong"}) == [("mse", "ar1", 96, 24, 256, 8, "lab")]


def test_a_cell_passes_on_its_confirmation_alone():
    keys = [("ratio", "white", 96, 24, 4096, 1, "lab"), ("mse", "ar1", 96, 24, 256, 8, "lab"),
            ("topu", "white", 96, 24, 256, 8, "lab")]
    first = {key: cell(400, 360) for key in keys}
    again = {keys[0]: cell(1600, int(np.ceil(0.94 * 1600))),  # confirmed above the goal
             keys[1]: cell(1600, int(0.925 * 1600)),  # still under it
             keys[2]: cell(1600, 1590, units=MIN_SHOWN - 1)}  # too few intervals shown to tell: not passed
    with contextlib.redirect_stdout(io.StringIO()) as out:
        still = print_confirmation(first, again, keys)
    assert still == keys[1:]
    assert f"{cell_rate(again[keys[0]])[0]:.3f}" in out.getvalue()


def test_the_tally_counts_the_intervals_that_hold_the_truth():
    tally = Tally()
    tally.add(("head_null", "white", 96, 24, 32, 1, "lab"), np.array([-1.0, 0.5, np.nan]),
              np.array([1.0, 2.0, np.nan]), 0.0, per=3)
    total, shown, covered, width, units = tally.cells[("head_null", "white", 96, 24, 32, 1, "lab")]
    assert (total, shown, covered) == (3, 2, 1) and np.isclose(units, 2 / 3) and np.isclose(width, 1.0 + 0.75)
