"""Each kind of Karmada and Kubernetes object read as the facts fleetrules decides on: Clusters (spec, status, API
enablements, resource summaries and models), ResourceBindings (targets, eviction tasks, components), resource
templates (replicas and requests, as Karmada's interpreter reads them), the resource interpreter's objects, and
the metadata checks every kind takes (pkg/apis/cluster/validation and the API server's).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from engine.inputs.facts import (
    APPLIED_PLACEMENT,
    Binding,
    Cluster,
    ClusterStatus,
    Component,
    Condition,
    EvictionTask,
    ResourceModel,
    ResourceSummary,
    Taint,
    TargetCluster,
    Workload,
    claim_of,
    scheduling_taints,
)
from engine.inputs.reader import Reader
from engine.kube import validation as k8s
from engine.kube.dependencies import dependencies
from engine.kube.interpreter import HookRule, customization_rule
from engine.kube.quantity import binary_si
from engine.kube.resources import effective_requests
from engine.kube.validation import label_value_problems, qualified_name_problems

# Kinds without a namespace (the rest are taken to be namespaced)
CLUSTER_SCOPED = frozenset(
    {
        "Cluster", "ClusterResourceBinding", "ClusterPropagationPolicy", "ClusterOverridePolicy", "Namespace",
        "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "PersistentVolume", "StorageClass",
        "PriorityClass", "ResourceInterpreterCustomization", "ResourceInterpreterWebhookConfiguration", "Node",
        "IngressClass", "RuntimeClass", "CSIDriver", "CSINode", "VolumeAttachment", "APIService",
        "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding", "ClusterTaintPolicy", "ClusterIssuer",
    }
)  # fmt: skip


# Fields of the Karmada API that fleetrules reads or knowingly passes over; others are warned about.
_CLUSTER_SPEC = {
    "id", "syncMode", "apiEndpoint", "secretRef", "impersonatorSecretRef", "insecureSkipTLSVerification",
    "proxyURL", "proxyHeader", "provider", "region", "zone", "zones", "taints", "resourceModels",
}  # fmt: skip


_CLUSTER_STATUS = {
    "kubernetesVersion", "apiEnablements", "conditions", "nodeSummary", "resourceSummary", "remedyActions",
}  # fmt: skip


_BINDING_SPEC = {
    "resource", "replicaRequirements", "replicas", "clusters", "placement", "gracefulEvictionTasks", "requiredBy",
    "propagateDeps", "schedulerName", "conflictResolution", "failover", "rescheduleTriggeredAt",
    "preserveResourcesOnDeletion", "suspension", "workloadAffinityGroups", "components", "schedulePriority",
}  # fmt: skip


_BINDING_STATUS = {
    "schedulerObservedGeneration", "schedulerObservingAffinityName", "lastScheduledTime", "conditions",
    "aggregatedStatus",
}  # fmt: skip


def read_cluster(r: Reader, obj: dict[str, Any], meta: dict[str, Any], source: str) -> Cluster:
    spec = r.mapping(obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    r.known(spec, _CLUSTER_SPEC, "spec")
    r.known(status, _CLUSTER_STATUS, "status")
    zones = [z for z in r.sequence(spec.get("zones"), "spec.zones") if isinstance(z, str)]
    if not zones and r.string(spec, "zone", "spec"):
        zones = [spec["zone"]]
    taints = []
    for i, raw in enumerate(r.sequence(spec.get("taints"), "spec.taints")):
        path = f"spec.taints[{i}]"
        t = r.mapping(raw, path)
        effect = r.string(t, "effect", path, required=True)
        if effect and effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            r.fail(f"{path}.effect", f"unknown taint effect {effect!r}")
        taint = Taint(r.string(t, "key", path, required=True), r.string(t, "value", path), effect)
        taints.append(Taint(taint.key, taint.value, taint.effect, r.time(t, "timeAdded", path)))
    ready: str | None = None if status.get("conditions") is not None else "True"  # None: no Ready condition
    since = None
    complete = False
    conditions = []
    for i, raw in enumerate(r.sequence(status.get("conditions"), "status.conditions")):
        c = r.mapping(raw, f"status.conditions[{i}]")
        complete = complete or (c.get("type") == "CompleteAPIEnablements" and c.get("status") == "True")
        changed = r.time(c, "lastTransitionTime", f"status.conditions[{i}]")
        if isinstance(c.get("type"), str) and isinstance(c.get("status"), str):
            conditions.append(Condition(c["type"], c["status"], changed))
        if c.get("type") == "Ready":
            ready = r.string(c, "status", f"status.conditions[{i}]", required=True)
            since = changed
            if ready not in ("True", "False", "Unknown"):
                r.fail(f"status.conditions[{i}].status", f"expected True, False or Unknown, found {ready!r}")
    changes: tuple[str, ...] = ()
    if status.get("conditions") is not None:  # a control plane's cluster: its controller's taints, at once
        shown = {(t.key, t.effect) for t in taints}
        taints = list(scheduling_taints(tuple(taints), ready, since))
        now = {(t.key, t.effect) for t in taints}
        changes = tuple([f"+{k}:{e}" for k, e in sorted(now - shown)] + [f"-{k}:{e}" for k, e in sorted(shown - now)])
    return Cluster(
        resource_summary=_resource_summary(r, status),
        resource_models=_resource_models(r, spec),
        name=r.string(meta, "name", "metadata", required=True),
        labels=r.labels(meta, "labels", "metadata"),
        provider=r.string(spec, "provider", "spec"),
        region=r.string(spec, "region", "spec"),
        zones=tuple(zones),
        taints=tuple(taints),
        ready=ready or "Unknown",
        ready_since=since,
        conditions=tuple(conditions),
        deleting=meta.get("deletionTimestamp") is not None,
        source=source,
        api_enablements=_api_enablements(r, status),
        complete_api_enablements=complete,
        controller_changes=changes,
    )


# The detector's --skipped-propagating-apis defaults (pkg/util/apigroup.go NewSkippedResourceConfig): Karmada's own
# API groups, events and leases are never resource templates.
_SKIPPED_GROUPS = frozenset(
    {
        "cluster.karmada.io", "policy.karmada.io", "work.karmada.io", "config.karmada.io",
        "networking.karmada.io", "autoscaling.karmada.io", "remedy.karmada.io", "apps.karmada.io",
        "events.k8s.io",
    }
)  # fmt: skip


def not_propagated(obj: Mapping[str, Any]) -> bool:
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.rpartition("/")[0]
    return (
        group in _SKIPPED_GROUPS
        or api_version == "coordination.k8s.io/v1"
        or (api_version == "v1" and obj.get("kind") == "Event")
    )


def _api_enablements(r: Reader, status: Mapping[str, Any]) -> frozenset[tuple[str, str]] | None:
    """status.apiEnablements: [{groupVersion, resources: [{name, kind}]}] as (groupVersion, kind) pairs."""
    if status.get("apiEnablements") is None:
        return None
    out = set()
    for i, raw in enumerate(r.sequence(status.get("apiEnablements"), "status.apiEnablements")):
        path = f"status.apiEnablements[{i}]"
        item = r.mapping(raw, path)
        group_version = r.string(item, "groupVersion", path, required=True)
        for j, resource in enumerate(r.sequence(item.get("resources"), f"{path}.resources")):
            kind = r.string(r.mapping(resource, f"{path}.resources[{j}]"), "kind", f"{path}.resources[{j}]")
            out.add((group_version, kind))
    return frozenset(out)


def _resource_summary(r: Reader, status: Mapping[str, Any]) -> ResourceSummary | None:
    if status.get("resourceSummary") is None:
        return None
    path = "status.resourceSummary"
    summary = r.mapping(status["resourceSummary"], path)
    r.known(summary, {"allocatable", "allocated", "allocating", "allocatableModelings"}, path)
    modelings = []
    for i, raw in enumerate(r.sequence(summary.get("allocatableModelings"), f"{path}.allocatableModelings")):
        item = r.mapping(raw, f"{path}.allocatableModelings[{i}]")
        grade = r.integer(item, "grade", f"{path}.allocatableModelings[{i}]", minimum=0)
        count = r.integer(item, "count", f"{path}.allocatableModelings[{i}]", minimum=0)
        modelings.append((grade or 0, count or 0))
    return ResourceSummary(
        binary=_binary(summary.get("allocatable")),
        allocatable=r.resources(summary, "allocatable", path),
        allocated=r.resources(summary, "allocated", path),
        allocating=r.resources(summary, "allocating", path),
        allocatable_modelings=tuple(modelings),
    )


def _resource_models(r: Reader, spec: Mapping[str, Any]) -> tuple[ResourceModel, ...]:
    models = []
    for i, raw in enumerate(r.sequence(spec.get("resourceModels"), "spec.resourceModels")):
        path = f"spec.resourceModels[{i}]"
        model = r.mapping(raw, path)
        minimums: dict[str, Fraction] = {}
        for j, item in enumerate(r.sequence(model.get("ranges"), f"{path}.ranges")):
            rng = r.mapping(item, f"{path}.ranges[{j}]")
            name = r.string(rng, "name", f"{path}.ranges[{j}]", required=True)
            low = r.quantity(rng, "min", f"{path}.ranges[{j}]")
            if low is not None:
                minimums[name] = low
        models.append(ResourceModel(r.integer(model, "grade", path, minimum=0) or 0, minimums))
    return tuple(models)


def _eviction_task(r: Reader, raw: Any, path: str) -> EvictionTask:
    t = r.mapping(raw, path)
    preserved = r.labels(t, "preservedLabelState", path)
    for key, value in preserved.items():  # Karmada stores it unchecked; injected, the member cluster refuses it
        for problem in [*qualified_name_problems(key), *label_value_problems(value)][:1]:
            r.warn(f"{path}.preservedLabelState.{key}", f"not a valid label, a member cluster refuses it: {problem}")
    before = [c for c in r.sequence(t.get("clustersBeforeFailover"), f"{path}.clustersBeforeFailover")]
    return EvictionTask(
        from_cluster=r.string(t, "fromCluster", path, required=True),
        purge_mode=r.string(t, "purgeMode", path) or "Gracefully",
        reason=r.string(t, "reason", path),
        message=r.string(t, "message", path),
        producer=r.string(t, "producer", path),
        replicas=r.integer(t, "replicas", path, minimum=0),
        grace_period_seconds=r.integer(t, "gracePeriodSeconds", path, minimum=0),
        suppress_deletion=r.boolean(t, "suppressDeletion", path),
        preserved_label_state=preserved,
        clusters_before_failover=tuple(str(c) for c in before),
        creation_timestamp=r.time(t, "creationTimestamp", path),
    )


def _split_group(r: Reader, groups: Mapping[str, Any], key: str) -> str | None:
    value = r.string(groups, key, "spec.workloadAffinityGroups")
    return value if key in groups else None


def _binary(resources: Any) -> frozenset[str]:
    """The names in a ResourceList as written whose quantity is in the BinarySI format (``4Gi``)."""
    return (
        frozenset(str(k) for k, v in resources.items() if binary_si(v)) if isinstance(resources, dict) else frozenset()
    )


def _components(r: Reader, spec: Mapping[str, Any]) -> tuple[Component, ...]:
    """spec.components: each pod template's name, replicas per set and resource request."""
    out = []
    for i, raw in enumerate(r.sequence(spec.get("components"), "spec.components")):
        path = f"spec.components[{i}]"
        item = r.mapping(raw, path)
        r.known(item, {"name", "replicas", "replicaRequirements"}, path)
        requirements, binary = None, frozenset[str]()
        if item.get("replicaRequirements") is not None:
            needs = r.mapping(item["replicaRequirements"], f"{path}.replicaRequirements")
            r.known(needs, {"nodeClaim", "resourceRequest", "priorityClassName"}, f"{path}.replicaRequirements")
            requirements = r.resources(needs, "resourceRequest", f"{path}.replicaRequirements")
            binary = _binary(needs.get("resourceRequest"))
        name = r.string(item, "name", path, required=True)
        out.append(Component(name, r.integer(item, "replicas", path, minimum=0) or 0, requirements, binary))
    return tuple(out)


