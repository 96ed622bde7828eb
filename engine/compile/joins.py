"""Join plans: the rules whose work grows with the bindings, evaluated as index lookups.

A rule such as rules/workload_anti_affinity.fr reads, for one binding, the placements of the peers of
its namespace and group, and the clusters they are on. Inside durable-rules every placement of every
binding is a fact that meets every binding of its group in the join network, one Python action per
match; at 10,000 bindings that is most of an evaluation (docs/performance.md). Planned here, the same
rule is a chain of lookups: from the binding, placements by ``(namespace, anti_affinity_group)``,
clusters by ``name``, and the `not member` check by ``(owner, field, value)``, evaluated when the
scheduler asks for the binding's decisions.

The rule files stay the definition: a plan is only an order of the rule's own patterns and, for each,
the equality tests that can be looked up in an index; every candidate is still checked against the
pattern's whole condition (engine.compile.ir.holds, durable-rules' semantics). The backend can run the
same rules without plans (the reference mode), and tests compare the two.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.compile import ir

# Fact types of which there is one (or one per target cluster) per binding: a rule that joins them is
# the work that grows with the bindings.
PEER_FACTS = frozenset({"placement", "scheduled"})
Operand = ir.Ref | str | int | bool


@dataclass(frozen=True)
class Step:
    """One pattern of a planned rule: the facts of its type whose ``keys`` equal ``values`` (looked up in
    an index; all of them when there are no keys), each checked against ``cond``."""

    alias: str
    fact_type: str
    negated: bool
    keys: tuple[str, ...]
    values: tuple[Operand, ...]
    cond: ir.Cond
    residual: ir.Cond  # what the index lookup leaves to check: ``cond`` without the key tests
    # of a rule that only prefers: the facts this step matches are grouped by these properties, the only
    # ones later steps read, and each group continues the match once, its weight times the group's size
    group_by: tuple[str, ...] | None = None
    # of a `not`: properties each tested equal to one of several operands (``x.key == "" or x.key == t.key``), so
    # that the facts looked up are those of every combination of them, not every fact of the other keys (a
    # toleration per taint, not every toleration of the policy per taint); ``residual`` still tests them
    choices: tuple[tuple[str, tuple[Operand, ...]], ...] = ()


@dataclass(frozen=True)
class JoinPlan:
    """How to find a rule's matches for one fact of its ``anchor`` pattern (the binding its actions are
    about): the other patterns in the order of ``steps``."""

    anchor: str
    anchor_cond: ir.Cond
    steps: tuple[Step, ...]
    anchor_type: str = "binding"  # or the scope fact of a rule lifted to a scope (engine.compile.lift)
    # of a rule that evicts: the anchor's literal equality tests, by which its facts are looked up (the session
    # evaluates such a rule over every fact of its anchor pattern when asked for evictions, not per binding)
    evicts: bool = False
    anchor_keys: tuple[str, ...] = ()
    anchor_values: tuple[Operand, ...] = ()

    @property
    def reads(self) -> frozenset[str]:
        """The fact types whose changes can change the plan's matches."""
        return frozenset({self.anchor_type, *(s.fact_type for s in self.steps)})

    def keyed(self, fact_type: str) -> tuple[tuple[str, ...], tuple[Operand, ...]] | None:
        """(keys, values) when every step over ``fact_type`` looks its facts up by the same ``keys`` equal to
        ``values``, the anchor's properties or literals: a fact of the type whose keys differ from an anchor's
        values cannot change what the plan finds for that anchor (a placement of another group)."""
        steps = [s for s in self.steps if s.fact_type == fact_type]
        if not steps or fact_type == self.anchor_type:
            return None
        first = steps[0]
        anchored = all(not isinstance(v, ir.Ref) or v.alias == self.anchor for v in first.values)
        if not first.keys or not anchored or any((s.keys, s.values) != (first.keys, first.values) for s in steps):
            return None
        return first.keys, first.values


def _key_tests(cond: ir.Cond, bound: set[str]) -> dict[str, ir.Test]:
    """The top-level equality tests of ``cond`` against a literal or an already matched fact, by property."""
    items = cond.items if isinstance(cond, ir.AllOf) else (cond,)
    out: dict[str, ir.Test] = {}
    for item in items:
        if isinstance(item, ir.Test) and item.op == "==" and item.prop not in out:
            operand = item.operand
            if not isinstance(operand, ir.Ref) or operand.alias in bound:
                out[item.prop] = item
    return out


def _choice_tests(cond: ir.Cond, bound: set[str], taken: set[str]) -> dict[str, tuple[Operand, ...]]:
    """The top-level disjunctions of ``cond`` whose every item is an equality of one property (not among
    ``taken``) with a literal or an already matched fact: the property → its operands."""
    items = cond.items if isinstance(cond, ir.AllOf) else (cond,)
    out: dict[str, tuple[Operand, ...]] = {}
    for item in items:
        if not isinstance(item, ir.AnyOf):
            continue
        tests = [t for t in item.items if isinstance(t, ir.Test) and t.op == "=="]
        props = {t.prop for t in tests}
        if len(tests) != len(item.items) or len(props) != 1 or props & taken or props & set(out):
            continue
        if all(not isinstance(t.operand, ir.Ref) or t.operand.alias in bound for t in tests):
            out[tests[0].prop] = tuple(dict.fromkeys(t.operand for t in tests))
    return out


