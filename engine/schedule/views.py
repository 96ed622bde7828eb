"""Read-only views that let many placements share one policy's per-cluster results.

A placement lists its feasible clusters, their scores and every rejected cluster with reasons: with
thousands of clusters and tens of thousands of bindings, copies of these would take gigabytes
(docs/performance.md). Most bindings of a policy differ from the policy's shared result in a few
clusters only (an anti-affinity peer's cluster, a cluster they already target), so each placement
holds the shared, sorted result and its own few differences. The views behave as the tuple and
dicts they stand for: iteration in sorted order, equality with plain tuples and dicts.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from itertools import filterfalse, islice
from typing import Any, TypeVar, overload

from engine.results import Reason, Rejection, Summarized, order

V = TypeVar("V")


class Subset(Sequence[str]):
    """``base`` (sorted) without ``removed``, plus ``added`` (not in base), in sorted order."""

    __slots__ = ("_added", "_removed", "base", "members")

    def __init__(self, base: tuple[str, ...], members: frozenset[str], removed: set[str], added: set[str]) -> None:
        self._added = tuple(sorted(added - members))
        gone = removed & members
        if len(gone) * 2 > len(base):
            # most of the base removed (an anti-affinity peer's region: none left): what stays is the smaller
            # record, and it is this subset's own base (at 5,000 clusters, 37,500 unschedulable bindings each
            # held a frozenset of the 250 clusters they lost: 350 MB)
            base = tuple(c for c in base if c not in gone)
            members, gone = frozenset(base), set()
        self.base = base
        self.members = members  # frozenset(base): shared with the policy's result, unless most is removed
        self._removed = frozenset(gone)

    def __iter__(self) -> Iterator[str]:
        if not self._added:  # heapq.merge is Python: without additions, the base filtered is in order
            return filterfalse(self._removed.__contains__, self.base) if self._removed else iter(self.base)
        return heapq.merge(filterfalse(self._removed.__contains__, self.base), self._added)

    def __len__(self) -> int:
        return len(self.base) - len(self._removed) + len(self._added)

    def __contains__(self, item: object) -> bool:
        return (item in self.members and item not in self._removed) or item in self._added

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        return tuple(self)[index]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(tuple(self))


class Overlay(Mapping[str, V]):
    """``base`` (sorted by key) with ``changes`` applied (a value of None removes the key), sorted by key."""

    __slots__ = ("_added", "_base", "_changes", "_removed")

    def __init__(self, base: Mapping[str, V], changes: Mapping[str, V | None]) -> None:
        self._base = base
        self._changes = dict(changes)
        self._added = sorted(k for k, v in changes.items() if v is not None and k not in base)
        self._removed = frozenset(k for k, v in changes.items() if v is None and k in base)

    def __getitem__(self, key: str) -> V:
        if key in self._changes:
            value = self._changes[key]
            if value is None:
                raise KeyError(key)
            return value
        return self._base[key]

    def __iter__(self) -> Iterator[str]:
        kept = filterfalse(self._removed.__contains__, self._base) if self._removed else iter(self._base)
        return heapq.merge(kept, self._added) if self._added else kept

    def __len__(self) -> int:
        return len(self._base) - len(self._removed) + len(self._added)

    def __repr__(self) -> str:
        return repr(dict(self))


class Constant(Mapping[str, Any]):
    """Every key of ``keys`` mapped to ``value`` (the scores when no rule expresses a preference)."""

    __slots__ = ("_keys", "_value")

    def __init__(self, keys: Subset, value: Any) -> None:
        self._keys = keys
        self._value = value

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys:
            raise KeyError(key)
        return self._value

    def get(self, key: str, default: Any = None) -> Any:  # Mapping.get raises and catches KeyError: 3x as slow
        return self._value if key in self._keys else default

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return repr(dict(self))


class Locality(Constant):
    """``value`` for every key of ``keys``, ``value + bonus`` for those in ``on``: ClusterLocality's score of the
    clusters a binding already targets when no rule expresses a preference, found when read (a sweep's binding moved
    off one of its 50 clusters is scored on the other 49, and its scores are not read)."""

    __slots__ = ("_bonus", "_on")

    def __init__(self, keys: Subset, value: int, on: Collection[str], bonus: int) -> None:
        super().__init__(keys, value)
        self._on, self._bonus = on, bonus

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys:
            raise KeyError(key)
        return self._value + self._bonus if key in self._on else self._value

    def get(self, key: str, default: Any = None) -> Any:
        if key not in self._keys:
            return default
        return self._value + self._bonus if key in self._on else self._value


class Joined(Sequence[V]):
    """``first`` then ``then``, without copying ``first`` (a policy's shared decisions, which every binding's
    applied decisions begin with)."""

    __slots__ = ("_first", "_then")

    def __init__(self, first: Sequence[V], then: Sequence[V]) -> None:
        self._first, self._then = first, then

    def __len__(self) -> int:
        return len(self._first) + len(self._then)

    def __iter__(self) -> Iterator[V]:
        yield from self._first
        yield from self._then

    @overload
    def __getitem__(self, index: int) -> V: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[V]: ...
    def __getitem__(self, index: int | slice) -> V | Sequence[V]:
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += len(self)
        if 0 <= index < len(self._first):
            return self._first[index]
        return self._then[index - len(self._first)]


class Rejections(Summarized):
    """A policy's shared rejections (cluster → reasons, sorted by cluster), with their summary and FitError
    histogram computed once, when first asked for, for every binding that shares them."""

    __slots__ = ("_by_reason", "_histogram", "_table")

    def __init__(self, table: dict[str, tuple[Reason, ...]]) -> None:
        self._table = table
        self._by_reason: dict[Reason, list[str]] | None = None
        self._histogram: Counter[str] | None = None

    def __getitem__(self, key: str) -> tuple[Reason, ...]:
        return self._table[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, key: object) -> bool:
        return key in self._table

    def __repr__(self) -> str:
        return repr(self._table)

    @property
    def table(self) -> Mapping[str, tuple[Reason, ...]]:
        """The rejections as a plain mapping (read only)."""
        return self._table

    def by_reason(self) -> dict[Reason, list[str]]:
        """Each reason's clusters, sorted by name."""
        if self._by_reason is None:
            # the clusters grouped by their reasons' tuple first (most share one: Feasibility.alone), by identity:
            # hashing a Reason per cluster was most of a 2,000-policy control plane's summaries
            groups: dict[int, tuple[tuple[Reason, ...], list[str]]] = {}
            for cluster, reasons in self._table.items():
                group = groups.get(id(reasons))
                if group is None:
                    groups[id(reasons)] = (reasons, [cluster])
                else:
                    group[1].append(cluster)
            found: dict[Reason, list[str]] = {}
            merged: set[Reason] = set()  # reasons of several groups: their clusters sorted again
            for reasons, clusters in groups.values():
                for reason in reasons:
                    if reason in found:
                        found[reason] = [*found[reason], *clusters]
                        merged.add(reason)
                    else:
                        found[reason] = clusters
            for reason in merged:
                found[reason].sort()
            self._by_reason = found
        return self._by_reason

    def summary(self, names: int) -> tuple[Rejection, ...]:
        return order(Rejection(r, len(cs), tuple(cs[:names])) for r, cs in self.by_reason().items())

    def parts(self) -> tuple[Mapping[str, tuple[Reason, ...]], Mapping[str, tuple[Reason, ...] | None]]:
        return self, {}

    def histogram(self) -> Counter[str]:
        if self._histogram is None:
            tuples = Counter(map(id, self._table.values()))  # by the reasons' tuple first, as by_reason
            firsts = {id(reasons): reasons for reasons in self._table.values()}
            self._histogram = Counter()
            for key, count in tuples.items():
                if firsts[key]:
                    self._histogram[_first(firsts[key])] += count
        return Counter(self._histogram)  # a copy: the counts are shared by every binding of the policy


