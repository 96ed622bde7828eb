"""The durable-rules backend: IR → durable-rules rulesets, the host, and per-evaluation sessions.

The only module of fleetrules that imports durable_rules.

Designed around durable-rules 2.0.28 as measured (tests/test_durable_behaviour.py):
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
from typing import Any

from durable import engine as durable

from engine.backend.protocol import Decision, DecisionKind, OneByOne, place_each
from engine.compile import ir
from engine.compile.program import CompiledProgram

_HOST: durable.Host | None = None
_LOCK = threading.RLock()
_NAMES = itertools.count(1)
_SIDS = itertools.count(1)
_SESSIONS: dict[str, DurableSession] = {}
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
    """A compiled program registered with durable-rules once, evaluated by many sessions: every rule (the reference
    engine, engine.backend.load), or the rules of ``indexes`` (those the planner has no plan for:
    engine.backend.planned). Facts of a type none of its rules matches are kept by the session and never reach
    durable-rules."""

    def __init__(self, compiled: CompiledProgram, indexes: Sequence[int] | None = None) -> None:
        self.compiled = compiled
        rules = compiled.rules
        in_engine = list(range(len(rules))) if indexes is None else list(indexes)
        # the fact types durable-rules must see
        self.durable_types = frozenset(p.fact_type for i in in_engine for p in rules[i].patterns)
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
        keeping = sorted(self.durable_types)

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

    def session(self, explained: bool = True, ids: Iterator[int] | None = None) -> DurableSession:
        """A session; ``ids``: the numbers its facts' ids take (a planned session's, shared with its own facts)."""
        return DurableSession(self, explained, ids)


def _no_op(c: Any) -> None:
    return None


class DurableSession:
    """The facts and decisions of one evaluation in durable-rules (engine.backend.protocol.Session). Inside a
    planned session (engine.backend.planned) it takes the facts of the types its rules read, and says what its
    rules derive and withdraw of that (``derived_to``, ``withdrawn_to``)."""

    def __init__(self, program: DurableProgram, explained: bool = True, ids: Iterator[int] | None = None) -> None:
        self.program = program
        self.explained = explained
        self.sid = str(next(_SIDS))
        self._facts: dict[str, dict[str, Any]] = {}
        self._decisions: dict[str, list[Decision]] = defaultdict(list)  # binding id → decisions
        self._revision: dict[str, int] = defaultdict(int)  # binding id → how often its decisions changed
        self._evictions: list[Decision] = []
        self.dependents: dict[str, set[tuple[str, int]]] = defaultdict(set)
        self._derived: dict[str, Decision] = {}  # derived fact id → the decision that derived it
        # explained: the facts retracted, as they were asserted (an explanation of a decision made before names
        # them: a peer's placement it matched, after the peer moved)
        self._retired: dict[str, dict[str, Any]] = {}
        # derived facts waiting to be asserted: (type, props, deps, rule, matched)
        self.pending: list[tuple[str, dict[str, Any], frozenset[str], int, tuple[tuple[str, str], ...]]] = []
        self.cancelled: set[int] = set()
        self.errors: list[BaseException] = []
        self.fired: dict[int, list[Decision]] = defaultdict(list)  # rule index → its decisions
        self.matches: set[tuple[int, frozenset[str]]] = set()
        self._ids = ids if ids is not None else itertools.count(1)
        # batches (Session.place) by id: their facts asserted one by one, with the common part and each fact's part
        self._batches: dict[str, OneByOne] = {}
        # told of each fact the rules derive, once asserted, and of each derived fact withdrawn
        self.derived_to: Callable[[str, Mapping[str, Any]], None] | None = None
        self.withdrawn_to: Callable[[str], None] | None = None
        _SESSIONS[self.sid] = self

    def close(self) -> None:
        _SESSIONS.pop(self.sid, None)

    # ------------------------------------------------------------ what rules decided
    def decisions(self, owner: str, asking: str | None = None) -> Sequence[Decision]:
        return self._decisions.get(owner, ())

    def decision_parts(self, owner: str) -> tuple[Sequence[Decision], ...]:
        found = self._decisions.get(owner)
        return (tuple(found) if found else (),)

    def revision(self, owner: str) -> int:
        return self._revision.get(owner, 0)

    def release(self, owner: str) -> None:
        """durable-rules keeps its matches in force: nothing here is kept for asking again."""

    def evictions(self) -> Sequence[Decision]:
        return tuple(self._evictions)

    def fact(self, fact_id: str) -> Mapping[str, Any] | None:
        return self._facts.get(fact_id) or self._retired.get(fact_id)

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
        """Make the facts of the batch ``batch_id`` (None: a new batch) ``common | part`` for each of ``parts``, one
        by one; returns the batch's id (``retract`` retracts its facts)."""
        old = self._batches.get(batch_id) if batch_id is not None else None
        made = place_each(self, old, fact_type, common, parts)
        batch_id = batch_id if batch_id is not None else f"{fact_type[:2]}{next(self._ids)}"  # after its facts'
        self._batches[batch_id] = made
        return batch_id

    def _assert(self, fact_type: str, props: Mapping[str, Any]) -> str:
        while True:
            fact_id = f"{fact_type[:2]}{next(self._ids)}"
            fact = {**props, "id": fact_id, "t": fact_type, "sid": self.sid}
            if fact_type in self.program.durable_types:
                try:
                    with _LOCK:
                        for name in self.program.names:
                            _host().assert_fact(name, fact)
                except durable.MessageObservedException:
                    continue  # the id's hash collides with a stored fact's: take another id
                except durable.MessageNotHandledException as exc:
                    raise EngineError(f"the engine did not take a {fact_type} fact") from exc
            self._facts[fact_id] = fact
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
            if self.derived_to is not None:
                self.derived_to(fact_id, self._facts[fact_id])
            self.fired[decision.rule].append(decision)
            for dep in deps:
                self.dependents[dep].add((fact_id, -1))

    def retract(self, fact_id: str) -> None:
        """Retract a fact (or a batch), and withdraw every decision and derived fact that depended on it."""
        batch = self._batches.pop(fact_id, None)
        if batch is not None:
            for _, each in reversed(batch[1]):
                self.retract(each)
            return
        fact = self._facts.pop(fact_id, None)
        if fact is None:
            return
        if self.explained:
            self._retired[fact_id] = fact
        if fact_id in self._derived and self.withdrawn_to is not None:
            self.withdrawn_to(fact_id)
        if fact["t"] in self.program.durable_types:
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
