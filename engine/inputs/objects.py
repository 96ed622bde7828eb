"""Karmada objects → facts (engine.inputs.facts), from YAML files or Python objects.

Objects come from YAML or JSON files (multi-document, ``kind: List`` expanded) or from Python
dicts shaped like what ``kubectl get -o yaml`` prints. Everything is validated on the way in:
a wrong object raises FactError at the field's ``file:line:col`` (a Python object: its number and the
field), and a field that fleetrules does not know is reported as a warning, not dropped in silence.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from engine.codes import Code
from engine.collector import with_fewer_collections
from engine.errors import Diagnostic, FactError, Span, UsageError, did_you_mean, error, warning
from engine.inputs import controlplane
from engine.inputs.controlplane import ControlPlaneFlag
from engine.inputs.facts import (
    APPLIED_PLACEMENT,
    Binding,
    Cluster,
    ClusterStatus,
    Component,
    Condition,
    EvictionTask,
    Facts,
    ResourceModel,
    ResourceSummary,
    Taint,
    TaintPolicy,
    TargetCluster,
    TimeOutOfRange,
    Workload,
    binding_name,
    claim_of,
    parse_time,
    scheduling_taints,
)
from engine.inputs.files import Paths, display_path, expand
from engine.inputs.matching import taint_by_policies
from engine.inputs.policies import POLICY_KINDS, PolicyObject, convert_objects, convert_taint_policies
from engine.inputs.yaml import Document, Marks, load_text, read_text
from engine.kube import validation as k8s
from engine.kube.dependencies import dependencies
from engine.kube.interpreter import HookRule, customization_rule
from engine.kube.quantity import binary_si, parse_quantity
from engine.kube.resources import effective_requests
from engine.kube.validation import label_value_problems, qualified_name_problems

FACT_SUFFIXES = (".yaml", ".yml", ".json")
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
INT32_MAX = k8s.INT32_MAX
_STEP = re.compile(r"\[([0-9]+)\]|([^.\[]+)")

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
_TOP = {"apiVersion", "kind", "metadata", "spec", "status"}


class _Reader:
    """Validates one object; each problem at the field's position in its file, or, for a Python object,
    under a subject such as ``object 2 (Cluster m1)``."""

    def __init__(self, subject: str, problems: list[Diagnostic], obj: Any = None, marks: Marks | None = None) -> None:
        self.subject = subject
        self.what = ""  # "Cluster m1", once known
        self.problems = problems
        self.obj = obj
        self.marks = marks

    def span(self, path: str, of_key: bool = False) -> Span | None:
        """Where ``path`` (``spec.taints[0].effect``) stands in the file: the deepest part of it that exists."""
        if self.marks is None:
            return None
        container, key = self.obj, None
        steps = [(int(i) if i else name) for i, name in _STEP.findall(path)]
        while steps:
            found = False
            for size in range(len(steps), 0, -1):  # label keys hold dots: the longest key that exists
                step = steps[0] if size == 1 else ".".join(str(s) for s in steps[:size])
                inside = container if key is None else _child(container, key)
                if _child(inside, step) is not _MISSING:
                    container, key, steps, found = inside, step, steps[size:], True
                    break
            if not found:
                break
        return self.marks.span(container, key, of_key)

    def _add(self, make: Callable[..., Diagnostic], path: str, message: str, of_key: bool = False) -> None:
        text = f"{path}: {message}" if path else message
        span = self.span(path, of_key)
        if span is not None:
            self.problems.append(make(f"{self.what}: {text}" if self.what else text, span, code=Code.OBJECT))
        else:
            self.problems.append(make(text, subject=self.subject, code=Code.OBJECT))

    def fail(self, path: str, message: str) -> None:
        self._add(error, path, message)

    def warn(self, path: str, message: str) -> None:
        self._add(warning, path, message)

    def mapping(self, value: Any, path: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(path, f"expected a mapping, found {_type_name(value)}")
            return {}
        return value

    def sequence(self, value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(path, f"expected a list, found {_type_name(value)}")
            return []
        return value

    def string(self, obj: Mapping[str, Any], key: str, path: str, required: bool = False) -> str:
        value = obj.get(key)
        if value is None:
            if required:
                self.fail(_join(path, key), "required")
            return ""
        if not isinstance(value, str):
            self.fail(_join(path, key), f"expected a string, found {_type_name(value)}")
            return ""
        return value

    def integer(
        self, obj: Mapping[str, Any], key: str, path: str, minimum: int | None = None, maximum: int = INT32_MAX
    ) -> int | None:
        """An integer field; Kubernetes' replica counts and seconds are int32, larger ones are refused."""
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(_join(path, key), f"expected an integer, found {_type_name(value)}")
            return None
        if minimum is not None and value < minimum:
            self.fail(_join(path, key), f"must be at least {minimum}, found {value}")
            return None
        if value > maximum:
            self.fail(_join(path, key), f"must be at most {maximum} (an int32), found {value}")
            return None
        return value

    def boolean(self, obj: Mapping[str, Any], key: str, path: str) -> bool | None:
        value = obj.get(key)
        if value is None or isinstance(value, bool):
            return value
        self.fail(_join(path, key), f"expected true or false, found {_type_name(value)}")
        return None

    def time(self, obj: Mapping[str, Any], key: str, path: str) -> dt.datetime | None:
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, dt.datetime):
            return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        if isinstance(value, str):
            try:
                return parse_time(value)
            except TimeOutOfRange as exc:
                self.fail(_join(path, key), str(exc))
                return None
            except ValueError:
                pass
        self.fail(_join(path, key), f"expected an RFC 3339 time, found {value!r}")
        return None

    def labels(self, obj: Mapping[str, Any], key: str, path: str) -> dict[str, str]:
        raw = self.mapping(obj.get(key), _join(path, key))
        out: dict[str, str] = {}
        for k, v in raw.items():
            if not isinstance(k, str) or not isinstance(v, str):
                self.fail(_join(path, f"{key}.{k}"), f"label keys and values must be strings (quote {v!r})")
            else:
                out[k] = v
        return out

    def resources(self, obj: Mapping[str, Any], key: str, path: str) -> dict[str, Fraction]:
        """A corev1.ResourceList: resource name → quantity (``500m``, ``4Gi``, ``2``)."""
        raw = self.mapping(obj.get(key), _join(path, key))
        quantities = {str(name): self.quantity(raw, name, _join(path, key)) for name in raw}
        return {name: q for name, q in quantities.items() if q is not None}

    def quantity(self, obj: Mapping[str, Any], key: str, path: str) -> Fraction | None:
        try:
            return parse_quantity(obj.get(key))
        except ValueError as exc:
            self.fail(_join(path, key), str(exc))
            return None

    def known(self, obj: Mapping[str, Any], allowed: set[str], path: str) -> None:
        for key in obj:
            if key not in allowed:
                message = f"unknown field, not evaluated{did_you_mean(str(key), allowed)}"
                self._add(warning, _join(path, str(key)), message, of_key=True)


