"""Shared fixtures: the bundled sample data and a tiny model trained on it in seconds (CPU); and the run's own check
that no process a test started outlives it."""
from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN_MARK = "INFORMER_LAB_TEST_RUN"  # in the environment of every process the tests start (they inherit it)
LEFTOVER_GRACE_S = 15.0  # how long a process the tests started may take to end after the last test


RAY_TESTS = ("tests/study/", "tests/ui/studies/")  # they start a local Ray: one at a time, on one worker


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the run's main process (pytest-xdist's workers inherit the mark)
        os.environ.setdefault(RUN_MARK, f"{os.getpid()}-{time.time_ns()}")
    elif int(config.workerinput.get("workercount", 1)) > 1:
        # Workers share the machine's cores: one torch thread each (a second thread on a busy core made small
        # models several times slower), and the processes they start inherit it.
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(1)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which reads the group marks into the test ids
def pytest_collection_modifyitems(config, items):
    """Tests that start a local Ray (and those of the 200-run study fixture) run on one pytest-xdist worker, one
    after another (`--dist loadgroup`): two local Rays on two cores would starve each other. They and the browser
    tests, the longest, go first, so that the other worker takes the many short tests meanwhile instead of one
    worker finishing a long tail alone."""
    def order(item) -> int:
        path = Path(str(item.fspath)).resolve().relative_to(ROOT).as_posix()
        if path.startswith(RAY_TESTS) or "study_200" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("ray"))
            return 0
        return 1 if path.startswith("tests/e2e/") else 2

    items.sort(key=order)  # stable: the tests of a module stay together and in order


def pytest_runtest_logreport(report):
    """With INFORMER_TEST_FAILURES=FILE, every failure (its test, phase and short traceback) is appended to FILE the
    moment it happens: pytest prints the causes only at its end, and a run cut short by a time limit (a lent GPU's)
    would keep none. Written by the run's main process alone (pytest-xdist reports each test there too)."""
    path = os.environ.get("INFORMER_TEST_FAILURES")
    if not path or not report.failed or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    with open(path, "a", encoding="utf-8") as out:
        out.write(f"=== {report.nodeid} ({report.when})\n{report.longreprtext[-4000:]}\n\n")


def started_by_this_run(mark: str) -> dict[int, str]:
    """Live processes (not zombies) whose environment carries this run's mark: every process a test started,
    however it was started (a server in its own session, a Ray worker, a browser), even once re-parented. Linux."""
    found, wanted = {}, f"{RUN_MARK}={mark}".encode()
    for entry in Path("/proc").glob("[0-9]*") if sys.platform.startswith("linux") else ():
        pid = int(entry.name)
        if pid == os.getpid():
            continue
        try:
            if wanted not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if state not in ("Z", "X"):
            found[pid] = command[:160]
    return found


