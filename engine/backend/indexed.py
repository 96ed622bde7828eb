"""Indexed joins: the planned rules (engine.compile.joins) evaluated over hash indexes of the facts.

The facts of a session are kept by type; an index on some properties of a type is built the first time
a plan looks facts up by them, and kept up to date as facts come and go. A planned rule's matches for
one binding are found when asked for: from the binding, each step looks up the facts whose keys equal
the values already matched, checks each against the pattern's whole condition, and for a `not` step
requires that none is left. As in durable-rules, the patterns of one match are filled by distinct facts
(a fact matched by one pattern neither fills another nor counts against a `not`).
"""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from engine.compile import ir
from engine.compile.joins import JoinPlan, Step

Fact = dict[str, Any]
_MISSING = object()


class FactIndex:
    """The facts of one session by type, and hash indexes on their properties, built on first use."""

    def __init__(self) -> None:
        self.by_type: dict[str, dict[str, Fact]] = defaultdict(dict)
        # (type, keys) → key values → facts (by id, in the order asserted)
        self._indexes: dict[tuple[str, tuple[str, ...]], dict[tuple[Any, ...], dict[str, Fact]]] = {}
        self._keys_of: dict[str, list[tuple[str, ...]]] = defaultdict(list)

    def add(self, fact_type: str, fact_id: str, fact: Fact) -> None:
        self.by_type[fact_type][fact_id] = fact
        for keys in self._keys_of.get(fact_type, ()):
            values = _values(fact, keys)
            if values is not None:
                self._indexes[(fact_type, keys)].setdefault(values, {})[fact_id] = fact

    def remove(self, fact_type: str, fact_id: str, fact: Fact) -> None:
        self.by_type[fact_type].pop(fact_id, None)
        for keys in self._keys_of.get(fact_type, ()):
            values = _values(fact, keys)
            if values is not None:
                bucket = self._indexes[(fact_type, keys)].get(values)
                if bucket is not None:
                    bucket.pop(fact_id, None)
                    if not bucket:
                        del self._indexes[(fact_type, keys)][values]

    def lookup(self, fact_type: str, keys: tuple[str, ...], values: tuple[Any, ...]) -> Iterable[Fact]:
        """The facts of ``fact_type`` whose ``keys`` equal ``values`` (all of them without keys)."""
        if not keys:
            return self.by_type.get(fact_type, {}).values()
        index = self._indexes.get((fact_type, keys))
        if index is None:
            index = self._build(fact_type, keys)
        found = index.get(values)
        return found.values() if found is not None else ()

    def _build(self, fact_type: str, keys: tuple[str, ...]) -> dict[tuple[Any, ...], dict[str, Fact]]:
        index: dict[tuple[Any, ...], dict[str, Fact]] = {}
        for fact_id, fact in self.by_type.get(fact_type, {}).items():
            values = _values(fact, keys)
            if values is not None:
                index.setdefault(values, {})[fact_id] = fact
        self._indexes[(fact_type, keys)] = index
        self._keys_of[fact_type].append(keys)
        return index


def _values(fact: Fact, keys: tuple[str, ...]) -> tuple[Any, ...] | None:
    """The fact's values of ``keys``; None when it lacks one (an equality with it never holds)."""
    out = []
    for key in keys:
        value = fact.get(key, _MISSING)
        if value is _MISSING:
            return None
        out.append(_hashable(value))
    return tuple(out)


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


Predicate = Callable[[Fact, dict[str, Fact]], bool]
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def predicate(cond: ir.Cond) -> Predicate:
    """``cond`` as a Python function of (fact, matched facts), with exactly engine.compile.ir.holds'
    semantics (a comparison with an absent property is false, as is one between incomparable values)."""
    if cond == ir.TRUE:
        return lambda fact, matched: True
    if isinstance(cond, ir.Present):
        prop, present = cond.prop, cond.present
        return lambda fact, matched: (prop in fact) == present
    if isinstance(cond, ir.Test):
        return _test(cond)
    parts = tuple(predicate(c) for c in cond.items)
    if len(parts) == 2:  # the common case, without a generator per call
        a, b = parts
        if isinstance(cond, ir.AllOf):
            return lambda fact, matched: a(fact, matched) and b(fact, matched)
        return lambda fact, matched: a(fact, matched) or b(fact, matched)
    if isinstance(cond, ir.AllOf):
        return lambda fact, matched: all(p(fact, matched) for p in parts)
    return lambda fact, matched: any(p(fact, matched) for p in parts)


