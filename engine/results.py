"""Typed evaluation results: placements, evictions and the timeline.

Everything that crosses a stage after scheduling is one of these frozen dataclasses; renderers and
reviewers read them, never an engine's own structures.
"""

from __future__ import annotations

import datetime as dt
import enum
from abc import abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.errors import Diagnostic
from engine.inputs.facts import EvictionTask, rfc3339, task_data


@dataclass(frozen=True)
class Reason:
    """Why a cluster was rejected for a binding: the rule, where it is written, and its message."""

    rule: str
    source: str  # FILE:LINE
    message: str
    # the scheduler's words for the filter that failed, as its unschedulable message counts them
    summary: str = field(default="", compare=False)


@dataclass(frozen=True)
class NotPropagated:
    """A resource template the detector never binds, and why, in words and as a code."""

    binding: str  # the binding key the template would have had
    kind: str
    namespace: str
    name: str
    reason: str  # ReservedNamespace, SkippedNamespace, ManagedByAPIServer, InvalidBindingName
    message: str

    def data(self) -> dict[str, str]:
        out = {"binding": self.binding, "kind": self.kind}
        if self.namespace:
            out["namespace"] = self.namespace
        return out | {"name": self.name, "reason": self.reason, "message": self.message}


@dataclass(frozen=True)
class Dependency:
    """One object a workload references (the resource interpreter's GetDependencies), as the dependencies
    distributor binds it: ``binding`` its attached binding, "" when the snapshot does not hold the object."""

    kind: str
    name: str  # "" for a label selector's match when nothing matched (``selector``)
    binding: str = ""
    selector: str = ""  # a reference by labels (a ServiceImport's EndpointSlices): KEY=VALUE

    @property
    def missing(self) -> bool:
        return not self.binding

    def data(self) -> dict[str, str]:
        out = {"kind": self.kind}
        out |= {"name": self.name} if self.name else {}
        out |= {"selector": self.selector} if self.selector else {}
        return out | ({"binding": self.binding} if self.binding else {"missing": "not in the snapshot"})

    def words(self) -> str:
        what = f"{self.kind} {self.name}" if self.name else f"{self.kind}s labelled {self.selector}"
        return f"{what} → {self.binding}" if self.binding else f"{what} (missing: not in the snapshot)"


@dataclass(frozen=True)
class Attached:
    """A binding the dependencies distributor makes for a dependency: its clusters are those of the bindings that
    require it (spec.requiredBy), and of its own policy's placement too where one selects it (``placed``)."""

    binding: str
    kind: str
    namespace: str
    name: str
    required_by: tuple[str, ...]
    clusters: tuple[str, ...]  # the union, by name: where its Works are
    placed: tuple[str, ...] = ()  # its own placement's clusters, when a policy selects it too

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"binding": self.binding, "kind": self.kind, "name": self.name}
        out |= {"requiredBy": list(self.required_by), "clusters": list(self.clusters)}
        return out | ({"ownPlacement": list(self.placed)} if self.placed else {})


# how many cluster names a summary line shows before "and N more"
SHOWN_NAMES = 3


@dataclass(frozen=True)
class Rejection:
    """One line of a placement's rejections as Karmada's FitError counts them: a reason, how many clusters
    it rejected, and the first of them by name (at most ``SHOWN_NAMES``, unless asked for more)."""

    reason: Reason
    count: int
    clusters: tuple[str, ...]


class Summarized(Mapping[str, tuple[Reason, ...]]):
    """Rejections that know their summary without being walked cluster by cluster (engine.schedule.views):
    a placement's rejections are shared by every binding of its policy."""

    __slots__ = ()

    @abstractmethod
    def summary(self, names: int) -> tuple[Rejection, ...]: ...

    @abstractmethod
    def histogram(self) -> Counter[str]: ...

    @abstractmethod
    def parts(self) -> tuple[Mapping[str, tuple[Reason, ...]], Mapping[str, tuple[Reason, ...] | None]]:
        """The shared rejections these are made of, and this binding's changes to them (None: not rejected)."""


