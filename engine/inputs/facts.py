"""Cluster, workload and binding facts: what the rest of fleetrules
reads of Karmada objects, typed. engine.inputs.objects builds them from YAML and Python objects.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from fractions import Fraction
from functools import cached_property
from typing import Any, TypeVar

from engine.errors import Diagnostic
from engine.inputs.controlplane import ControlPlaneFlag
from engine.kube.dependencies import Dependent
from engine.kube.interpreter import HookRule
from engine.kube.validation import label_value_problems, qualified_name_problems
from engine.syntax import ast


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str
    time_added: dt.datetime | None = None


@dataclass(frozen=True)
class Condition:
    """One of a Cluster's status.conditions: its type, status and lastTransitionTime."""

    type: str
    status: str
    since: dt.datetime | None = None


@dataclass(frozen=True)
class MatchCondition:
    """A ClusterTaintPolicy's addOnConditions or removeOnConditions item."""

    type: str
    operator: str  # In | NotIn; any other matches nothing (the CRD has no enum)
    values: tuple[str, ...]


@dataclass(frozen=True)
class TaintPolicy:
    """A ClusterTaintPolicy (policy.karmada.io/v1alpha1): the taints its controller adds to the clusters of
    ``targets`` (every cluster when None) whose conditions match ``add_on``, and removes when they match
    ``remove_on`` (engine.inputs.matching.taint_by_policies)."""

    name: str
    created: dt.datetime | None
    targets: tuple[ast.ClusterStmt, ...] | None
    add_on: tuple[MatchCondition, ...]
    remove_on: tuple[MatchCondition, ...]
    taints: tuple[Taint, ...]
    source: str = "<python>"


def cluster_taint_problem(taint: Taint) -> str:
    """Why a Cluster cannot carry ``taint`` (lifted.ValidateClusterTaints, the cluster webhook: a label name
    for a key, a label value, the effect NoSchedule or NoExecute); "" when it can."""
    problems = [*qualified_name_problems(taint.key), *label_value_problems(taint.value)]
    if taint.effect not in ("NoSchedule", "NoExecute"):
        problems.append(f'effect: Unsupported value: "{taint.effect}": supported values: "NoSchedule", "NoExecute"')
    return "; ".join(problems)


NOT_READY = "cluster.karmada.io/not-ready"
UNREACHABLE = "cluster.karmada.io/unreachable"


def scheduling_taints(taints: tuple[Taint, ...], ready: str | None, since: dt.datetime | None) -> tuple[Taint, ...]:
    """The cluster controller's NoSchedule taints for the Ready condition's status (``None``: no Ready
    condition), as taintClusterByCondition (pkg/controllers/cluster/cluster_controller.go) sets them at once:
    False gets not-ready, Unknown unreachable, a missing condition not-ready, True neither."""
    wanted = {"False": NOT_READY, "Unknown": UNREACHABLE, None: NOT_READY}.get(ready)
    kept = tuple(
        t for t in taints if t.effect != "NoSchedule" or t.key not in (NOT_READY, UNREACHABLE) or t.key == wanted
    )
    if wanted is None or any(t.key == wanted and t.effect == "NoSchedule" for t in kept):
        return kept
    return (*kept, Taint(wanted, "", "NoSchedule", since))


Resources = Mapping[str, Fraction]  # a corev1.ResourceList: resource name → exact quantity


@dataclass(frozen=True)
class ResourceSummary:
    """A Cluster's status.resourceSummary: what the general replica estimator reads."""

    allocatable: Resources = field(default_factory=dict)
    allocated: Resources = field(default_factory=dict)
    allocating: Resources = field(default_factory=dict)
    allocatable_modelings: tuple[tuple[int, int], ...] = ()  # (grade, count)
    binary: frozenset[str] = frozenset()  # the allocatable quantities written in the BinarySI format


@dataclass(frozen=True)
class ResourceModel:
    """One spec.resourceModels item: a grade of node, by the minimum of each resource range."""

    grade: int
    minimums: Resources


