"""The durable-rules backend: IR → durable-rules rulesets, the host, and per-evaluation sessions.

The only module of fleetrules that imports durable_rules.

Designed around durable-rules 2.0.28 as measured (shared/spec/durable-rules-notes.md):
- one Host for the process, without the dispatch threads durable starts (they race the C engine);
  calls are serialised;
- one ruleset per compiled program, registered once and reused; each evaluation is a session
  (``sid``) of its own, so evaluations are isolated and can interleave;
- every fact gets a short explicit id; a 32-bit hash collision (MessageObservedException on an id
  never used) is retried with a fresh id;
- every fact type has a rule that accepts it, so no fact is dropped as unhandled;
- actions only record; errors raised in them are kept and re-raised after the assert, and facts
  they derive are asserted after the action returns (an assert inside an action can be lost);
- there is no truth maintenance: each decision keeps the ids of the facts it matched, and
  retracting a fact withdraws what depended on it, derived facts included.
"""

from __future__ import annotations

import copy
import itertools
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from durable import engine as durable

from engine.backend.indexed import Batch, CompiledPlan, FactIndex, hashable, key_values
from engine.backend.indexed import decisions as planned_decisions
from engine.backend.indexed import evictions as planned_evictions
from engine.backend.protocol import Decision, DecisionKind
from engine.compile import ir
from engine.compile.encoding import BATCHED
from engine.compile.program import CompiledProgram

_HOST: durable.Host | None = None
_LOCK = threading.RLock()
_NAMES = itertools.count(1)
_SIDS = itertools.count(1)
_SESSIONS: dict[str, DurableSession] = {}
# the most parts' values a session keeps for sharing between batches (DurableSession._batch): a fleet's batches
# have far fewer distinct lists of clusters
_KEYED_KEPT = 20_000
# durable-rules 2.0.28 refuses a fact of more than 255 properties (MAX_OBJECT_PROPERTIES, error 302);
# the backend adds three of its own (id, t, sid).
MAX_FACT_FIELDS = 255 - 3


class _SynchronousHost(durable.Host):  # type: ignore[misc]
    """A Host without its dispatch threads.

    durable.Host starts two timer threads that call into the C engine for every ruleset, every
    0.1-0.5 s, without a lock; racing our asserts they crashed the process (SIGSEGV, intermittent,
    measured here). fleetrules asserts synchronously (actions run inside assert_fact) and uses no
    timers or queued events, so it needs neither thread.
    """

    def _run(self) -> None:
        return None


def _host() -> durable.Host:
    global _HOST
    if _HOST is None:
        _HOST = _SynchronousHost()
    return _HOST


# durable-rules 2.0.28 keeps the children of a node of its match network in an open-addressing table of
# 512 slots (NEXT_BUCKET_LENGTH, src/rules/rete.c) and, when the table is full, looks for a free slot
# forever: registering 515 rules that test one field against distinct values hung the process
# (measured). A node has at most one child per pattern of its ruleset, so a program is split into
# rulesets of at most this many patterns, each fact asserted into every one.
PATTERNS_PER_RULESET = 400


class EngineError(RuntimeError):
    """A failure inside the rule engine itself (not bad input): a bug to report."""


class Unsupported(Exception):
    """A rule durable-rules cannot run as written (the checker reports it; see `unsupported`)."""

    def __init__(self, message: str, pattern: ir.Pattern | None = None) -> None:
        super().__init__(message)
        self.pattern = pattern


# ---------------------------------------------------------------- IR → durable-rules JSON

_DURABLE_OP = {"!=": "$neq", "<": "$lt", "<=": "$lte", ">": "$gt", ">=": "$gte"}


def _durable_cond(cond: ir.Cond) -> dict[str, Any]:
    if isinstance(cond, ir.Present):
        return {"$ex" if cond.present else "$nex": {cond.prop: 1}}
    if isinstance(cond, ir.Test):
        operand: Any = {cond.operand.alias: cond.operand.prop} if isinstance(cond.operand, ir.Ref) else cond.operand
        if cond.op == "==":
            return {cond.prop: operand}
        return {_DURABLE_OP[cond.op]: {cond.prop: operand}}
    if isinstance(cond, ir.AllOf):
        return {"$and": [_durable_cond(c) for c in cond.items] or [{"$ex": {"t": 1}}]}
    return {"$or": [_durable_cond(c) for c in cond.items] or [{"$nex": {"t": 1}}]}


MAX_VARIANTS = 64


def _has_ref(cond: ir.Cond) -> bool:
    if isinstance(cond, ir.Test):
        return isinstance(cond.operand, ir.Ref)
    if isinstance(cond, (ir.AllOf, ir.AnyOf)):
        return any(_has_ref(c) for c in cond.items)
    return False


def _dnf(cond: ir.Cond) -> list[ir.Cond]:
    """Alternatives whose ``$or``s hold no join: in durable-rules 2.0.28 an ``$or`` with a join loses
    its literal branches, and one inside an ``$and`` disables the ``$and``'s other joins (measured;
    tests/test_durable_behaviour.py)."""
    if not _has_ref(cond) or isinstance(cond, (ir.Test, ir.Present)):
        return [cond]
    if isinstance(cond, ir.AnyOf):
        return [alt for c in cond.items for alt in _dnf(c)]
    assert isinstance(cond, ir.AllOf)
    alternatives: list[ir.Cond] = [ir.TRUE]
    for item in cond.items:
        alternatives = [ir.all_of(a, b) for a in alternatives for b in _dnf(item)]
    return alternatives