def _test(test: ir.Test) -> Predicate:
    prop, compare, operand = test.prop, _COMPARE[test.op], test.operand
    equality = test.op in ("==", "!=")
    if isinstance(operand, ir.Ref):
        alias, other = operand.alias, operand.prop

        def joined(fact: Fact, matched: dict[str, Fact]) -> bool:
            left, right = fact.get(prop, _MISSING), matched.get(alias, {}).get(other, _MISSING)
            if left is _MISSING or right is _MISSING:
                return False
            if equality:
                return bool(compare(left, right))
            try:
                return bool(compare(left, right))
            except TypeError:
                return False

        return joined

    def literal(fact: Fact, matched: dict[str, Fact]) -> bool:
        left = fact.get(prop, _MISSING)
        if left is _MISSING:
            return False
        try:
            return bool(compare(left, operand))
        except TypeError:
            return False

    return literal


class CompiledPlan:
    """A join plan with its conditions as Python functions (the residual ones: the index did the keys)."""

    def __init__(self, plan: JoinPlan) -> None:
        self.plan = plan
        self.anchor = predicate(plan.anchor_cond)
        self.steps = tuple((step, predicate(step.residual if step.keys else step.cond)) for step in plan.steps)
        first = plan.steps[0] if plan.steps else None
        # the type a match needs at least one fact of (the first pattern, when it is not a negation)
        self.needs = first.fact_type if first is not None and not first.negated else None


# (alias, fact id) of each fact a match stands for at a grouped step; None: one match
Group = tuple[tuple[str, str], ...] | None
Match = tuple[dict[str, Fact], Group]


_NONE: Iterator[Match] = iter(())


def matches(plan: CompiledPlan, anchor: Fact, facts: FactIndex) -> Iterator[Match]:
    """Every match of the planned rule in which ``anchor`` fills its binding pattern (alias → fact, for
    the positive patterns); at a grouped step (Step.group_by), one match per group, with the group."""
    if plan.needs is not None and not facts.by_type.get(plan.needs):
        return _NONE  # no fact of the first pattern's type at all (no eviction task, no missing API)
    if not plan.anchor(anchor, {}):
        return _NONE
    return _extend(plan.steps, 0, {plan.plan.anchor: anchor}, {anchor["id"]}, facts)


def _extend(
    steps: tuple[tuple[Step, Predicate], ...], at: int, matched: dict[str, Fact], used: set[str], facts: FactIndex
) -> Iterator[Match]:
    if at == len(steps):
        yield dict(matched), None
        return
    step, check = steps[at]
    last = at + 1 == len(steps)  # the match is complete after this step: yielded here, without a deeper frame
    values = []
    for v in step.values:
        value = matched[v.alias].get(v.prop, _MISSING) if isinstance(v, ir.Ref) else v
        if value is _MISSING:  # an equality with a property the matched fact lacks never holds
            if step.negated:
                yield from _extend(steps, at + 1, matched, used, facts)
            return
        values.append(_hashable(value))
    candidates = facts.lookup(step.fact_type, step.keys, tuple(values))
    if step.negated:
        if not any(f["id"] not in used and check(f, matched) for f in candidates):
            if last:
                yield dict(matched), None
            else:
                yield from _extend(steps, at + 1, matched, used, facts)
        return
    if step.group_by is not None:
        yield from _grouped(steps, at, matched, used, facts, [f for f in candidates if f["id"] not in used])
        return
    alias = step.alias
    for fact in list(candidates):
        fact_id = fact["id"]
        if fact_id in used or not check(fact, matched):
            continue
        matched[alias] = fact
        if last:
            yield dict(matched), None
        else:
            used.add(fact_id)
            yield from _extend(steps, at + 1, matched, used, facts)
            used.discard(fact_id)
        del matched[alias]


def _grouped(
    steps: tuple[tuple[Step, Predicate], ...],
    at: int,
    matched: dict[str, Fact],
    used: set[str],
    facts: FactIndex,
    candidates: list[Fact],
) -> Iterator[Match]:
    """The matches through a grouped step: its facts by the values later steps read, each group continued
    once with its first fact standing for all (later steps read nothing else of it)."""
    step, check = steps[at]
    groups: dict[tuple[Any, ...], list[Fact]] = {}
    keys = step.group_by or ()
    for fact in candidates:
        if check(fact, matched):
            groups.setdefault(tuple(_hashable(fact.get(k, _MISSING)) for k in keys), []).append(fact)
    for members in groups.values():
        first = members[0]
        matched[step.alias] = first
        used.add(first["id"])
        group = tuple((step.alias, f["id"]) for f in members)
        for found, _ in _extend(steps, at + 1, matched, used, facts):
            yield found, group
        used.discard(first["id"])
        del matched[step.alias]