_MISSING = object()


def _child(container: Any, step: Any) -> Any:
    if isinstance(container, dict):
        return container.get(step, _MISSING)
    if isinstance(container, list) and isinstance(step, int) and 0 <= step < len(container):
        return container[step]
    return _MISSING


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number"}.get(
        type(value), type(value).__name__
    )


def _cluster(r: _Reader, obj: dict[str, Any], meta: dict[str, Any], source: str) -> Cluster:
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


def _not_propagated(obj: Mapping[str, Any]) -> bool:
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.rpartition("/")[0]
    return (
        group in _SKIPPED_GROUPS
        or api_version == "coordination.k8s.io/v1"
        or (api_version == "v1" and obj.get("kind") == "Event")
    )


def _api_enablements(r: _Reader, status: Mapping[str, Any]) -> frozenset[tuple[str, str]] | None:
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


def _resource_summary(r: _Reader, status: Mapping[str, Any]) -> ResourceSummary | None:
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


def _resource_models(r: _Reader, spec: Mapping[str, Any]) -> tuple[ResourceModel, ...]:
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


def _eviction_task(r: _Reader, raw: Any, path: str) -> EvictionTask:
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


def _split_group(r: _Reader, groups: Mapping[str, Any], key: str) -> str | None:
    value = r.string(groups, key, "spec.workloadAffinityGroups")
    return value if key in groups else None


