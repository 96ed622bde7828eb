"""Rule-language policies as Karmada PropagationPolicy / ClusterPropagationPolicy YAML (`convert --to yaml`).

The inverse of engine.inputs.policies: each statement becomes the field Karmada reads it from. What
Karmada has no field for (user rules, preferred workload terms, `within` topologies) is an error at
its position, never dropped; so is a kind whose apiVersion fleetrules does not know (the language
selects by kind, a resourceSelector needs both).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, assert_never

import yaml

from engine.codes import Code
from engine.errors import Diagnostic, RuleError, error
from engine.kube.interpreter import BUILT_IN_HEALTH
from engine.syntax import ast

_API_VERSIONS: dict[str, str] = {
    "ConfigMap": "v1",
    "Secret": "v1",
    "ServiceAccount": "v1",
    "Namespace": "v1",
    "LimitRange": "v1",
    "ResourceQuota": "v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
    "HorizontalPodAutoscaler": "autoscaling/v2",
    "NetworkPolicy": "networking.k8s.io/v1",
    "Role": "rbac.authorization.k8s.io/v1",
    "RoleBinding": "rbac.authorization.k8s.io/v1",
    "ClusterRole": "rbac.authorization.k8s.io/v1",
    "ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
    "CustomResourceDefinition": "apiextensions.k8s.io/v1",
    "StorageClass": "storage.k8s.io/v1",
    "PriorityClass": "scheduling.k8s.io/v1",
} | {kind: api_version for api_version, kind in sorted(BUILT_IN_HEALTH) if not api_version.startswith("apps.kruise")}
_API_VERSIONS |= {"DaemonSet": "apps/v1", "StatefulSet": "apps/v1"}  # the native ones, not Kruise's

_OPERATORS = {ast.Op.IN: "In", ast.Op.NOT_IN: "NotIn", ast.Op.EXISTS: "Exists", ast.Op.DOES_NOT_EXIST: "DoesNotExist"}


_PLACEMENT_ORDER = (
    "clusterAffinity",
    "clusterAffinities",
    "clusterTolerations",
    "spreadConstraints",
    "replicaScheduling",
    "workloadAffinity",
)


class _Writer:
    def __init__(self) -> None:
        self.problems: list[Diagnostic] = []

    def refuse(self, what: str, span: Any) -> None:
        self.problems.append(
            error(
                f"{what} has no PropagationPolicy field; convert --to yaml cannot write it", span, code=Code.EXTENSION
            )
        )

    def selector(self, selector: ast.Selector, fields: bool = False) -> dict[str, Any]:
        """A labelSelector (matchLabels for `=`, matchExpressions otherwise); a fieldSelector has only
        matchExpressions."""
        labels: dict[str, str] = {}
        expressions: list[dict[str, Any]] = []
        for r in selector.requirements:
            if r.op is ast.Op.EQUALS and not fields and r.key.value not in labels:
                labels[r.key.value] = r.values[0].value
                continue
            op = {ast.Op.EQUALS: "In", ast.Op.NOT_EQUALS: "NotIn"}.get(r.op) or _OPERATORS[r.op]
            item: dict[str, Any] = {"key": r.key.value, "operator": op}
            if r.values:
                item["values"] = [v.value for v in r.values]
            expressions.append(item)
        out: dict[str, Any] = {}
        if labels:
            out["matchLabels"] = labels
        if expressions:
            out["matchExpressions"] = expressions
        return out

    def affinity(self, statements: Sequence[ast.ClusterStmt]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for s in statements:
            match s:
                case ast.ClusterList():
                    field = "clusterNames" if s.field is ast.ClusterField.NAMES else "exclude"
                    out[field] = [*out.get(field, []), *(w.value for w in s.values)]
                case ast.ClusterSelector() if s.field is ast.ClusterField.LABELS:
                    out["labelSelector"] = self.selector(s.selector)
                case ast.ClusterSelector():
                    out["fieldSelector"] = self.selector(s.selector, fields=True)
                case _:
                    assert_never(s)
        # in the order of Karmada's ClusterAffinity struct
        return {k: out[k] for k in ("labelSelector", "fieldSelector", "clusterNames", "exclude") if k in out}

    def resource_selectors(self, policy: ast.Policy) -> list[dict[str, Any]]:
        out = []
        for block in (s for s in policy.statements if isinstance(s, ast.Select)):
            namespaces = [w.value for w in block.values(ast.SelectField.NAMESPACE)] or [policy.namespace or ""]
            names = [w.value for w in block.values(ast.SelectField.NAME)] or [""]
            labels = [r for selector in block.label_selectors for r in selector.requirements]
            for kind in block.values(ast.SelectField.KIND):
                api_version = _API_VERSIONS.get(kind.value)
                if api_version is None:
                    message = (
                        f"kind {kind.value}: fleetrules does not know its apiVersion, which a resourceSelector needs"
                    )
                    self.problems.append(error(message, kind.span, code=Code.EXTENSION))
                    continue
                for namespace in namespaces:
                    for name in names:
                        item: dict[str, Any] = {"apiVersion": api_version, "kind": kind.value}
                        if namespace:
                            item["namespace"] = namespace
                        if name:
                            item["name"] = name
                        if labels:
                            item["labelSelector"] = self.selector(ast.Selector(tuple(labels)))
                        out.append(item)
        return out

    def replicas(self, r: ast.Replicas) -> dict[str, Any]:
        if r.mode.value == "duplicated":
            return {"replicaSchedulingType": "Duplicated"}
        if r.mode.value == "aggregated":
            return {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
        out: dict[str, Any] = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
        if r.by is not None and r.by.value == "available":
            out["weightPreference"] = {"dynamicWeight": "AvailableReplicas"}
        elif r.by is not None:
            weights = [{"targetCluster": self.affinity(w.target), "weight": w.weight.value} for w in r.weights]
            out["weightPreference"] = {"staticWeightList": weights}
        return out

    def failover(self, block: ast.Failover) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for s in block.statements:
            match s:
                case ast.FailoverToleration():
                    out["decisionConditions"] = {"tolerationSeconds": s.duration.seconds}
                case ast.Purge():
                    out["purgeMode"] = s.mode.value
                case ast.Grace():
                    out["gracePeriodSeconds"] = s.duration.seconds
                case ast.Preserve():
                    rules = out.setdefault("statePreservation", {"rules": []})["rules"]
                    rules.append({"aliasLabelName": s.alias.value, "jsonPath": s.json_path.value})
                case _:
                    assert_never(s)
        return out

    def cluster_affinity(self, s: ast.ClusterAffinity, placement: dict[str, Any]) -> None:
        """``clusters { … }`` is placement.clusterAffinity; ``clusters NAME { … }`` one of clusterAffinities."""
        if s.name is None:
            placement["clusterAffinity"] = self.affinity(s.statements)
            return
        term = {"affinityName": s.name.value, **self.affinity(s.statements)}
        if s.overflow:
            term["overflowAffinities"] = [
                {"affinityName": o.name.value, **self.affinity(o.statements)} for o in s.overflow
            ]
        placement.setdefault("clusterAffinities", []).append(term)

    def policy(self, policy: ast.Policy) -> dict[str, Any]:
        namespace, _, name = policy.name.value.rpartition("/")
        meta = {"name": name, "namespace": namespace} if namespace else {"name": name}
        spec: dict[str, Any] = {}
        placement: dict[str, Any] = {}
        failover: dict[str, Any] = {}
        for s in policy.statements:
            match s:
                case ast.Select() | ast.PropagateDeps():
                    pass  # resourceSelectors and propagateDeps, below
                case ast.Priority():
                    spec["priority"] = s.value.value
                case ast.SchedulePriority():
                    spec["schedulePriority"] = {
                        "priorityClassSource": "KubePriorityClass",
                        "priorityClassName": s.class_name.value,
                    }
                case ast.Preemption():
                    spec["preemption"] = ast.PREEMPTION_MODES[s.mode.value]
                case ast.Activation():
                    spec["activationPreference"] = ast.ACTIVATION_MODES[s.mode.value]
                case ast.ClusterAffinity():
                    self.cluster_affinity(s, placement)
                case ast.Toleration():
                    placement.setdefault("clusterTolerations", []).append(_toleration(s))
                case ast.Spread():
                    spread: dict[str, Any] = {"spreadByField": s.field.value}
                    if s.min_groups is not None:
                        spread["minGroups"] = s.min_groups.value
                    if s.max_groups is not None:
                        spread["maxGroups"] = s.max_groups.value
                    placement.setdefault("spreadConstraints", []).append(spread)
                case ast.Replicas():
                    placement["replicaScheduling"] = self.replicas(s)
                case ast.WorkloadTerm() if s.preferred:
                    self.refuse(f"a preferred workload {s.keyword} term (a fleetrules extension)", s.span)
                case ast.WorkloadTerm() if s.topology is not None:
                    self.refuse(f"'within {s.topology.value}' (a fleetrules extension)", s.topology.span)
                case ast.WorkloadTerm():
                    field = "antiAffinity" if s.anti else "affinity"
                    placement.setdefault("workloadAffinity", {})[field] = {"groupByLabelKey": s.key.value}
                case ast.Failover():
                    failover[s.kind.value] = self.failover(s)
                case _:
                    assert_never(s)
        if "application" in failover or policy.of_type(ast.PropagateDeps):
            spec["propagateDeps"] = True  # `propagate dependencies`; the webhook requires it with application failover
        spec["resourceSelectors"] = self.resource_selectors(policy)
        if placement:  # in the order of Karmada's Placement struct
            spec["placement"] = {k: placement[k] for k in _PLACEMENT_ORDER if k in placement}
        if failover:
            spec["failover"] = failover
        kind = "PropagationPolicy" if namespace else "ClusterPropagationPolicy"
        return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}


def _toleration(t: ast.Toleration) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if t.key is not None:
        out["key"] = t.key.value
    out["operator"] = "Exists" if t.value is None else "Equal"
    if t.value is not None:
        out["value"] = t.value.value
    if t.effect is not None:
        out["effect"] = t.effect.value
    if t.seconds is not None:
        out["tolerationSeconds"] = t.seconds.seconds
    return out


def policies_yaml(files: Sequence[ast.File], sources: Mapping[str, str] | None = None) -> str:
    """Every policy of ``files`` as a YAML document; RuleError (each problem at its position in
    ``sources``) when a rule or an extension has no Karmada form."""
    writer = _Writer()
    documents = []
    for file in files:
        for rule in file.rules:
            writer.refuse(f"rule '{rule.name.value}' (Karmada has no user-written scheduler rules)", rule.name.span)
        for condition in file.conditions:
            what = f"condition '{condition.name.value}' (a fleetrules extension, of rules Karmada does not have)"
            writer.refuse(what, condition.name.span)
        documents += [writer.policy(p) for p in file.policies]
    if writer.problems:
        raise RuleError(writer.problems, sources)
    return yaml.safe_dump_all(documents, sort_keys=False, allow_unicode=True, width=120)