def _renamed(cond: ir.Cond, suffix: str) -> ir.Cond:
    if isinstance(cond, ir.Test) and isinstance(cond.operand, ir.Ref):
        return ir.Test(cond.op, cond.prop, ir.Ref(cond.operand.alias + suffix, cond.operand.prop))
    if isinstance(cond, ir.AllOf):
        return ir.AllOf(tuple(_renamed(c, suffix) for c in cond.items))
    if isinstance(cond, ir.AnyOf):
        return ir.AnyOf(tuple(_renamed(c, suffix) for c in cond.items))
    return cond


def _is_guard(cond: ir.Cond) -> bool:
    """A join other than equality: evaluated in Python, never by durable-rules 2.0.28, whose C join
    evaluation (reduceExpressionSequence) crashed intermittently on `$neq` and `$lt` joins (measured)."""
    return isinstance(cond, ir.Test) and isinstance(cond.operand, ir.Ref) and cond.op != "=="


def _pattern(alias: str, fact_type: str, cond: ir.Cond) -> dict[str, Any]:
    body = {"$and": [{"t": fact_type}, _durable_cond(cond)]} if cond != ir.TRUE else {"t": fact_type}
    return {alias: body}


Guard = tuple[str, ir.Cond]  # (alias, condition on that alias's fact), checked before the action


@dataclass(frozen=True)
class Variant:
    body: dict[str, Any]  # the durable-rules rule, without "run"
    guards: tuple[Guard, ...]


def _split(cond: ir.Cond) -> tuple[ir.Cond, ir.Cond]:
    """(what durable-rules tests, what Python tests) of one alternative."""
    items = cond.items if isinstance(cond, ir.AllOf) else (cond,)
    engine = [c for c in items if not _is_guard(c)]
    guards = [c for c in items if _is_guard(c)]
    return ir.all_of(*engine), ir.all_of(*guards)


def durable_rules(rule: ir.Rule, suffix: str = "") -> list[Variant]:
    """The durable-rules rules for ``rule``, with the Python guards of each.

    A condition with a join inside an alternative becomes several negated patterns (for ``not``:
    no fact matches any alternative) or several rules (one per alternative; the session counts a
    match that several alternatives accept once). Joins other than equality are guards.

    Aliases get ``suffix``, so that the rules of one ruleset never share an alias."""
    variants: list[tuple[list[dict[str, Any]], list[Guard]]] = [([], [])]
    for p in rule.patterns:
        alias = p.alias + suffix
        alternatives = [_split(alt) for alt in _dnf(p.cond)]
        if p.negated:
            if any(guard != ir.TRUE for _, guard in alternatives):
                raise Unsupported("a 'not' pattern can compare with another fact only by '=='", p)
            negations = [
                _pattern(f"{alias}_{i}$not", p.fact_type, _renamed(engine, suffix))
                for i, (engine, _) in enumerate(alternatives)
            ]
            variants = [(body + negations, guards) for body, guards in variants]
        else:
            variants = [
                (
                    [*body, _pattern(alias, p.fact_type, _renamed(engine, suffix))],
                    guards + ([(p.alias, guard)] if guard != ir.TRUE else []),
                )
                for body, guards in variants
                for engine, guard in alternatives
            ]
        if len(variants) > MAX_VARIANTS:
            raise Unsupported(f"more than {MAX_VARIANTS} alternative matchings; simplify its 'or's")
    return [Variant({"all": body}, tuple(guards)) for body, guards in variants]


def unsupported(rules: Sequence[ir.Rule]) -> list[tuple[ir.Rule, ir.Pattern | None, str]]:
    """The rules that durable-rules cannot run: each with the pattern at fault (if one is) and why."""
    out = []
    for rule in rules:
        try:
            durable_rules(rule)
        except Unsupported as exc:
            out.append((rule, exc.pattern, str(exc)))
    return out


