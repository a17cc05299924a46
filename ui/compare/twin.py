"""Training the full-attention twin of the active model in a background thread (Compare screen).

`analysis.compare.comparison.train_full_attention_twin` in a `ui.jobs.ProgressJob`, polled like a training run (it shows
as a `JobView`, so `widgets.job_progress` draws it). The twin stays in memory, in the tab's session state: it is
not saved as a run. The thread never calls Streamlit.
"""
from __future__ import annotations

import uuid
from pathlib import Path

from informer_lab.analysis.compare.comparison import train_full_attention_twin
from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.learning.training import TrainSettings
from informer_lab.model import Informer, InformerConfig
from informer_lab.ui.jobs import ProgressJob


class TwinJob(ProgressJob):
    """One twin training run; `model` is the trained twin once `status` is "done"."""

    what = "training"

    def __init__(self, model_key: str, data_key: str, prepared: PreparedData, config: InformerConfig,
                 settings: TrainSettings):
        self.key = uuid.uuid4().hex[:12]  # identifies the trained twin in the comparison cache
        super().__init__("full-attention twin", Path("(in memory)"), f"twin-{self.key}")
        self.model_key, self.data_key, self.settings = model_key, data_key, settings
        self._prepared: PreparedData | None = prepared
        self._config = config
        self.model: Informer | None = None

    def explain(self, err: Exception) -> str:
        return f"the full-attention twin could not be trained: {err}"

    def work(self) -> None:
        self.model = train_full_attention_twin(self._prepared, self._config, self.settings, progress=self._report)
        self.status = "done"

    def release(self) -> None:
        self._prepared = None
