"""The planner's engine: rules with a join plan (engine.compile.joins), evaluated over hash indexes of the
session's facts (engine.backend.indexed) when their decisions are asked for, behind the backend protocol.

A ``PlannedSession`` is a complete session: it keeps the facts (their ids, batches, the indexes), answers for the
planned rules, and hands the rules without a plan to a durable-rules session of its own (engine.backend.durable:
the facts of the types those rules read, and what they derive, which comes back to be indexed). With
``reference`` (engine.backend.load), a program's every rule runs in durable-rules instead: the same protocol, the
engine the plans are tested against.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeGuard

from engine.backend.durable import DurableProgram, DurableSession
from engine.backend.indexed import CompiledPlan
from engine.backend.indexed import decisions as planned_decisions
from engine.backend.indexed import evictions as planned_evictions
from engine.backend.indexes import Batch, FactIndex, hashable, key_values
from engine.backend.protocol import Decision, OneByOne, place_each
from engine.compile import ir
from engine.compile.encoding import BATCHED
from engine.compile.program import CompiledProgram

_SIDS = itertools.count(1)
# the most parts' values a session keeps for sharing between batches (PlannedSession._batch): a fleet's batches
# have far fewer distinct lists of clusters
_KEYED_KEPT = 20_000


class PlannedProgram:
    """A compiled program whose rules with a join plan the planner evaluates; the others (none, on the shipped
    examples and the benchmark fleets) are registered with durable-rules once (``engine``: None when there are
    none). Facts of a type no rule matches are kept by the session and reach neither engine."""

    def __init__(self, compiled: CompiledProgram) -> None:
        self.compiled = compiled
        rules = compiled.rules
        self.plans: dict[int, CompiledPlan] = {
            i: CompiledPlan(p, rules[i], i) for i, p in enumerate(compiled.plans) if p is not None
        }
        in_engine = [i for i in range(len(rules)) if i not in self.plans]
        self.durable = DurableProgram(compiled, in_engine) if in_engine else None
        # the fact types durable-rules must see, and those the plans read
        self.durable_types = self.durable.durable_types if self.durable is not None else frozenset()
        self.planned_types = frozenset(p.fact_type for i in self.plans for p in rules[i].patterns)
        # the plans by the type of fact they are anchored on, and the fact types each anchor type's plans read
        # (the plans of rules that evict are asked for all their matches at once: ``evicting``)
        self.anchored: dict[str, list[CompiledPlan]] = defaultdict(list)
        self.evicting: tuple[CompiledPlan, ...] = tuple(p for p in self.plans.values() if p.plan.evicts)
        # the same plans, those whose anchor condition tests a property for equality with a constant (a policy's
        # own rules: scope.policy == "NS/NAME") by that property's value, so that an anchor meets only the plans
        # it can match, not every policy's (``plans_for``)
        self._open: dict[str, list[CompiledPlan]] = defaultdict(list)
        self._by_value: dict[str, dict[str, dict[Any, list[CompiledPlan]]]] = defaultdict(dict)
        for compiled_plan in self.plans.values():
            if not compiled_plan.plan.evicts:
                anchor_type = compiled_plan.plan.anchor_type
                self.anchored[anchor_type].append(compiled_plan)
                equal = _equality(compiled_plan.plan.anchor_cond)
                if equal is None:
                    self._open[anchor_type].append(compiled_plan)
                else:
                    by_prop = self._by_value[anchor_type].setdefault(equal[0], {})
                    by_prop.setdefault(equal[1], []).append(compiled_plan)
        # fact type → the planned rules that read it (their answers are stale when one of its facts changes), those
        # that evict apart (their evictions, all of a rule's at once, are all that is kept of them)
        self.readers: dict[str, tuple[int, ...]] = defaultdict(tuple)
        self.evict_readers: dict[str, tuple[int, ...]] = defaultdict(tuple)
        # (planned rule, fact type) → the keys it looks the type's facts up by, and the anchor's values for them
        # (JoinPlan.keyed): a change of such a fact makes stale only the answers of the anchors with its values
        self.keyed: dict[tuple[int, str], tuple[tuple[str, ...], tuple[Any, ...]]] = {}
        # the fact types some plans read as their anchor alone: a fact of one changes no other anchor's answer, so
        # its change counts once for the type (PlannedSession.revision), not once for each of those plans (a
        # control plane's 2,000 policies each have rules anchored on their policy's scope fact)
        self.anchor_only: set[str] = set()
        for i, compiled_plan in self.plans.items():
            plan = compiled_plan.plan
            for fact_type in plan.reads:
                if (
                    not plan.evicts
                    and fact_type == plan.anchor_type
                    and all(s.fact_type != fact_type for s in plan.steps)
                ):
                    self.anchor_only.add(fact_type)
                    continue
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

    def session(self, explained: bool = True) -> PlannedSession:
        return PlannedSession(self, explained)

    def plans_for(self, anchor: Mapping[str, Any]) -> Sequence[CompiledPlan]:
        """The plans anchored on the anchor's type that it may meet the anchor condition of, in the order of their
        rules: those whose condition tests a property for equality only where the anchor has that value."""
        anchor_type = anchor["t"]
        by_value = self._by_value.get(anchor_type)
        if not by_value:
            return self.anchored.get(anchor_type, ())
        found = list(self._open.get(anchor_type, ()))
        for prop, plans in by_value.items():
            value = anchor.get(prop, _NONE)
            with contextlib.suppress(TypeError):  # an unhashable value: equal to none of the constants
                found += plans.get(value, ())
        found.sort(key=lambda p: p.index)
        return found


_NONE = object()


def _equality(cond: ir.Cond) -> tuple[str, Any] | None:
    """A property the condition requires equal to a constant, and that constant (a string or number)."""
    if isinstance(cond, ir.Test) and cond.op == "==" and isinstance(cond.operand, (str, int)):
        return cond.prop, cond.operand
    if isinstance(cond, ir.AllOf):
        return next((found for c in cond.items if (found := _equality(c)) is not None), None)
    return None


AnswerKey = str | tuple[str, str]  # an anchor's id, or (its id, the name of the binding asking: ``asking``)


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
            alike[_decision_key(d)].append(d)
    if not alike:
        return tuple(made)
    out = tuple((found.pop() if (found := alike.get(_decision_key(d))) else d) if not d.group else d for d in made)
    # every decision the one it was, in the same order: the answer it was, that very object (a shared result made
    # of it stands: a scenario's taint taken back)
    return before if len(out) == len(before) and all(a is b for a, b in zip(out, before, strict=True)) else out


def _decision_key(d: Decision) -> tuple[Any, ...]:
    return (d.rule, d.binding, d.cluster, d.message, d.weight, d.kind, d.reason, d.matched, d.exempt)


def _as_before(before: Batch | None, common: Mapping[str, Any], parts: Sequence[Mapping[str, Any]]) -> TypeGuard[Batch]:
    """Whether the batch placed before is the one now placed: the same common part, and the same part objects in the
    same order."""
    if before is None or before.common != common:
        return False
    return before.parts is parts or (
        len(before.parts) == len(parts) and all(x is y for x, y in zip(before.parts, parts, strict=True))
    )


class PlannedSession:
    """The facts and decisions of one evaluation (engine.backend.protocol.Session): the planned rules' decisions
    made when asked for, on the facts as they are, and kept until a fact they could depend on changes; the other
    rules' from the durable-rules session ``engine`` (None: no rule needs it)."""

    def __init__(self, program: PlannedProgram, explained: bool = True) -> None:
        self.program = program
        self.explained = explained  # decisions name every match they stand for (for explanations)
        self.sid = f"p{next(_SIDS)}"
        self._ids = itertools.count(1)  # every fact's and batch's, the engine's too: an id is never used twice
        self.durable: DurableSession | None = None
        if program.durable is not None:
            self.durable = program.durable.session(explained, self._ids)
            self.durable.derived_to = self._derived
            self.durable.withdrawn_to = self._dropped
        self._facts: dict[str, dict[str, Any]] = {}
        # explained: the facts retracted, as they were asserted (an explanation of a decision made before names
        # them: a peer's placement it matched, after the peer moved), and each batch id's batches replaced
        self._retired: dict[str, dict[str, Any]] = {}
        self._retired_batches: dict[str, list[Batch]] = defaultdict(list)
        self._revision: dict[str, int] = defaultdict(int)  # binding id → how often its planned decisions changed
        # the facts the join plans read, indexed, and how often they changed (planned decisions are
        # computed when asked for, and kept until a fact they could depend on changes)
        self.index = FactIndex()
        # how often each planned rule's answers were all let go, and the plans whose answers an anchor's revision
        # counts (those whose anchor condition it meets: the others' answer is no match, whatever changes)
        self._epoch: dict[int, int] = defaultdict(int)
        self._anchor_epoch: dict[str, int] = defaultdict(int)  # changes of the facts of each PlannedProgram.anchor_only
        self._counted: dict[str, tuple[int, ...]] = {}
        # (planned rule, fact type keyed: PlannedProgram.keyed) → the anchor's values → the anchors answered so
        self._answered: dict[tuple[int, str], dict[tuple[Any, ...], set[AnswerKey]]] = defaultdict(dict)
        self._answered_types: dict[int, set[str]] = defaultdict(set)  # planned rule → its fact types in _answered
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
        self._batches: dict[str, Batch | OneByOne] = {}
        # without explanations (no fact id is ever shown): each batch's batch before its last change (or retracted),
        # put back when the batch is placed as it was (a sweep's scenario undone) instead of its parts numbered again
        self._previous: dict[str, Batch] = {}
        # id of a batch's parts → those parts and their values found (Batch.keyed), shared by the batches of them
        self._keyed_of: dict[int, tuple[tuple[Mapping[str, Any], ...], dict[tuple[str, ...], frozenset[Any]]]] = {}

    def close(self) -> None:
        if self.durable is not None:
            self.durable.close()

    # ------------------------------------------------------------ what rules decided
    def decisions(self, owner: str, asking: str | None = None) -> Sequence[Decision]:
        found = self.durable.decisions(owner) if self.durable is not None else ()
        planned = [d for part in self._planned_parts(owner, asking) for d in part]
        return [*found, *planned] if planned else found

    def decision_parts(self, owner: str) -> tuple[Sequence[Decision], ...]:
        found = self.durable.decisions(owner) if self.durable is not None else ()
        return (tuple(found) if found else (), *self._planned_parts(owner))

    def revision(self, owner: str) -> int:
        """A number that changes whenever the decisions about ``owner`` may have: the engine's, or a planned rule's
        answer let go (for a change of a fact it reads, of the anchor's key values where the rule looks it up so)."""
        revision = self._revision.get(owner, 0)
        if self.durable is not None:
            revision += self.durable.revision(owner)
        anchor = self._facts.get(owner)
        if anchor is not None:
            revision += self._anchor_epoch.get(anchor["t"], 0)
        counted = self._counted.get(owner)
        if counted is None:
            counted = self._count(owner)
        return revision + sum(self._epoch[i] for i in counted) if counted else revision

    def release(self, owner: str) -> None:
        """The planned rules' answers about ``owner`` let go (made again when asked for: a policy's scope, once its
        bindings are scheduled; a control plane's 2,000 policies held 1.9 M decisions to the end)."""
        anchor = self._facts.get(owner)
        if anchor is None:
            return
        for plan in self.program.plans_for(anchor):
            for answers in (self._planned.get(plan.index), self._stale.get(plan.index)):
                if answers is not None:
                    answers.pop(owner)
            appended = self._appended.get(plan.index)
            if appended is not None:
                appended.pop(owner, None)

    def _count(self, owner: str) -> tuple[int, ...]:
        anchor = self._facts.get(owner)
        if anchor is None:
            return ()
        plans = self.program.plans_for(anchor)
        counted = self._counted[owner] = tuple(p.index for p in plans if ir.holds(p.plan.anchor_cond, anchor, {}))
        return counted

    def _planned_parts(self, owner: str, asking: str | None = None) -> tuple[tuple[Decision, ...], ...]:
        """What each planned rule decides about the binding (or scope) fact ``owner``, on the facts as they are now;
        each rule's answer kept (the same object) until a fact of a type that rule reads changes. ``asking``: the
        decisions exempt for the binding so named may be left out (Session.decisions), an answer of its own."""
        anchor = self._facts.get(owner)
        if anchor is None:
            return ()
        out = []
        for plan in self.program.plans_for(anchor):
            answers = self._planned.get(plan.index)
            if answers is None:
                answers = self._planned[plan.index] = _Answers()
            asking_here = asking if plan.asking else None
            key: AnswerKey = owner if asking_here is None else (owner, asking_here)
            found = answers.get(key)
            added = self._appended[plan.index].pop(key, None) if plan.index in self._appended else None
            if found is not None and added:
                grown = list(found)
                for batch in added:
                    planned_decisions(plan, anchor, self.index, grown, self.explained, asking_here, batch)
                found = tuple(grown)
                answers.put(key, found)
            if found is None:
                made: list[Decision] = []
                planned_decisions(plan, anchor, self.index, made, self.explained, asking_here)
                before = self._stale[plan.index].pop(key, None)
                found = _reuse(before, made) if before else tuple(made)
                answers.put(key, found)
                for fact_type, (_, values) in self.program.keyed_by_plan.get(plan.index, ()):
                    at = tuple(hashable(anchor.get(v.prop) if isinstance(v, ir.Ref) else v) for v in values)
                    self._answered[(plan.index, fact_type)].setdefault(at, set()).add(key)
                    self._answered_types[plan.index].add(fact_type)
            out.append(found)
        return tuple(out)

    def _changed(self, fact_type: str, fact: Mapping[str, Any], added: Batch | None = None) -> None:
        """``fact`` (or a batch's common part), of a type the plans read, changed: the answers of the rules that read
        its type are stale; of a rule that looks the type up by the anchor's values, those of the anchors with the
        fact's values only. ``added``: the change is that batch added (``fact`` its common part), which a rule that
        appends (CompiledPlan.appends) appends its matches of to the anchors' answers when they are next asked for."""
        for index in self.program.evict_readers.get(fact_type, ()):
            self._evicted.pop(index, None)
        if fact_type in self.program.anchor_only:
            self._anchor_epoch[fact_type] += 1
        for index in self.program.readers.get(fact_type, ()):
            keyed = self.program.keyed.get((index, fact_type))
            values = key_values(fact, keyed[0]) if keyed is not None else None
            if values is None:  # every answer
                self._appended.pop(index, None)
                dropped = self._planned.pop(index, None)
                if dropped:
                    self._stale[index] = dropped
                self._epoch[index] += 1
                for answered_type in self._answered_types.pop(index, ()):
                    self._answered.pop((index, answered_type), None)
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
        return (*self.durable.evictions(), *planned) if self.durable is not None else tuple(planned)

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
        return self.durable.derivation(fact_id) if self.durable is not None else None

    # ------------------------------------------------------------ facts
    def assert_fact(self, fact_type: str, props: Mapping[str, Any]) -> str:
        """Assert a fact (and then what the engine's rules derive from it); returns its id."""
        if self.durable is not None and fact_type in self.program.durable_types:
            fact_id = self.durable.assert_fact(fact_type, props)  # what it derives comes back first (_derived)
        else:
            fact_id = f"{fact_type[:2]}{next(self._ids)}"
        self._add(fact_type, fact_id, {**props, "id": fact_id, "t": fact_type, "sid": self.sid})
        return fact_id

    def _add(self, fact_type: str, fact_id: str, fact: dict[str, Any]) -> None:
        self._facts[fact_id] = fact
        if fact_type in self.program.planned_types:
            self.index.add(fact_type, fact_id, fact)
            self._changed(fact_type, fact)

    def _derived(self, fact_id: str, fact: Mapping[str, Any]) -> None:
        """A fact the engine's rules derived: the plans may read it, and explanations name it."""
        self._add(str(fact["t"]), fact_id, dict(fact))

    def _dropped(self, fact_id: str) -> None:
        """A fact the engine retracted itself (a derived fact whose grounds went): forgotten here too."""
        fact = self._facts.pop(fact_id, None)
        if fact is not None:
            self._forget(fact_id, fact)

    def place(
        self, batch_id: str | None, fact_type: str, common: Mapping[str, Any], parts: Sequence[Mapping[str, Any]]
    ) -> str:
        """Make the facts of the batch ``batch_id`` (None: a new batch) ``common | part`` for each of ``parts``;
        returns the batch's id (``retract`` retracts its facts). A type the plans read in batches (encoding.BATCHED:
        placements) is kept whole while no engine rule reads it (the plans make its facts as they visit them);
        any other is asserted one by one, those alike staying asserted (a binding's members, tasks, taints)."""
        old = self._batches.get(batch_id) if batch_id is not None else None
        if fact_type in BATCHED and fact_type not in self.program.durable_types:
            return self._place_batch(batch_id, old, fact_type, {**common, "t": fact_type, "sid": self.sid}, parts)
        one_by_one = old if isinstance(old, tuple) else None
        made = place_each(self, one_by_one, fact_type, common, parts)
        batch_id = batch_id if batch_id is not None else f"{fact_type[:2]}{next(self._ids)}"  # after its facts'
        self._batches[batch_id] = made
        return batch_id

    def _place_batch(
        self,
        batch_id: str | None,
        old: Batch | OneByOne | None,
        fact_type: str,
        whole: dict[str, Any],
        parts: Sequence[Mapping[str, Any]],
    ) -> str:
        """``place`` for a batch kept whole. The batch placed before with the same common part is replaced where
        its parts changed: its facts alike (an equal part) keep their ids, as facts asserted one by one stay
        asserted; else the old batch is retracted and a new one added."""
        replacing = old if isinstance(old, Batch) and old.common == whole else None
        if replacing is not None:
            if replacing.parts is parts or (
                len(replacing.parts) == len(parts)
                and all(a is b or a == b for a, b in zip(replacing.parts, parts, strict=True))
            ):
                return replacing.id
            before = self._previous.get(replacing.id) if not self.explained else None
        else:
            before = self._previous.pop(batch_id, None) if batch_id is not None and old is None else None
            if batch_id is not None:
                self.retract(batch_id)
        if _as_before(before, whole, parts):
            batch = before  # placed as it was before its last change (or when retracted): that very batch again
        else:
            numbers: Sequence[int]
            if replacing is None:
                new_id, numbers, unused = f"{fact_type[:2]}{next(self._ids)}", range(len(parts)), len(parts)
            else:  # the old facts' numbers for the parts alike, fresh ones for the others
                fresh = itertools.count(replacing.fresh)
                new_id, numbers = replacing.id, tuple(self._numbers(replacing, parts, fresh))
                unused = next(fresh)
            batch = self._batch(new_id, whole, parts, numbers, unused)
        self._batches[batch.id] = batch
        if replacing is not None:
            if self.explained:
                self._retired_batches[replacing.id].append(replacing)
            else:
                self._previous[replacing.id] = replacing
        if fact_type in self.program.planned_types:
            if replacing is not None:  # what ``retract`` and adding the new batch do, where the parts changed
                self.index.replace_batch(fact_type, replacing, batch)
                self._changed(fact_type, batch.common)
            else:
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

    def retract(self, fact_id: str) -> None:
        """Retract a fact (or a batch), and withdraw every decision and derived fact that depended on it."""
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
        self._forget(fact_id, fact)
        if self.durable is not None and fact["t"] in self.program.durable_types:
            self.durable.retract(fact_id)  # what it withdraws of what was derived comes back (_dropped)

    def _forget(self, fact_id: str, fact: dict[str, Any]) -> None:
        if self.explained:
            self._retired[fact_id] = fact
        fact_type = fact["t"]
        if fact_type in self.program.planned_types:
            self.index.remove(fact_type, fact_id, fact)
            self._changed(fact_type, fact)