def pytest_sessionfinish(session, exitstatus):
    """Fails the run when a process a test started is still alive after the last test (and a grace period), and
    ends it: a test's teardown must stop what it starts, also when it fails or times out."""
    if hasattr(session.config, "workerinput") or RUN_MARK not in os.environ:
        return
    mark = os.environ[RUN_MARK]
    deadline = time.monotonic() + LEFTOVER_GRACE_S
    left = started_by_this_run(mark)
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = started_by_this_run(mark)
    if not left:
        return
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    listing = "\n".join(f"  {pid}: {command}" for pid, command in sorted(left.items()))
    session.config.get_terminal_writer().line(
        f"\nprocesses started by the tests were still running after them (now killed):\n{listing}", red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
SAMPLE_CSV = ROOT / "sample_data" / "sample.csv"

# A model small enough to train in a few seconds, big enough to have every site: 2 encoder layers
# (one distilling step), 1 decoder layer, 4 heads.
TINY_SPEC = dict(target="load", features="M", seq_len=48, label_len=24, pred_len=12)
# factor 5 pinned (the lab's default is 8): at L = 48 it leaves 28 of 48 queries lazy (u = 20), the sparse case the
# tests built on this model read; 8 would compute 32 of 48 rows. The paper's conv embedding pinned too (the lab's
# default, auto, gives hourly data the lags embedding): the positions these tests read are the window's own; the
# default's models are trained in tests/analysis/learning/test_embedding.py and opened on every screen in
# tests/ui/variants/
TINY_SIZE = dict(d_model=16, n_heads=4, e_layers=(2,), d_layers=1, d_ff=32, dropout=0.0, factor=5, embedding="conv")


@pytest.fixture(scope="session")
def sample_frame():
    from informer_lab.analysis.data import load_csv

    return load_csv(SAMPLE_CSV)


@pytest.fixture(scope="session")
def tiny_spec():
    from informer_lab.analysis.data import DataSpec

    return DataSpec(**TINY_SPEC)


@pytest.fixture(scope="session")
def tiny_prepared(sample_frame, tiny_spec):
    from informer_lab.analysis.data import prepare

    return prepare(sample_frame, tiny_spec)


@pytest.fixture(scope="session")
def tiny_trained(sample_frame, tiny_spec, tmp_path_factory):
    """(Checkpoint, TrainResult, folder): a tiny model trained 2 epochs × 40 steps and saved (the paper's schedule,
    lr halved per epoch, pinned: the tests built on this model predate the cosine default)."""
    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.learning.workflow import ModelSize, train_on_frame

    folder = tmp_path_factory.mktemp("ckpt") / "tiny"
    checkpoint, result = train_on_frame(sample_frame, tiny_spec, ModelSize(**TINY_SIZE),
                                        TrainSettings(epochs=2, batch_size=32, learning_rate=1e-3,
                                                      max_steps_per_epoch=40, seed=0, schedule="paper"),
                                        out=folder)
    return checkpoint, result, folder


@pytest.fixture(scope="session")
def tiny_second(sample_frame, tmp_path_factory):
    """(Checkpoint, folder): a second tiny model on the same data, another seed and a shorter window (seq 36 /
    label 18 / pred 12), for the side-by-side views."""
    from informer_lab.analysis.data import DataSpec
    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.learning.workflow import ModelSize, train_on_frame

    folder = tmp_path_factory.mktemp("ckpt") / "other"
    spec = DataSpec(**dict(TINY_SPEC, seq_len=36, label_len=18))
    checkpoint, _ = train_on_frame(sample_frame, spec, ModelSize(**TINY_SIZE),
                                   TrainSettings(epochs=1, batch_size=32, learning_rate=1e-3, max_steps_per_epoch=30,
                                                 seed=1, schedule="paper"), out=folder)
    return checkpoint, folder


@pytest.fixture(scope="session")
def study_200(tmp_path_factory):
    """(root, out, plan): a real study of 200 runs on a local Ray — a grid of 4 settings × 50 seeds of a tiny
    Informer (seq 24 / label 12 / pred 6, d_model 8, 2 heads, 2 training steps) on the first 480 rows of the sample,
    with the errors, sweep and roles analyses on 16 windows: the branch that only hundreds of runs reach (paging,
    the run filter, the joined tables, findings over 50 seeds), run by tests/study/test_scale.py and
    tests/ui/studies/test_many_runs.py."""
    import pandas as pd

    from informer_lab.analysis.data import DataSpec, ReadOptions
    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.learning.workflow import ModelSize
    from informer_lab.study.plan import StudyPlan, fingerprint
    from informer_lab.study.runner import run_study

    root = tmp_path_factory.mktemp("studies")
    csv = root / "small.csv"
    pd.read_csv(SAMPLE_CSV).head(480).to_csv(csv, index=False)
    data = csv.read_bytes()
    plan = StudyPlan(str(csv), fingerprint(data), ReadOptions(),
                     DataSpec(target="load", features="S", seq_len=24, label_len=12, pred_len=6),
                     ModelSize(d_model=8, n_heads=2, e_layers=(1,), d_layers=1, d_ff=8),
                     TrainSettings(epochs=1, batch_size=16, learning_rate=1e-3, max_steps_per_epoch=2),
                     seeds=tuple(range(50)), grid={"factor": (3, 5), "dropout": (0.0, 0.1)},
                     analyses=("errors", "sweep", "roles"), max_windows=16)
    out = root / "many"
    run_study(plan, out, data, num_cpus=2)
    return root, out, plan
