"""The coverage benchmark's cells: their rates and binomial errors, which ones the goal counts, and the setting that
made each (so that a cell under the goal can be run again, on a stream of its own, to confirm it)."""
from __future__ import annotations

import math

import numpy as np

HEADS = 16  # heads per planted model
GOAL = 0.93  # the least coverage a 95 % interval may show in a cell
MIN_SHOWN = 40  # independent replications with an interval for a cell's coverage to count (± 0.07 at 0.95)


class Tally:
    def __init__(self):
        self.cells: dict[tuple, list] = {}

    def add(self, key: tuple, lo, hi, truth, per: int = 1) -> None:
        """per: intervals per independent replication (the 16 heads of one model share its windows)."""
        cell = self.cells.setdefault(key, [0, 0, 0, 0.0, 0.0])
        lo, hi = np.atleast_1d(lo), np.atleast_1d(hi)
        shown = np.isfinite(lo) & np.isfinite(hi)
        cell[0] += lo.size
        cell[1] += int(shown.sum())
        cell[2] += int(((lo <= truth) & (truth <= hi) & shown).sum())
        cell[3] += float(np.sum((hi - lo)[shown]) / 2)
        cell[4] += int(shown.sum()) / per


def cell_rate(cell: list) -> tuple[float, float, float]:
    """(coverage, 1.96 binomial standard errors, mean half-width) of a tally cell [total, shown, covered, width,
    units]. The error counts independent replications: a model's heads share its windows, so they count as one
    (an upper bound on the error there)."""
    total, shown, covered, width, units = cell
    rate = covered / shown if shown else float("nan")
    error = 1.96 * math.sqrt(rate * (1 - rate) / units) if units else float("nan")
    return rate, error, (width / shown if shown else float("nan"))


def counts(key: tuple, cell: list, stress: set) -> str | None:
    """Which minimum a cell enters ("lab", "mbb" or "stress"), or None when too few replications showed an interval
    for its rate to be a measurement. Every cell where the method shows intervals counts, however few of its
    replications show one: a user sees the intervals that are shown."""
    if cell[4] < MIN_SHOWN:
        return None
    process, method = key[1], key[-1]
    return "stress" if process in stress and method == "lab" else method


def setting_of(key: tuple) -> tuple:
    """The setting whose replications filled a cell: ("windows", kind, S, P, n, stride) or ("seeds", seeds, noise)."""
    statistic, *rest, _method = key
    if statistic == "seeds_rho":
        noise, _heads, _zero, seeds, _one = rest
        return ("seeds", seeds, float(noise.split()[1]))
    return ("windows", *rest)


def under_goal(cells: dict, stress: set) -> list[tuple]:
    """The lab's cells (stress case aside) whose coverage is under the goal: the ones a confirmation runs again."""
    return sorted((key for key, cell in cells.items() if counts(key, cell, stress) == "lab"
                   and cell_rate(cell)[0] < GOAL), key=lambda k: tuple(map(str, k)))


def print_cells(cells: dict) -> None:
    print("| statistic | process | seq_len | pred_len | windows | stride | method | shown | coverage | ± binomial "
          "| half-width |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key, cell in sorted(cells.items(), key=lambda kv: tuple(map(str, kv[0]))):
        statistic, process, S, P, n, stride, method = key
        rate, error, width = cell_rate(cell)
        print(f"| {statistic} | {process} | {S} | {P} | {n} | {stride} | {method} | {cell[1] / cell[0]:.2f} | "
              f"{rate:.3f} | {error:.3f} | {width:.4g} |")


def print_confirmation(first: dict, again: dict, keys: list[tuple]) -> list[tuple]:
    """The cells under the goal, run again on streams of their own: each one's first rate beside its confirmation
    (the first rate was selected for being low, so only the second is an unbiased measurement of the cell).
    Returns the cells whose confirmation is also under the goal."""
    print("| statistic | process | seq_len | pred_len | windows | stride | first | ± | confirmation | ± | shown |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    still = []
    for key in keys:
        rate, error, _ = cell_rate(first[key])
        cell = again.get(key)
        if cell is None or cell[4] < MIN_SHOWN:  # the confirmation showed too few intervals to measure the cell
            still.append(key)
            print(f"| {' | '.join(map(str, key[:6]))} | {rate:.3f} | {error:.3f} | – | – | – |")
            continue
        second, second_error, _ = cell_rate(cell)
        print(f"| {' | '.join(map(str, key[:6]))} | {rate:.3f} | {error:.3f} | {second:.3f} | {second_error:.3f} | "
              f"{cell[1] / cell[0]:.2f} |")
        if second < GOAL:
            still.append(key)
    return still