def _first(reasons: tuple[Reason, ...]) -> str:
    """A cluster's words in FitError's histogram: its first reason's."""
    return reasons[0].summary or reasons[0].message


class RejectionsOverlay(Overlay[tuple[Reason, ...]], Summarized):
    """A binding's rejections: its policy's shared ``Rejections`` with the binding's own few changes (a peer's
    cluster, an exemption), summarised from the shared summary and the changes alone."""

    __slots__ = ("__weakref__", "_histogram")  # bindings alike share one (Feasibility._overlay)

    _base: Rejections

    def __init__(self, base: Rejections, changes: Mapping[str, tuple[Reason, ...] | None]) -> None:
        super().__init__(base, changes)
        self._histogram: Counter[str] | None = None  # made once: the peers that share it each have a FitError

    def _grouped(self) -> tuple[list[str], dict[int, tuple[tuple[Reason, ...], list[str]]]]:
        """(the changed clusters the shared rejections have, the changes grouped by their reasons' tuple):
        a binding's changes are mostly one tuple of reasons on many clusters (a peer's), so they are counted
        by that tuple's identity, not one cluster at a time (hashing dataclasses is slow)."""
        changes = self._changes
        before = sorted(changes.keys() & self._base._table.keys())
        groups: dict[int, tuple[tuple[Reason, ...], list[str]]] = {}
        for cluster, now in changes.items():
            if now:
                found = groups.get(id(now))
                if found is None:
                    groups[id(now)] = (now, [cluster])
                else:
                    found[1].append(cluster)
        return before, groups

    def summary(self, names: int) -> tuple[Rejection, ...]:
        table, by_reason = self._base._table, self._base.by_reason()
        counts: dict[Reason, int] = {r: len(cs) for r, cs in by_reason.items()}
        changed: dict[Reason, list[str]] = {}
        before, groups = self._grouped()
        for cluster in before:
            for reason in table[cluster]:
                counts[reason] -= 1
        for now, clusters in groups.values():
            for reason in now:
                counts[reason] = counts.get(reason, 0) + len(clusters)
                changed.setdefault(reason, []).extend(clusters)
        out = []
        for reason, count in counts.items():
            if count <= 0:
                continue
            kept = islice((c for c in by_reason.get(reason, ()) if c not in self._changes), names)
            out.append(Rejection(reason, count, tuple(heapq.nsmallest(names, [*kept, *changed.get(reason, ())]))))
        return order(out)

    def parts(self) -> tuple[Mapping[str, tuple[Reason, ...]], Mapping[str, tuple[Reason, ...] | None]]:
        return self._base, self._changes

    def histogram(self) -> Counter[str]:
        if self._histogram is None:
            counts = self._base.histogram()
            table = self._base._table
            before, groups = self._grouped()
            for cluster in before:
                counts[_first(table[cluster])] -= 1
            for now, clusters in groups.values():
                counts[_first(now)] += len(clusters)
            self._histogram = +counts
        return Counter(self._histogram)  # the caller's own (it may count on)
