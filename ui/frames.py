"""The cached layer's torch-free half: CSV frames, keyed by the SHA-256 of the file's bytes and the reading options.

Split from `ui.cache` so that the Data & model page can read and plot the data before torch has loaded
(on a cold start the model stack loads only once the browser has drawn the page: ui/deferred.py).
A test (tests/ui/test_cold_path.py) keeps this module, `ui.state` and `analysis.data` free of torch.

Frames are shared read-only by every session (like `st.cache_resource`), in a small LRU of our own rather
than `st.cache_data`: a cache hit then costs nothing (st.cache_data unpickles a copy per call: a second for a
10,000-column file), and a miss can draw its own progress bar (a cached function's elements would be replayed).
Refused files are not cached; the page remembers them instead.
"""
from __future__ import annotations

import hashlib
import io
from typing import Callable

from informer_lab.analysis.data import ReadOptions, SeriesFrame, load_csv

from .lru import SharedLRU

MAX_FRAMES = 8
_FRAMES: SharedLRU[SeriesFrame] = SharedLRU(MAX_FRAMES)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def frame_from_bytes(data_digest: str, data: bytes, name: str, options: ReadOptions,
                     progress: Callable[[float, str], None] | None = None) -> SeriesFrame:
    """The frame of a file's bytes read with `options` (cached by digest, name and options; never mutate it)."""
    def read() -> SeriesFrame:
        buffer = io.BytesIO(data)
        buffer.name = name  # load_csv names the frame (and its messages) after the file
        return load_csv(buffer, options, progress=progress)

    return _FRAMES.get_or_make((data_digest, name, options), read)


def clear() -> None:
    _FRAMES.clear()
