"""Lifting rules to policy scope: rules that depend on their binding only through its policy fire once
per (policy, cluster) instead of once per (binding, cluster)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from engine.compile import ir
from engine.syntax.schema import MEMBER, POLICY_SCOPE


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


def lift(rule: ir.Rule) -> ir.Rule:
    """The rule at policy scope, when it depends on its binding only through the binding's policy.

    Most placement rules are of that kind (a policy's cluster statements, taints against the policy's
    tolerations): matched per binding they fire once per (binding, cluster) pair, so their cost grows
    with bindings x clusters. Lifted, the binding pattern matches one ``policy_scope`` fact per policy
    (``key``, ``policy``), the rule fires once per (policy, cluster), and evaluation applies each
    decision to the policy's bindings. A ``not (x in b.clusters)`` condition, the one per-binding part
    such rules have (a cluster the binding already targets passes), becomes an exemption checked then.
    Rules that derive or evict, or read other binding fields, are returned unchanged."""
    if not rule.actions or not all(isinstance(a, (ir.Reject, ir.Prefer)) for a in rule.actions):
        return rule
    bindings = {a.binding for a in rule.actions if isinstance(a, (ir.Reject, ir.Prefer))}
    if len(bindings) != 1:
        return rule
    binding = bindings.pop()
    patterns: list[ir.Pattern] = []
    exempt: list[tuple[str, ir.Ref | str | int | bool]] = []
    for pattern in rule.patterns:
        if pattern.alias == binding:
            if pattern.fact_type != "binding" or set(_props(pattern.cond)) - {"policy"} or any(ir.refs(pattern.cond)):
                return rule
            patterns.append(ir.Pattern(binding, POLICY_SCOPE, False, pattern.cond))
            continue
        exemption = _exemption(pattern, binding)
        if exemption is not None:
            exempt.append(exemption)
        elif any(r.alias == binding and r.prop != "policy" for r in ir.refs(pattern.cond)):
            return rule
        else:
            patterns.append(pattern)
    messages = [m for a in rule.actions if isinstance(a, ir.Reject) for m in (a.message, a.reason) if m is not None]
    if any(isinstance(p, ir.Ref) and p.alias == binding and p.prop != "policy" for m in messages for p in m.parts):
        return rule
    return replace(rule, patterns=tuple(patterns), scoped=True, exempt=tuple(exempt))
