"""A session's facts by type, with hash indexes on the properties plans look them up by (built the first time a plan
asks, kept up to date as facts come and go), batches of placements kept as their parts (``Batch``), and the
groups a preference stands for (``Peers``): what engine.backend.indexed's compiled plans read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import Any, overload

from engine.compile import ir
from engine.compile.encoding import in_part

Fact = dict[str, Any]


Index = dict[tuple[Any, ...], dict[str, Fact]]  # key values → facts (by id, in the order asserted)


class Group:
    """The facts of one group of a nested index (key values and group values), and every fact it ever held with
    when it came (and, in the index, went): what a snapshot of the group at some moment lists (``Peers``)."""

    __slots__ = ("facts", "log")

    def __init__(self) -> None:
        self.facts: dict[str, Fact] = {}  # the facts now, by id, in the order asserted
        self.log: list[tuple[int, str, Fact]] = []  # (when added, id, fact), appended only


Nested = dict[tuple[Any, ...], dict[tuple[Any, ...], Group]]  # key values → group values → the group


class Peers(Sequence[tuple[str, str]]):
    """The matches a grouped decision stands for, as ``(alias, fact id)`` pairs: the facts of its group at the
    moment it was made, less the anchor's own, listed only when read (explanations). Decisions of 1,000 peers'
    placements each named every placement they counted: quadratic in time and memory (issue 28)."""

    __slots__ = ("_alias", "_at", "_count", "_gone", "_group", "_listed", "_own")

    def __init__(self, alias: str, group: Group, at: int, gone: Mapping[str, list[int]], own: Any, count: int) -> None:
        self._alias, self._group, self._at, self._gone, self._own, self._count = alias, group, at, gone, own, count
        self._listed: tuple[tuple[str, str], ...] | None = None

    def _list(self) -> tuple[tuple[str, str], ...]:
        if self._listed is None:
            at, gone, own = self._at, self._gone, self._own
            self._listed = tuple(
                (self._alias, fact_id)
                for added, fact_id, fact in self._group.log
                if added <= at
                and not any(added < g <= at for g in gone.get(fact_id, ()))  # not removed since (a batch's
                # fact kept when its batch changed is removed and added again, with its id)
                and fact.get("binding", _MISSING) != own
            )
        return self._listed

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._list())

    @overload
    def __getitem__(self, index: int) -> tuple[str, str]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[tuple[str, str]]: ...
    def __getitem__(self, index: int | slice) -> tuple[str, str] | Sequence[tuple[str, str]]:
        return self._list()[index]


_MISSING = ir.MISSING


class Batch:
    """Facts asserted together, each ``common`` (with the session's fields) and one of ``parts``: a binding's
    placements, one per cluster. Kept as the batch alone, its facts are made when a plan visits them, with the
    ids ``ID.n`` (``numbers``: each part's n): 3.1 M placements of 12,500 Duplicated bindings were 3.1 M dicts
    (about 450 bytes each with their ids and index entries) where the parts are a reference each, shared by
    every binding on the cluster."""

    __slots__ = ("common", "fresh", "id", "keyed", "numbers", "parts")

    def __init__(
        self, batch_id: str, common: Fact, parts: Sequence[Mapping[str, Any]], numbers: Sequence[int], fresh: int
    ) -> None:
        self.id, self.common, self.parts, self.numbers = batch_id, common, parts, numbers
        self.fresh = fresh  # the number of the next fact it takes: a fact's id, once retracted, is never used again
        # keys of the parts → the values its parts have for them (batch_values), made once
        self.keyed: dict[tuple[str, ...], frozenset[tuple[Any, ...]]] | None = None

    def members(self) -> Iterator[Fact]:
        common, prefix = self.common, self.id + "."
        for part, number in zip(self.parts, self.numbers, strict=True):
            yield {**common, **part, "id": f"{prefix}{number}"}

    def having(self, keys: tuple[str, ...], values: tuple[Any, ...]) -> Iterator[Fact]:
        """The batch's facts whose part has ``values`` for ``keys`` (a binding's placement on one cluster)."""
        common, prefix = self.common, self.id + "."
        if len(keys) == 1:  # a cluster's name
            key, (value,) = keys[0], values
            for part, number in zip(self.parts, self.numbers, strict=True):
                v = part.get(key, _MISSING)
                if v == value or (v.__class__ is list and tuple(v) == value):
                    yield {**common, **part, "id": f"{prefix}{number}"}
            return
        for part, number in zip(self.parts, self.numbers, strict=True):
            if key_values(part, keys) == values:
                yield {**common, **part, "id": f"{prefix}{number}"}

    def member(self, number: int) -> Fact | None:
        """The fact ``ID.number``, if the batch has it."""
        for part, n in zip(self.parts, self.numbers, strict=True):
            if n == number:
                return {**self.common, **part, "id": f"{self.id}.{number}"}
        return None


class FactIndex:
    """The facts of one session by type, and hash indexes on their properties, built on first use."""

    def __init__(self) -> None:
        self.by_type: dict[str, dict[str, Fact]] = defaultdict(dict)
        self._indexes: dict[tuple[str, tuple[str, ...]], Index] = {}  # by (type, keys)
        self._keys_of: dict[str, list[tuple[str, ...]]] = defaultdict(list)
        self._bound: dict[tuple[tuple[str, tuple[str, ...]], ...], list[Index]] = {}  # by a plan's lookups
        # key values → group values → facts, by (type, keys, group_by): a grouped step's groups, kept as facts
        # come and go (engine.backend.indexed._Emitter._counted)
        self._nested: dict[tuple[str, tuple[str, ...], tuple[str, ...]], Nested] = {}
        self._nested_of: dict[str, list[tuple[tuple[str, ...], tuple[str, ...]]]] = defaultdict(list)
        self.seq = 0  # counts the changes to facts of nested-indexed types: when a group's facts came and went
        self.gone: dict[str, list[int]] = defaultdict(list)  # a fact of a nested-indexed type → when it went
        # batches (Batch) by type, and indexes of them on properties their common part has: key values → batches
        self.batches: dict[str, dict[str, Batch]] = defaultdict(dict)
        self._batch_indexes: dict[tuple[str, tuple[str, ...]], BatchIndex] = {}
        self._batch_keys_of: dict[str, list[tuple[str, ...]]] = defaultdict(list)

    def add(self, fact_type: str, fact_id: str, fact: Fact) -> None:
        self.by_type[fact_type][fact_id] = fact
        self._index(fact_type, fact_id, fact)

    def remove(self, fact_type: str, fact_id: str, fact: Fact) -> None:
        self.by_type[fact_type].pop(fact_id, None)
        self._unindex(fact_type, fact_id, fact)

    def add_batch(self, fact_type: str, batch: Batch) -> None:
        """Add the batch's facts: the batch to the indexes on its common part's properties; each fact, made, to
        the indexes on other properties (a plan looking placements up by cluster) and to the nested ones."""
        self.batches[fact_type][batch.id] = batch
        for keys in self._batch_keys_of.get(fact_type, ()):
            index = self._batch_indexes[(fact_type, keys)]
            for values in batch_values(batch, keys):
                index.setdefault(values, {})[batch.id] = batch
        if self._keys_of.get(fact_type) or self._nested_of.get(fact_type):
            for fact in batch.members():
                self._index(fact_type, fact["id"], fact)

    def remove_batch(self, fact_type: str, batch: Batch) -> None:
        self.batches[fact_type].pop(batch.id, None)
        for keys in self._batch_keys_of.get(fact_type, ()):
            index = self._batch_indexes[(fact_type, keys)]
            for values in batch_values(batch, keys):
                _drop(index, values, batch.id)
        if self._keys_of.get(fact_type) or self._nested_of.get(fact_type):
            for fact in batch.members():
                self._unindex(fact_type, fact["id"], fact)

    def replace_batch(self, fact_type: str, old: Batch, new: Batch) -> None:
        """``new`` in place of ``old``, the same batch changed (the same id and common part: a binding's placements
        after it moved). An index on the parts' values changes where they did (a binding leaving one of fifty
        clusters moves one entry, not a hundred; under the others its entry stays as it was, the old batch: plans
        read those buckets' ids and take each batch in force); the others as ``remove_batch`` and ``add_batch``
        change them."""
        self.batches[fact_type][new.id] = new
        for keys in self._batch_keys_of.get(fact_type, ()):
            index = self._batch_indexes[(fact_type, keys)]
            if in_part(keys[0]):  # the parts': where they changed (plans read these buckets' ids: ``_candidates``)
                before, after = part_values(old, keys), part_values(new, keys)
                for values in before - after:
                    _drop(index, values, old.id)
                for values in after - before:
                    index.setdefault(values, {})[new.id] = new
                continue
            for values in batch_values(old, keys):  # the common part's: the batch goes last, as removed and added
                _drop(index, values, old.id)
            for values in batch_values(new, keys):
                index.setdefault(values, {})[new.id] = new
        if self._keys_of.get(fact_type) or self._nested_of.get(fact_type):
            for fact in old.members():
                self._unindex(fact_type, fact["id"], fact)
            for fact in new.members():
                self._index(fact_type, fact["id"], fact)

    def _index(self, fact_type: str, fact_id: str, fact: Fact) -> None:
        for keys in self._keys_of.get(fact_type, ()):
            values = key_values(fact, keys)
            if values is not None:
                self._indexes[(fact_type, keys)].setdefault(values, {})[fact_id] = fact
        nested_keys = self._nested_of.get(fact_type, ())
        if nested_keys:
            self.seq += 1
        for keys, group_by in nested_keys:
            self._into_group(self._nested[(fact_type, keys, group_by)], keys, group_by, fact_id, fact)

    def _unindex(self, fact_type: str, fact_id: str, fact: Fact) -> None:
        for keys in self._keys_of.get(fact_type, ()):
            values = key_values(fact, keys)
            if values is not None:
                bucket = self._indexes[(fact_type, keys)].get(values)
                if bucket is not None:
                    bucket.pop(fact_id, None)
                    if not bucket:
                        del self._indexes[(fact_type, keys)][values]
        nested_keys = self._nested_of.get(fact_type, ())
        if nested_keys:
            self.seq += 1
            self.gone[fact_id].append(self.seq)
        for keys, group_by in nested_keys:
            values, groups = key_values(fact, keys), key_values(fact, group_by)
            nested = self._nested[(fact_type, keys, group_by)]
            by_group = nested.get(values) if values is not None and groups is not None else None
            if by_group is not None and values is not None and groups in by_group:
                group = by_group[groups]
                group.facts.pop(fact_id, None)
                if not group.facts:  # snapshots keep the group they list from; the index lets it go
                    del by_group[groups]
                    if not by_group:
                        del nested[values]

    def _into_group(
        self, nested: Nested, keys: tuple[str, ...], group_by: tuple[str, ...], fact_id: str, fact: Fact
    ) -> None:
        """Put the fact in its group of ``nested`` (none when it lacks a key or a grouping property), as of now."""
        values, groups = key_values(fact, keys), key_values(fact, group_by)
        if values is not None and groups is not None:
            by_group = nested.setdefault(values, {})
            group = by_group.get(groups)
            if group is None:
                group = by_group[groups] = Group()
            group.facts[fact_id] = fact
            group.log.append((self.seq, fact_id, fact))

    def nested(self, lookups: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]) -> list[Nested]:
        """The nested indexes on each (type, keys, group_by) of ``lookups``, built the first time."""
        return [
            found if (found := self._nested.get(lookup)) is not None else self._build_nested(*lookup)
            for lookup in lookups
        ]

    def _build_nested(self, fact_type: str, keys: tuple[str, ...], group_by: tuple[str, ...]) -> Nested:
        nested: Nested = {}
        self.seq += 1
        for fact_id, fact in self._items(fact_type):
            self._into_group(nested, keys, group_by, fact_id, fact)
        self._nested[(fact_type, keys, group_by)] = nested
        self._nested_of[fact_type].append((keys, group_by))
        return nested

    def indexes(self, lookups: tuple[tuple[str, tuple[str, ...]], ...]) -> list[Index]:
        """The indexes on each (type, keys) of ``lookups``, built the first time (they are kept up to date
        in place as facts come and go, so the list is kept too)."""
        found = self._bound.get(lookups)
        if found is None:
            found = self._bound[lookups] = [
                index if (index := self._indexes.get(lookup)) is not None else self._build(*lookup)
                for lookup in lookups
            ]
        return found

    def batch_indexes(self, lookups: tuple[tuple[str, tuple[str, ...]], ...]) -> list[BatchIndex]:
        """The indexes of batches on each (type, keys) of ``lookups`` (properties of their common part, or of their
        parts: a batch under each of its parts' values), built the first time."""
        return [
            found if (found := self._batch_indexes.get(lookup)) is not None else self._build_batches(*lookup)
            for lookup in lookups
        ]

    def _build_batches(self, fact_type: str, keys: tuple[str, ...]) -> BatchIndex:
        index: BatchIndex = {}
        for batch in self.batches.get(fact_type, {}).values():
            for values in batch_values(batch, keys):
                index.setdefault(values, {})[batch.id] = batch
        self._batch_indexes[(fact_type, keys)] = index
        self._batch_keys_of[fact_type].append(keys)
        return index

    def all_of(self, fact_type: str) -> Iterable[Fact]:
        facts = self.by_type.get(fact_type, {}).values()
        batches = self.batches.get(fact_type)
        if not batches:
            return facts
        return chain(facts, (fact for batch in list(batches.values()) for fact in batch.members()))

    def _items(self, fact_type: str) -> Iterator[tuple[str, Fact]]:
        """(id, fact) of every fact of the type, those of batches made."""
        yield from self.by_type.get(fact_type, {}).items()
        for batch in self.batches.get(fact_type, {}).values():
            for fact in batch.members():
                yield fact["id"], fact

    def _build(self, fact_type: str, keys: tuple[str, ...]) -> Index:
        index: Index = {}
        for fact_id, fact in self._items(fact_type):
            values = key_values(fact, keys)
            if values is not None:
                index.setdefault(values, {})[fact_id] = fact
        self._indexes[(fact_type, keys)] = index
        self._keys_of[fact_type].append(keys)
        return index


def _drop(index: BatchIndex, values: tuple[Any, ...], batch_id: str) -> None:
    """The batch out of the index's bucket of ``values`` (the bucket out of the index once empty)."""
    bucket = index.get(values)
    if bucket is not None:
        bucket.pop(batch_id, None)
        if not bucket:
            del index[values]


def batch_values(batch: Batch, keys: tuple[str, ...]) -> Collection[tuple[Any, ...]]:
    """The values of ``keys`` a batch is indexed under: its common part's, or (keys of the parts: the clusters of
    a binding's placements) each of its parts' values."""
    if not in_part(keys[0]):
        values = key_values(batch.common, keys)
        return (values,) if values is not None else ()
    return part_values(batch, keys)


def part_values(batch: Batch, keys: tuple[str, ...]) -> frozenset[tuple[Any, ...]]:
    """The values of ``keys`` (of the parts) the batch's parts have, found once per batch."""
    keyed = batch.keyed
    if keyed is None:
        keyed = batch.keyed = {}
    found = keyed.get(keys)
    if found is None:
        if len(keys) == 1:  # a cluster's name: one lookup per part (a binding's placements on 50 clusters)
            key = keys[0]
            found = frozenset(
                (v if v.__class__ is not list else tuple(v),)
                for part in batch.parts
                if (v := part.get(key, _MISSING)) is not _MISSING
            )
        else:
            found = frozenset(v for part in batch.parts if (v := key_values(part, keys)) is not None)
        keyed[keys] = found
    return found


def key_values(fact: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[Any, ...] | None:
    """The fact's values of ``keys``; None when it lacks one (an equality with it never holds)."""
    out = []
    for key in keys:
        value = fact.get(key, _MISSING)
        if value is _MISSING:
            return None
        out.append(hashable(value))
    return tuple(out)


def hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


# key values → the batches whose common part (or one of whose parts) has them, by id (an index on the parts' values
# may hold a batch since replaced under its id: FactIndex.replace_batch; its ids are what is read)
BatchIndex = dict[tuple[Any, ...], dict[str, "Batch"]]
