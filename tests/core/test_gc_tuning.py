"""The shared GC-threshold setting is restored after concurrent users, whatever the order they leave in."""

from __future__ import annotations

import gc
import threading

from textgen_core.gc_tuning import fewer_gc_passes


def test_thresholds_raised_inside_and_restored_after_overlapping_threads():
    original = gc.get_threshold()
    inside: list[tuple[int, ...]] = []
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        with fewer_gc_passes():
            first_in.set()
            second_in.wait(5)
            inside.append(gc.get_threshold())
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with fewer_gc_passes():
            second_in.set()
            first_out.wait(5)
            inside.append(gc.get_threshold())  # still raised after the first user left

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert all(t[0] >= 50_000 for t in inside) and len(inside) == 2
    assert gc.get_threshold() == original
