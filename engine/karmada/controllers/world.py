"""The world Karmada's controllers share (bindings, clusters, the clock) and a policy's failover behaviour as they
read it (pkg/apis/policy/v1alpha1/propagation_types.go FailoverBehavior; statePreservation by
pkg/util/helper/failover.go), with the time arithmetic of their clocks.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from engine.compile.encoding import application_failover_fact, tolerations
from engine.inputs.facts import Binding, Cluster, ClusterStatus, EvictionTask
from engine.karmada.gates import DEFAULT_CONTROLLERS, Controllers
from engine.kube import gojson
from engine.kube.jsonpath import evaluate as jsonpath
from engine.kube.jsonpath_syntax import JsonPathError
from engine.kube.jsonpath_syntax import parse as parse_jsonpath
from engine.kube.validation import label_value_problems
from engine.results import Explanation
from engine.syntax import ast
from engine.syntax.schema import DEFAULT_GRACE_PERIOD_SECONDS, DEFAULT_TOLERATION_SECONDS, DEPRECATED_PURGE_MODES

APP_PRODUCER = "resource-binding-application-failover-controller"


TAINT_PRODUCER = "TaintManager"


@dataclass(frozen=True)
class Preservation:
    rules: tuple[tuple[str, str], ...]  # (aliasLabelName, jsonPath)
    source: str  # FILE:LINE of the failover block


@dataclass(frozen=True)
class Failover:
    """A policy's failover behaviour, defaults applied (pkg/util/validation/validation.go ValidateApplicationFailover;
    the CRD's defaults in pkg/apis/policy/v1alpha1/propagation_types.go)."""

    app: bool = False
    toleration_seconds: int = DEFAULT_TOLERATION_SECONDS
    app_purge: str = "Gracefully"
    grace_seconds: int | None = DEFAULT_GRACE_PERIOD_SECONDS
    app_state: Preservation | None = None
    cluster_purge: str = "Gracefully"
    cluster_state: Preservation | None = None
    tolerations: tuple[Mapping[str, Any], ...] = ()


def failover_of(policy: ast.Policy, controllers: Controllers = DEFAULT_CONTROLLERS) -> Failover:
    f = Failover(tolerations=tuple(tolerations(policy, seconds=True)), cluster_purge=controllers.taint_purge_mode)
    for block in policy.statements:
        if not isinstance(block, ast.Failover):
            continue
        state = tuple((s.alias.value, s.json_path.value) for s in block.statements if isinstance(s, ast.Preserve))
        # statePreservation needs the StatefulFailoverInjection gate (buildTaskOptions, taint_manager.go)
        kept = state and controllers.stateful_failover_injection
        preservation = Preservation(state, f"{block.span.file}:{block.span.line}") if kept else None
        purge = next((s.mode.value for s in block.statements if isinstance(s, ast.Purge)), "Gracefully")
        purge = DEPRECATED_PURGE_MODES.get(purge, purge)
        app = application_failover_fact(policy) if block.kind.value == "application" else None
        if app is not None:
            grace = next((s.duration.seconds for s in block.statements if isinstance(s, ast.Grace)), None)
            f = replace(
                f,
                app=True,
                toleration_seconds=app["toleration_seconds"],
                app_purge=purge,
                grace_seconds=(grace or DEFAULT_GRACE_PERIOD_SECONDS) if purge == "Gracefully" else None,
                app_state=preservation,
            )
        else:
            f = replace(f, cluster_purge=purge, cluster_state=preservation)
    return f


