"""The collector's thresholds are raised while fleetrules loads and evaluates, and put back afterwards."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import FactError, collector, evaluate, load_facts, load_rules
from engine.collector import THRESHOLDS, fewer_collections, with_fewer_collections


@pytest.fixture
def defaults() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*before)


def test_the_thresholds_are_raised_for_the_duration_and_restored(defaults: tuple[int, int, int]) -> None:
    with fewer_collections():
        assert gc.get_threshold() == THRESHOLDS
        with fewer_collections():  # nested: the outer values stay
            assert gc.get_threshold() == THRESHOLDS
        assert gc.get_threshold() == THRESHOLDS
    assert gc.get_threshold() == defaults


def test_higher_thresholds_of_the_embedding_program_are_kept() -> None:
    before = gc.get_threshold()
    gc.set_threshold(500_000, 10, 200)
    try:
        with fewer_collections():
            assert gc.get_threshold() == (500_000, 50, 200)
        assert gc.get_threshold() == (500_000, 10, 200)
    finally:
        gc.set_threshold(*before)


def test_restored_when_the_function_raises(defaults: tuple[int, int, int]) -> None:
    @with_fewer_collections(off=True)
    def fails() -> None:
        assert gc.get_threshold() == THRESHOLDS and not gc.isenabled()
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        fails()
    assert gc.get_threshold() == defaults and gc.isenabled()


def test_a_collector_the_program_disabled_stays_disabled(defaults: tuple[int, int, int]) -> None:
    gc.disable()
    try:
        with fewer_collections(off=True):
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_loading_and_evaluating_leave_the_collector_as_they_found_it(
    tmp_path: Path, defaults: tuple[int, int, int]
) -> None:
    rules = tmp_path / "r.fr"
    rules.write_text("policy p { select { kind Deployment } }\n")
    facts = load_facts(objects=[{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"}}])
    assert gc.get_threshold() == defaults and gc.isenabled()
    evaluate(load_rules([rules]), facts)
    assert gc.get_threshold() == defaults and gc.isenabled()
    with pytest.raises(FactError):
        load_facts(objects=[{"kind": "Deployment"}])
    assert gc.get_threshold() == defaults and gc.isenabled()


class _Node:
    """An object that can be in a reference cycle and be watched through a weak reference."""

    def __init__(self) -> None:
        self.other: object = None


def _cycle() -> weakref.ref[_Node]:
    node = _Node()
    node.other = node
    return weakref.ref(node)


def test_what_a_pause_allocated_is_not_scanned_again_when_it_ends(defaults: tuple[int, int, int]) -> None:
    kept: list[object] = []

    @with_fewer_collections(off=True)
    def allocate() -> None:
        kept.extend([i] for i in range(50_000))  # live objects, as an evaluation's result is

    young = gc.get_stats()[0]["collections"]
    allocate()
    # without the move, the next allocation would start a young collection scanning all of them
    assert gc.get_stats()[0]["collections"] == young and gc.get_count()[0] < 1_000
    assert gc.isenabled() and gc.get_threshold() == defaults


def test_objects_the_program_froze_stay_frozen(defaults: tuple[int, int, int]) -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with fewer_collections(off=True):
            ignored = [[i] for i in range(1_000)]
        assert gc.get_freeze_count() == frozen and ignored
    finally:
        gc.unfreeze()


def test_cyclic_garbage_of_pauses_is_collected_after_enough_moved(
    monkeypatch: pytest.MonkeyPatch, defaults: tuple[int, int, int]
) -> None:
    gc.collect()
    with fewer_collections(off=True):
        first = _cycle()
    assert first() is not None  # moved unscanned: waits for a full collection
    monkeypatch.setattr(collector, "FULL_AFTER", 0)
    with fewer_collections(off=True):
        second = _cycle()
    assert first() is None and second() is None
