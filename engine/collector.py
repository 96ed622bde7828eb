"""Fewer garbage collections while fleetrules builds its large, long-lived structures.

Loading 10,000 objects and evaluating them allocates millions of dicts, tuples and dataclasses that all
stay alive until the result is rendered. CPython's cyclic collector, with its default thresholds
(700, 10, 10), runs a young collection every 700 allocations and scans the older generations again and
again as the heap grows: at 1,000 clusters x 10,000 bindings that was a quarter of the evaluation and a
seventh of the loading, for garbage that mostly is not cyclic, and since each scan of the older
generations grows with the heap, the time per binding grew with the fleet (docs/performance.md).
Large Python tools raise the thresholds for the same reason (mypy, for one).

Two modes. Raised thresholds (``fewer_collections()``) bound the cyclic garbage that can wait: for work
that runs many evaluations in one call (simulations, resilience sweeps), whose per-step garbage must
still be collected. No collection at all (``fewer_collections(off=True)``) for one load or one
evaluation: what it allocates lives until it returns (the peak RSS at 5,000 x 50,000 is the same either
way), and the collector runs again as usual afterwards. Either way the collector's settings are put back
when the function returns, so a program that embeds fleetrules keeps its own.

After a pause, what the paused stretch allocated is still in the young generation, and the first
allocation after the pause would start a young collection that scans all of it: at 1,000 x 10,000 a scan
of 55-75 ms after every evaluation (8 % of it), 0.5 s at 5,000 x 50,000, nearly all of it live objects
(the result). So those objects join the oldest generation unscanned (``gc.freeze()`` then
``gc.unfreeze()``: two list splices), as the survivors of the young collections would have. The cyclic
garbage among them waits for a full collection; a program that only ever evaluates (and so never lets
the collector run) gets one after every ``FULL_AFTER`` objects moved so.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

# a young collection after 100,000 net allocations instead of 700: a bounded amount of cyclic garbage
# (some MiB) waits a little longer; the older generations are scanned far less often
THRESHOLDS = (100_000, 50, 100)

# objects moved unscanned into the oldest generation (after pauses) before fleetrules asks for a full
# collection itself, in case no other collection ran meanwhile: about two evaluations at 1,000 x 10,000
FULL_AFTER = 4_000_000


class _Moved:
    """Objects moved unscanned since the last full collection (``gc.get_stats()`` counts those)."""

    count = 0
    full_collections = 0


def _promote() -> None:
    """Move the young generation into the oldest without scanning it (not when the program froze
    objects itself: ``gc.unfreeze()`` would thaw them too)."""
    if gc.get_freeze_count():
        return
    full = gc.get_stats()[-1]["collections"]
    if full != _Moved.full_collections:  # a full collection ran since: what was moved has been scanned
        _Moved.count, _Moved.full_collections = 0, full
    _Moved.count += gc.get_count()[0]
    gc.freeze()
    gc.unfreeze()
    if _Moved.count > FULL_AFTER:
        gc.collect()
        _Moved.count, _Moved.full_collections = 0, gc.get_stats()[-1]["collections"]


P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def fewer_collections(off: bool = False) -> Iterator[None]:
    """Raise the collector's thresholds (never lower them) for the duration, or with ``off`` pause it;
    then restore them (and whether it was enabled)."""
    before, enabled = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(*(max(mine, theirs) for mine, theirs in zip(THRESHOLDS, before, strict=False)))
    if off:
        gc.disable()
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if enabled:
            if off:
                _promote()
            gc.enable()


def with_fewer_collections(off: bool = False) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator: the function runs under ``fewer_collections(off)``."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with fewer_collections(off):
                return function(*args, **kwargs)

        return wrapper

    return decorate
