"""Where results go: every --out checked before any work, devices and pipes written through and never
replaced, `--out -` on standard output, one line and exit 2 for every output that cannot take the results, values of
options and edits named, and an error after a progress bar on a line of its own. In-process `main` (as the
subprocess runs it) to keep these quick."""
from __future__ import annotations

import io
import os
import stat

import pandas as pd
import pytest

from tests.conftest import SAMPLE_CSV


def run(capsys, *args) -> tuple[int, str, list[str]]:
    from informer_lab.cli import main

    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, [line for line in captured.err.splitlines() if line.strip()]


def forecast(folder, out) -> list[str]:
    return ["forecast", "--checkpoint", folder, "--csv", SAMPLE_CSV, "--out", out]


def one_error(code: int, err: list[str], *words: str) -> None:
    assert code == 2 and len(err) == 1 and err[0].startswith("error: "), err
    assert len(err[0]) <= 310, err[0]
    for word in words:
        assert word in err[0], (word, err[0])


def test_out_dash_writes_the_csv_to_standard_output_and_the_summary_to_stderr(tiny_trained, capsys):
    code, out, err = run(capsys, *forecast(tiny_trained[2], "-"))
    assert code == 0
    table = pd.read_csv(io.StringIO(out))
    assert list(table.columns) == ["date", "temperature", "humidity", "price", "load"] and len(table) == 12
    assert any("written to" in line for line in err)


def test_devices_are_written_through_never_replaced(tiny_trained, capsys, tmp_path):
    code, _, _ = run(capsys, *forecast(tiny_trained[2], "/dev/null"))
    assert code == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    link = tmp_path / "null-link"
    link.symlink_to("/dev/null")
    assert run(capsys, *forecast(tiny_trained[2], link))[0] == 0
    assert link.is_symlink() and os.readlink(link) == "/dev/null"
    code, _, err = run(capsys, *forecast(tiny_trained[2], "/dev/full"))
    one_error(code, err, "/dev/full", "no space left")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_named_pipe_is_written_through_to_its_reader_or_refused_without_one(tiny_trained, capsys, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, _, err = run(capsys, *forecast(tiny_trained[2], fifo))
    one_error(code, err, "nothing reads from it")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is there (the CSV fits the pipe's buffer)
    try:
        code, _, err = run(capsys, *forecast(tiny_trained[2], fifo))
        received = [os.read(reader, 1 << 20)]
    finally:
        os.close(reader)
    assert code == 0, err
    assert received and received[0].startswith(b"date,temperature") and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_outputs_that_cannot_take_the_results_are_one_line_before_any_work(tiny_trained, capsys, tmp_path):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    one_error(*run(capsys, *forecast(tiny_trained[2], folder))[::2], "is a folder")
    one_error(*run(capsys, *forecast(tiny_trained[2], tmp_path / ("n" * 300 + ".csv")))[::2], "allows 255")
    one_error(*run(capsys, *forecast(tiny_trained[2], "/sys/forecast.csv"))[::2], "/sys")  # not writable, even as root
    both = forecast(tiny_trained[2], "-")[:-2] + ["--out", "-"]
    code, _, err = run(capsys, "compare", *both[1:], "--per-step-out", "-")
    one_error(code, err, "--out and --per-step-out both write to standard output")


def test_train_onto_a_folder_that_is_not_a_checkpoint_or_onto_a_file_is_refused_before_training(capsys, tmp_path):
    other = tmp_path / "photos"
    other.mkdir()
    (other / "holiday.jpg").write_bytes(b"\xff\xd8")
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me")
    for out, words in ((other, ("not a checkpoint", "holiday.jpg")), (a_file, ("is a file, not a folder",))):
        code, _, err = run(capsys, "train", "--csv", SAMPLE_CSV, "--target", "load", "--out", out)
        one_error(code, err, *words)  # one line: no progress bar was drawn, nothing trained
    assert (other / "holiday.jpg").read_bytes() == b"\xff\xd8" and a_file.read_text() == "keep me"
    code, _, err = run(capsys, "train", "--csv", SAMPLE_CSV, "--target", "load", "--out", "-")
    one_error(code, err, "writes a folder")


def test_values_of_options_and_edits_are_named(tiny_trained, capsys, tmp_path):
    base = ["counterfactual", "--checkpoint", tiny_trained[2], "--csv", SAMPLE_CSV, "--window", 0, "--out",
            tmp_path / "cf"]
    one_error(*run(capsys, *base, "--edit", "shuffle:column=load,seed=-1")[::2], "seed must be a whole number ≥ 0")
    code, _, err = run(capsys, *base, "--edit", "spike:t=40,size=" + "9" * 10_000)
    one_error(code, err, "spike:t=40,size=999", "size")
    one_error(*run(capsys, "train", "--csv", SAMPLE_CSV, "--target", "load", "--learning-rate", "nan", "--out",
                   tmp_path / "x")[::2], "--learning-rate")
    one_error(*run(capsys, "train", "--csv", SAMPLE_CSV, "--target", "load", "--dropout", "1.5", "--out",
                   tmp_path / "x")[::2], "--dropout")
    one_error(*run(capsys, *forecast(tiny_trained[2], tmp_path / "f.csv"), "--seed", "-3")[::2], "--seed")


def test_an_error_after_a_progress_bar_starts_on_its_own_line(capsys):
    import argparse

    from informer_lab.analysis.errors import DataError
    from informer_lab.analysis.learning.training import TrainProgress
    from informer_lab.cli_commands._common import ConsoleProgress
    from informer_lab.cli_commands._output import run_command

    def work(args):
        ConsoleProgress()(TrainProgress(epoch=1, epochs=2, step=3, steps=10, train_loss=0.5))
        raise DataError("the disk went away")

    with pytest.raises(DataError):
        run_command(argparse.Namespace(command="train", func=work, out=None))
    err = capsys.readouterr().err
    assert err.endswith("loss 0.5000\n"), repr(err)  # the bar's line closed before the error is printed


def test_data_alias_reads_a_spreadsheet_and_parquet_like_the_csv(tiny_trained, capsys, tmp_path):
    frame = pd.read_csv(SAMPLE_CSV, parse_dates=["date"])
    parquet = tmp_path / "sample.parquet"
    frame.to_parquet(parquet)
    code, out, err = run(capsys, "forecast", "--checkpoint", tiny_trained[2], "--data", parquet, "--out", "-")
    assert code == 0, err
    _, expected, _ = run(capsys, *forecast(tiny_trained[2], "-"))
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(out)), pd.read_csv(io.StringIO(expected)))


