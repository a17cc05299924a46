"""Saving is atomic and recoverable: a kill at any step of a save leaves a loadable checkpoint (old or new) at the
path or one that `load_checkpoint` recovers, and the next save cleans every leftover.

A kill is simulated by raising a BaseException subclass at one step (cleanup code that catches Exception does not
run, as it would not in a killed process), for every step in turn, with the atomic exchange (Linux renameat2) and
with the two-rename fallback used where no exchange exists.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from informer_lab.analysis.checkpoints import store
from informer_lab.analysis.checkpoints.folder import load_checkpoint, save_checkpoint
from informer_lab.analysis.errors import CheckpointError

from .helpers import tiny_model, tiny_schema, valid_files, write_folder

STEPS = ("_write_file", "_fsync_dir", "_exchange", "_rename", "_rmtree")


class Killed(BaseException):
    """The process died here."""


@pytest.fixture(scope="module")
def model_and_schema():
    return tiny_model(), tiny_schema()


def save(folder, model_and_schema, n):
    model, schema = model_and_schema
    return save_checkpoint(folder, model, schema, {"n": n})


def kill_at(monkeypatch, k: int, fallback: bool) -> list[str]:
    """Make the k-th call of any step raise Killed; returns the log of steps called."""
    calls: list[str] = []
    for name in STEPS:
        real = getattr(store, name)

        def step(*args, _real=real, _name=name):
            if _name == "_exchange" and fallback:
                raise store.ExchangeUnsupported(95, "no exchange here")
            calls.append(_name)
            if len(calls) == k + 1:
                raise Killed(_name)
            return _real(*args)
        monkeypatch.setattr(store, name, step)
    return calls


def exchange_works(tmp_path) -> bool:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    try:
        store._exchange(tmp_path / "a", tmp_path / "b")
        return True
    except store.ExchangeUnsupported:
        return False


@pytest.mark.parametrize("fallback", [False, True], ids=["exchange", "two_renames"])
def test_a_kill_at_every_step_leaves_a_loadable_checkpoint(tmp_path, monkeypatch, model_and_schema, fallback):
    if not fallback and not exchange_works(tmp_path):
        pytest.skip("this filesystem has no atomic exchange")
    k = 0
    while True:
        parent = tmp_path / f"run{k}"
        folder = parent / "ck"
        save(folder, model_and_schema, 1)
        with monkeypatch.context() as patch:
            calls = kill_at(patch, k, fallback)
            try:
                save(folder, model_and_schema, 2)
                finished = True
            except Killed:
                finished = False
        if not fallback:  # the exchange never leaves the path empty, not even before recovery
            assert folder.is_dir(), (k, calls)
        assert load_checkpoint(folder).metrics["n"] in (1, 2), (k, calls)
        save(folder, model_and_schema, 3)
        assert sorted(p.name for p in parent.iterdir()) == ["ck"], (k, calls)
        assert load_checkpoint(folder).metrics == {"n": 3}
        if finished:
            break
        k += 1
    assert k >= 8  # five files, fsyncs, the swap or two renames, the removal of the old copy


def test_a_kill_during_the_first_save_leaves_nothing_or_the_checkpoint(tmp_path, monkeypatch, model_and_schema):
    for k in range(12):
        folder = tmp_path / f"run{k}" / "ck"
        with monkeypatch.context() as patch:
            kill_at(patch, k, fallback=False)
            try:
                save(folder, model_and_schema, 1)
            except Killed:
                pass
        if folder.exists() or any(folder.parent.iterdir()):
            try:
                assert load_checkpoint(folder).metrics == {"n": 1}
            except CheckpointError as err:
                assert "does not exist" in str(err)
        save(folder, model_and_schema, 2)
        assert sorted(p.name for p in folder.parent.iterdir()) == ["ck"]


def test_the_exchange_swaps_in_one_step(tmp_path, monkeypatch, model_and_schema):
    if not exchange_works(tmp_path):
        pytest.skip("this filesystem has no atomic exchange")
    folder = tmp_path / "ck"
    save(folder, model_and_schema, 1)
    calls = []
    for name in ("_exchange", "_rename"):
        real = getattr(store, name)
        monkeypatch.setattr(store, name, lambda *a, _r=real, _n=name: (calls.append(_n), _r(*a))[1])
    save(folder, model_and_schema, 2)
    assert calls == ["_exchange"]
    assert load_checkpoint(folder).metrics == {"n": 2}


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_recovery_picks_the_newest_complete_copy_and_deletes_the_rest(tmp_path):
    pid = dead_pid()
    write_folder(tmp_path / f".ck.old-{pid}-aa", valid_files(seed=1))
    write_folder(tmp_path / f".ck.tmp-{pid}-bb", valid_files(seed=2))  # written later: the newer copy
    partial = write_folder(tmp_path / f".ck.tmp-{pid}-cc", valid_files(seed=3))
    (partial / "manifest.json").unlink()  # incomplete: never used
    write_folder(tmp_path / f".ck.old-{pid}", valid_files(seed=4))  # the older name format, older still
    os.utime(tmp_path / f".ck.old-{pid}" / "manifest.json", (0, 0))
    write_folder(tmp_path / f".other.tmp-{pid}-dd", {})  # another checkpoint's leftover: not ours to touch
    assert load_checkpoint(tmp_path / "ck").metrics["seed"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".other.tmp-{pid}-dd", "ck"]


def test_a_live_saves_leftovers_are_left_alone_until_stale(tmp_path, monkeypatch):
    write_folder(tmp_path / "ck", valid_files())
    live = write_folder(tmp_path / f".ck.tmp-{os.getppid()}-ab", {"weights.safetensors": b"half"})
    load_checkpoint(tmp_path / "ck")
    assert live.exists()
    monkeypatch.setattr(store, "STALE_SECONDS", -1.0)
    load_checkpoint(tmp_path / "ck")
    assert not live.exists()


def test_a_folder_that_is_not_a_checkpoint_is_never_replaced(tmp_path, model_and_schema):
    home = tmp_path / "home"
    write_folder(home, {"thesis.tex": b"years of work"})
    with pytest.raises(CheckpointError, match="not a checkpoint folder .*thesis.tex"):
        save(home, model_and_schema, 1)
    (tmp_path / "file").write_bytes(b"x")
    with pytest.raises(CheckpointError, match="not a folder"):
        save(tmp_path / "file", model_and_schema, 1)
    assert (home / "thesis.tex").read_bytes() == b"years of work"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "home"]


def test_an_error_during_the_save_keeps_the_old_checkpoint_and_cleans_up(tmp_path, monkeypatch, model_and_schema):
    folder = tmp_path / "ck"
    save(folder, model_and_schema, 1)

    def full(path, data):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(store, "_write_file", full)
    with pytest.raises(OSError, match="No space"):
        save(folder, model_and_schema, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]
    assert load_checkpoint(folder).metrics == {"n": 1}


def test_concurrent_saves_to_one_path_always_leave_a_checkpoint(tmp_path, model_and_schema):
    folder = tmp_path / "ck"
    save(folder, model_and_schema, 0)
    errors = []

    def saver(i):
        try:
            for j in range(10):
                save(folder, model_and_schema, 100 * i + j)
        except Exception as err:  # noqa: BLE001 - the test reports it
            errors.append(err)
    threads = [threading.Thread(target=saver, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    seen = []
    while any(t.is_alive() for t in threads):
        seen.append(load_checkpoint(folder).metrics["n"])
    for t in threads:
        t.join()
    assert not errors
    assert load_checkpoint(folder).metrics["n"] in (9, 109, 209)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]