def read_binding(r: Reader, obj: dict[str, Any], meta: dict[str, Any], source: str) -> Binding:
    spec = r.mapping(obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    r.known(spec, _BINDING_SPEC, "spec")
    r.known(status, _BINDING_STATUS, "status")
    resource = r.mapping(spec.get("resource"), "spec.resource")
    if "resource" not in spec:
        r.fail("spec.resource", "required")
    targets = []
    for i, raw in enumerate(r.sequence(spec.get("clusters"), "spec.clusters")):
        t = r.mapping(raw, f"spec.clusters[{i}]")
        targets.append(
            TargetCluster(
                r.string(t, "name", f"spec.clusters[{i}]", required=True),
                r.integer(t, "replicas", f"spec.clusters[{i}]", minimum=0) or 0,
            )
        )
    tasks = [
        _eviction_task(r, raw, f"spec.gracefulEvictionTasks[{i}]")
        for i, raw in enumerate(r.sequence(spec.get("gracefulEvictionTasks"), "spec.gracefulEvictionTasks"))
    ]
    statuses = []
    for i, raw in enumerate(r.sequence(status.get("aggregatedStatus"), "status.aggregatedStatus")):
        path = f"status.aggregatedStatus[{i}]"
        item = r.mapping(raw, path)
        health = r.string(item, "health", path) or "Unknown"
        if health not in ("Healthy", "Unhealthy", "Unknown"):
            r.fail(f"{path}.health", f"expected Healthy, Unhealthy or Unknown, found {health!r}")
        r.known(item, {"clusterName", "status", "applied", "appliedMessage", "health", "healthSince"}, path)
        cluster = r.string(item, "clusterName", path, required=True)
        statuses.append(ClusterStatus(cluster, health, item.get("status"), r.time(item, "healthSince", path)))
    groups = r.mapping(spec.get("workloadAffinityGroups"), "spec.workloadAffinityGroups")
    cluster_scoped = obj.get("kind") == "ClusterResourceBinding"
    # keyed as the API server keys them: a ResourceBinding without a namespace is in "default"
    namespace = "" if cluster_scoped else (r.string(meta, "namespace", "metadata") or "default")
    labels, annotations = r.labels(meta, "labels", "metadata"), r.labels(meta, "annotations", "metadata")
    placement = r.mapping(spec.get("placement"), "spec.placement")
    scheduling = r.mapping(placement.get("replicaScheduling"), "spec.placement.replicaScheduling")
    requirements = None
    if spec.get("replicaRequirements") is not None:
        raw = r.mapping(spec["replicaRequirements"], "spec.replicaRequirements")
        requirements = r.resources(raw, "resourceRequest", "spec.replicaRequirements")
    return Binding(
        components=_components(r, spec),
        requirements=requirements,
        uid=r.string(resource, "uid", "spec.resource"),
        namespace=namespace,
        name=r.string(meta, "name", "metadata", required=True),
        kind=r.string(resource, "kind", "spec.resource", required=True),
        api_version=r.string(resource, "apiVersion", "spec.resource"),
        resource_name=r.string(resource, "name", "spec.resource", required=True),
        replicas=r.integer(spec, "replicas", "spec", minimum=0) or 0,
        clusters=tuple(targets),
        eviction_tasks=tuple(tasks),
        aggregated_status=tuple(statuses),
        affinity_group=_split_group(r, groups, "affinityGroup"),
        anti_affinity_group=_split_group(r, groups, "antiAffinityGroup"),
        observed_affinity_name=r.string(status, "schedulerObservingAffinityName", "status"),
        source=source,
        claim=claim_of(labels, annotations),
        applied_placement=annotations.get(APPLIED_PLACEMENT, ""),
        failover=_as_json(r.mapping(spec["failover"], "spec.failover")) if spec.get("failover") is not None else None,
        replica_scheduling=(
            r.string(scheduling, "replicaSchedulingType", "spec.placement.replicaScheduling") or "Divided"
            if "replicaScheduling" in placement and placement["replicaScheduling"] is not None
            else None
        ),
        reschedule_triggered_at=r.time(spec, "rescheduleTriggeredAt", "spec"),
        last_scheduled_time=r.time(status, "lastScheduledTime", "status"),
        cluster_scoped=cluster_scoped,
        schedule_priority=r.integer(
            r.mapping(spec.get("schedulePriority"), "spec.schedulePriority"),
            "priority",
            "spec.schedulePriority",
            minimum=-(2**31),
        ),
        # made by the dependencies distributor (buildAttachedBinding): required by others, no placement of its own
        attached=bool(r.sequence(spec.get("requiredBy"), "spec.requiredBy")) and spec.get("placement") is None,
    )


def _as_json(value: object) -> str:
    """``value`` as JSON text, kept as read; ``null`` for what JSON cannot hold (a key that is no scalar)."""
    try:
        return json.dumps(value, default=str)
    except (TypeError, ValueError):
        return "null"


# The kinds Karmada's default resource interpreter reads replicas of (replica.go); the API server's
# defaults apply to what is absent (replicas 1; a Job's parallelism 1).
_REPLICA_KINDS = {
    ("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet"), ("batch/v1", "Job"),
    ("v1", "Pod"),
}  # fmt: skip


def _containers(
    r: Reader, pod: Mapping[str, Any], key: str, path: str
) -> list[tuple[dict[str, Fraction], dict[str, Fraction]]]:
    out = []
    for i, raw in enumerate(r.sequence(pod.get(key), f"{path}.{key}")):
        where = f"{path}.{key}[{i}].resources"
        res = r.mapping(r.mapping(raw, f"{path}.{key}[{i}]").get("resources"), where)
        out.append((r.resources(res, "requests", where), r.resources(res, "limits", where)))
    return out


def _replicas(r: Reader, obj: Mapping[str, Any]) -> tuple[int, dict[str, Fraction] | None]:
    """(replicas, replicaRequirements.resourceRequest) as the default interpreter reads a workload:
    GetReplicas and GenerateReplicaRequirements (pkg/util/helper/binding.go)."""
    api_version, kind = str(obj.get("apiVersion")), str(obj.get("kind"))
    if (api_version, kind) not in _REPLICA_KINDS:
        return 0, None
    spec = r.mapping(obj.get("spec"), "spec")
    if kind == "Pod":
        pod, path, replicas = spec, "spec", 1
    else:
        template = r.mapping(spec.get("template"), "spec.template")
        pod, path = r.mapping(template.get("spec"), "spec.template.spec"), "spec.template.spec"
        if kind == "Job":
            parallelism = r.integer(spec, "parallelism", "spec", minimum=0)
            replicas = 1 if parallelism is None else parallelism
            completions = r.integer(spec, "completions", "spec", minimum=0)
            replicas = min(replicas, completions) if completions is not None else replicas
        else:
            declared = r.integer(spec, "replicas", "spec", minimum=0)
            replicas = 1 if declared is None else declared
    requests = effective_requests(
        _containers(r, pod, "containers", path),
        _containers(r, pod, "initContainers", path),
        r.resources(pod, "overhead", path),
    )
    affinity = r.mapping(r.mapping(pod.get("affinity"), f"{path}.affinity").get("nodeAffinity"), path)
    claim = (
        pod.get("nodeSelector") is not None
        or bool(pod.get("tolerations"))
        or affinity.get("requiredDuringSchedulingIgnoredDuringExecution") is not None
    )
    return replicas, requests if requests or claim else None


def read_workload(r: Reader, obj: dict[str, Any], meta: dict[str, Any], source: str) -> Workload:
    replicas, requirements = _replicas(r, obj)
    return Workload(
        replicas=replicas,
        requirements=requirements,
        uid=r.string(meta, "uid", "metadata"),
        api_version=r.string(obj, "apiVersion", "", required=True),
        kind=r.string(obj, "kind", "", required=True),
        # a cluster-scoped template has no namespace; a namespaced one given without is in "default"
        namespace="" if obj.get("kind") in CLUSTER_SCOPED else (r.string(meta, "namespace", "metadata") or "default"),
        name=r.string(meta, "name", "metadata", required=True),
        labels=r.labels(meta, "labels", "metadata"),
        status=obj.get("status"),
        source=source,
        annotations=r.labels(meta, "annotations", "metadata"),
        dependencies=dependencies(obj),
    )


CLUSTER_NAME_MAX = 48  # karmada pkg/apis/cluster/validation clusterNameMaxLength


def check_metadata(r: Reader, kind: str, meta: Mapping[str, Any]) -> None:
    """What the API server's ObjectMeta validation refuses, in its words: label keys and values,
    annotation keys, the namespace; a Cluster's name as Karmada's ValidateClusterName checks it."""

    def invalid(path: str, value: str, problems: list[str]) -> None:
        if problems:
            r.fail(path, f"Invalid value: {json.dumps(value, ensure_ascii=False)}: {'; '.join(problems)}")

    for field, values in (("labels", True), ("annotations", False)):
        entries = meta.get(field)
        if not isinstance(entries, Mapping):
            continue
        for key, value in entries.items():
            # an annotation's key is checked lowercased: its case does not matter (ValidateAnnotations)
            checked = str(key) if values else str(key).lower()
            invalid(f"metadata.{field}", str(key), k8s.qualified_name_problems(checked))
            if values and isinstance(value, str):
                invalid(f"metadata.{field}", value, k8s.label_value_problems(value))
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and namespace:
        invalid("metadata.namespace", namespace, k8s.dns1123_label_problems(namespace))
    name = meta.get("name")
    if kind == "Cluster" and isinstance(name, str):
        too_long = [f"must be no more than {CLUSTER_NAME_MAX} characters"] if len(name) > CLUSTER_NAME_MAX else []
        invalid("metadata.name", name, too_long or k8s.dns1123_label_problems(name))


def unnamed(r: Reader, obj: Mapping[str, Any], kind: str, name: str) -> bool:
    """An object whose name the API server refuses for its kind (so no control plane holds it) is skipped, with a
    warning naming it: the rest of the snapshot is evaluated."""
    problems = k8s.name_problems(str(obj.get("apiVersion", "")), kind, name)
    if problems and name:
        shown = json.dumps(name, ensure_ascii=False)
        r.warn("metadata.name", f"Invalid value: {shown}: {'; '.join(problems)}; the API server refuses it: skipped")
    return bool(problems) and bool(name)


INTERPRETER_KINDS = ("ResourceInterpreterCustomization", "ResourceInterpreterWebhookConfiguration")


def read_health_hooks(r: Reader, obj: dict[str, Any]) -> list[HookRule]:
    """The kinds whose health a ResourceInterpreterCustomization (healthInterpretation) or a
    ResourceInterpreterWebhookConfiguration (a rule with InterpretHealth or "*") interprets."""
    if obj["kind"] == "ResourceInterpreterCustomization":
        spec = r.mapping(obj.get("spec"), "spec")
        target = r.mapping(spec.get("target"), "spec.target")
        customizations = r.mapping(spec.get("customizations"), "spec.customizations")
        if customizations.get("healthInterpretation") is None:
            return []
        api_version = r.string(target, "apiVersion", "spec.target", required=True)
        return [customization_rule(api_version, r.string(target, "kind", "spec.target", required=True))]
    out = []
    for i, hook in enumerate(r.sequence(obj.get("webhooks"), "webhooks")):
        hook = r.mapping(hook, f"webhooks[{i}]")
        for j, rule in enumerate(r.sequence(hook.get("rules"), f"webhooks[{i}].rules")):
            rule = r.mapping(rule, f"webhooks[{i}].rules[{j}]")
            operations = rule.get("operations") or []
            if isinstance(operations, list) and ("InterpretHealth" in operations or "*" in operations):
                names = [tuple(str(v) for v in rule.get(f) or []) for f in ("apiGroups", "apiVersions", "kinds")]
                out.append(HookRule(*names))
    return out
