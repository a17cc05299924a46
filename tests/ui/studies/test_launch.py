"""A study started from the app reads its data as the app does: every reading option becomes a CLI flag that the
study command parses back to the same options (a long table's picked series included, ids with commas and quotes)."""
from __future__ import annotations

from informer_lab.analysis.data import ReadOptions
from informer_lab.cli import build_parser
from informer_lab.cli_commands._common import read_options
from informer_lab.ui.studies.launch import read_flags


def test_reading_options_survive_the_trip_through_the_study_command():
    options = ReadOptions(datetime_column="year,quarter", repair="interpolate", freq="QS-JAN", dayfirst=True,
                          decimal=",", sheet="Data 2", id_column="symbol", series=("a,b", 'say "hi"', "plain"))
    args = build_parser().parse_args(["study", "--csv", "x.csv", "--target", "y", "--out", "o", *read_flags(options)])
    parsed = read_options(args)
    for name in ("datetime_column", "repair", "freq", "dayfirst", "decimal", "sheet", "id_column"):
        assert getattr(parsed, name) == getattr(options, name), name
    from informer_lab.analysis.data.long_tables import pick

    assert pick(parsed.series, ["a,b", 'say "hi"', "plain", "other"], None) == list(options.series)


def test_a_study_process_is_reaped_when_it_ends_without_the_page_asking(tmp_path, monkeypatch):
    """A finished study's process must not stay a zombie until the server exits (the page may never run again)."""
    import time

    from informer_lab.ui.studies import launch

    monkeypatch.setenv("INFORMER_LAB_STUDIES", str(tmp_path))
    process = launch.start("quick", "data.csv", b"date,y\n", ReadOptions(), ["--no-such-flag"], "0", [], ["errors"],
                           32)  # refused at once: an unknown flag
    deadline = time.monotonic() + 60
    while process.returncode is None and time.monotonic() < deadline:  # set by the reaper's wait, never polled here
        time.sleep(0.05)
    assert process.returncode == 2
    assert "unrecognized arguments: --no-such-flag" in (tmp_path / "quick" / "study.log").read_text()
