"""Go's ``sort.Sort``, element for element: the order Karmada's Go code leaves equal elements in.

``sort.Sort`` is not stable. Since Go 1.19 it is pattern-defeating quicksort (pdqsort): insertion sort
for 12 elements or fewer (stable there), and above that partitions, pivots chosen by medians, a
deterministic pattern breaker, heapsort as the fallback. Where Karmada sorts with it on a key that ties
(``sort.Sort(TargetClustersList)``: clusters by available replicas, pkg/scheduler/core/
division_algorithm.go), which of the tied clusters comes first decides which clusters an Aggregated
division takes. A stable sort gives another order above 12 elements, so this module does what Go does:
the same comparisons and swaps, in the same order, as the sort package (src/sort/zsortinterface.go and
sort.go; Go is BSD-licensed), checked against Go's own output (tests/test_gosort.py).
"""

from __future__ import annotations

from collections.abc import Callable, MutableSequence, Sequence
from itertools import pairwise
from typing import TypeVar

T = TypeVar("T")

_MAX_INSERTION = 12  # slices this short are insertion-sorted
_SHORTEST_NINTHER = 50  # from this length the pivot is Tukey's ninther
_MAX_SWAPS = 4 * 3
_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2  # sortedHint
_MASK64 = (1 << 64) - 1


def sort(data: MutableSequence[T], less: Callable[[T, T], bool]) -> None:
    """Sort ``data`` in place as ``sort.Sort`` sorts a ``sort.Interface`` whose Less is ``less``."""
    n = len(data)
    if n > 1:
        _Sorter(data, less).pdqsort(0, n, n.bit_length())


def descending(items: Sequence[T], key: Callable[[T], int]) -> list[T]:
    """``items`` as ``sort.Sort`` orders them with ``Less(i, j) = key(items[i]) > key(items[j])``.

    Where Go's order is the only order or the stable one, Python's sort gives it, without comparing in
    Python: at most 12 items (Go's insertion sort is stable), no two keys equal (one order only), or keys
    already descending (pdqsort samples no inversion, so its partial insertion sort finds the slice sorted
    and returns it as it is). Otherwise the port of Go's algorithm decides the order of ties."""
    keys = [key(item) for item in items]
    if len(keys) <= _MAX_INSERTION or len(set(keys)) == len(keys) or all(a >= b for a, b in pairwise(keys)):
        order = sorted(range(len(keys)), key=lambda i: -keys[i])
        return [items[i] for i in order]
    out = list(items)
    sort(out, lambda a, b: key(a) > key(b))
    return out


class _Sorter:
    def __init__(self, data: MutableSequence[T], less: Callable[[T, T], bool]) -> None:
        self.data, self._less = data, less

    def less(self, i: int, j: int) -> bool:
        return self._less(self.data[i], self.data[j])

    def swap(self, i: int, j: int) -> None:
        data = self.data
        data[i], data[j] = data[j], data[i]

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, lo, hi = a, 0, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(lo, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        was_balanced, was_partitioned = True, True
        while True:
            length = b - a
            if length <= _MAX_INSERTION:
                self.insertion_sort(a, b)
                return
            if limit == 0:  # too many bad pivots
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.reverse_range(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if was_balanced and was_partitioned and hint == _INCREASING and self.partial_insertion_sort(a, b):
                return  # it was (almost) sorted
            if a > 0 and not self.less(a - 1, pivot):  # many equal elements: those equal to the pivot first
                a = self.partition_equal(a, b, pivot)
                continue
            mid, was_partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                was_balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i, j = i + 1, j - 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i, j = i + 1, j - 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i, j = i + 1, j - 1

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        max_steps, shortest_shifting = 5, 50
        i = a + 1
        for _ in range(max_steps):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < shortest_shifting:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:  # the smaller one to the left
                for j in range(i - 1, 0, -1):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
            if b - i >= 2:  # the greater one to the right
                for j in range(i + 1, b):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        state = length  # xorshift, seeded with the length
        modulus = 1 << length.bit_length()
        for idx in range(a + (length // 4) * 2 - 1, a + (length // 4) * 2 + 2):
            state ^= (state << 13) & _MASK64
            state ^= state >> 7
            state ^= (state << 17) & _MASK64
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        size = b - a
        swaps = [0]
        i, j, k = a + size // 4 * 1, a + size // 4 * 2, a + size // 4 * 3
        if size >= 8:
            if size >= _SHORTEST_NINTHER:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        if swaps[0] == _MAX_SWAPS:
            return j, _DECREASING
        return j, _UNKNOWN

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def reverse_range(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i, j = i + 1, j - 1
