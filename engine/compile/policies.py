"""Policies → engine rules and facts.

A policy is compiled into rules of its own, one per placement statement, so that each rejection
names the statement that made it (``flink-ha/clusters.labels`` at ``policy.fr:12``). Semantics
that do not depend on a policy's text — taints against tolerations, workload affinity and
anti-affinity at cluster level, clusters under eviction — are the built-in rule files in
``rules/``; the facts they read of a policy (tolerations, instantiated groups) are engine.compile.encoding's.
"""

from __future__ import annotations

from engine.compile import ir
from engine.compile.encoding import Symbols
from engine.syntax import ast

BINDING = "v_b"
CLUSTER = "v_c"
_CLUSTER_AFFINITY = "did not match the placement cluster affinity constraint"
# the ClusterAffinity plugin's words (pkg/scheduler/framework/plugins/clusteraffinity)
_CLUSTER_AFFINITY_REASON = "cluster(s) did not match the placement cluster affinity constraint"


# ---------------------------------------------------------------- cluster affinity as rules


def _message(text: str) -> ir.Message:
    return ir.Message((text,))


def _label_match(req: ast.Requirement, props: Symbols) -> ir.Cond:
    prop = props.label(req.key.value)
    values = [v.value for v in req.values]
    if req.op in (ast.Op.EQUALS, ast.Op.IN):
        return ir.any_of(*(ir.Test("==", prop, v) for v in values))
    if req.op in (ast.Op.NOT_EQUALS, ast.Op.NOT_IN):
        return ir.all_of(*(ir.Test("!=", prop, v) for v in values))
    return ir.present(prop, req.op is ast.Op.EXISTS)


def _field_match(req: ast.Requirement, props: Symbols) -> ir.Cond:
    """fieldSelector on provider/region (label-selector semantics) and zone (matchZones)."""
    key, values = req.key.value, [v.value for v in req.values]
    inclusive = req.op in (ast.Op.EQUALS, ast.Op.IN)
    if key == "zone":
        flags = [ir.Present(props.flag("zones", v)) for v in values]
        return ir.any_of(*flags) if inclusive else ir.all_of(*(ir.Present(f.prop, False) for f in flags))
    if key not in ("provider", "region"):
        return ir.FALSE  # an unknown field never matches (pkg/util/selector_test.go TestClusterMatches)
    if inclusive:
        return ir.any_of(*(ir.Test("==", key, v) for v in values))
    return ir.all_of(*(ir.Test("!=", key, v) for v in values))


def _statement_rule(policy: ast.Policy, term: ast.ClusterAffinity, stmt: ast.ClusterStmt, props: Symbols) -> ir.Rule:
    """A rule rejecting the clusters that fail one statement of a clusters block."""
    if isinstance(stmt, ast.ClusterList):
        names = [w.value for w in stmt.values]
        if stmt.field is ast.ClusterField.EXCLUDE:
            reject = ir.any_of(*(ir.Test("==", "name", n) for n in names))
            why = f"{_CLUSTER_AFFINITY} (excluded)"
        else:
            reject = ir.all_of(*(ir.Test("!=", "name", n) for n in names))
            why = f"{_CLUSTER_AFFINITY} (not in clusterNames)"
    else:
        match = _label_match if stmt.field is ast.ClusterField.LABELS else _field_match
        matches = ir.all_of(*(match(r, props) for r in stmt.selector.requirements))
        reject = ir.negate(matches)
        selector = "labelSelector" if stmt.field is ast.ClusterField.LABELS else "fieldSelector"
        why = f"{_CLUSTER_AFFINITY} ({selector})"
    name = f"{policy.name.value}/clusters"
    if term.name is not None:
        name += f" {term.name.value}"
    return ir.Rule(
        name=f"{name}.{stmt.field.value}",
        span=stmt.span,
        patterns=(
            ir.Pattern(BINDING, "binding", False, ir.Test("==", "policy", policy.name.value)),
            ir.Pattern(CLUSTER, "cluster", False, reject),
        ),
        actions=(ir.Reject(CLUSTER, BINDING, _message(why), _message(_CLUSTER_AFFINITY_REASON)),),
        term=term.name.value if term.name is not None else None,
    )


# ---------------------------------------------------------------- workload terms as rules


