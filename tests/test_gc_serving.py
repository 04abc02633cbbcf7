"""A serving process's garbage collection: cycles that outlived a collection are still freed."""

from __future__ import annotations

import gc
import weakref

from mirrortree.server import SERVING_GC_THRESHOLDS, tune_gc_for_serving


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_cycle_that_reached_the_oldest_generation_is_freed_without_a_manual_collection():
    before = gc.get_threshold()
    tune_gc_for_serving()
    try:
        held = Cycle()
        freed = weakref.ref(held)
        gc.collect(1)  # it survives the two younger generations, as a call in flight may
        del held
        # What calls leave behind: cycles enough for a dozen collections of the youngest
        # generation, each started by the allocations themselves.
        churn = 12 * SERVING_GC_THRESHOLDS[0]
        for _ in range(churn):
            Cycle()
            if freed() is None:
                break
        assert freed() is None, "a cycle in the oldest generation outlived a dozen collections"
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
        gc.collect()
