"""Fewer garbage collections while fleetrules builds its large, long-lived structures.

Loading 10,000 objects and evaluating them allocates millions of dicts, tuples and dataclasses that all
stay alive until the result is rendered. CPython's cyclic collector, with its default thresholds
(700, 10, 10), runs a young collection every 700 allocations and scans the older generations again and
again as the heap grows: at 1,000 clusters x 10,000 bindings that was a quarter of the evaluation and a
seventh of the loading, for garbage that mostly is not cyclic (docs/performance.md). Large Python tools
raise the thresholds for the same reason (mypy, for one). The public functions that load and evaluate
run under ``fewer_collections``; the thresholds are put back when they return, so a program that embeds
fleetrules keeps its own.
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

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the collector's thresholds (never lower them) for the duration, then restore them."""
    before = gc.get_threshold()
    gc.set_threshold(*(max(mine, theirs) for mine, theirs in zip(THRESHOLDS, before, strict=False)))
    try:
        yield
    finally:
        gc.set_threshold(*before)


def with_fewer_collections(function: Callable[P, R]) -> Callable[P, R]:
    """``function`` run under ``fewer_collections``."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with fewer_collections():
            return function(*args, **kwargs)

    return wrapper
