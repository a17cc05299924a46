"""A small least-recently-used cache shared by every session, for results whose computation draws its own
progress (a function under `st.cache_data` / `st.cache_resource` may not call elements made outside it: they
would be replayed on a hit) and whose hits must cost nothing (no unpickled copy). Values are shared read-only; each
is computed once however many sessions ask for it at the same time."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

T = TypeVar("T")


class SharedLRU(Generic[T]):
    """At most `max_entries` values by key. A miss is computed once: while one caller makes a key's value (outside the
    lock), others asking for that key wait for it instead of computing it again (two tabs opening the same view, the
    model check and Compare both fitting the linear baseline); if the maker fails, the next waiter makes it."""

    def __init__(self, max_entries: int):
        self.max_entries = max_entries
        self._values: OrderedDict[Hashable, T] = OrderedDict()
        self._making: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, *, wait: bool = False) -> T | None:
        """The value kept for `key`, or None; wait=True: if it is being made, wait for it (None if that failed)."""
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
            pending = self._making.get(key) if wait else None
        if pending is None:
            return None
        pending.wait()
        return self.get(key)

    def get_or_make(self, key: Hashable, make: Callable[[], T]) -> T:
        while True:
            with self._lock:
                if key in self._values:
                    self._values.move_to_end(key)
                    return self._values[key]
                pending = self._making.get(key)
                if pending is None:
                    pending = self._making[key] = threading.Event()
                    break
            pending.wait()  # another caller is making it: take theirs, or make it if they failed
        try:
            value = make()
        except BaseException:
            with self._lock:
                self._making.pop(key).set()
            raise
        with self._lock:
            self._values[key] = value
            while len(self._values) > self.max_entries:
                self._values.popitem(last=False)
            self._making.pop(key).set()
        return value

    def put(self, key: Hashable, value: T) -> None:
        """Keep `value` for `key` (made elsewhere)."""
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.max_entries:
                self._values.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