class DurableProgram:
    """A compiled program registered with durable-rules once, evaluated by many sessions.

    Rules with a join plan (engine.compile.joins) are evaluated over the session's indexes instead
    (engine.backend.indexed), unless ``reference``: then every rule runs inside durable-rules, which is
    what tests compare the plans against. Facts of a type no engine rule matches are kept by the session
    and never reach durable-rules."""

    def __init__(self, compiled: CompiledProgram, reference: bool = False) -> None:
        self.compiled = compiled
        rules = compiled.rules
        self.plans: dict[int, CompiledPlan] = {}
        if not reference:
            self.plans = {i: CompiledPlan(p, rules[i], i) for i, p in enumerate(compiled.plans) if p is not None}
        in_engine = [i for i in range(len(rules)) if i not in self.plans]
        # the fact types durable-rules must see, and those the plans read
        self.engine_types = frozenset(p.fact_type for i in in_engine for p in rules[i].patterns)
        self.planned_types = frozenset(p.fact_type for i in self.plans for p in rules[i].patterns)
        # the plans by the type of fact they are anchored on, and the fact types each anchor type's plans read
        # (the plans of rules that evict are asked for all their matches at once: ``evicting``)
        self.anchored: dict[str, list[CompiledPlan]] = defaultdict(list)
        self.evicting: tuple[CompiledPlan, ...] = tuple(p for p in self.plans.values() if p.plan.evicts)
        for compiled_plan in self.plans.values():
            if not compiled_plan.plan.evicts:
                self.anchored[compiled_plan.plan.anchor_type].append(compiled_plan)
        # fact type → the planned rules that read it (their answers are stale when one of its facts changes), those
        # that evict apart (their evictions, all of a rule's at once, are all that is kept of them)
        self.readers: dict[str, tuple[int, ...]] = defaultdict(tuple)
        self.evict_readers: dict[str, tuple[int, ...]] = defaultdict(tuple)
        # (planned rule, fact type) → the keys it looks the type's facts up by, and the anchor's values for them
        # (JoinPlan.keyed): a change of such a fact makes stale only the answers of the anchors with its values
        self.keyed: dict[tuple[int, str], tuple[tuple[str, ...], tuple[Any, ...]]] = {}
        for i, compiled_plan in self.plans.items():
            for fact_type in compiled_plan.plan.reads:
                if compiled_plan.plan.evicts:
                    self.evict_readers[fact_type] += (i,)
                else:
                    self.readers[fact_type] += (i,)
                keyed = None if compiled_plan.plan.evicts else compiled_plan.plan.keyed(fact_type)
                if keyed is not None:
                    self.keyed[(i, fact_type)] = keyed
        self.keyed_by_plan: dict[int, list[tuple[str, tuple[tuple[str, ...], tuple[Any, ...]]]]] = defaultdict(list)
        for (i, fact_type), keyed in sorted(self.keyed.items()):
            self.keyed_by_plan[i].append((fact_type, keyed))
        self.name = f"fleetrules_{next(_NAMES)}"
        # every field each derived fact type has, so that absent ones can be set to ABSENT
        self.derived_fields: dict[str, set[str]] = defaultdict(set)
        for rule in rules:
            for action in rule.actions:
                if isinstance(action, ir.Derive):
                    self.derived_fields[action.fact_type].update(name for name, _ in action.fields)
        # the `not` patterns of user rules in the engine, by fact type: a later fact may falsify an earlier
        # match (planned rules are evaluated on the facts as they are when asked)
        self.negated: dict[str, list[tuple[int, ir.Pattern]]] = defaultdict(list)
        for index in in_engine:
            for pattern in rules[index].patterns:
                if pattern.negated and not rules[index].builtin:
                    self.negated[pattern.fact_type].append((index, pattern))
        rulesets: list[dict[str, Any]] = [{}]
        patterns = 0
        keeping = sorted(self.engine_types)

        def keep() -> dict[str, Any]:  # durable-rules takes "run" out of the definitions it is given
            return {  # accepts every fact of the type, and never completes (nothing asserts __never__)
                f"keep_{fact_type}": {"all": [{"m": {"t": fact_type}}, {"n": {"t": "__never__"}}], "run": _no_op}
                for fact_type in keeping
            }

        for index in in_engine:
            for number, variant in enumerate(durable_rules(rules[index], f"__{index}")):
                size = len(variant.body["all"])
                if patterns + size > PATTERNS_PER_RULESET - 2 * len(keeping) and rulesets[-1]:
                    rulesets.append({})
                    patterns = 0
                rulesets[-1][f"r{index}_{number}"] = {**variant.body, "run": self._action(index, variant.guards)}
                patterns += size
        self.names = [f"{self.name}_{i}" for i in range(len(rulesets))] if keeping else []
        if self.names:
            with _LOCK:
                _host().set_rulesets({name: rules | keep() for name, rules in zip(self.names, rulesets, strict=True)})

    def _action(self, index: int, guards: tuple[Guard, ...]) -> Callable[[Any], None]:
        suffix = f"__{index}"

        def run(c: Any) -> None:
            session = _SESSIONS.get(str(c.s.sid))
            if session is None:
                return
            matched = {alias.removesuffix(suffix): dict(fact) for alias, fact in c._m.items()}
            if all(ir.holds(cond, matched[alias], matched) for alias, cond in guards):
                session.fire(index, matched)

        return run

    def session(self, explained: bool = True) -> DurableSession:
        return DurableSession(self, explained)


def _no_op(c: Any) -> None:
    return None


AnswerKey = str | tuple[str, str]  # an anchor's id, or (its id, the name of the binding asking: ``unlike``)


