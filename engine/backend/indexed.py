"""Indexed joins: the planned rules (engine.compile.joins) evaluated over hash indexes of the facts
(engine.backend.indexes).

The facts of a session are kept by type; an index on some properties of a type is built the first time
a plan looks facts up by them, and kept up to date as facts come and go. A planned rule's decisions for
one binding are found when asked for: from the binding, each step looks up the facts whose keys equal
the values already matched, checks each against the pattern's whole condition, and for a `not` step
requires that none is left; each complete match makes the decisions of the rule's actions. Each planned
rule is compiled to a Python function that does exactly that (``CompiledPlan``). As in durable-rules,
the patterns of one match are filled by distinct facts (a fact matched by one pattern neither fills
another nor counts against a `not`).

"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterable
from typing import Any

from engine.backend.indexes import (
    _MISSING,
    Batch,
    BatchIndex,
    Fact,
    FactIndex,
    Index,
    Nested,
    Peers,
    hashable,
    key_values,
)
from engine.backend.protocol import NO_DEPS, Decision, DecisionKind
from engine.compile import ir
from engine.compile.encoding import BATCHED, in_part
from engine.compile.joins import PEER_FACTS, JoinPlan, Operand, Step

# the comparisons generated code calls where it cannot inline them (with another fact's property, ordering): the
# language's own (engine.compile.ir.COMPARE), so that both engines compare alike
_CHECK = ir.COMPARE


Matcher = Callable[
    [Fact, list[Index], list[Nested], list[BatchIndex], "FactIndex", list[Decision], bool, "str | None"], None
]


class CompiledPlan:
    """A planned rule as a Python function: its plan's steps as nested loops over index lookups, its
    conditions as expressions (engine.compile.ir.holds' semantics), and its actions as the decisions each
    match makes, generated when the program is built.

    A generic interpreter of plans spent most of a binding's join time on itself (a generator frame per
    step, the lookup's key tuple built by inspecting each operand, every condition a chain of closures,
    each match's decisions built by inspecting the actions). The generated code does exactly the plan and
    the actions; its source is kept (``source``) for tests and debugging."""

    def __init__(self, plan: JoinPlan, rule: ir.Rule, index: int) -> None:
        emitter = _Emitter(plan, rule, index)
        self.plan = plan
        self.index = index  # the rule's index in the program
        self.source = emitter.source()
        self.lookups = tuple(emitter.lookups)
        self.nested = tuple(emitter.nested)
        self.batched = tuple(emitter.batched)
        self.asking = emitter.asking is not None  # it may leave out the matches a binding's name exempts
        scope: dict[str, Any] = {
            "M": _MISSING,
            "C": _CHECK,
            "H": hashable,
            "K": tuple(emitter.constants),
            "D": Decision,
            "P": Peers,
            "I": sys.intern,  # a rule's messages repeat across bindings: one string each
            "NO_DEPS": NO_DEPS,
            "REJECT": DecisionKind.REJECT,
            "PREFER": DecisionKind.PREFER,
            "EVICT": DecisionKind.EVICT,
        }
        exec(compile(self.source, f"<join plan of {rule.name}>", "exec"), scope)  # source from the plan alone
        self._match: Matcher = scope["match"]
        first = plan.steps[0] if plan.steps else None
        # the type a match needs at least one fact of (the first pattern, when it is not a negation)
        self.needs = first.fact_type if first is not None and not first.negated else None
        # (type, its batch index's place in B) when a batch of that type added makes the anchors' matches those they
        # had and then the new batch's, in that order (``decisions``' ``added``): the type's one pattern is the
        # outermost loop, over batches looked up by their common part (a new batch goes last in its bucket) and
        # neither negated nor grouped (a group scope's anti-affinity answer, as its members are placed in turn)
        self.appends: tuple[str, int] | None = None
        if (
            first is not None
            and not plan.evicts
            and not first.negated
            and first.group_by is None
            and (first.fact_type, first.keys) in self.batched
            and not in_part(first.keys[0])
            and sum(s.fact_type == first.fact_type for s in plan.steps) == 1
            and first.fact_type != plan.anchor_type
        ):
            self.appends = (first.fact_type, self.batched.index((first.fact_type, first.keys)))


def decisions(
    plan: CompiledPlan,
    anchor: Fact,
    facts: FactIndex,
    out: list[Decision],
    explained: bool = True,
    asking: str | None = None,
    added: Batch | None = None,
) -> None:
    """Append to ``out`` the decisions of every match of the planned rule in which ``anchor`` fills its
    binding pattern, as the engine's action would make them (engine.backend.durable); at a grouped step
    (Step.group_by), one decision per group, standing for its matches (Decision.group). As in
    durable-rules, the patterns of one match are filled by distinct facts (a fact matched by one pattern
    neither fills another nor counts against a `not`). ``explained``: a grouped decision names every match it
    stands for (Decision.group); without, only their count is kept (in its weight), which a group of peers
    counted from the nested index makes without visiting them. ``asking``: the name of a binding whose exempt
    matches (a ``("name", …)`` exemption of a lifted rule: its own placements) may be left out. ``added``: only the
    matches in which that batch, the last added of its type, fills its pattern (``CompiledPlan.appends``)."""
    if plan.needs is not None and not (facts.by_type.get(plan.needs) or facts.batches.get(plan.needs)):
        return  # no fact of the first pattern's type at all (no eviction task, no missing API)
    batched = facts.batch_indexes(plan.batched) if plan.batched else []
    if added is not None:
        assert plan.appends is not None
        at = plan.appends[1]
        values = key_values(added.common, plan.batched[at][1])
        batched = [*batched[:at], {values: {added.id: added}} if values is not None else {}, *batched[at + 1 :]]
    indexes, nested = facts.indexes(plan.lookups), facts.nested(plan.nested)
    plan._match(anchor, indexes, nested, batched, facts, out, explained, asking)


def evictions(plan: CompiledPlan, facts: FactIndex, out: list[Decision], explained: bool = True) -> None:
    """Append to ``out`` the decisions of every match of the planned rule that evicts (JoinPlan.evicts), from each
    fact of its anchor pattern: those with the anchor's literal values, looked up in an index (the NoExecute taints
    of the fleet, not every taint), else every fact of the type."""
    anchor = plan.plan
    if anchor.anchor_keys:
        values = tuple(hashable(v) for v in anchor.anchor_values)
        found = facts.indexes(((anchor.anchor_type, anchor.anchor_keys),))[0].get(values)
        anchors: Iterable[Fact] = list(found.values()) if found else ()
    else:
        anchors = list(facts.all_of(anchor.anchor_type))
    for fact in anchors:
        decisions(plan, fact, facts, out, explained)


class _Emitter:
    """The Python source of one planned rule: ``match(A, X, N, B, S, out, E)`` appends to ``out`` the decisions of
    every match of the anchor fact ``A``, looking facts up in the indexes ``X`` (one per step with keys, in
    ``lookups``' order), the nested indexes ``N`` (of counted steps, in ``nested``' order), the indexes of batches
    ``B`` (of steps over a batched type looked up by its common part, in ``batched``' order) and the FactIndex
    ``S`` (every fact of a type); ``E``: decisions name their matches (explanations); ``W``: the name of a binding
    whose matches a ``("name", …)`` exemption lifts, left out (None: none)."""

    def __init__(self, plan: JoinPlan, rule: ir.Rule, index: int) -> None:
        self.plan, self.rule, self.index = plan, rule, index
        self.lines: list[str] = []
        self.constants: list[Any] = []  # literals other than str, int and bool: K[i]
        self.lookups: list[tuple[str, tuple[str, ...]]] = []  # X[i]: the index on (type, keys)
        self.nested: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []  # N[i]: on (type, keys, group_by)
        self.batched: list[tuple[str, tuple[str, ...]]] = []  # B[i]: the index of batches on (type, keys)
        self.var = {plan.anchor: "A"}  # alias → the local that holds its fact
        # the property whose value a binding's name exempts (engine.compile.lift): matches with W there are left out
        self.asking = next(
            ((v.alias, v.prop) for name, v in rule.exempt if name == "name" and isinstance(v, ir.Ref)), None
        )
        self.types = {plan.anchor: plan.anchor_type}
        # a batch's fact visited without being made (``_over_batches``): its local → the locals of its batch's common
        # part and of its part, and the expression of its id
        self.views: dict[str, tuple[str, str, str]] = {}

    def source(self) -> str:
        self.lines = ["def match(A, X, N, B, S, out, E, W):"]
        self._line(1, f"if not {self._cond(self.plan.anchor_cond, 'A')}:")
        self._line(2, "return")
        # what stays the same for every match of the anchor is computed once, not per match: its pair of
        # the matched facts, and the words of an action that read only the anchor
        self._line(1, f"p_A = ({self.plan.anchor!r}, A['id']) if E else None")
        self.hoisted: dict[int, str] = {}
        for i, action in enumerate(self.rule.actions):
            if isinstance(action, ir.Reject) and self._anchor_only(action.message):
                self._line(1, f"w{i} = I({self._message(action.message)})")
                self.hoisted[i] = f"w{i}"
        self._steps(0, 1, "return", None)
        return "\n".join(self.lines) + "\n"

    def _line(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def _literal(self, value: Any) -> str:
        if type(value) in (str, int, bool):
            return repr(value)
        self.constants.append(value)
        return f"K[{len(self.constants) - 1}]"

    def _operand(self, operand: Operand) -> str:
        if isinstance(operand, ir.Ref):
            return self._get(self.var[operand.alias], operand.prop)
        return self._literal(operand)

    def _get(self, fact: str, prop: str, default: str = "M") -> str:
        """The expression of ``fact.get(prop, default)`` for the fact in the local ``fact`` (made or a view)."""
        view = self.views.get(fact)
        if view is None:
            return f"{fact}.get({prop!r}, {default})"
        return view[2] if prop == "id" else f"{view[1] if in_part(prop) else view[0]}.get({prop!r}, {default})"

    def _item(self, fact: str, prop: str) -> str:
        """The expression of ``fact[prop]``."""
        view = self.views.get(fact)
        if view is None:
            return f"{fact}[{prop!r}]"
        return view[2] if prop == "id" else f"{view[1] if in_part(prop) else view[0]}[{prop!r}]"

    def _has(self, fact: str, prop: str) -> str:
        """The expression of ``prop in fact``."""
        view = self.views.get(fact)
        if view is None:
            return f"{prop!r} in {fact}"
        return "True" if prop == "id" else f"{prop!r} in {view[1] if in_part(prop) else view[0]}"

    def _cond(self, cond: ir.Cond, fact: str) -> str:
        """``cond`` on the fact in the local ``fact``, as a Python expression."""
        if isinstance(cond, ir.Present):
            return f"({self._has(fact, cond.prop)})" if cond.present else f"(not ({self._has(fact, cond.prop)}))"
        if isinstance(cond, ir.Test):
            left = self._get(fact, cond.prop)
            if not isinstance(cond.operand, ir.Ref) and cond.op == "==":
                return f"({left} == {self._literal(cond.operand)})"  # the missing marker equals no literal
            if not isinstance(cond.operand, ir.Ref) and cond.op == "!=":
                return f"({left} not in (M, {self._literal(cond.operand)}))"
            return f"C[{cond.op!r}]({left}, {self._operand(cond.operand)})"
        if not cond.items:
            return "True" if isinstance(cond, ir.AllOf) else "False"
        joiner = " and " if isinstance(cond, ir.AllOf) else " or "
        return "(" + joiner.join(self._cond(c, fact) for c in cond.items) + ")"

    def _key(self, step: Step, depth: int, exit: str) -> str:
        """Emit the values of the step's keys; returns the expression of their tuple."""
        return f"({', '.join(self._key_values(step, depth, exit))},)"

    def _key_values(self, step: Step, depth: int, exit: str) -> list[str]:
        """Emit the values of the step's keys; returns their expressions."""
        values = []
        for i, value in enumerate(step.values):
            if isinstance(value, ir.Ref):
                name = f"k{depth}_{i}"
                self._line(depth, f"{name} = {self._operand(value)}")
                if not step.negated:
                    self._line(depth, f"if {name} is M:")
                    self._line(depth + 1, exit)
                values.append(f"({name} if {name}.__class__ is not list else tuple({name}))")
            else:
                values.append(self._literal(hashable(value)))
        return values

    def _candidates(self, step: Step, depth: int, exit: str) -> str:
        """Emit the step's lookup; returns the expression of its candidates. ``exit``: the statement that
        ends this match when a key's value is absent (an equality with it never holds; for a `not`, the
        lookup of the missing marker finds nothing, which is what it should find)."""
        if step.choices and not self._batched(step):
            return self._chosen(step, depth)
        if not step.keys:
            return f"S.all_of({step.fact_type!r})"
        key = self._key(step, depth, exit)
        if self._batched(step):
            # looked up among the batches by their common part, each batch's facts made as they are visited
            self.batched.append((step.fact_type, step.keys))
            self._line(depth, f"b{depth} = B[{len(self.batched) - 1}].get({key})")
            by_parts = in_part(step.keys[0])
            # looked up by its parts' values (a cluster's placements): such a bucket is read for its batches' ids (a
            # batch replaced by its changed self moves only where its parts did, the batch under the others left as
            # it was: FactIndex.replace_batch), and of each batch, the facts of those parts are made
            found = f"(S.batches[{step.fact_type!r}][_i] for _i in b{depth})" if by_parts else f"b{depth}.values()"
            asking = self._asking_on_batches(step)
            if asking is not None:  # a batch of W's own is passed over whole
                found = f"(_g for _g in {found} if _g.common.get({asking!r}, M) != W)"
            made = f"_g.having({step.keys!r}, {key})" if by_parts else "_g.members()"
            return f"((_f for _g in {found} for _f in {made}) if b{depth} is not None else ())"
        self.lookups.append((step.fact_type, step.keys))
        self._line(depth, f"b{depth} = X[{len(self.lookups) - 1}].get({key})")
        return f"(b{depth}.values() if b{depth} is not None else ())"

    def _chosen(self, step: Step, depth: int) -> str:
        """Emit the lookups of a `not` step with choices (joins.Step): one per combination of their operands, in
        an index on the keys and the chosen properties; returns the expression of the candidates they find (a
        key value that is absent looks up the missing marker, which no fact has)."""
        keys = self._key_values(step, depth, "continue")  # a `not`'s: no exit is emitted
        options = []
        for i, (_, operands) in enumerate(step.choices):
            names = []
            for j, operand in enumerate(operands):
                if isinstance(operand, ir.Ref):
                    name = f"c{depth}_{i}_{j}"
                    self._line(depth, f"{name} = {self._operand(operand)}")
                    names.append(f"({name} if {name}.__class__ is not list else tuple({name}))")
                else:
                    names.append(self._literal(hashable(operand)))
            options.append(names)
        lookups = [f"({', '.join([*keys, *combination])},)" for combination in itertools.product(*options)]
        self.lookups.append((step.fact_type, (*step.keys, *(prop for prop, _ in step.choices))))
        self._line(depth, f"x{depth} = X[{len(self.lookups) - 1}]")
        found = f"(x{depth}.get(_k) or {{}}).values()"
        return f"(_f for _k in dict.fromkeys(({', '.join(lookups)},)) for _f in {found})"

    @staticmethod
    def _batched(step: Step) -> bool:
        """Whether the step looks its facts up among batches, by their common part or by their parts (keys of one
        or the other only; a lookup by both makes the facts, in an index of its own)."""
        parts = [in_part(k) for k in step.keys]
        return bool(step.keys) and step.fact_type in BATCHED and (all(parts) or not any(parts))

    def _asking_on(self, step: Step) -> str | None:
        """The property of the step's facts that W's exemption reads, if it reads the step's facts."""
        return self.asking[1] if self.asking is not None and self.asking[0] == step.alias else None

    def _asking_on_batches(self, step: Step) -> str | None:
        """The property W's exemption reads, if it reads the common part of the batches the step looks up (a
        batch of W's own is then passed over whole, one test per batch)."""
        asking = self._asking_on(step)
        return asking if asking is not None and self._batched(step) and not in_part(asking) else None

    def _skip(self, depth: int, step: Step, fact: str) -> None:
        """Emit the test that passes over a candidate not filling the step: a fact already matched (of the
        same type), or one that fails the condition the lookup left to check."""
        cond = step.residual if step.keys else step.cond
        # a batch's facts are made anew at each visit: the same fact is the same id
        tests = [
            f"{self._item(fact, 'id')} == {self._item(var, 'id')}" if step.fact_type in BATCHED else f"{fact} is {var}"
            for alias, var in self.var.items()
            if self.types[alias] == step.fact_type
        ]
        if cond != ir.TRUE:
            tests.append(f"not {self._cond(cond, fact)}")
        asking = self._asking_on(step)
        if asking is not None and not step.negated and self._asking_on_batches(step) is None:
            tests.append(f"{self._get(fact, asking)} == W")  # never, with W None: no fact has None
        if tests:
            self._line(depth, f"if {' or '.join(tests)}:")
            self._line(depth + 1, "continue")

    def _steps(self, at: int, depth: int, exit: str, group: tuple[str, str] | None) -> None:
        """Emit the steps from ``at`` on; ``group``: the expressions of the matches a grouped step's fact stands
        for and of their count, once one is passed."""
        steps = self.plan.steps
        if at == len(steps):
            self._decide(depth, group)
            return
        step, fact = steps[at], f"f{at}"
        if step.group_by is not None and self._counted(at, step, depth, exit):
            return
        if not step.negated and step.group_by is None and self._batched(step) and not in_part(step.keys[0]):
            self._over_batches(at, step, depth, exit, group)
            return
        candidates = self._candidates(step, depth, exit)
        if step.negated:  # the match goes on when no candidate fills the step
            self._line(depth, f"for {fact} in {candidates}:")
            self._skip(depth + 1, step, fact)
            self._line(depth + 1, "break")
            self._line(depth, "else:")
            self._steps(at + 1, depth + 1, exit, group)
            return
        if step.group_by is not None:
            # preferences are sums: the facts by the values later steps read, each group continued once
            # with its first fact standing for all (later steps read nothing else of it)
            keys = "".join(f"H({fact}.get({k!r}, M)), " for k in step.group_by)
            self._line(depth, f"g{at} = {{}}")
            self._line(depth, f"for {fact} in {candidates}:")
            self._skip(depth + 1, step, fact)
            self._line(depth + 1, f"g{at}.setdefault(({keys}), []).append({fact})")
            self._line(depth, f"for m{at} in g{at}.values():")
            self._line(depth + 1, f"{fact} = m{at}[0]")
            self._line(depth + 1, f"q{at} = tuple(({step.alias!r}, m['id']) for m in m{at})")
            self._bind(step, fact, depth + 1)
            self._steps(at + 1, depth + 1, "continue", (f"q{at}", f"len(q{at})"))
            return
        self._line(depth, f"for {fact} in {candidates}:")
        self._skip(depth + 1, step, fact)
        self._bind(step, fact, depth + 1)
        self._steps(at + 1, depth + 1, "continue", group)

    def _over_batches(self, at: int, step: Step, depth: int, exit: str, group: tuple[str, str] | None) -> None:
        """Emit a step over the batches its lookup by their common part finds, each batch's facts visited as views
        (its common part, the part, the id) instead of made: a group's anti-affinity decisions are one per peer's
        placement, and making each placement's fact was a fifth of their cost."""
        key = self._key(step, depth, exit)
        self.batched.append((step.fact_type, step.keys))
        fact = f"f{at}"
        batch, common, part, number, prefix = (f"{name}{at}" for name in ("bg", "bc", "bp", "bn", "bx"))
        self._line(depth, f"b{depth} = B[{len(self.batched) - 1}].get({key})")
        self._line(depth, f"for {batch} in (b{depth}.values() if b{depth} is not None else ()):")
        asking = self._asking_on_batches(step)
        if asking is not None:  # a batch of W's own is passed over whole
            self._line(depth + 1, f"if {batch}.common.get({asking!r}, M) == W:")
            self._line(depth + 2, "continue")
        self._line(depth + 1, f"{common}, {prefix} = {batch}.common, {batch}.id + '.'")
        self._line(depth + 1, f"for {part}, {number} in zip({batch}.parts, {batch}.numbers):")
        self.views[fact] = (common, part, f"({prefix} + str({number}))")
        self._skip(depth + 2, step, fact)
        self._bind(step, fact, depth + 2)
        self._steps(at + 1, depth + 2, "continue", group)

    def _counted(self, at: int, step: Step, depth: int, exit: str) -> bool:
        """Emit a grouped step over the peers of the anchor as counts from the nested index, when that is the
        same as visiting them: its candidates are the facts of a peer type (whose ``binding`` the encoding
        always sets) with the step's keys, less the anchor's own (``binding != anchor.name``, the one test
        left after the lookup). Each group's count is its size less the anchor's own facts in it (an index
        lookup), so a binding's preference costs its groups, not its peers' placements: 1,000 workloads of
        one group on 50 clusters were quadratic (issue 28). Returns False (nothing emitted) otherwise."""
        anchor = ir.Ref(self.plan.anchor, "name")
        own = ir.Test("!=", "binding", anchor)
        same_type = any(self.types[a] == step.fact_type for a in self.var)
        if step.fact_type not in PEER_FACTS or not step.keys or step.residual != own or same_type:
            return False
        assert step.group_by is not None
        fact = f"f{at}"
        key = self._key(step, depth, exit)
        self.nested.append((step.fact_type, step.keys, step.group_by))
        self.lookups.append((step.fact_type, (*step.keys, *step.group_by, "binding")))
        mine = f"{key[:-1]} *g{at}, v{at})"  # the key, the group's values, the anchor's name
        self._line(depth, f"v{at} = A.get('name', M)")
        self._line(depth, f"if v{at} is M:")
        self._line(depth + 1, exit)
        self._line(depth, f"n{at} = N[{len(self.nested) - 1}].get({key})")
        self._line(depth, f"for g{at}, m{at} in (n{at}.items() if n{at} is not None else ()):")
        self._line(depth + 1, f"o{at} = X[{len(self.lookups) - 1}].get({mine})")
        self._line(depth + 1, f"c{at} = len(m{at}.facts) - (len(o{at}) if o{at} is not None else 0)")
        self._line(depth + 1, f"if c{at} <= 0:")
        self._line(depth + 2, "continue")
        self._line(depth + 1, f"for {fact} in m{at}.facts.values():  # the first peer stands for the group")
        self._line(depth + 2, f"if {fact}.get('binding', M) != v{at}:")
        self._line(depth + 3, "break")
        self._line(depth + 1, f"q{at} = P({step.alias!r}, m{at}, S.seq, S.gone, v{at}, c{at}) if E else ()")
        self._bind(step, fact, depth + 1)
        self._steps(at + 1, depth + 1, "continue", (f"q{at}", f"c{at}"))
        return True

    def _decide(self, depth: int, group: tuple[str, str] | None) -> None:
        """Emit the decisions of one match: each action's, as engine.backend.durable's ``_decide`` makes
        them from the matched facts (the positive patterns' aliases, sorted: they are known here)."""
        aliases = sorted(self.var)
        self._line(depth, f"matched = ({''.join(f'p_{self.var[a]}, ' for a in aliases)}) if E else ()")
        exempt = "".join(f"({name!r}, {self._exempted(v)}), " for name, v in self.rule.exempt)
        for i, action in enumerate(self.rule.actions):
            if not isinstance(action, (ir.Reject, ir.Prefer, ir.Evict)):  # plans are made only for these (joins.plan)
                raise AssertionError(f"a planned rule cannot {type(action).__name__.lower()}")
            binding, cluster = self._item(self.var[action.binding], "id"), self._item(self.var[action.cluster], "name")
            if isinstance(action, ir.Evict):
                args = f"I({self._message(action.message)}), 0, EVICT, {action.reason!r}"
            elif isinstance(action, ir.Reject):
                message = self.hoisted.get(i) or f"I({self._message(action.message)})"
                reason = self._message(action.reason) if action.reason is not None else "''"
                args = f"{message}, 0, REJECT, {reason}"
            else:
                weight = f"{action.weight} * {group[1]}" if group is not None else str(action.weight)
                args = f"'', {weight}, PREFER, ''"
            grouped = f", {group[0]}" if group is not None else ""
            self._line(
                depth,
                f"out.append(D({self.index}, NO_DEPS, {binding}, {cluster}, {args}, matched, ({exempt}){grouped}))",
            )

    def _exempted(self, value: Operand) -> str:
        """The expression of an exemption's value: the matched fact's property as text, or the literal's."""
        if isinstance(value, ir.Ref):
            return f"str({self._item(self.var[value.alias], value.prop)})"
        return repr(str(value))

    def _message(self, message: ir.Message) -> str:
        """A message's text as an expression: its parts, each hole the matched fact's property or empty."""
        parts = [
            repr(p) if isinstance(p, str) else f"str({self._get(self.var[p.alias], p.prop, repr(''))})"
            for p in message.parts
        ]
        return " + ".join(parts) if parts else "''"

    def _anchor_only(self, message: ir.Message) -> bool:
        """Whether the message's holes read only the anchor's properties (it is the same for every match)."""
        return all(isinstance(p, str) or p.alias == self.plan.anchor for p in message.parts)

    def _bind(self, step: Step, fact: str, depth: int) -> None:
        """``fact`` fills the step from here on, at ``depth``: its pair of the matched facts made once."""
        self.var[step.alias] = fact
        self.types[step.alias] = step.fact_type
        self._line(depth, f"p_{fact} = ({step.alias!r}, {self._item(fact, 'id')}) if E else None")