def _binary(resources: Any) -> frozenset[str]:
    """The names in a ResourceList as written whose quantity is in the BinarySI format (``4Gi``)."""
    return (
        frozenset(str(k) for k, v in resources.items() if binary_si(v)) if isinstance(resources, dict) else frozenset()
    )


def _components(r: _Reader, spec: Mapping[str, Any]) -> tuple[Component, ...]:
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


def _binding(r: _Reader, obj: dict[str, Any], meta: dict[str, Any], source: str) -> Binding:
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
    r: _Reader, pod: Mapping[str, Any], key: str, path: str
) -> list[tuple[dict[str, Fraction], dict[str, Fraction]]]:
    out = []
    for i, raw in enumerate(r.sequence(pod.get(key), f"{path}.{key}")):
        where = f"{path}.{key}[{i}].resources"
        res = r.mapping(r.mapping(raw, f"{path}.{key}[{i}]").get("resources"), where)
        out.append((r.resources(res, "requests", where), r.resources(res, "limits", where)))
    return out


def _replicas(r: _Reader, obj: Mapping[str, Any]) -> tuple[int, dict[str, Fraction] | None]:
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


def _workload(r: _Reader, obj: dict[str, Any], meta: dict[str, Any], source: str) -> Workload:
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


def _check_metadata(r: _Reader, kind: str, meta: Mapping[str, Any]) -> None:
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


def _unnamed(r: _Reader, obj: Mapping[str, Any], kind: str, name: str) -> bool:
    """An object whose name the API server refuses for its kind (so no control plane holds it) is skipped, with a
    warning naming it: the rest of the snapshot is evaluated."""
    problems = k8s.name_problems(str(obj.get("apiVersion", "")), kind, name)
    if problems and name:
        shown = json.dumps(name, ensure_ascii=False)
        r.warn("metadata.name", f"Invalid value: {shown}: {'; '.join(problems)}; the API server refuses it: skipped")
    return bool(problems) and bool(name)


_INTERPRETER_KINDS = ("ResourceInterpreterCustomization", "ResourceInterpreterWebhookConfiguration")


def _health_hooks(r: _Reader, obj: dict[str, Any]) -> list[HookRule]:
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


def _objects(documents: Iterable[Document], origin: str) -> Iterator[tuple[str, Any, Marks | None, Span | None]]:
    """(subject, object, marks, where the document begins) of each object; ``kind: List`` expanded, and a typed
    list as the API server returns one (``DeploymentList``, ``ClusterList``: its items without their kind and
    apiVersion, which are the list's). A list whose ``items`` is null, as an empty one, has no objects."""
    for document in documents:
        value, marks = document.value, document.marks if origin else None
        if value is None:
            continue
        subject = f"{origin} document {document.index}" if origin else f"object {document.index}"
        at = None
        if marks is not None and document.start is not None:
            at = Span(marks.file, *document.start, document.start[0], document.start[1] + 1)
        kind = value.get("kind") if isinstance(value, dict) else None
        if isinstance(kind, str) and kind.endswith("List") and "items" in value and value.get("items") is None:
            continue
        if isinstance(kind, str) and kind.endswith("List") and isinstance(value.get("items"), list):
            typed = kind[: -len("List")] if kind != "List" else ""
            for item_index, item in enumerate(value["items"]):
                if typed and isinstance(item, dict) and "kind" not in item:
                    item = _typed(item, typed, value.get("apiVersion"), marks)
                yield f"{subject} items[{item_index}]", item, marks, None
        else:
            yield subject, value, marks, at