@dataclass(frozen=True)
class Cluster:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    provider: str = ""
    region: str = ""
    zones: tuple[str, ...] = ()
    taints: tuple[Taint, ...] = ()
    ready: str = "True"  # status of the Ready condition: True | False | Unknown
    ready_since: dt.datetime | None = None
    conditions: tuple[Condition, ...] = ()  # status.conditions, in order (what ClusterTaintPolicies read)
    deleting: bool = False
    source: str = "<python>"
    resource_summary: ResourceSummary | None = None  # None: status.resourceSummary absent
    resource_models: tuple[ResourceModel, ...] = ()
    # status.apiEnablements as (groupVersion, kind); None when the status does not report them
    api_enablements: frozenset[tuple[str, str]] | None = None
    complete_api_enablements: bool = False  # the CompleteAPIEnablements condition is True
    # how the cluster controller changes the snapshot's taints for its Ready condition (``+KEY:EFFECT``, ``-…``): a
    # change of the cluster's spec, which requeues the bindings its affinity matches (engine.schedule.reschedule)
    controller_changes: tuple[str, ...] = field(default=(), compare=False)

    @cached_property
    def no_execute(self) -> bool:
        """Whether it has a NoExecute taint (the only clusters the taint manager evicts from)."""
        return any(t.effect == "NoExecute" for t in self.taints)

    def api_enablement(self, api_version: str, kind: str) -> str:
        """Cluster.APIEnablement (cluster_helper.go): APIEnabled when listed; else APIDisabled if the list
        is complete, APIUnknown if not."""
        if self.api_enablements is not None and (api_version, kind) in self.api_enablements:
            return "APIEnabled"
        return "APIDisabled" if self.complete_api_enablements else "APIUnknown"


@dataclass(frozen=True)
class Claim:
    """The policy a resource template (or its binding) is claimed by, as the detector marks it: the
    ``propagationpolicy.karmada.io/{namespace,name}`` annotations with the permanent-id label, or the
    ``clusterpropagationpolicy.karmada.io/name`` annotation with its permanent-id label."""

    policy: str  # NAMESPACE/NAME of a PropagationPolicy, NAME of a ClusterPropagationPolicy
    cluster_scoped: bool


PP_NAMESPACE = "propagationpolicy.karmada.io/namespace"
PP_NAME = "propagationpolicy.karmada.io/name"
PP_ID = "propagationpolicy.karmada.io/permanent-id"
CPP_NAME = "clusterpropagationpolicy.karmada.io/name"
CPP_ID = "clusterpropagationpolicy.karmada.io/permanent-id"
APPLIED_PLACEMENT = "policy.karmada.io/applied-placement"


def claim_of(labels: Mapping[str, str], annotations: Mapping[str, str]) -> Claim | None:
    """pkg/detector/policy.go propagateResource, steps 1 and 2."""
    if annotations.get(PP_NAMESPACE) and annotations.get(PP_NAME) and labels.get(PP_ID):
        return Claim(f"{annotations[PP_NAMESPACE]}/{annotations[PP_NAME]}", False)
    if annotations.get(CPP_NAME) and labels.get(CPP_ID):
        return Claim(annotations[CPP_NAME], True)
    return None


@dataclass(frozen=True)
class Workload:
    api_version: str
    kind: str
    namespace: str
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    status: Any = None
    source: str = "<python>"
    annotations: Mapping[str, str] = field(default_factory=dict)
    # what Karmada's resource interpreter reads of it (pkg/resourceinterpreter/default/native/replica.go)
    replicas: int = 0
    requirements: Resources | None = None  # the pod template's effective requests; None: none
    uid: str = ""
    # what the default resource interpreter says it depends on (engine.kube.dependencies)
    dependencies: tuple[Dependent, ...] = ()


@dataclass(frozen=True)
class TargetCluster:
    name: str
    replicas: int = 0


@dataclass(frozen=True)
class Component:
    """One spec.components item of a binding (MultiplePodTemplatesScheduling): a pod template of a
    multi-component workload (a FlinkDeployment's jobmanager and taskmanager), its replicas in one set."""

    name: str
    replicas: int
    requirements: Resources | None = None  # replicaRequirements.resourceRequest, per replica
    binary: frozenset[str] = frozenset()  # the requested quantities written in the BinarySI format


