"""Label selectors and cluster affinities matched in Python, where the scheduler needs them outside the
rules: resource selectors when a policy is chosen, and the targetCluster of a static weight
(karmada pkg/util/selector.go ClusterMatches). The rules compiled from a clusters block
(engine.compile.policies) say the same; tests hold the two to Karmada's TestClusterMatches cases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.inputs.facts import Cluster
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