def _typed(item: dict[str, Any], kind: str, api_version: Any, marks: Marks | None) -> dict[str, Any]:
    """An item of a typed list with the kind and apiVersion the list gives it, at the item's position."""
    out = {"apiVersion": api_version, "kind": kind, **item} if isinstance(api_version, str) else {"kind": kind, **item}
    if marks is not None:
        marks.alias(out, item)
    return out


class FactSet:
    """Accumulates objects from several sources; `build` resolves workloads into bindings."""

    def __init__(self) -> None:
        self.problems: list[Diagnostic] = []
        self.clusters: dict[str, Cluster] = {}
        self.bindings: dict[str, Binding] = {}
        self.workloads: dict[tuple[str, str, str], Workload] = {}
        self.policies: list[PolicyObject] = []
        self.seen: dict[tuple[str, str, str], str] = {}
        self.sources: dict[str, str] = {}  # the text of each file, to show the lines problems are on
        self.taint_policies: list[PolicyObject] = []  # ClusterTaintPolicy objects
        self.health_hooks: list[HookRule] = []  # kinds a snapshot's interpreter objects can judge the health of
        self.priority_classes: dict[str, int] = {}  # the PriorityClasses' values, by name (schedulePriority)
        self.control_plane: list[ControlPlaneFlag] = []  # the flags its components' objects run with

    def add(self, subject: str, obj: Any, marks: Marks | None = None, at: Span | None = None) -> None:
        """Read one object; ``at``: where its document begins (what a value that is no mapping is reported at)."""
        r = _Reader(subject, self.problems, obj, marks)
        if not isinstance(obj, dict):
            message = f"expected a Kubernetes object (a mapping), found {_type_name(obj)}"
            if at is not None and not isinstance(obj, list):
                self.problems.append(error(message, at, code=Code.OBJECT))
            else:
                r.fail("", message)
            return
        kind = obj.get("kind")
        meta = r.mapping(obj.get("metadata"), "metadata")
        if not isinstance(kind, str) or not kind:
            r.fail("kind", "required")
            return
        name = meta.get("name") if isinstance(meta.get("name"), str) else "?"
        r.subject = f"{subject} ({kind} {name})"
        r.what = f"{kind} {name}"
        position = marks.position(obj) if marks is not None else None
        where = f"{marks.file}:{position.line}" if marks is not None and position is not None else subject
        before = len(self.problems)
        # keyed as the API server keys it: a namespaced object given without a namespace is in "default"
        namespace = str(meta.get("namespace") or ("" if kind in CLUSTER_SCOPED else "default"))
        identity = (kind, namespace, str(name))
        if identity in self.seen:
            r.fail(
                "metadata.name",
                f"duplicate {kind} {'/'.join(p for p in identity[1:] if p)} (also at {self.seen[identity]})",
            )
            return
        self.seen[identity] = where
        _check_metadata(r, kind, meta)
        if kind != "Cluster" and isinstance(meta.get("name"), str) and _unnamed(r, obj, kind, meta["name"]):
            return
        if kind in POLICY_KINDS:
            self.policies.append(PolicyObject(where, obj, marks))
            return
        if kind in _INTERPRETER_KINDS and str(obj.get("apiVersion", "")).startswith("config.karmada.io/"):
            self.health_hooks += _health_hooks(r, obj)
            return
        if kind == "ClusterTaintPolicy" and str(obj.get("apiVersion", "")).startswith("policy.karmada.io/"):
            self.taint_policies.append(PolicyObject(where, obj, marks))
            return
        component = controlplane.component_of(kind, namespace, str(name))
        if component is not None:  # still a template too (of a reserved namespace: never propagated)
            read = f"Deployment {namespace}/{name} ({where})"
            self.control_plane += [ControlPlaneFlag(f, component, read) for f in controlplane.deployment_flags(obj)]
        if kind == "Karmada" and str(obj.get("apiVersion", "")).startswith("operator.karmada.io/"):
            read = f"Karmada {namespace}/{name} ({where})"
            for component, flags in controlplane.operator_flags(obj).items():
                self.control_plane += [ControlPlaneFlag(f, component, read) for f in flags]
            return
        if kind == "PriorityClass" and str(obj.get("apiVersion", "")).startswith("scheduling.k8s.io/"):
            value = r.integer(obj, "value", "", minimum=-(2**31))  # still a template too, which policies may select
            if value is not None:
                self.priority_classes[str(name)] = value
        if kind not in ("Cluster", "ResourceBinding", "ClusterResourceBinding") and _not_propagated(obj):
            return  # the detector never sees it: not a resource template
        if kind in ("Cluster", "ResourceBinding", "ClusterResourceBinding"):
            r.known(obj, _TOP, "")  # a resource template's other fields are its content: propagated, not read
        if kind == "Cluster":
            cluster = _cluster(r, obj, meta, where)
            if len(self.problems) == before or not any(p.is_error for p in self.problems[before:]):
                self.clusters[cluster.name] = cluster
        elif kind in ("ResourceBinding", "ClusterResourceBinding"):
            binding = _binding(r, obj, meta, where)
            if not any(p.is_error for p in self.problems[before:]):
                self.bindings[binding.key] = binding
        else:
            workload = _workload(r, obj, meta, where)
            if not any(p.is_error for p in self.problems[before:]):
                self.workloads[(workload.kind, workload.namespace, workload.name)] = workload

    def build(self) -> Facts:
        policies, problems = convert_objects(sorted(self.policies, key=lambda p: p.source))
        self.problems += problems
        taint_policies, problems = convert_taint_policies(sorted(self.taint_policies, key=lambda p: p.source))
        self.problems += problems
        clusters = self._tainted(taint_policies) if taint_policies else self.clusters
        errors = [p for p in self.problems if p.is_error]
        if errors:
            raise FactError(errors, self.sources)
        bindings = dict(self.bindings)
        by_resource = {(b.kind, b.namespace, b.resource_name): b for b in bindings.values()}
        for (kind, namespace, name), workload in self.workloads.items():
            existing = by_resource.get((kind, namespace, name))
            if existing is not None:
                bindings[existing.key] = _with_labels(existing, workload)
                continue
            pending = Binding(
                namespace=namespace,
                name=binding_name(name, kind),
                kind=kind,
                api_version=workload.api_version,
                resource_name=name,
                replicas=workload.replicas,
                requirements=workload.requirements,
                uid=workload.uid,
                labels=workload.labels,
                source=workload.source,
                claim=claim_of(workload.labels, workload.annotations),
                cluster_scoped=not namespace,  # Karmada makes a ClusterResourceBinding for it
                from_workload=True,
                dependencies=workload.dependencies,
            )
            other = bindings.get(pending.key)
            if other is not None:  # two names GenerateBindingName makes one of (``a:b`` and ``a.b``): one is bound
                message = (
                    f"{kind} {name}: not bound: its binding {pending.key} is {other.kind} {other.resource_name}'s "
                    "(Karmada's detector: failed to update binding due to different owner reference UID; which "
                    "template holds it depends on which the detector saw first)"
                )
                self.problems.append(warning(message, subject=workload.source, code=Code.OBJECT))
                continue
            bindings[pending.key] = pending
        return Facts(
            clusters=tuple(sorted(clusters.values(), key=lambda c: c.name)),
            bindings=tuple(sorted(bindings.values(), key=lambda b: b.key)),
            workloads=tuple(sorted(self.workloads.values(), key=lambda w: (w.namespace, w.kind, w.name))),
            policies=tuple(policies),
            warnings=tuple(p for p in self.problems if not p.is_error),
            health_hooks=tuple(self.health_hooks),
            taint_policies=tuple(taint_policies),
            priority_classes=dict(sorted(self.priority_classes.items())),
            control_plane=tuple(self.control_plane),
            shown_clusters=tuple(sorted(self.clusters.values(), key=lambda c: c.name))
            if clusters != self.clusters
            else (),
        )

    def _tainted(self, policies: list[TaintPolicy]) -> dict[str, Cluster]:
        """The clusters as the ClusterTaintPolicy controller leaves them when it reconciles each (it does at once,
        and whenever a cluster's conditions change): a control plane's dump already shows its taints, and then
        nothing changes; a taint it adds is stamped with the latest transition of the conditions the policies
        read (the change that made the controller act). What changed is said where the Failover gate, which
        starts the controller, is known (engine.karmada.notes.scheduling_gate_notes)."""
        read = {m.type for p in policies for m in (*p.add_on, *p.remove_on)}
        out = {}
        for name, cluster in self.clusters.items():
            times = [c.since for c in cluster.conditions if c.type in read and c.since is not None]
            out[name] = taint_by_policies(cluster, policies, max(times, default=None))
        return out


