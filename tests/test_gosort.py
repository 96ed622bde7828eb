"""engine.kube.gosort against Go's own sort.Sort: the same order of equal elements, element for element.

tests/data/gosort/orders.json was written by tests/data/gosort/main.go (Go 1.27.3, whose sort package is
the pdqsort of Go 1.19 onwards, as in the Go 1.26 Karmada is built with) from cases.json: lists of small
integers with many ties, sorted by value descending as Karmada's TargetClustersList is."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from engine.kube import gosort

DATA = Path(__file__).parent / "data" / "gosort"
CASES: list[list[int]] = json.loads((DATA / "cases.json").read_text())
ORDERS: list[list[int]] = json.loads((DATA / "orders.json").read_text())


def _order(values: list[int]) -> list[int]:
    items = list(enumerate(values))
    gosort.sort(items, lambda a, b: a[1] > b[1])
    return [at for at, _ in items]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_order_is_gos(case: int) -> None:
    assert _order(CASES[case]) == ORDERS[case]


def test_the_cases_include_orders_a_stable_sort_would_not_give() -> None:
    """Ties above 12 elements, where Go's order is not the stable one (the cases also run the pattern
    breaker and the partition of equal elements; the heapsort fallback takes inputs built against pdqsort,
    and is checked below to sort)."""
    unstable = [
        i for i, values in enumerate(CASES) if ORDERS[i] != sorted(range(len(values)), key=lambda at: -values[at])
    ]
    assert unstable and all(len(CASES[i]) > 12 for i in unstable)
    assert len(CASES) == len(ORDERS)


def test_it_sorts() -> None:
    rng = random.Random(3)
    for n in (0, 1, 13, 100, 777):
        values = [rng.randrange(n // 3 + 1) for _ in range(n)]
        gosort.sort(values, lambda a, b: a < b)
        assert values == sorted(values)


def test_the_heapsort_fallback_sorts() -> None:
    rng = random.Random(5)
    values = [rng.randrange(20) for _ in range(300)]
    sorter = gosort._Sorter(values, lambda a, b: a < b)
    sorter.heap_sort(10, 290)
    assert values[10:290] == sorted(values[10:290])


def test_the_shortcuts_give_the_order_of_the_algorithm() -> None:
    """descending() skips the port where Go's order is the stable one: short, distinct or already sorted."""
    rng = random.Random(8)
    lists = [CASES[i] for i in range(0, len(CASES), 3)]
    lists += [sorted(rng.sample(range(1000), n), reverse=True) for n in (13, 40, 200)]  # distinct
    lists += [sorted((rng.randrange(4) for _ in range(n)), reverse=True) for n in (13, 60, 300)]  # descending
    for values in lists:
        items = list(enumerate(values))
        expected = list(items)
        gosort.sort(expected, lambda a, b: a[1] > b[1])
        assert gosort.descending(items, lambda item: item[1]) == expected
