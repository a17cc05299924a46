"""A small least-recently-used cache shared by every session, for results whose computation draws its own
progress (a function under `st.cache_data` / `st.cache_resource` may not call elements made outside it: they
would be replayed on a hit) and whose hits must cost nothing (no unpickled copy). Values are shared read-only."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

T = TypeVar("T")


class SharedLRU(Generic[T]):
    """At most `max_entries` values by key; a miss computes outside the lock (two sessions may both compute the
    same value: the later one is kept, both are equal)."""

    def __init__(self, max_entries: int):
        self.max_entries = max_entries
        self._values: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> T | None:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        return None

    def get_or_make(self, key: Hashable, make: Callable[[], T]) -> T:
        found = self.get(key)
        if found is not None:
            return found
        value = make()
        with self._lock:
            self._values[key] = value
            while len(self._values) > self.max_entries:
                self._values.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
