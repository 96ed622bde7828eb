"""Lifting rules to a scope: rules that depend on their binding only through some of its fields fire once per
scope (the bindings alike in those fields) and cluster instead of once per (binding, cluster)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from engine.compile import ir
from engine.syntax.schema import BUILTIN_FACTS, GROUP_SCOPE, MEMBER, POLICY_SCOPE, FieldType

# what identifies one binding: a rule that reads these otherwise than as an exemption is not lifted
_OWN = frozenset({"name", "key", "labels", "clusters"})


def _props(cond: ir.Cond) -> Iterator[str]:
    if isinstance(cond, (ir.Test, ir.Present)):
        yield cond.prop
    elif isinstance(cond, (ir.AllOf, ir.AnyOf)):
        for item in cond.items:
            yield from _props(item)


def _exemption(pattern: ir.Pattern, binding: str) -> tuple[str, ir.Ref | str | int | bool] | None:
    """``(field, value)`` when ``pattern`` is ``not member(owner == binding.key, field == F, value == V)``."""
    if not (pattern.negated and pattern.fact_type == MEMBER and isinstance(pattern.cond, ir.AllOf)):
        return None
    tests = {t.prop: t.operand for t in pattern.cond.items if isinstance(t, ir.Test) and t.op == "=="}
    if len(tests) != 3 or len(pattern.cond.items) != 3 or tests.get("owner") != ir.Ref(binding, "key"):
        return None
    field_name, value = tests.get("field"), tests.get("value")
    if not isinstance(field_name, str) or value is None or (isinstance(value, ir.Ref) and value.alias == binding):
        return None
    return field_name, value


def _not_itself(pattern: ir.Pattern, binding: str) -> tuple[ir.Pattern, list[tuple[str, ir.Ref]]]:
    """``pattern`` without its ``F != binding.name`` tests (a peer's fact is not the binding's own), each a presence
    test of F and a ``("name", F)`` exemption: the decision does not apply to the binding so named. Only for a
    string field F of a built-in fact (its text is the value the exemption compares: a number would differ)."""
    items = pattern.cond.items if isinstance(pattern.cond, ir.AllOf) else (pattern.cond,)
    fields = BUILTIN_FACTS.get(pattern.fact_type, {})
    kept: list[ir.Cond] = []
    exempt: list[tuple[str, ir.Ref]] = []
    for item in items:
        if (
            not pattern.negated
            and isinstance(item, ir.Test)
            and item.op == "!="
            and item.operand == ir.Ref(binding, "name")
            and fields.get(item.prop) is FieldType.STRING
        ):
            kept.append(ir.Present(item.prop))
            exempt.append(("name", ir.Ref(pattern.alias, item.prop)))
        else:
            kept.append(item)
    if not exempt:
        return pattern, []
    return replace(pattern, cond=ir.all_of(*kept)), exempt


def lift(rule: ir.Rule) -> ir.Rule:
    """The rule at a scope, when it depends on its binding only through some of the binding's fields.

    Most placement rules are of that kind (a policy's cluster statements, taints against the policy's
    tolerations, a namespace's anti-affinity group): matched per binding they fire once per (binding,
    cluster) pair, so their cost grows with bindings x clusters. Lifted, the binding pattern matches one
    scope fact per value of those fields, the rule fires once per (scope, cluster), and evaluation applies
    each decision to the scope's bindings. What such rules read of one binding becomes an exemption checked
    then: ``not (x in b.clusters)`` (a cluster the binding already targets passes) and ``p.f != b.name``
    (a peer's fact, not the binding's own).

    A rule that reads the binding's policy alone is lifted to ``policy_scope`` (one fact per policy); one that
    reads other fields (namespace, affinity groups), and only rejects, to ``group_scope`` (one fact per value
    of the fields every such rule of the program reads: engine.compile.program). Rules that derive or evict,
    or read the binding's name or key otherwise, are returned unchanged."""
    if not rule.actions or not all(isinstance(a, (ir.Reject, ir.Prefer)) for a in rule.actions):
        return rule
    bindings = {a.binding for a in rule.actions if isinstance(a, (ir.Reject, ir.Prefer))}
    if len(bindings) != 1:
        return rule
    binding = bindings.pop()
    anchor: ir.Pattern | None = None
    at = 0  # where the anchor goes among the patterns kept
    patterns: list[ir.Pattern] = []
    exempt: list[tuple[str, ir.Ref | str | int | bool]] = []
    read: set[str] = set()
    for pattern in rule.patterns:
        if pattern.alias == binding:
            if pattern.fact_type != "binding" or pattern.negated or any(ir.refs(pattern.cond)):
                return rule
            anchor, at = pattern, len(patterns)
            read.update(_props(pattern.cond))
            continue
        exemption = _exemption(pattern, binding)
        if exemption is not None:
            exempt.append(exemption)
            continue
        pattern, itself = _not_itself(pattern, binding)
        exempt += itself
        read.update(r.prop for r in ir.refs(pattern.cond) if r.alias == binding)
        patterns.append(pattern)
    messages = [m for a in rule.actions if isinstance(a, ir.Reject) for m in (a.message, a.reason) if m is not None]
    read.update(p.prop for m in messages for p in m.parts if isinstance(p, ir.Ref) and p.alias == binding)
    if anchor is None or read & _OWN:
        return rule
    named = any(name == "name" for name, _ in exempt)
    if read <= {"policy"} and not named:
        scope = POLICY_SCOPE
    elif all(isinstance(a, ir.Reject) for a in rule.actions):
        scope = GROUP_SCOPE
    else:  # a preference's grouped steps count peers whose names differ: its exemptions would not hold
        return rule
    lifted = ir.Pattern(binding, scope, False, anchor.cond)
    keys = tuple(sorted(read)) if scope == GROUP_SCOPE else ()
    patterns.insert(at, lifted)
    return replace(rule, patterns=tuple(patterns), scope=scope, scope_keys=keys, exempt=tuple(exempt))