class _Answers:
    """A planned rule's answers by anchor, the oldest let go past ``LIMIT`` decisions in all: made again if asked
    for again (the same decisions, new objects). A group scope's answer is asked for by its members in turn, and
    a 5,000-cluster fleet's 12,500 groups held 3.1 M decisions kept for nothing."""

    LIMIT = 20_000
    __slots__ = ("by_key", "size")

    def __init__(self) -> None:
        self.by_key: dict[AnswerKey, tuple[Decision, ...]] = {}
        self.size = 0  # decisions in all

    def get(self, key: AnswerKey) -> tuple[Decision, ...] | None:
        return self.by_key.get(key)

    def pop(self, key: AnswerKey, default: None = None) -> tuple[Decision, ...] | None:
        answer = self.by_key.pop(key, None)
        if answer is not None:
            self.size -= len(answer)
        return answer

    def put(self, key: AnswerKey, answer: tuple[Decision, ...]) -> None:
        self.pop(key)
        self.by_key[key] = answer
        self.size += len(answer)
        while self.size > self.LIMIT and len(self.by_key) > 1:
            self.pop(next(iter(self.by_key)))

    def __bool__(self) -> bool:
        return bool(self.by_key)


def _reuse(before: tuple[Decision, ...], made: list[Decision]) -> tuple[Decision, ...]:
    """``made``, each decision alike one of ``before`` (every field but a group's matches) that very object: the
    scheduler's shared results find what changed by identity, so a taint added to one cluster changes that
    cluster's decisions, not every tainted cluster's."""
    alike: dict[tuple[Any, ...], list[Decision]] = defaultdict(list)
    for d in before:
        if not d.group:
            alike[_alike(d)].append(d)
    if not alike:
        return tuple(made)
    out = tuple((found.pop() if (found := alike.get(_alike(d))) else d) if not d.group else d for d in made)
    # every decision the one it was, in the same order: the answer it was, that very object (a shared result made
    # of it stands: a scenario's taint taken back)
    return before if len(out) == len(before) and all(a is b for a, b in zip(out, before, strict=True)) else out


def _alike(d: Decision) -> tuple[Any, ...]:
    return (d.rule, d.binding, d.cluster, d.message, d.weight, d.kind, d.reason, d.matched, d.exempt)


def _as_before(before: Batch | None, common: Mapping[str, Any], parts: Sequence[Mapping[str, Any]]) -> TypeGuard[Batch]:
    """Whether the batch placed before is the one now placed: the same common part, and the same part objects in the
    same order."""
    if before is None or before.common != common:
        return False
    return before.parts is parts or (
        len(before.parts) == len(parts) and all(x is y for x, y in zip(before.parts, parts, strict=True))
    )