def _step(pattern: ir.Pattern, bound: set[str]) -> Step:
    """The pattern as a step once ``bound`` aliases are matched: its key tests looked up, the rest checked."""
    tests = _key_tests(pattern.cond, bound)
    keys = sorted(tests)
    items = pattern.cond.items if isinstance(pattern.cond, ir.AllOf) else (pattern.cond,)
    residual = ir.all_of(*(item for item in items if item not in tests.values()))
    operands = tuple(tests[k].operand for k in keys)
    choices = sorted(_choice_tests(pattern.cond, bound, set(keys)).items()) if pattern.negated else []
    return Step(
        pattern.alias,
        pattern.fact_type,
        pattern.negated,
        tuple(keys),
        operands,
        pattern.cond,
        residual,
        None,
        tuple(choices),
    )


def plan(rule: ir.Rule) -> JoinPlan | None:
    """The rule's join plan, when it is work that grows with the bindings and an index can do it.

    Planned: a rule whose actions reject or prefer clusters for one ``binding`` pattern, and that joins
    facts of the binding's peers (placements, scheduled markers: workload affinity and anti-affinity,
    preferred terms, rule files over placements), or whose every other pattern is reached through an
    equality (API enablement, clusters under eviction), and every rule lifted to policy scope (anchored on
    the ``policy_scope`` fact, it scans the clusters once per policy: inside durable-rules each of its
    policies x clusters matches was an action of its own, a second of a 20-policy, 1,000-cluster fleet).
    Planned too: a rule that evicts (evict_plan). Left to the engine: rules that derive facts, and rules that
    would scan every cluster for every binding without joining a peer."""
    if rule.actions and all(isinstance(a, ir.Evict) for a in rule.actions):
        return evict_plan(rule)
    if not rule.actions or not all(isinstance(a, (ir.Reject, ir.Prefer)) for a in rule.actions):
        return None
    owners = {a.binding for a in rule.actions if isinstance(a, (ir.Reject, ir.Prefer))}
    anchors = [p for p in rule.patterns if p.alias in owners]
    if len(owners) != 1 or len(anchors) != 1:
        return None
    anchor = anchors[0]
    anchor_type = rule.scope or "binding"
    if anchor.negated or anchor.fact_type != anchor_type or any(ir.refs(anchor.cond)):
        return None
    steps = _order(rule, anchor)
    if steps is None:
        return None
    positive = [s for s in steps if not s.negated]
    joins_peers = any(s.fact_type in PEER_FACTS for s in positive)
    if not rule.scoped and not joins_peers and not all(s.keys for s in positive):
        return None
    if all(isinstance(a, ir.Prefer) for a in rule.actions):
        steps = _grouped(steps, {a.cluster for a in rule.actions if isinstance(a, ir.Prefer)} | owners)
    return JoinPlan(anchor.alias, anchor.cond, tuple(steps), anchor_type)


def evict_plan(rule: ir.Rule) -> JoinPlan | None:
    """The join plan of a rule whose actions evict (such as rules/taint_manager.fr), when every other pattern is
    reached from one through equalities (index lookups, never a scan).

    Evictions are not asked for per binding: the session finds them all, at each moment failover runs. So the
    plan starts from the pattern with the fewest facts to visit: one tested for a literal (a NoExecute taint) before
    one that is not, a fact of the fleet before a binding, a binding before a peer's placement; among equals, the
    first written. Its facts are looked up by those literals."""
    candidates = [p for p in rule.patterns if not p.negated and not any(ir.refs(p.cond))]
    if not candidates:
        return None

    def cost(p: ir.Pattern) -> tuple[int, int, int]:
        literal = bool(_key_tests(p.cond, set()))
        kind = 2 if p.fact_type in PEER_FACTS else 1 if p.fact_type == "binding" else 0
        return (0 if literal else 1, kind, rule.patterns.index(p))

    anchor = min(candidates, key=cost)
    steps = _order(rule, anchor)
    if steps is None or not all(s.keys for s in steps if not s.negated):
        return None
    first = _step(anchor, set())
    return JoinPlan(anchor.alias, anchor.cond, tuple(steps), anchor.fact_type, True, first.keys, first.values)


def _order(rule: ir.Rule, anchor: ir.Pattern) -> list[Step] | None:
    """The rule's patterns other than ``anchor`` as steps, in an order in which each is looked up by what is
    matched before it; None when there is none."""
    bound = {anchor.alias}
    rest = [p for p in rule.patterns if p is not anchor]
    steps: list[Step] = []
    while rest:
        # a `not` waits for the positive patterns of its type too: a fact they match cannot count against it
        ready = [
            p
            for p in rest
            if all(r.alias in bound for r in ir.refs(p.cond))
            and not (p.negated and any(q.fact_type == p.fact_type and not q.negated for q in rest))
        ]
        if not ready:
            return None
        # a `not` as soon as what it compares with is matched; else the positive pattern with most keys
        negated = [p for p in ready if p.negated]
        chosen = negated[0] if negated else max(ready, key=lambda p: (len(_key_tests(p.cond, bound)), -rest.index(p)))
        steps.append(_step(chosen, bound))
        rest.remove(chosen)
        if not chosen.negated:
            bound.add(chosen.alias)
    return steps


def _grouped(steps: list[Step], named: set[str]) -> list[Step]:
    """Preferences are sums: a step whose facts later steps read only through some properties, and that no
    action names, can count its matches per value of those properties instead of continuing once per
    fact. `prefer workload anti-affinity by app within region` then costs one pass over the peers'
    placements per binding, not one per placement and cluster of its region (quadratic in the group)."""
    for at, step in enumerate(steps):
        later = steps[at + 1 :]
        if step.negated or step.alias in named or any(s.fact_type == step.fact_type for s in later):
            continue
        read = sorted(
            {
                r.prop
                for s in later
                for r in (*ir.refs(s.cond), *(v for v in s.values if isinstance(v, ir.Ref)))
                if r.alias == step.alias
            }
        )
        if read:
            return [*steps[:at], replace(step, group_by=tuple(read)), *later]
    return steps