@dataclass(frozen=True)
class EvictionTask:
    """A GracefulEvictionTask of a binding (pkg/apis/work/v1alpha2/binding_types.go)."""

    from_cluster: str
    purge_mode: str = "Gracefully"
    reason: str = ""
    message: str = ""
    producer: str = ""
    replicas: int | None = None
    grace_period_seconds: int | None = None
    suppress_deletion: bool | None = None
    preserved_label_state: Mapping[str, str] = field(default_factory=dict)
    clusters_before_failover: tuple[str, ...] = ()
    creation_timestamp: dt.datetime | None = None


@dataclass(frozen=True)
class ClusterStatus:
    """One status.aggregatedStatus item: the workload's health and status in one cluster."""

    cluster: str
    health: str = "Unknown"  # Healthy | Unhealthy | Unknown
    status: Any = None
    # fleetrules extension: since when the health has been what it is (Karmada keeps this in memory)
    since: dt.datetime | None = None


@dataclass(frozen=True)
class Binding:
    """A ResourceBinding, or the pending one Karmada would create for a workload."""

    namespace: str
    name: str
    kind: str
    api_version: str = ""
    resource_name: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    replicas: int = 0
    clusters: tuple[TargetCluster, ...] = ()
    eviction_tasks: tuple[EvictionTask, ...] = ()
    aggregated_status: tuple[ClusterStatus, ...] = ()
    # spec.workloadAffinityGroups as stored on a real binding ("key=value"); None: derive from the policy
    affinity_group: str | None = None
    anti_affinity_group: str | None = None
    observed_affinity_name: str = ""
    source: str = "<python>"
    claim: Claim | None = None  # from the workload's metadata, or the binding's when there is no workload
    # what the scheduler compares (pkg/scheduler/scheduler.go doScheduleBinding)
    applied_placement: str = ""  # the policy.karmada.io/applied-placement annotation (JSON)
    # spec.failover as JSON (None: absent): what the failover controllers read; the detector copies it from
    # the policy, so it is the policy's but for a binding a Lazy policy's change did not refresh
    failover: str | None = None
    replica_scheduling: str | None = None  # spec.placement.replicaScheduling.replicaSchedulingType, if set
    reschedule_triggered_at: dt.datetime | None = None
    last_scheduled_time: dt.datetime | None = None
    cluster_scoped: bool = False  # a ClusterResourceBinding
    # spec.replicaRequirements.resourceRequest (None: no replicaRequirements) and spec.resource.uid
    requirements: Resources | None = None
    uid: str = ""
    components: tuple[Component, ...] = ()  # spec.components (MultiplePodTemplatesScheduling)
    # no ResourceBinding in the facts: the binding the detector would make for the workload
    from_workload: bool = False
    # its template's dependencies (engine.kube.dependencies), which the dependencies distributor binds
    dependencies: tuple[Dependent, ...] = field(default=(), compare=False)
    # a binding the dependencies distributor made (spec.requiredBy, no spec.placement): not the scheduler's
    attached: bool = False
    schedule_priority: int | None = None  # spec.schedulePriority.priority (None: absent, 0 to the queue)

    @cached_property
    def key(self) -> str:
        """NAMESPACE/NAME of a ResourceBinding; NAME alone of a ClusterResourceBinding (no RB key is one)."""
        return self.name if self.cluster_scoped else f"{self.namespace}/{self.name}"

    @cached_property
    def cluster_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.clusters)

    @cached_property
    def status_by_cluster(self) -> dict[str, ClusterStatus]:
        """status.aggregatedStatus by cluster: the first item of each."""
        out: dict[str, ClusterStatus] = {}
        for status in self.aggregated_status:
            out.setdefault(status.cluster, status)
        return out

    @property
    def replicas_by_cluster(self) -> dict[str, int]:
        """spec.clusters as cluster → replicas."""
        return {t.name: t.replicas for t in self.clusters}