class DurableSession:
    """The facts and decisions of one evaluation (engine.backend.protocol.Session)."""

    def __init__(self, program: DurableProgram, explained: bool = True) -> None:
        self.program = program
        self.explained = explained  # decisions name every match they stand for (for explanations)
        self.sid = str(next(_SIDS))
        self._facts: dict[str, dict[str, Any]] = {}
        self._decisions: dict[str, list[Decision]] = defaultdict(list)  # binding id → decisions
        self._revision: dict[str, int] = defaultdict(int)  # binding id → how often its decisions changed
        self._evictions: list[Decision] = []
        self.dependents: dict[str, set[tuple[str, int]]] = defaultdict(set)
        self._derived: dict[str, Decision] = {}  # derived fact id → the decision that derived it
        # explained: the facts retracted, as they were asserted (an explanation of a decision made before names
        # them: a peer's placement it matched, after the peer moved), and each batch id's batches replaced
        self._retired: dict[str, dict[str, Any]] = {}
        self._retired_batches: dict[str, list[Batch]] = defaultdict(list)
        # derived facts waiting to be asserted: (type, props, deps, rule, matched)
        self.pending: list[tuple[str, dict[str, Any], frozenset[str], int, tuple[tuple[str, str], ...]]] = []
        self.cancelled: set[int] = set()
        self.errors: list[BaseException] = []
        self.fired: dict[int, list[Decision]] = defaultdict(list)  # rule index → its decisions
        self.matches: set[tuple[int, frozenset[str]]] = set()
        self._ids = itertools.count(1)
        # the facts the join plans read, indexed, and how often they changed (planned decisions are
        # computed when asked for, and kept until a fact they could depend on changes)
        self.index = FactIndex()
        # how often each planned rule's answers were all let go, and the plans whose answers an anchor's revision
        # counts (those whose anchor condition it meets: the others' answer is no match, whatever changes)
        self._epoch: dict[int, int] = defaultdict(int)
        self._counted: dict[str, tuple[int, ...]] = {}
        # (planned rule, fact type keyed: DurableProgram.keyed) → the anchor's values → the anchors answered so
        self._answered: dict[tuple[int, str], dict[tuple[Any, ...], set[AnswerKey]]] = defaultdict(dict)
        # by planned rule: its answers by anchor fact id, let go when a fact of a type it reads changes (a
        # rule's answers outlive changes it does not read: a taint leaves a cluster statement's decisions as
        # they were, the same objects, which the scheduler's shared results compare by identity)
        self._planned: dict[int, _Answers] = {}
        # answers let go, until made again: a decision made again alike is the old object (_reuse)
        self._stale: dict[int, _Answers] = defaultdict(_Answers)
        # by planned rule (CompiledPlan.appends): the batches added since an anchor's answer was made, whose matches
        # are appended to it when it is next asked for, instead of the join made again
        self._appended: dict[int, dict[AnswerKey, list[Batch]]] = {}
        # the evictions of each planned rule that evicts, on the facts as they were when last asked, let go when a
        # fact of a type the rule reads changes
        self._evicted: dict[int, tuple[Decision, ...]] = {}
        # batches (Session.place) by id: kept whole (a Batch, its facts made when read) when no engine rule reads
        # their type; else their facts asserted one by one, with the common part and each fact's part and id
        self._batches: dict[str, Batch | tuple[dict[str, Any], list[tuple[Mapping[str, Any], str]]]] = {}
        # without explanations (no fact id is ever shown): each batch's batch before its last change (or retracted),
        # put back when the batch is placed as it was (a sweep's scenario undone) instead of its parts numbered again
        self._previous: dict[str, Batch] = {}
        # id of a batch's parts → those parts and their values found (Batch.keyed), shared by the batches of them
        self._keyed_of: dict[int, tuple[tuple[Mapping[str, Any], ...], dict[tuple[str, ...], frozenset[Any]]]] = {}
        _SESSIONS[self.sid] = self

    def close(self) -> None:
        _SESSIONS.pop(self.sid, None)

    # ------------------------------------------------------------ what rules decided
    def decisions(self, owner: str, unlike: str | None = None) -> Sequence[Decision]:
        found = self._decisions.get(owner, ())
        if not self.program.plans:
            return found
        planned = [d for part in self._planned_parts(owner, unlike) for d in part]
        return [*found, *planned] if planned else found

    def decision_parts(self, owner: str) -> tuple[Sequence[Decision], ...]:
        found = self._decisions.get(owner)
        return (tuple(found) if found else (), *(self._planned_parts(owner) if self.program.plans else ()))

    def revision(self, owner: str) -> int:
        """A number that changes whenever the decisions about ``owner`` may have: the engine's, or a planned rule's
        answer let go (for a change of a fact it reads, of the anchor's key values where the rule looks it up so)."""
        revision = self._revision.get(owner, 0)
        if not self.program.plans:
            return revision
        counted = self._counted.get(owner)
        if counted is None:
            counted = self._count(owner)
        return revision + sum(self._epoch[i] for i in counted) if counted else revision

    def _count(self, owner: str) -> tuple[int, ...]:
        anchor = self._facts.get(owner)
        if anchor is None:
            return ()
        plans = self.program.anchored.get(anchor["t"], ())
        counted = self._counted[owner] = tuple(p.index for p in plans if ir.holds(p.plan.anchor_cond, anchor, {}))
        return counted

    def _planned_parts(self, owner: str, unlike: str | None = None) -> tuple[tuple[Decision, ...], ...]:
        """What each planned rule decides about the binding (or scope) fact ``owner``, on the facts as they are now;
        each rule's answer kept (the same object) until a fact of a type that rule reads changes. ``unlike``: the
        decisions exempt for the binding so named may be left out (Session.decisions), an answer of its own."""
        anchor = self._facts.get(owner)
        if anchor is None:
            return ()
        out = []
        for plan in self.program.anchored.get(anchor["t"], ()):
            answers = self._planned.get(plan.index)
            if answers is None:
                answers = self._planned[plan.index] = _Answers()
            unlike_here = unlike if plan.unlike else None
            key: AnswerKey = owner if unlike_here is None else (owner, unlike_here)
            found = answers.get(key)
            added = self._appended[plan.index].pop(key, None) if plan.index in self._appended else None
            if found is not None and added:
                grown = list(found)
                for batch in added:
                    planned_decisions(plan, anchor, self.index, grown, self.explained, unlike_here, batch)
                found = tuple(grown)
                answers.put(key, found)
            if found is None:
                made: list[Decision] = []
                planned_decisions(plan, anchor, self.index, made, self.explained, unlike_here)
                before = self._stale[plan.index].pop(key, None)
                found = _reuse(before, made) if before else tuple(made)
                answers.put(key, found)
                for fact_type, (_, values) in self.program.keyed_by_plan.get(plan.index, ()):
                    at = tuple(hashable(anchor.get(v.prop) if isinstance(v, ir.Ref) else v) for v in values)
                    self._answered[(plan.index, fact_type)].setdefault(at, set()).add(key)
            out.append(found)
        return tuple(out)

    def _changed(self, fact_type: str, fact: Mapping[str, Any], added: Batch | None = None) -> None:
        """``fact`` (or a batch's common part), of a type the plans read, changed: the answers of the rules that read
        its type are stale; of a rule that looks the type up by the anchor's values, those of the anchors with the
        fact's values only. ``added``: the change is that batch added (``fact`` its common part), which a rule that
        appends (CompiledPlan.appends) appends its matches of to the anchors' answers when they are next asked for."""
        for index in self.program.evict_readers.get(fact_type, ()):
            self._evicted.pop(index, None)
        for index in self.program.readers.get(fact_type, ()):
            keyed = self.program.keyed.get((index, fact_type))
            values = key_values(fact, keyed[0]) if keyed is not None else None
            if values is None:  # every answer
                self._appended.pop(index, None)
                dropped = self._planned.pop(index, None)
                if dropped:
                    self._stale[index] = dropped
                self._epoch[index] += 1
                for registered in [k for k in self._answered if k[0] == index]:
                    del self._answered[registered]
                continue
            answers = self._planned.get(index)
            appends = self.program.plans[index].appends
            if added is not None and appends is not None and appends[0] == fact_type:
                pending = self._appended.setdefault(index, {})
                for key in self._answered[(index, fact_type)].get(values, ()):
                    if answers is not None and answers.get(key) is not None:
                        pending.setdefault(key, []).append(added)
                    self._revision[key if isinstance(key, str) else key[0]] += 1
                continue
            stale = self._answered[(index, fact_type)].pop(values, ())
            appended = self._appended.get(index)
            for key in stale:
                if appended:
                    appended.pop(key, None)
                if answers is not None:
                    answer = answers.pop(key, None)
                    if answer:
                        self._stale[index].put(key, answer)
                self._revision[key if isinstance(key, str) else key[0]] += 1

    def evictions(self) -> Sequence[Decision]:
        """The engine's evict decisions in force, then each planned rule's that evicts, on the facts as they are."""
        planned: list[Decision] = []
        for plan in self.program.evicting:
            found = self._evicted.get(plan.index)
            if found is None:
                made: list[Decision] = []
                planned_evictions(plan, self.index, made, self.explained)
                found = self._evicted[plan.index] = tuple(made)
            planned += found
        return (*self._evictions, *planned)

    def fact(self, fact_id: str) -> Mapping[str, Any] | None:
        found = self._facts.get(fact_id) or self._retired.get(fact_id)
        if found is not None or "." not in fact_id:
            return found
        batch_id, _, number = fact_id.rpartition(".")  # a fact of a batch kept whole: ID.n
        if not number.isdigit():
            return None
        batch = self._batches.get(batch_id)
        batches = [batch] if isinstance(batch, Batch) else []
        made: Mapping[str, Any] | None = None
        for each in (*batches, *self._retired_batches.get(batch_id, ())):
            made = each.member(int(number))
            if made is not None:
                break
        return made

    def derivation(self, fact_id: str) -> Decision | None:
        return self._derived.get(fact_id)

    # ------------------------------------------------------------ facts
    def assert_fact(self, fact_type: str, props: Mapping[str, Any]) -> str:
        """Assert a fact (and then what rules derive from it); returns its id."""
        fact_id = self._assert(fact_type, props)
        self._drain()
        return fact_id

    def place(
        self, batch_id: str | None, fact_type: str, common: Mapping[str, Any], parts: Sequence[Mapping[str, Any]]
    ) -> str:
        """Make the facts of the batch ``batch_id`` (None: a new batch) ``common | part`` for each of ``parts``;
        returns the batch's id (``retract`` retracts its facts). A type the plans read in batches (encoding.BATCHED:
        placements) is kept whole while no engine rule reads it (the plans make its facts as they visit them);
        any other is asserted one by one, those alike staying asserted (a binding's members, tasks, taints)."""
        old = self._batches.get(batch_id) if batch_id is not None else None
        if fact_type not in BATCHED or fact_type in self.program.engine_types:
            return self._place_each(batch_id, old, fact_type, common, parts)
        whole = {**common, "t": fact_type, "sid": self.sid}
        numbers: list[int] = []
        if isinstance(old, Batch) and old.common == whole:
            # its facts alike (an equal part) keep their ids, as facts asserted one by one stay asserted
            if old.parts is parts or (
                len(old.parts) == len(parts) and all(a is b or a == b for a, b in zip(old.parts, parts, strict=True))
            ):
                return old.id
            before = self._previous.get(old.id) if not self.explained else None
            if _as_before(before, whole, parts):
                batch = before
            else:
                fresh = itertools.count(old.fresh)
                numbers = self._numbers(old, parts, fresh)
                batch = self._batch(old.id, whole, parts, tuple(numbers), next(fresh))
            if not self.explained:
                self._previous[old.id] = old
            # what ``retract`` and the new batch's assertion below do, the indexes changed where the parts did
            self._batches[batch.id] = batch
            if self.explained:
                self._retired_batches[old.id].append(old)
            if fact_type in self.program.planned_types:
                self.index.replace_batch(fact_type, old, batch)
                self._changed(fact_type, batch.common)
            return batch.id
        else:
            before = self._previous.pop(batch_id, None) if batch_id is not None and old is None else None
            if batch_id is not None:
                self.retract(batch_id)
            if _as_before(before, whole, parts):
                batch = before  # placed again as it was when retracted: that very batch again
            else:
                batch = self._batch(f"{fact_type[:2]}{next(self._ids)}", whole, parts, range(len(parts)), len(parts))
        self._batches[batch.id] = batch
        if fact_type in self.program.planned_types:
            self.index.add_batch(fact_type, batch)
            self._changed(fact_type, batch.common, batch)
        return batch.id

    def _batch(
        self,
        batch_id: str,
        common: dict[str, Any],
        parts: Sequence[Mapping[str, Any]],
        numbers: Sequence[int],
        fresh: int,
    ) -> Batch:
        """A new batch; batches of the very same parts (a tuple the store made once for their clusters) share what
        is found of their parts' values (indexed.part_values), found once for them all."""
        parts = parts if type(parts) is tuple else tuple(parts)
        batch = Batch(batch_id, common, parts, numbers, fresh)
        shared = self._keyed_of.get(id(parts))
        if shared is None or shared[0] is not parts:
            if len(self._keyed_of) >= _KEYED_KEPT:
                self._keyed_of.clear()
            shared = self._keyed_of[id(parts)] = (parts, {})  # the parts held: their id is not used again meanwhile
        batch.keyed = shared[1]
        return batch

    @staticmethod
    def _numbers(old: Batch, parts: Sequence[Mapping[str, Any]], fresh: Iterator[int]) -> list[int]:
        """The numbers of ``parts`` in the batch that replaces ``old`` (the same common part): an old fact's for a
        part alike (the same dict, most often: a cluster's part is shared; else equal values), a fresh one else."""
        by_identity = dict(zip(map(id, old.parts), old.numbers, strict=True))  # a binding's parts are distinct
        numbers = [by_identity.pop(id(part), -1) for part in parts]  # -1: not found so
        if -1 in numbers:  # a part made anew (its cluster changed, or a cluster not in the facts): by its values
            left = set(by_identity.values())
            by_value: dict[tuple[Any, ...], list[int]] = defaultdict(list)
            for part, number in zip(old.parts, old.numbers, strict=True):
                if number in left:
                    by_value[tuple(part.items())].append(number)
            numbers = [
                n if n >= 0 else (v.pop(0) if (v := by_value.get(tuple(part.items()))) else next(fresh))
                for part, n in zip(parts, numbers, strict=True)
            ]
        return numbers

    def _place_each(
        self,
        batch_id: str | None,
        old: Batch | tuple[dict[str, Any], list[tuple[Mapping[str, Any], str]]] | None,
        fact_type: str,
        common: Mapping[str, Any],
        parts: Sequence[Mapping[str, Any]],
    ) -> str:
        """``place`` for a type the plans cannot read in batches, or the engine reads: a fact per part, those of the
        batch's facts alike (the same common part, an equal part) staying asserted (a binding leaving one of fifty
        clusters changes one fact, not a hundred), the others retracted in reverse order, then the new ones
        asserted in order."""
        alike: dict[tuple[Any, ...], list[str]] = defaultdict(list)
        before = old[1] if isinstance(old, tuple) and old[0] == common else []
        try:
            for part, fact_id in before:
                alike[tuple(part.items())].append(fact_id)
            kept = [alike[key].pop(0) if alike.get(key := tuple(part.items())) else None for part in parts]
        except TypeError:  # a list among the values: every fact anew, none alike
            kept = [None] * len(parts)
        staying = set(kept)
        for _, fact_id in reversed(old[1] if isinstance(old, tuple) else []):
            if fact_id not in staying:
                self.retract(fact_id)
        made = [
            (part, fact_id if fact_id is not None else self.assert_fact(fact_type, {**common, **part}))
            for part, fact_id in zip(parts, kept, strict=True)
        ]
        batch_id = batch_id if batch_id is not None else f"{fact_type[:2]}{next(self._ids)}"
        self._batches[batch_id] = (dict(common), made)
        return batch_id

    def _assert(self, fact_type: str, props: Mapping[str, Any]) -> str:
        while True:
            fact_id = f"{fact_type[:2]}{next(self._ids)}"
            fact = {**props, "id": fact_id, "t": fact_type, "sid": self.sid}
            if fact_type in self.program.engine_types:
                try:
                    with _LOCK:
                        for name in self.program.names:
                            _host().assert_fact(name, fact)
                except durable.MessageObservedException:
                    continue  # the id's hash collides with a stored fact's: take another id
                except durable.MessageNotHandledException as exc:
                    raise EngineError(f"the engine did not take a {fact_type} fact") from exc
            self._facts[fact_id] = fact
            if fact_type in self.program.planned_types:
                self.index.add(fact_type, fact_id, fact)
                self._changed(fact_type, fact)
            self._raise_errors()
            if fact_type in self.program.negated:
                self._recheck_negations(fact_type, fact)
            return fact_id

    def _recheck_negations(self, fact_type: str, fact: dict[str, Any]) -> None:
        """durable-rules never takes back an action: withdraw the decisions whose `not` this fact breaks."""
        for index, pattern in self.program.negated[fact_type]:
            for decision in [d for d in self.fired[index] if id(d) not in self.cancelled]:
                matched = {alias: self._facts.get(fact_id, {}) for alias, fact_id in decision.matched}
                if ir.holds(pattern.cond, fact, matched):
                    self._cancel(decision)
            for pending in [p for p in self.pending if p[3] == index]:
                matched = {alias: self._facts.get(fact_id, {}) for alias, fact_id in pending[4]}
                if ir.holds(pattern.cond, fact, matched):
                    self.pending.remove(pending)

    def _cancel(self, decision: Decision) -> None:
        self.cancelled.add(id(decision))
        if decision.kind == "derive":
            self.retract(decision.message)
            return
        kept = self._decisions.get(decision.binding, [])
        self._decisions[decision.binding] = [d for d in kept if d is not decision]
        self._revision[decision.binding] += 1
        self._evictions = [d for d in self._evictions if d is not decision]

    def _drain(self) -> None:
        while self.pending:
            fact_type, props, deps, rule, matched = self.pending.pop(0)
            if not all(d in self._facts for d in deps):
                continue  # what it was derived from has been retracted meanwhile
            fact_id = self._assert(fact_type, props)
            decision = Decision(rule=rule, deps=deps, kind=DecisionKind.DERIVE, message=fact_id, matched=matched)
            self._derived[fact_id] = decision
            self.fired[decision.rule].append(decision)
            for dep in deps:
                self.dependents[dep].add((fact_id, -1))

    def retract(self, fact_id: str) -> None:
        """Retract a fact, and withdraw every decision and derived fact that depended on it."""
        batch = self._batches.pop(fact_id, None)
        if isinstance(batch, Batch):
            if self.explained:
                self._retired_batches[batch.id].append(batch)
            else:  # placed again as it was (``place`` with its id), it is this batch again
                self._previous[batch.id] = batch
            fact_type = batch.common["t"]
            if fact_type in self.program.planned_types:
                self.index.remove_batch(fact_type, batch)
                self._changed(fact_type, batch.common)
            return
        if batch is not None:
            for _, each in reversed(batch[1]):
                self.retract(each)
            return
        fact = self._facts.pop(fact_id, None)
        if fact is None:
            return
        if self.explained:
            self._retired[fact_id] = fact
        fact_type = fact["t"]
        if fact_type in self.program.planned_types:
            self.index.remove(fact_type, fact_id, fact)
            self._changed(fact_type, fact)
        if fact_type in self.program.engine_types:
            with _LOCK:
                for name in self.program.names:
                    _host().retract_fact(name, fact)
            self._raise_errors()
        for owner, index in sorted(self.dependents.pop(fact_id, set())):
            if index == -1:
                self.retract(owner)
            else:
                self._withdraw(owner, fact_id)
        self._drain()

    def _withdraw(self, binding: str, fact_id: str) -> None:
        kept = [d for d in self._decisions.get(binding, []) if fact_id not in d.deps]
        self._decisions[binding] = kept
        self._revision[binding] += 1
        self._evictions = [d for d in self._evictions if fact_id not in d.deps]

    def _raise_errors(self) -> None:
        if self.errors:
            error = self.errors[0]
            self.errors.clear()
            raise EngineError(f"a rule action failed: {error!r}") from error

    # ------------------------------------------------------------ firing
    def fire(self, index: int, matched: dict[str, dict[str, Any]]) -> None:
        try:
            self._fire(index, matched)
        except Exception as exc:  # durable-rules would swallow it: keep it for _raise_errors
            self.errors.append(exc)

    def _fire(self, index: int, facts: dict[str, dict[str, Any]]) -> None:
        rule = self.program.compiled.rules[index]
        deps = frozenset(f["id"] for f in facts.values())
        if (index, deps) in self.matches:
            return  # the same match through another alternative of the rule's conditions
        self.matches.add((index, deps))
        for action in rule.actions:
            if isinstance(action, ir.Derive):
                props = dict.fromkeys(self.program.derived_fields[action.fact_type], ir.ABSENT)
                props |= {name: value(facts) for name, value in action.fields}
                matched = tuple(sorted((alias, f["id"]) for alias, f in facts.items()))
                self.pending.append((action.fact_type, copy.deepcopy(props), deps, index, matched))
        for decision in self._decide(index, rule, facts):
            if decision.kind is DecisionKind.EVICT:
                self._evictions.append(decision)
            else:
                self._decisions[decision.binding].append(decision)
                self._revision[decision.binding] += 1
            self.fired[decision.rule].append(decision)
            for dep in decision.deps:
                self.dependents[dep].add((decision.binding, index))

    @staticmethod
    def _decide(index: int, rule: ir.Rule, facts: dict[str, dict[str, Any]]) -> list[Decision]:
        """The reject, prefer and evict decisions of the rule's actions on one match (alias → fact)."""
        deps = frozenset(f["id"] for f in facts.values())
        matched = tuple(sorted((alias, f["id"]) for alias, f in facts.items()))
        out = []
        for action in rule.actions:
            if isinstance(action, ir.Derive):
                continue
            binding = facts[action.binding]["id"]
            cluster = facts[action.cluster]["name"]
            if isinstance(action, ir.Evict):
                message = action.message.render(facts)
                kind, reason, weight = DecisionKind.EVICT, action.reason, 0
            elif isinstance(action, ir.Reject):
                message = action.message.render(facts)
                kind, reason, weight = DecisionKind.REJECT, "", 0
                if action.reason is not None:
                    reason = action.reason.render(facts)
            else:
                message, kind, reason, weight = "", DecisionKind.PREFER, "", action.weight
            exempt: tuple[tuple[str, str], ...] = ()
            if kind is not DecisionKind.EVICT:
                exempt = tuple(
                    (name, str(facts[v.alias][v.prop] if isinstance(v, ir.Ref) else v)) for name, v in rule.exempt
                )
            out.append(Decision(index, deps, binding, cluster, message, weight, kind, reason, matched, exempt))
        return out
