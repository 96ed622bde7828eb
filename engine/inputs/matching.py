"""Label selectors and cluster affinities matched in Python, where they are needed outside the rules:
resource selectors when a policy is chosen, the targetCluster of a static weight, a ClusterTaintPolicy's
targetClusters (karmada pkg/util/selector.go ClusterMatches). The rules compiled from a clusters block
(engine.compile.policies) say the same; tests hold the two to Karmada's TestClusterMatches cases.
And the ClusterTaintPolicy controller's reconcile of one cluster (taint_by_policies).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import replace

from engine.inputs.facts import Cluster, Condition, MatchCondition, Taint, TaintPolicy, cluster_taint_problem
from engine.syntax import ast


def selector_matches(selector: ast.Selector, labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelector semantics: every requirement holds; NotIn and != hold for an absent key."""
    for req in selector.requirements:
        key, values = req.key.value, {v.value for v in req.values}
        present = key in labels
        ok = {
            ast.Op.EQUALS: present and labels.get(key) in values,
            ast.Op.IN: present and labels.get(key) in values,
            ast.Op.NOT_EQUALS: not present or labels.get(key) not in values,
            ast.Op.NOT_IN: not present or labels.get(key) not in values,
            ast.Op.EXISTS: present,
            ast.Op.DOES_NOT_EXIST: not present,
        }[req.op]
        if not ok:
            return False
    return True


def _field_matches(selector: ast.Selector, cluster: Cluster) -> bool:
    """A fieldSelector: provider and region as label-selector values, zone against any of the zones."""
    for req in selector.requirements:
        key, values = req.key.value, {v.value for v in req.values}
        inclusive = req.op in (ast.Op.EQUALS, ast.Op.IN)
        if key == "zone":
            hit = any(z in values for z in cluster.zones)
        elif key in ("provider", "region"):
            hit = (cluster.provider if key == "provider" else cluster.region) in values
        else:
            return False  # an unknown field never matches
        if hit != inclusive:
            return False
    return True


def cluster_matches(cluster: Cluster, statements: Sequence[ast.ClusterStmt]) -> bool:
    """util.ClusterMatches: named (if names are given), not excluded, and every selector holds."""
    for stmt in statements:
        if isinstance(stmt, ast.ClusterList):
            named = cluster.name in {w.value for w in stmt.values}
            if named != (stmt.field is ast.ClusterField.NAMES):
                return False
        elif stmt.field is ast.ClusterField.LABELS:
            if not selector_matches(stmt.selector, cluster.labels):
                return False
        elif not _field_matches(stmt.selector, cluster):
            return False
    return True


def conditions_match(conditions: Sequence[Condition], wanted: Sequence[MatchCondition]) -> bool:
    """conditionMatches (pkg/controllers/taint/clustertaintpolicy_controller.go): every match condition holds
    (ANDed), none given is False. A condition type the cluster does not report matches neither In nor NotIn;
    with several conditions of the type, In holds if any is in the values, NotIn as the last one says; an
    operator other than In or NotIn makes the whole match False."""
    if not wanted:
        return False
    for m in wanted:
        if m.operator not in ("In", "NotIn"):
            return False
        match = False
        for c in conditions:
            if c.type != m.type:
                continue
            # In: any of the type in the values; NotIn: the last of the type not in them
            match = (match or c.status in m.values) if m.operator == "In" else c.status not in m.values
        if not match:
            return False
    return True


def taint_by_policies(cluster: Cluster, policies: Sequence[TaintPolicy], now: dt.datetime | None) -> Cluster:
    """ClusterTaintPolicyController.Reconcile for one cluster: each policy in order (``policies`` come sorted
    by creationTimestamp) whose targetClusters match adds its taints absent by (key, effect) when the
    cluster's conditions match addOnConditions, stamped ``now``, and then removes them when they match
    removeOnConditions; the taints read by the next policy are the ones the last left."""
    taints = list(cluster.taints)
    for policy in policies:
        if policy.targets is not None and not cluster_matches(cluster, policy.targets):
            continue
        if conditions_match(cluster.conditions, policy.add_on):  # addTaintsOnCluster
            for t in policy.taints:
                if not any((c.key, c.effect) == (t.key, t.effect) for c in taints):
                    taints.append(Taint(t.key, t.value, t.effect, now))
        if conditions_match(cluster.conditions, policy.remove_on):  # removeTaintsFromCluster: the first of each
            for t in policy.taints:
                found = next((i for i, c in enumerate(taints) if (c.key, c.effect) == (t.key, t.effect)), None)
                if found is not None:
                    del taints[found]
    if taints == list(cluster.taints) or any(cluster_taint_problem(t) for t in taints if t not in cluster.taints):
        return cluster  # unchanged, or the cluster's webhook refuses the update (and the cluster stays as it was)
    return replace(cluster, taints=tuple(taints))


def taint_changes(before: Cluster, after: Cluster) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The (key, effect) of the taints ``after`` has and ``before`` had not, and of those it no longer has, sorted."""
    old, new = {(t.key, t.effect) for t in before.taints}, {(t.key, t.effect) for t in after.taints}
    return sorted(new - old), sorted(old - new)
