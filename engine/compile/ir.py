"""The engine's rule form: what DSL rules and policies compile to, and what becomes durable-rules JSON.

Conditions are on one fact each (its own properties against literals or earlier facts'
properties), as the engine's join network needs. Properties are flat: label ``k`` of a fact is the
property the program's ``Symbols`` assigns to ``k``, and ``x in fact.list`` for a literal ``x`` is
a presence flag, so that label keys with dots and facts with hundreds of labels stay within what
durable-rules handles.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.errors import Span

# ---------------------------------------------------------------- conditions


@dataclass(frozen=True)
class Ref:
    """A property of the fact matched by an earlier pattern."""

    alias: str
    prop: str


@dataclass(frozen=True)
class Test:
    op: str  # == != < <= > >=
    prop: str
    operand: Ref | str | int | bool


@dataclass(frozen=True)
class Present:
    prop: str
    present: bool = True


@dataclass(frozen=True)
class AllOf:
    items: tuple[Cond, ...]


@dataclass(frozen=True)
class AnyOf:
    items: tuple[Cond, ...]


Cond = Test | Present | AllOf | AnyOf

# The value of a label or derived field a fact does not have. Every property a program refers to is
# present on every fact of its type, because durable-rules 2.0.28 fails the assert (error 311) when a
# join refers to a property the other fact lacks. No Kubernetes label value can contain '<'.
ABSENT = "<absent>"

TRUE: Cond = AllOf(())
FALSE: Cond = AnyOf(())
NEGATED_OP = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
FLIPPED_OP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def all_of(*items: Cond) -> Cond:
    flat: list[Cond] = []
    for item in items:
        if item == FALSE:
            return FALSE
        flat += item.items if isinstance(item, AllOf) else [item]
    return flat[0] if len(flat) == 1 else AllOf(tuple(flat))


def any_of(*items: Cond) -> Cond:
    flat: list[Cond] = []
    for item in items:
        if item == TRUE:
            return TRUE
        flat += item.items if isinstance(item, AnyOf) else [item]
    return flat[0] if len(flat) == 1 else AnyOf(tuple(flat))


def present(prop: str, yes: bool = True) -> Cond:
    """A label or derived field is set (or not): it is never missing, only ABSENT."""
    return Test("!=" if yes else "==", prop, ABSENT)


def refs(cond: Cond) -> Iterator[Ref]:
    """The properties of other facts that ``cond`` compares with."""
    if isinstance(cond, Test) and isinstance(cond.operand, Ref):
        yield cond.operand
    elif isinstance(cond, (AllOf, AnyOf)):
        for item in cond.items:
            yield from refs(item)


def negate(cond: Cond) -> Cond:
    if isinstance(cond, Present):
        return Present(cond.prop, not cond.present)
    if isinstance(cond, Test):
        return Test(NEGATED_OP[cond.op], cond.prop, cond.operand)
    if isinstance(cond, AllOf):
        return any_of(*(negate(c) for c in cond.items))
    return all_of(*(negate(c) for c in cond.items))


# ---------------------------------------------------------------- rules


@dataclass(frozen=True)
class Pattern:
    alias: str
    fact_type: str
    negated: bool
    cond: Cond
    span: Span | None = field(default=None, compare=False)  # of the rule file's pattern, where there is one


@dataclass(frozen=True)
class Message:
    """Text with ``(alias, prop)`` holes filled from the matched facts."""

    parts: tuple[str | Ref, ...]

    def render(self, matched: dict[str, dict[str, Any]]) -> str:
        return "".join(p if isinstance(p, str) else str(matched[p.alias].get(p.prop, "")) for p in self.parts)


@dataclass(frozen=True)
class Reject:
    cluster: str
    binding: str
    message: Message
    reason: Message | None = None  # the scheduler's words for the filter; None: the message


@dataclass(frozen=True)
class Prefer:
    cluster: str
    binding: str
    weight: int  # negative for preferred anti-affinity


@dataclass(frozen=True)
class Derive:
    fact_type: str
    fields: tuple[tuple[str, Any], ...]  # name → ValueExpr (see engine.compile)


@dataclass(frozen=True)
class Evict:
    binding: str
    cluster: str
    reason: str
    message: Message


Action = Reject | Prefer | Derive | Evict


@dataclass(frozen=True)
class Rule:
    name: str
    span: Span
    patterns: tuple[Pattern, ...]
    actions: tuple[Action, ...]
    # the clusterAffinities term this rule belongs to (its rejections count only while that term is tried)
    term: str | None = None
    builtin: bool = False
    user: bool = False  # a `rule` of a rule file (not built in, not a policy's statement)
    # lifted (engine.compile.lift): the binding pattern matches one scope fact (``scope``: policy_scope, one per
    # policy; group_scope, one per value of the binding fields ``scope_keys`` and those of the program's other
    # rules lifted so), and a decision does not apply to a binding whose list field holds the value of one of
    # the exemptions (``("name", v)``: whose name is v)
    scope: str = ""
    scope_keys: tuple[str, ...] = ()
    exempt: tuple[tuple[str, Ref | str | int | bool], ...] = ()
    # for `fleetrules explain`: the source text of the rule or statement
    text: str = field(default="", compare=False)

    @property
    def scoped(self) -> bool:
        return bool(self.scope)

    @property
    def evicts(self) -> bool:
        return any(isinstance(a, Evict) for a in self.actions)


MISSING = object()  # a property a fact does not have


def _checked(compare: Callable[[Any, Any], Any]) -> Callable[[Any, Any], bool]:
    """``compare`` as durable-rules compares: false with an absent property (``MISSING``), false between values
    that cannot be compared."""

    def check(left: Any, right: Any) -> bool:
        if left is MISSING or right is MISSING:
            return False
        try:
            return bool(compare(left, right))
        except TypeError:
            return False

    return check


# every comparison of the language, by its operator: what ``holds`` and the indexed engine's generated code call
COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    op: _checked(compare)
    for op, compare in (
        ("==", operator.eq),
        ("!=", operator.ne),
        ("<", operator.lt),
        ("<=", operator.le),
        (">", operator.gt),
        (">=", operator.ge),
    )
}


def holds(cond: Cond, fact: dict[str, Any], matched: dict[str, dict[str, Any]]) -> bool:
    """Evaluate ``cond`` on ``fact`` as durable-rules does (a comparison with an absent property is false)."""
    if isinstance(cond, Present):
        return (cond.prop in fact) == cond.present
    if isinstance(cond, Test):
        left = fact.get(cond.prop, MISSING)
        right = (
            matched.get(cond.operand.alias, {}).get(cond.operand.prop, MISSING)
            if isinstance(cond.operand, Ref)
            else cond.operand
        )
        return COMPARE[cond.op](left, right)
    if isinstance(cond, AllOf):
        return all(holds(c, fact, matched) for c in cond.items)
    return any(holds(c, fact, matched) for c in cond.items)


def numbers_compared(rules: Sequence[Rule], fact_type: str, prop: str = "seconds") -> tuple[int, ...]:
    """The numbers the rules compare ``prop`` of a ``fact_type`` fact with: where a test of them can turn (a
    simulation looks again when the clock's ``seconds`` of an ``unhealthy_workload`` or a ``taint_age`` reach one)."""
    marks: set[int] = set()

    def walk(cond: Cond) -> None:
        if isinstance(cond, Test) and cond.prop == prop and type(cond.operand) is int:
            marks.add(cond.operand)
        elif isinstance(cond, (AllOf, AnyOf)):
            for item in cond.items:
                walk(item)

    for rule in rules:
        for pattern in rule.patterns:
            if pattern.fact_type == fact_type:
                walk(pattern.cond)
    return tuple(sorted(marks))