def test_two_output_options_naming_one_file_are_refused_before_any_work(tiny_trained, capsys, tmp_path):
    folder = tiny_trained[2]
    link = tmp_path / "link.csv"
    (tmp_path / "same.csv").write_text("old")
    link.symlink_to(tmp_path / "same.csv")
    for heads in (tmp_path / "same.csv", link):
        code, _, err = run(capsys, "lens", "--checkpoint", folder, "--csv", SAMPLE_CSV, "--out", tmp_path / "same.csv",
                           "--heads-out", heads, "--windows", 4, "--fit-windows", 4)
        one_error(code, err, "--out and --heads-out both name", "one table would replace the other")
    assert (tmp_path / "same.csv").read_text() == "old"
    code, _, err = run(capsys, "sparsity", "--checkpoint", folder, "--csv", SAMPLE_CSV, "--out", "/dev/null",
                       "--heads-out", "/dev/null", "--windows", "0", "--seeds", 1, "--no-baseline-check")
    assert code == 0, err  # /dev/null takes any number of tables


def test_a_folder_output_replaces_only_its_own_earlier_output_and_is_put_in_place_whole(tmp_path):
    from informer_lab.analysis.outputs import OutputError, check_folder_target, write_folder

    out = tmp_path / "circuits"
    names = ("composition.csv", "atp.csv")
    write_folder(out, {"composition.csv": b"first", "atp.csv": b"first"})
    check_folder_target(out, "--out", holds=names)  # its own earlier output: replaced whole
    write_folder(out, {"composition.csv": b"second", "atp.csv": b"second"})
    assert {p.name: p.read_bytes() for p in out.iterdir()} == {"composition.csv": b"second", "atp.csv": b"second"}
    assert [p.name for p in tmp_path.iterdir()] == ["circuits"]  # nothing hidden left beside it
    (out / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match="notes.txt"):
        check_folder_target(out, "--out", holds=names)
    with pytest.raises(OutputError, match="notes.txt"):
        write_folder(out, {"composition.csv": b"third", "atp.csv": b"third"})
    assert (out / "notes.txt").read_text() == "mine" and (out / "atp.csv").read_bytes() == b"second"


def test_a_kill_while_a_folder_is_written_leaves_the_old_one_whole_and_the_next_write_cleans_up(tmp_path):
    """A child process writes a new output folder and is killed (SIGKILL) before it is put in place: the old folder
    is whole, and the hidden copy it left is removed by the next write."""
    import signal
    import subprocess
    import sys

    out = tmp_path / "bench"
    from informer_lab.analysis.outputs import write_folder

    write_folder(out, {"scores.csv": b"old", "report.html": b"old"})
    script = ("import os, signal, sys\n"
              "from informer_lab.analysis.checkpoints import store\n"
              "from informer_lab.analysis.outputs import write_folder\n"
              "store._fsync_dir = lambda path: os.kill(os.getpid(), signal.SIGKILL)  # dies before the rename\n"
              f"write_folder({str(out)!r}, {{'scores.csv': b'new', 'report.html': b'new'}})\n")
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert child.returncode == -signal.SIGKILL
    assert {p.name: p.read_bytes() for p in out.iterdir()} == {"scores.csv": b"old", "report.html": b"old"}
    assert len(list(tmp_path.iterdir())) == 2  # the killed write's hidden copy, until …
    write_folder(out, {"scores.csv": b"newer", "report.html": b"newer"})  # … the next write to the folder
    assert [p.name for p in tmp_path.iterdir()] == ["bench"] and (out / "scores.csv").read_bytes() == b"newer"