def task_problems(task: EvictionTask) -> list[str]:
    """The GracefulEvictionTask validation (kubebuilder markers of binding_types.go)."""
    problems = []
    if not 1 <= len(task.reason) <= 32 or not re.fullmatch(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?", task.reason):
        problems.append(f"reason {task.reason!r} must be CamelCase, 1 to 32 characters")
    if len(task.message) > 1024:
        problems.append("message must be at most 1024 characters")
    if task.grace_period_seconds is not None and task.suppress_deletion is not None:
        problems.append("gracePeriodSeconds cannot be set with suppressDeletion")
    if not task.producer:
        problems.append("producer is required")
    return problems


class PreservationError(Exception):
    """A state preservation rule could not be evaluated: no task is built (Karmada cancels the eviction)."""


def preserved_state(preservation: Preservation, status: ClusterStatus | None, cluster: str) -> dict[str, str]:
    """buildTaskOptions / extractStateForEviction, then BuildPreservedLabelState: each JSONPath on the
    workload's status in the cluster being left, its output as it is (Karmada does not trim it; only its
    tests do), errors in Karmada's words with the alias label in front."""
    if status is None or status.status is None:
        raise PreservationError(f"the application status has not yet been collected from Cluster({cluster})")
    try:
        raw = gojson.unmarshalled(status.status)
    except gojson.NotJson as exc:
        raise PreservationError(f"failed to unmarshal rawStatus: {exc}") from None
    out = {}
    for alias, path in preservation.rules:
        try:  # parseJSONValue: a template client-go refuses, in its words; a failure, wrapped
            nodes = parse_jsonpath(path)
        except JsonPathError as exc:
            raise PreservationError(f"{alias}: {exc}") from None
        try:
            out[alias] = jsonpath(nodes, raw)
        except JsonPathError as exc:
            raise PreservationError(f"{alias}: failed to execute jsonpath {gojson.quote(path)}: {exc}") from None
    return out


def label_problems(labels: Mapping[str, str]) -> tuple[str, ...]:
    """Why a member cluster would refuse the injected labels: Karmada merges preserved state into the
    workload's labels unchecked (binding/common.go injectReservedLabelState), and the API server of the
    member cluster then rejects a value that is not a valid label value."""
    out = []
    for key, value in sorted(labels.items()):
        for problem in label_value_problems(value)[:1]:
            shown = value if len(value) <= 60 else value[:57] + "..."
            out.append(f"label {key}={shown!r} is not a valid label value: {problem}")
    return tuple(out)


class Bindings(dict[str, Binding]):
    """The bindings by key, with what the controllers look bindings up by, kept as bindings change: so
    that a step after one event visits the bindings it can affect, not all of them (docs/performance.md)."""

    def __init__(self, bindings: Mapping[str, Binding]) -> None:
        super().__init__()
        self.changed: set[str] = set()  # set since the simulator last took them
        self.touched: set[str] = set()  # set since a resilience sweep last restored its base state
        self.on: dict[str, set[str]] = defaultdict(set)  # cluster → the bindings targeting it
        self.with_tasks: set[str] = set()
        self.with_status: set[str] = set()  # with aggregated status (application failover reads it)
        self.unplaced: set[str] = set()  # with no target cluster
        self.watchers: list[set[str]] = []  # each the keys set since its reader last took them (watch)
        for key, binding in bindings.items():
            self[key] = binding

    def __setitem__(self, key: str, binding: Binding) -> None:
        old = self.get(key)
        before, after = old.cluster_names if old is not None else (), binding.cluster_names
        if before != after:  # the targets changed (not a task or a status alone): where they did
            kept = set(before).intersection(after) if before and after else set()
            for name in before:
                if name not in kept:
                    self.on[name].discard(key)
            for name in after:
                if name not in kept:
                    self.on[name].add(key)
        super().__setitem__(key, binding)
        for watcher in self.watchers:
            watcher.add(key)
        self.changed.add(key)
        self.touched.add(key)
        for kept, yes in (
            (self.with_tasks, bool(binding.eviction_tasks)),
            (self.with_status, bool(binding.aggregated_status)),
            (self.unplaced, not binding.clusters),
        ):
            if yes:
                kept.add(key)
            else:
                kept.discard(key)

    def __delitem__(self, key: str) -> None:
        raise TypeError("bindings are never deleted in a simulation")

    def watch(self) -> set[str]:
        """A set of the keys set from now on, to which each key set is added until its reader takes it out
        (engine.schedule.waiting.Watched)."""
        watcher: set[str] = set()
        self.watchers.append(watcher)
        return watcher

    def targeting(self, clusters: Iterable[str]) -> list[str]:
        """The keys of the bindings targeting any of ``clusters``, sorted."""
        return sorted({key for name in clusters for key in self.on.get(name, ())})


class Clusters(dict[str, Cluster]):
    """The clusters by name, with the names of those with a NoExecute taint kept as clusters change (the taint
    manager looks at those alone, at every step: not a look at each of a thousand clusters), and of those set since
    a resilience sweep last put its base back (``touched``)."""

    def __init__(self, clusters: Mapping[str, Cluster]) -> None:
        super().__init__()
        self.no_execute: set[str] = set()
        self.touched: set[str] = set()
        for name, cluster in clusters.items():
            self[name] = cluster

    def __setitem__(self, name: str, cluster: Cluster) -> None:
        super().__setitem__(name, cluster)
        self.touched.add(name)
        if cluster.no_execute:
            self.no_execute.add(name)
        else:
            self.no_execute.discard(name)

    def __delitem__(self, name: str) -> None:
        raise TypeError("clusters are never deleted in a simulation")


@dataclass
class World:
    now: dt.datetime
    clusters: Clusters
    bindings: Bindings
    failover: dict[str, Failover]  # binding key → its policy's failover behaviour
    works: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)  # binding → cluster → injected labels
    unhealthy_since: dict[tuple[str, str], dt.datetime] = field(default_factory=dict)
    health_since: dict[tuple[str, str], dt.datetime] = field(default_factory=dict)  # from the facts (extension)
    controllers: Controllers = DEFAULT_CONTROLLERS
    # (binding, cluster, error) of each eviction that failed and fails still: said once while it stands
    failing: set[tuple[str, str, str]] = field(default_factory=set)

    def health(self, binding: Binding, cluster: str) -> ClusterStatus | None:
        return binding.status_by_cluster.get(cluster)


