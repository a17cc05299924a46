"""Training the full-attention twin of the active model in a background thread (Compare page).

`analysis.comparison.train_full_attention_twin` in a daemon thread, polled like `ui.jobs.TrainJob`
(it reuses its `JobView`, so `widgets.job_progress` draws it). The twin stays in memory, in the tab's
session state: it is not saved as a run. The thread never calls Streamlit.
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from pathlib import Path

from analysis.data import PreparedData
from analysis.comparison import train_full_attention_twin
from analysis.errors import InformerLabError
from analysis.training import TrainProgress, TrainSettings
from model import Informer, InformerConfig

from .jobs import JobView

log = logging.getLogger(__name__)


class TwinJob:
    """One twin training run; every attribute the UI reads is replaced, never mutated in place."""

    def __init__(self, model_key: str, data_key: str, prepared: PreparedData, config: InformerConfig,
                 settings: TrainSettings):
        self.key = uuid.uuid4().hex[:12]  # identifies the trained twin in the comparison cache
        self.model_key, self.data_key, self.settings = model_key, data_key, settings
        self._prepared, self._config = prepared, config
        self._lock = threading.Lock()
        self._reports: list[TrainProgress] = []
        self.status = "running"
        self.error: str | None = None
        self.model: Informer | None = None
        self.started = time.monotonic()
        self.ended: float | None = None
        self.thread = threading.Thread(target=self._run, name=f"informer-twin-{self.key}", daemon=True)

    def start(self) -> "TwinJob":
        self.thread.start()
        return self

    def _report(self, progress: TrainProgress) -> None:
        with self._lock:
            self._reports.append(progress)

    def _run(self) -> None:
        try:
            self.model = train_full_attention_twin(self._prepared, self._config, self.settings,
                                                   progress=self._report)
            self.status = "done"
        except (InformerLabError, ValueError) as err:
            self.error, self.status = f"the full-attention twin could not be trained: {err}", "failed"
        except Exception as err:  # noqa: BLE001 — a bug, but the page must show a line, not die silently
            log.exception("training the full-attention twin failed")
            self.error, self.status = f"training failed unexpectedly: {type(err).__name__}: {err}", "failed"
        finally:
            self._prepared = None
            self.ended = time.monotonic()

    def view(self) -> JobView:
        with self._lock:
            reports = tuple(self._reports)
        end = self.ended if self.ended is not None else time.monotonic()
        return JobView("full-attention twin", Path("(in memory)"), self.status, reports, self.error, None,
                       end - self.started, False)

    def wait(self, timeout: float | None = None) -> bool:
        self.thread.join(timeout)
        return not self.thread.is_alive()