def _with_labels(binding: Binding, workload: Workload) -> Binding:
    """The binding with its resource template's labels, and the template's claim (the detector reads it there)."""
    claim = claim_of(workload.labels, workload.annotations) or binding.claim
    api_version = binding.api_version or workload.api_version
    return replace(
        binding,
        labels=workload.labels,
        api_version=api_version,
        claim=claim,
        uid=binding.uid or workload.uid,
        dependencies=workload.dependencies,
    )


def fact_files(paths: Paths) -> list[Path]:
    return expand(paths, FACT_SUFFIXES)


@with_fewer_collections(off=True)
def load_facts(
    paths: Paths = (), objects: Iterable[Mapping[str, Any]] = (), texts: Iterable[tuple[str, str]] = ()
) -> Facts:
    """Facts from YAML/JSON files and directories and from Python objects; raises FactError (and
    UsageError for arguments of the wrong kind)."""
    if isinstance(objects, (Mapping, str, bytes)) or not isinstance(objects, Iterable):
        raise UsageError(f"objects: expected a list of Kubernetes objects (mappings), found {type(objects).__name__}")
    if isinstance(texts, (Mapping, str, bytes)) or not isinstance(texts, Iterable):
        raise UsageError(f"texts: expected a list of (name, text) pairs, found {type(texts).__name__}")
    texts = list(texts)
    for item in texts:
        if not (isinstance(item, tuple) and len(item) == 2 and all(isinstance(x, str) for x in item)):
            raise UsageError(f"texts: expected (name, text) pairs of strings, found {item!r:.60}")
    facts = FactSet()
    read: list[tuple[str, str | None, list[Diagnostic]]] = []
    for path in fact_files(paths):
        shown = display_path(path)
        read.append((shown, *read_text(path, shown, "fact files")))
    read += [(name, text, []) for name, text in texts]  # YAML or JSON already read (standard input)
    for shown, text, problems in read:
        documents: list[Document] = []
        if text is not None:
            facts.sources[shown] = text
            documents, problems = load_text(text, shown)
        facts.problems += problems
        if not any(d.value is not None for d in documents) and not problems:
            facts.problems.append(warning("no objects in this file", subject=shown, code=Code.OBJECT))
        for subject, obj, marks, at in _objects(documents, shown):
            facts.add(subject, obj, marks, at)
    python = [Document(obj, index, Marks("<python>")) for index, obj in enumerate(objects, start=1)]
    for subject, obj, marks, at in _objects(python, ""):
        facts.add(subject, obj, marks, at)
    return facts.build()