def summarize(rejected: Mapping[str, tuple[Reason, ...]], names: int = SHOWN_NAMES) -> tuple[Rejection, ...]:
    """``rejected`` by reason: each reason with its count of clusters and the first ``names`` of them by
    name, the most frequent reason first (then by rule, source and message)."""
    if isinstance(rejected, Summarized):
        return rejected.summary(names)
    return rejections_of(rejected.items(), names)


def rejections_of(items: Iterable[tuple[str, tuple[Reason, ...]]], names: int) -> tuple[Rejection, ...]:
    """The summary of (cluster, reasons) pairs, walked once."""
    counts: Counter[Reason] = Counter()
    first: dict[Reason, list[str]] = {}
    for cluster, reasons in items:
        for reason in reasons:
            counts[reason] += 1
            shown = first.setdefault(reason, [])
            if len(shown) < names:
                shown.append(cluster)
    return order(Rejection(r, n, tuple(sorted(first[r]))) for r, n in counts.items())


def order(rejections: Iterable[Rejection]) -> tuple[Rejection, ...]:
    """Rejections as summaries list them: the most frequent first, then by rule, source and message."""
    return tuple(sorted(rejections, key=lambda x: (-x.count, x.reason.rule, x.reason.source, x.reason.message)))


def histogram(rejected: Mapping[str, tuple[Reason, ...]]) -> Counter[str]:
    """FitError's histogram: each rejected cluster counted once, by its first reason's words."""
    if isinstance(rejected, Summarized):
        return rejected.histogram()
    return Counter(reasons[0].summary or reasons[0].message for reasons in rejected.values() if reasons)


@dataclass(frozen=True)
class FactRef:
    """A fact a decision matched, as shown in explanations."""

    alias: str
    fact_type: str
    description: str
    derived_by: tuple[Explanation, ...] = ()


@dataclass(frozen=True)
class Explanation:
    rule: str
    source: str
    action: str  # what the rule did: "rejected", "preferred (+W)", "derived FACT"
    facts: tuple[FactRef, ...]


@dataclass(frozen=True)
class BindingState:
    """A binding at the evaluation time, after the failover and graceful eviction controllers and the
    binding controller ran (eval --now)."""

    tasks: tuple[EvictionTask, ...] = ()  # the graceful eviction tasks still open
    works: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # cluster with a Work → injected labels
    tasks_ended: tuple[str, ...] = ()  # clusters whose task the graceful eviction controller removed then
    works_deleted: tuple[str, ...] = ()  # clusters whose Work the binding controller deleted then

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tasks": [task_data(t) for t in self.tasks]}
        out["works"] = {c: dict(labels) for c, labels in sorted(self.works.items())}
        if self.tasks_ended:
            out["tasksEnded"] = list(self.tasks_ended)
        if self.works_deleted:
            out["worksDeleted"] = list(self.works_deleted)
        return out


@dataclass(frozen=True)
class Placement:
    binding: str  # NS/NAME
    policy: str | None
    clusters: tuple[str, ...]  # selected
    # sorted by cluster name; shared views for large fleets (engine.views), equal to plain tuples and dicts
    feasible: Sequence[str]
    scores: Mapping[str, int]
    rejected: Mapping[str, tuple[Reason, ...]]
    unschedulable: bool
    message: str = ""  # why it is unschedulable, as the scheduler's condition message
    previous: tuple[str, ...] = ()  # spec.clusters before this evaluation
    affinity_term: str | None = None  # the clusterAffinities term used
    # why the scheduler ran this binding (engine.schedule.reschedule.Trigger); "" when it is settled
    trigger: str = ""
    settled: bool = False  # not run: it keeps spec.clusters (previous)
    settled_why: str = ""  # with settled, why when it is not engine.schedule.reschedule.SETTLED
    # a multi-component workload scheduled as a whole: each selected cluster's spec.clusters[].components
    components: tuple[tuple[str, int], ...] = ()
    # cluster → replicas of each selected cluster (spec.clusters[].replicas; 0 for a non-workload)
    replicas: Mapping[str, int] = field(default_factory=dict)
    at_now: BindingState | None = None  # with an evaluation time: the binding's tasks and Works then
    # with propagateDeps: what the workload references, each bound to its clusters (or missing from the snapshot)
    dependencies: tuple[Dependency, ...] = ()
    # (cluster → explanations of every decision about it), for `fleetrules explain`
    explanations: Mapping[str, tuple[Explanation, ...]] = field(default_factory=dict, compare=False, repr=False)


