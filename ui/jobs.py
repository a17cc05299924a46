"""Background work the UI polls: `BackgroundJob` (a daemon thread and its status) and `TrainJob` (a training run).

A `TrainJob` lives in `st.session_state` (a user's run). The thread never calls Streamlit; pages poll `job.view()` from an
`st.fragment(run_every=...)`. Screens build their own jobs on `BackgroundJob` (ui/compare/twin.py,
ui/ablation/jobs.py).
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from informer_lab.analysis.data import DataSpec, SeriesFrame, prepare
from informer_lab.analysis.errors import InformerLabError
from informer_lab.analysis.learning.training import TrainProgress, TrainSettings, config_for
from informer_lab.analysis.learning.workflow import ModelSize, train_on_frame, training_spec
from informer_lab.ui.compute import one_thread

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobView:
    """A consistent snapshot of a job for drawing."""

    name: str
    out: Path
    status: str  # "running" | "done" | "stopped" | "failed"
    reports: tuple[TrainProgress, ...]
    error: str | None
    summary: dict | None
    seconds: float
    stop_requested: bool

    @property
    def finished(self) -> bool:
        return self.status in ("done", "stopped", "failed")

    @property
    def latest(self) -> TrainProgress | None:
        return self.reports[-1] if self.reports else None


def check_training_inputs(frame: SeriesFrame, spec: DataSpec, size: ModelSize) -> None:
    """Raise the typed error (or the config's ValueError) now, before a thread is started.

    Cheap: prepares the splits (no windows are built) and builds the config, not the model.
    """
    prepared = prepare(frame, training_spec(frame, spec, size))
    config_for(prepared, **size.as_dict())


class BackgroundJob:
    """One piece of work in a daemon thread, polled by the UI; the thread never calls Streamlit.

    Subclasses implement `work()` (which sets their results) and may report progress under `self._lock`.
    A typed error (a user's input) or a ValueError (a config the model refuses) becomes `error` as is; anything
    else is a bug, logged with its traceback and shown as one line, so a page never spins forever. Every
    attribute the UI reads is replaced, never mutated in place.
    """

    what = "the job"  # for messages: "<what> failed unexpectedly: …"

    def __init__(self, thread_name: str):
        self._lock = threading.Lock()
        self.status = "running"
        self.error: str | None = None
        self.started = time.monotonic()
        self.ended: float | None = None
        self.thread = threading.Thread(target=self._run, name=f"informer-{thread_name}", daemon=True)

    def start(self):
        self.thread.start()
        return self

    def work(self) -> None:
        raise NotImplementedError

    def release(self) -> None:
        """Drop what the work needed (data, closures) once it has ended, whatever the outcome."""

    def explain(self, err: Exception) -> str:
        """The message for a typed error or a ValueError raised by the work."""
        return str(err)

    def _fail(self, message: str) -> None:
        with self._lock:
            self.error, self.status = message, "failed"

    def _run(self) -> None:
        try:
            self.work()
        except (InformerLabError, ValueError) as err:  # ValueError: e.g. InformerConfig's own validation
            self._fail(self.explain(err))
        except Exception as err:  # noqa: BLE001 — a bug, but the UI must show a line, not die silently
            log.exception("%s failed", self.what)
            self._fail(f"{self.what} failed unexpectedly: {type(err).__name__}: {err}")
        finally:
            self.release()
            self.ended = time.monotonic()

    @property
    def seconds(self) -> float:
        return (self.ended if self.ended is not None else time.monotonic()) - self.started

    def wait(self, timeout: float | None = None) -> bool:
        self.thread.join(timeout)
        return not self.thread.is_alive()


class PhaseJob(BackgroundJob):
    """`compute(say)` in a thread on one torch thread (ui.compute); `say(phase)` reports what it is doing. Its
    `result` once done; drawn by `ui.widgets.phase_job_result`."""

    def __init__(self, title: str, compute: Callable[[Callable[[str], None]], Any]):
        super().__init__(title.replace(" ", "-"))
        self.title = self.what = title
        self._compute = compute
        self.phase = "starting"
        self.result = None

    def _say(self, phase: str) -> None:
        with self._lock:
            self.phase = phase

    def work(self) -> None:
        with one_thread():
            result = self._compute(self._say)
        with self._lock:
            self.result, self.status = result, "done"

    def release(self) -> None:
        self._compute = None


class ProgressJob(BackgroundJob):
    """A training run: it collects `TrainProgress` reports and shows as a `JobView`."""

    def __init__(self, name: str, out: Path, thread_name: str):
        super().__init__(thread_name)
        self.name, self.out = name, Path(out)
        self._reports: list[TrainProgress] = []
        self.summary: dict | None = None

    def _report(self, progress: TrainProgress) -> None:
        with self._lock:
            self._reports.append(progress)

    def stop_requested(self) -> bool:
        return False

    def view(self) -> JobView:
        with self._lock:
            reports = tuple(self._reports)
        return JobView(self.name, self.out, self.status, reports, self.error, self.summary, self.seconds,
                       self.stop_requested())


class TrainJob(ProgressJob):
    """One training run of `analysis.learning.workflow.train_on_frame`, saved to `out`. Stop sets an event that `train`
    checks between steps; it then keeps the best weights so far and still saves the checkpoint."""

    what = "training"

    def __init__(self, name: str, out: Path, frame: SeriesFrame, spec: DataSpec, size: ModelSize,
                 settings: TrainSettings):
        super().__init__(name, out, f"train-{name}")
        self.spec, self.size, self.settings = spec, size, settings
        self._frame: SeriesFrame | None = frame
        self._stop = threading.Event()
        self.adopted = False  # set by the UI once it made this run the active model

    def stop(self) -> None:
        self._stop.set()

    def stop_requested(self) -> bool:
        return self._stop.is_set()

    def explain(self, err: Exception) -> str:
        return str(err) if isinstance(err, InformerLabError) else f"invalid model settings: {err}"

    def work(self) -> None:
        _, result = train_on_frame(self._frame, self.spec, self.size, self.settings, out=self.out,
                                   progress=self._report, should_stop=self._stop.is_set, check_baselines=True)
        self.summary = {"test": result.test.as_dict() if result.test else None, "stopped": result.stopped,
                        "device": result.device, "epochs": len(result.history)}
        self.status = "stopped" if result.stopped == "user" else "done"

    def release(self) -> None:
        self._frame = None