def _topology_rules(policy: ast.Policy, term: ast.WorkloadTerm, props: Symbols) -> list[ir.Rule]:
    """Required terms `within KEY` and preferred terms: joins over placements and their clusters."""
    name = f"{policy.name.value}/{'prefer ' if term.preferred else ''}workload {term.keyword}"
    on_policy = ir.Test("==", "policy", policy.name.value)
    if term.preferred:  # fleetrules extension: peers are workloads with the same label value
        key = props.label(term.key.value)
        member_of_group: ir.Cond = ir.present(key)
        same_group: ir.Cond = ir.Test("==", key, ir.Ref(BINDING, key))
    else:
        # Karmada: peers are the bindings with the same instantiated group (workloadaffinity/workload_affinity.go)
        key = "anti_affinity_group" if term.anti else "affinity_group"
        member_of_group = ir.Test("!=", key, "")
        same_group = ir.Test("==", key, ir.Ref(BINDING, key))
    peer = ir.all_of(
        ir.Test("==", "namespace", ir.Ref(BINDING, "namespace")),
        ir.Test("!=", "binding", ir.Ref(BINDING, "name")),
        same_group,
    )
    if term.topology is None:
        same_domain: ir.Cond = ir.Test("==", "name", ir.Ref("v_q", "cluster"))
    else:
        domain = props.label(term.topology.value)
        same_domain = ir.Test("==", domain, ir.Ref("v_q", f"C{domain}"))
    binding = ir.Pattern(BINDING, "binding", False, ir.all_of(on_policy, member_of_group))
    span = term.span
    patterns: tuple[ir.Pattern, ...]
    if term.preferred:
        assert term.weight is not None
        weight = term.weight.value if not term.anti else -term.weight.value
        patterns = (
            binding,
            ir.Pattern("v_q", "placement", False, peer),
            ir.Pattern(CLUSTER, "cluster", False, same_domain),
        )
        return [ir.Rule(name, span, patterns, (ir.Prefer(CLUSTER, BINDING, weight),))]
    sticky = ir.Pattern(
        "v_m",
        "member",
        True,
        ir.all_of(
            ir.Test("==", "owner", ir.Ref(BINDING, "key")),
            ir.Test("==", "field", "clusters"),
            ir.Test("==", "value", ir.Ref(CLUSTER, "name")),
        ),
    )
    if term.anti:
        patterns = (
            binding,
            ir.Pattern("v_q", "placement", False, peer),
            ir.Pattern(CLUSTER, "cluster", False, same_domain),
            sticky,
        )
        where = term.topology.value if term.topology else "cluster"
        why = f"cluster's {where} already has workload with the same anti-affinity group"
        return [ir.Rule(name, span, patterns, (ir.Reject(CLUSTER, BINDING, _message(why)),))]
    # affinity within a domain: reject c unless every scheduled peer has a placement in c's domain
    assert term.topology is not None
    domain = props.label(term.topology.value)
    scheduled = ir.Pattern("v_s", "scheduled", False, peer)
    absent = ir.Pattern(
        "v_p",
        "placement",
        True,
        ir.all_of(
            ir.Test("==", "namespace", ir.Ref("v_s", "namespace")),
            ir.Test("==", "binding", ir.Ref("v_s", "binding")),
            ir.Test("==", f"C{domain}", ir.Ref(CLUSTER, domain)),
        ),
    )
    patterns = (binding, scheduled, ir.Pattern(CLUSTER, "cluster", False, ir.TRUE), sticky, absent)
    why = f"ResourceBinding with the same affinity group does not target this {term.topology.value}"
    return [ir.Rule(name, span, patterns, (ir.Reject(CLUSTER, BINDING, _message(why)),))]


def policy_rules(policy: ast.Policy, props: Symbols) -> list[ir.Rule]:
    rules: list[ir.Rule] = []
    for stmt in policy.statements:
        if isinstance(stmt, ast.ClusterAffinity):
            rules += [_statement_rule(policy, stmt, s, props) for s in stmt.statements]
        elif isinstance(stmt, ast.WorkloadTerm) and (stmt.preferred or stmt.topology is not None):
            rules += _topology_rules(policy, stmt, props)
    return rules


def affinity_terms(policy: ast.Policy) -> list[str | None]:
    """The clusterAffinities term names in order; [None] when the policy has at most a plain block."""
    names: list[str | None] = [
        s.name.value for s in policy.statements if isinstance(s, ast.ClusterAffinity) and s.name is not None
    ]
    return names or [None]
