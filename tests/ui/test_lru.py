"""The shared LRU: a value asked for by several sessions at once is computed once; a failed maker hands over."""
from __future__ import annotations

import threading
import time

import pytest

from informer_lab.ui.lru import SharedLRU


def test_concurrent_askers_of_one_key_share_one_computation():
    cache: SharedLRU[int] = SharedLRU(4)
    calls, started = [], threading.Event()

    def make() -> int:
        calls.append(1)
        started.set()
        time.sleep(0.3)
        return 42

    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.get_or_make("k", make))) for _ in range(4)]
    threads[0].start()
    started.wait(5)
    for t in threads[1:]:
        t.start()
    assert cache.get("k", wait=True) == 42  # waits for the maker too
    for t in threads:
        t.join(5)
    assert results == [42] * 4 and len(calls) == 1


def test_a_failed_maker_lets_the_next_asker_make_it_and_get_does_not_wait_by_default():
    cache: SharedLRU[str] = SharedLRU(4)
    entered, release = threading.Event(), threading.Event()

    def fail() -> str:
        entered.set()
        release.wait(5)
        raise RuntimeError("boom")

    errors = []

    def first() -> None:
        try:
            cache.get_or_make("k", fail)
        except RuntimeError as err:
            errors.append(err)

    t = threading.Thread(target=first)
    t.start()
    entered.wait(5)
    assert cache.get("k") is None  # not kept, and no wait
    second = []
    t2 = threading.Thread(target=lambda: second.append(cache.get_or_make("k", lambda: "made again")))
    t2.start()
    time.sleep(0.1)
    assert not second  # waiting for the first maker
    release.set()
    t.join(5)
    t2.join(5)
    assert len(errors) == 1 and second == ["made again"] and cache.get("k") == "made again"


def test_at_most_max_entries_are_kept_least_recently_used_first_out():
    cache: SharedLRU[int] = SharedLRU(2)
    for key in "abc":
        cache.get_or_make(key, lambda key=key: ord(key))
    assert cache.get("a") is None and cache.get("b") == 98
    cache.put("d", 4)
    assert cache.get("c") is None and cache.get("b") == 98 and cache.get("d") == 4
    with pytest.raises(ZeroDivisionError):
        cache.get_or_make("e", lambda: 1 // 0)
    assert cache.get("e") is None