NEVER = dt.datetime.max.replace(tzinfo=dt.UTC)


_EARLIEST = dt.datetime.min.replace(tzinfo=dt.UTC)


def after(t: dt.datetime, seconds: int) -> dt.datetime:
    """``t`` plus ``seconds``; past what a datetime holds is NEVER (no simulation reaches it)."""
    try:
        return t + dt.timedelta(seconds=seconds)
    except OverflowError:
        return NEVER


def _go_after(t: dt.datetime, seconds: int) -> dt.datetime:
    """timeAdded.Add(time.Duration(seconds) * time.Second) as Go computes it: the nanoseconds wrap
    around int64, so a toleration beyond 9,223,372,036 s (292 years) lands in the past or the far future."""
    nanoseconds = (seconds * 1_000_000_000 + 2**63) % 2**64 - 2**63
    try:
        return t + dt.timedelta(microseconds=nanoseconds // 1000)
    except OverflowError:
        return NEVER if nanoseconds > 0 else _EARLIEST


# ClusterTaintEvictionRetryFrequency (cmd/controller-manager/app/controllermanager.go): the taint manager
# reconciles a cluster with NoExecute taints again this long after each reconcile, evicting what is due then
TAINT_EVICTION_RETRY = dt.timedelta(seconds=10)


def comparison_horizon(world: World) -> float | None:
    """The longest span the controllers compare a time with the clock by, in seconds: toleration seconds (of
    taints, of an unhealthy workload), grace periods and the eviction timeout, the taint manager's resync. A time
    further back than this is past every such test, for good: only its order among times and its phase in the
    resync's period still count (``Simulator.run`` finds a loop through them). None when one is too long to
    matter (Go's huge tolerationSeconds)."""
    spans: list[float] = [TAINT_EVICTION_RETRY.total_seconds(), world.controllers.graceful_eviction_timeout]
    for f in world.failover.values():
        spans += [f.toleration_seconds, f.grace_seconds or 0]
        spans += [s for t in f.tolerations if isinstance(s := t.get("seconds"), (int, float))]
    for key in world.bindings.with_tasks:
        spans += [t.grace_period_seconds or 0 for t in world.bindings[key].eviction_tasks]
    longest = max(abs(s) for s in spans)
    return longest + 1 if longest < 10**9 else None


# the built-in rules that are Karmada's controllers' eviction decisions: each eviction is that controller's
TAINT_MANAGER = "taint-manager"  # rules/taint_manager.fr: the taint manager's task, the policy's cluster failover


TAINT_MANAGER_SECONDS = "taint-manager-toleration-seconds"  # the same controller, a toleration's seconds run out


TAINT_MANAGER_RULES = (TAINT_MANAGER, TAINT_MANAGER_SECONDS)


APPLICATION_FAILOVER = "application-failover"  # rules/application_failover.fr: the policy's application failover


@dataclass(frozen=True)
class RuleEviction:
    """An `evict b from c reason R "message"` action of a rule: a user's (a custom failover trigger, with the
    policy's application failover), or of a built-in rule that is a controller's decision (``controller``: its
    name: one of TAINT_MANAGER_RULES, or APPLICATION_FAILOVER)."""

    binding: str
    cluster: str
    rule: str
    source: str
    reason: str
    message: str
    controller: str = ""
    explanation: Explanation | None = None  # the facts it matched, where the session explains (engine.schedule)


EvictionTrigger = tuple[str, str, "RuleEviction", str]  # binding, cluster, the rule's eviction, why