class EntryKind(enum.StrEnum):
    """What a timeline entry records: an event of the events file, or what a controller did."""

    HEALTH = "health"
    TAINT = "taint"
    UNTAINT = "untaint"
    READY = "ready"
    CONDITION = "condition"
    EVICTED = "evicted"
    EVICTION_FAILED = "eviction-failed"
    SCHEDULED = "scheduled"
    UNSCHEDULABLE = "unschedulable"
    WORK_CREATED = "work-created"
    WORK_DELETED = "work-deleted"
    LABELS = "labels"
    TASK_REMOVED = "task-removed"
    # fleetrules': the timeline from here is what happened since an earlier moment, again and again (a loop the
    # controllers and the scheduler keep up: a binding evicted and placed back), until an event changes it
    REPEATS = "repeats"


@dataclass(frozen=True)
class Entry:
    """One thing that happened, for the timeline and for `eval`'s evictions."""

    time: dt.datetime
    kind: EntryKind
    binding: str
    cluster: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)  # plain data: strings, numbers, lists, mappings
    task: EvictionTask | None = None  # of an eviction: the task it created
    # of an eviction a rule decided, in an explained session: the rule and the facts it matched (for `explain`)
    explanation: Explanation | None = field(default=None, compare=False)

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"time": rfc3339(self.time), "event": str(self.kind), "binding": self.binding}
        if self.cluster:
            out["cluster"] = self.cluster
        if self.task is not None:
            out["task"] = task_data(self.task)
        return out | dict(self.detail)


@dataclass(frozen=True)
class Eviction:
    """A failover eviction at the evaluation time: the task created, or why none could be (``error``)."""

    time: dt.datetime
    binding: str
    cluster: str
    task: EvictionTask | None
    error: str = ""
    rule: str = ""  # the rule whose `evict` action asked for it, if one did
    source: str = ""  # FILE:LINE of that rule, or of the failover block whose state preservation failed
    because: str = ""  # which controller evicted, and the condition or taint that triggered it (fleetrules' words)
    clusters: tuple[str, ...] = ()  # the binding's clusters afterwards
    injected_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # cluster → labels
    # why the member cluster would refuse the workload with those labels (fleetrules' finding; Karmada
    # injects them unchecked)
    label_problems: tuple[str, ...] = ()
    # of an eviction a rule decided (``rule``), where placements are explained: the facts it matched, which
    # `explain --now` shows as it shows a rejection's (not part of ``data``)
    explanation: Explanation | None = field(default=None, compare=False)

    @property
    def failed(self) -> bool:
        return self.task is None

    def data(self) -> dict[str, Any]:
        """As JSON and YAML output show it; the task with Karmada's field names."""
        out: dict[str, Any] = {"time": rfc3339(self.time), "event": "eviction-failed" if self.failed else "evicted"}
        out |= {"binding": self.binding, "cluster": self.cluster}
        if self.task is not None:
            out["task"] = task_data(self.task)
        if self.because:
            out["because"] = self.because
        if self.error:
            out["error"] = self.error
        if self.rule:
            out["rule"] = self.rule
        if self.source:
            out["source"] = self.source
        if self.task is not None:
            out["clusters"] = list(self.clusters)
            out["injectedLabels"] = {c: dict(labels) for c, labels in self.injected_labels.items()}
        if self.label_problems:
            out["labelProblems"] = list(self.label_problems)
        return out


@dataclass(frozen=True)
class Result:
    placements: tuple[Placement, ...]
    evictions: tuple[Eviction, ...] = ()
    unmatched: tuple[str, ...] = ()  # bindings no policy selects
    now: dt.datetime | None = None
    warnings: tuple[Diagnostic, ...] = field(default=(), compare=False)
    # resource templates the detector never binds (reserved and skipped namespaces, …), each with its reason
    not_propagated: tuple[NotPropagated, ...] = ()
    # the bindings the dependencies distributor makes for the workloads' dependencies (propagateDeps)
    attached: tuple[Attached, ...] = ()

    def placement(self, binding: str) -> Placement:
        for p in self.placements:
            if p.binding == binding:
                return p
        raise KeyError(binding)