@dataclass(frozen=True)
class Facts:
    clusters: tuple[Cluster, ...] = ()
    bindings: tuple[Binding, ...] = ()
    workloads: tuple[Workload, ...] = ()
    # the PropagationPolicy / ClusterPropagationPolicy objects found among the facts, converted
    policies: tuple[ast.Policy, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()
    # kinds whose health the snapshot's ResourceInterpreterCustomizations and webhooks interpret
    health_hooks: tuple[HookRule, ...] = ()
    # the ClusterTaintPolicies, in the order their controller applies them (by creationTimestamp, then name)
    taint_policies: tuple[TaintPolicy, ...] = ()
    # the clusters as the snapshot shows them, when its ClusterTaintPolicies changed their taints (the policies'
    # controller runs only with the Failover feature gate on: engine.pipeline.scheduler_for); else ()
    shown_clusters: tuple[Cluster, ...] = ()
    # the Kubernetes PriorityClasses' values, by name (a policy's schedulePriority reads them)
    priority_classes: Mapping[str, int] = field(default_factory=dict)
    # the control plane's flags, read from its components' Deployments or a Karmada operator object
    control_plane: tuple[ControlPlaneFlag, ...] = ()


Fact = TypeVar("Fact", "Binding", "EvictionTask")
# a class's fields, and each of its cached properties with the fields it is made of (None: any)
_FIELDS: dict[type, tuple[frozenset[str], tuple[tuple[str, frozenset[str] | None], ...]]] = {}
# the fields each of a binding's cached properties is made of: kept by ``evolve`` while they stay
_MADE_OF = {
    "key": frozenset({"name", "namespace", "cluster_scoped"}),
    "cluster_names": frozenset({"clusters"}),
    "status_by_cluster": frozenset({"aggregated_status"}),
}


def evolve(fact: Fact, **changes: Any) -> Fact:
    """``dataclasses.replace`` for the frozen facts a simulation changes at every step (a binding's targets and
    tasks): the same fields but ``changes``, without ``__init__`` (27 fields set one by one: a twentieth of a
    resilience sweep); a cached property made of fields that changed is made again when read, the others kept."""
    cls = type(fact)
    known = _FIELDS.get(cls)
    if known is None:
        cached = tuple(
            (n, _MADE_OF.get(n) if cls is Binding else None)
            for n, v in vars(cls).items()
            if isinstance(v, cached_property)
        )
        known = _FIELDS[cls] = (frozenset(f.name for f in fields(cls)), cached)
    if not changes.keys() <= known[0]:
        raise TypeError(f"{cls.__name__} has no field {sorted(changes.keys() - known[0])[0]!r}")
    made = object.__new__(cls)
    state = made.__dict__
    state.update(fact.__dict__)
    for name, made_of in known[1]:
        if made_of is None or not made_of.isdisjoint(changes):
            state.pop(name, None)
    state.update(changes)
    return made


def binding_name(name: str, kind: str) -> str:
    """names.GenerateBindingName: the binding Karmada creates for a resource template, ``NAME-KIND`` lowercased,
    with each ``:`` of the name (RBAC objects' names are path segments: ``system:node``) turned into ``.``."""
    return f"{name.replace(':', '.')}-{kind}".lower()


# Times past this year are refused: durations of up to int32 seconds (68 years) are added to them.
LAST_YEAR = 9800


class TimeOutOfRange(ValueError):
    """An RFC 3339 time past LAST_YEAR."""


def parse_time(text: str) -> dt.datetime:
    """RFC 3339 (``2026-01-02T03:04:05Z``) → an aware datetime; raises ValueError."""
    value = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone")
    if value.year > LAST_YEAR:
        raise TimeOutOfRange(f"{text!r} is past the year {LAST_YEAR}, beyond the times fleetrules computes with")
    return value


def task_data(task: EvictionTask) -> dict[str, Any]:
    """A GracefulEvictionTask with Karmada's field names (binding_types.go); unset fields omitted."""
    data: dict[str, Any] = {"fromCluster": task.from_cluster, "purgeMode": task.purge_mode}
    if task.replicas is not None:
        data["replicas"] = task.replicas
    data["reason"] = task.reason
    if task.message:
        data["message"] = task.message
    data["producer"] = task.producer
    if task.grace_period_seconds is not None:
        data["gracePeriodSeconds"] = task.grace_period_seconds
    if task.suppress_deletion is not None:
        data["suppressDeletion"] = task.suppress_deletion
    if task.preserved_label_state:
        data["preservedLabelState"] = dict(sorted(task.preserved_label_state.items()))
    if task.clusters_before_failover:
        data["clustersBeforeFailover"] = list(task.clusters_before_failover)
    if task.creation_timestamp is not None:
        data["creationTimestamp"] = rfc3339(task.creation_timestamp)
    return data


def rfc3339(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
