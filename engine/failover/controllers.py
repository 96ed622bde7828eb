"""Stateful failover (pkg/apis/policy/v1alpha1/propagation_types.go FailoverBehavior; pkg/controllers/
cluster/taint_manager.go, applicationfailover, gracefuleviction; pkg/util/helper/failover.go).

Karmada's controllers, one function each, over a world that changes in time: the application
failover controller and the NoExecute taint manager create graceful eviction tasks, the scheduler
(the engine, kept alive between steps) places the evicted bindings again, the graceful eviction
controller removes tasks, and the binding controller creates and deletes the workloads in member
clusters (Works), deleting before creating for ``Directly`` and injecting preserved labels.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from engine.checker.rule_set import builtin_files
from engine.compile import encoding, ir
from engine.compile.encoding import Symbols
from engine.compile.policies import application_failover_fact, tolerations
from engine.compile.rules import compile_rules
from engine.inputs.facts import Binding, Cluster, ClusterStatus, EvictionTask, Taint, evolve, rfc3339
from engine.inputs.rule_files import visible_conditions
from engine.karmada.gates import DEFAULT_CONTROLLERS, GRACEFUL_EVICTION_TIMEOUT, Controllers
from engine.kube import gojson
from engine.kube.jsonpath import JsonPathError
from engine.kube.jsonpath import evaluate as jsonpath
from engine.kube.jsonpath import parse as parse_jsonpath
from engine.kube.validation import label_value_problems
from engine.results import Entry, EntryKind, Explanation
from engine.syntax import ast
from engine.syntax.conditions import expand
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


# ---------------------------------------------------------------- tasks


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


# ---------------------------------------------------------------- the world and its controllers


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


def _evict(binding: Binding, cluster: str, task: EvictionTask) -> Binding:
    """ResourceBindingSpec.GracefulEvictCluster: remove the target; add a task unless one exists."""
    if cluster not in binding.cluster_names:
        return binding
    at = binding.cluster_names.index(cluster)
    target, after = binding.clusters[at], binding.clusters[at + 1 :]
    if cluster in binding.cluster_names[at + 1 :]:  # named twice in spec.clusters: every entry goes
        after = tuple(t for t in after if t.name != cluster)
    clusters = binding.clusters[:at] + after
    if any(t.from_cluster == cluster for t in binding.eviction_tasks):
        return evolve(binding, clusters=clusters)
    task = evolve(task, replicas=target.replicas if target.replicas > 0 else None)
    return evolve(binding, clusters=clusters, eviction_tasks=(*binding.eviction_tasks, task))


def _task(world: World, binding: Binding, cluster: str, app: bool, before: tuple[str, ...] = ()) -> EvictionTask:
    """The task Karmada's controller builds (no message: neither controller sets one). ``before`` is the
    binding's clusters when its application failover pass began (evictBinding takes them once, before
    it evicts the first cluster)."""
    f = world.failover[binding.key]
    state = f.app_state if app else f.cluster_state
    preserved = preserved_state(state, world.health(binding, cluster), cluster) if state else {}
    if app:
        return EvictionTask(
            creation_timestamp=world.now,
            from_cluster=cluster,
            purge_mode=f.app_purge,
            reason="ApplicationFailure",
            producer=APP_PRODUCER,
            grace_period_seconds=f.grace_seconds if f.app_purge == "Gracefully" else None,
            suppress_deletion=True if f.app_purge == "Never" else None,
            preserved_label_state=preserved,
            clusters_before_failover=(before or binding.cluster_names) if state else (),
        )
    return EvictionTask(
        creation_timestamp=world.now,
        from_cluster=cluster,
        purge_mode=f.cluster_purge,
        reason="TaintUntolerated",
        producer=TAINT_PRODUCER,
        preserved_label_state=preserved,
    )


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


def application_timers(world: World, keys: Iterable[str] | None = None) -> None:
    """The application failover controller's timers (Karmada's workloadUnhealthyMap) of every binding with a status,
    or of those of ``keys``: set at the first sight of Unhealthy on a cluster not in a task, dropped when the
    workload is Healthy or Unknown there or the cluster is no longer a target (deleteIrrelevantClusters), kept
    otherwise (an Unhealthy cluster in a task, another health). Whether a timer has run out is the
    application-failover rule's to say (rules/application_failover.fr), on the ``unhealthy_workload`` facts."""
    with_status = world.bindings.with_status
    for key in sorted(with_status if keys is None else with_status.intersection(keys)):  # no status, no timer
        binding = world.bindings[key]
        f = world.failover.get(key)
        if f is None or not f.app:
            continue
        tasks = {t.from_cluster for t in binding.eviction_tasks}
        targets = set(binding.cluster_names)
        for status in binding.aggregated_status:
            seen = (key, status.cluster)
            if status.health in ("Healthy", "Unknown") or status.cluster not in targets:
                world.unhealthy_since.pop(seen, None)
            elif status.health == "Unhealthy" and status.cluster not in tasks:
                world.unhealthy_since.setdefault(seen, world.health_since.get(seen, world.now))


def unhealthy_workloads(world: World) -> dict[str, list[tuple[str, str, int]]]:
    """binding key → (cluster, since, seconds since, rounded up) of each timer of a workload Unhealthy now on a
    cluster the binding targets: its ``unhealthy_workload`` facts. Rounded up, ``seconds > N`` holds exactly when
    the clock is past since + N seconds (detectFailure: timeNow.After(unHealthyTimeStamp.Add(tolerationSeconds)))."""
    out: dict[str, list[tuple[str, str, int]]] = {}
    for (key, cluster), since in sorted(world.unhealthy_since.items()):
        binding = world.bindings.get(key)
        status = binding.status_by_cluster.get(cluster) if binding is not None else None
        if binding is None or status is None or status.health != "Unhealthy" or cluster not in binding.cluster_names:
            continue
        seconds = math.ceil((world.now - since).total_seconds())
        out.setdefault(key, []).append((cluster, rfc3339(since), seconds))
    return out


def application_failover(world: World, evictions: Iterable[RuleEviction]) -> list[EvictionTrigger]:
    """The application-failover rule's evictions, by binding and in the order of its aggregated status (which
    detectFailure walks; a binding's tasks are built in that order)."""

    def order(e: RuleEviction) -> tuple[str, int, str]:
        binding = world.bindings.get(e.binding)
        names = [s.cluster for s in binding.aggregated_status] if binding is not None else []
        return e.binding, names.index(e.cluster) if e.cluster in names else len(names), e.cluster

    return [(e.binding, e.cluster, e, e.message) for e in sorted(evictions, key=order)]


@cache
def _toleration_test() -> tuple[ir.Cond, str]:
    """The library's condition ``tolerates`` (rules/tolerations.fr: ToleratesTaint) of a ``cluster_toleration``
    against a ``taint``, compiled as a rule's pattern would have it, with the alias of the taint it reads."""
    builtin_files()  # the library, checked
    word = ast.Word
    call = ast.Call(word("tolerates"), (word("x"), word("t")))
    patterns = (
        ast.Pattern(False, word("taint"), word("t"), None),
        ast.Pattern(False, word("cluster_toleration"), word("x"), expand(call, visible_conditions())),
    )
    source = ast.Rule(word("tolerates"), patterns, (ast.Derive(word("tolerated"), ()),))
    (rule,), _ = compile_rules([source], Symbols(), builtin=True)
    test = next(p for p in rule.patterns if p.fact_type == "cluster_toleration")
    taint = next(p.alias for p in rule.patterns if p.fact_type == "taint")
    return test.cond, taint


def tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    """Whether ``toleration`` (a ``cluster_toleration`` fact of a policy) tolerates ``taint`` (ToleratesTaint): the
    condition the scheduler's TaintToleration filter and the taint manager's rules use (rules/tolerations.fr,
    written once), so that they cannot disagree."""
    cond, taint_alias = _toleration_test()
    return ir.holds(cond, dict(toleration), {taint_alias: encoding.taint("", taint)})


def used_tolerations(f: Failover, cluster: Cluster) -> list[tuple[int, Mapping[str, Any]]]:
    """GetMatchingTolerations (helper/taint.go): for each of the cluster's NoExecute taints, the first of the policy's
    tolerations that tolerates it (by the filter's own test, ``tolerates``); each (its place, it) once, in order. The
    taint manager's rule pairs them with the taints they tolerate (rules/taint_manager.fr)."""
    used: dict[int, Mapping[str, Any]] = {}
    for taint in cluster.taints:
        if taint.effect != "NoExecute":
            continue
        at = next((i for i, t in enumerate(f.tolerations) if tolerates(t, taint)), None)
        if at is not None:
            used.setdefault(at, f.tolerations[at])
    return sorted(used.items())


def taint_wakeups(cluster: Cluster, used: Sequence[tuple[int, Mapping[str, Any]]]) -> list[dt.datetime]:
    """When the taint manager's rule may come to evict from ``cluster`` by a toleration's seconds: each NoExecute
    taint's timeAdded plus the seconds of each toleration ``used`` there (used_tolerations), as Go adds them (a
    superset of the trigger times: which of them is one is the rule's to say; the controller requeues by the
    earliest)."""
    seconds = [int(t["seconds"]) for _, t in used if t.get("seconds") is not None]
    if not seconds:
        return []
    taints = [t.time_added for t in cluster.taints if t.effect == "NoExecute" and t.time_added is not None]
    return [_go_after(added, s) for added in taints for s in seconds]


# ClusterTaintEvictionRetryFrequency (cmd/controller-manager/app/controllermanager.go): the taint manager
# reconciles a cluster with NoExecute taints again this long after each reconcile, evicting what is due then
TAINT_EVICTION_RETRY = dt.timedelta(seconds=10)


def next_taint_resync(cluster: Cluster, now: dt.datetime) -> dt.datetime:
    """The taint manager's next sweep of ``cluster`` after ``now`` (NoExecuteTaintManager.syncCluster returns
    RequeueAfter the retry frequency): every 10 s from the last taint that started one."""
    started = [t.time_added for t in cluster.taints if t.effect == "NoExecute" and t.time_added is not None]
    anchor = max(started, default=now)
    if anchor > now:
        return anchor
    return anchor + TAINT_EVICTION_RETRY * ((now - anchor) // TAINT_EVICTION_RETRY + 1)


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


def no_execute_tainted(world: World) -> set[str]:
    """The clusters with a NoExecute taint: the only ones the taint manager evicts from."""
    return set(world.clusters.no_execute)


def taint_manager_by_rule(evictions: Iterable[RuleEviction]) -> dict[tuple[str, str], RuleEviction]:
    """(binding, cluster) → the taint manager's rules' eviction there, one per pair whatever the order of the facts:
    the untolerated taint's first (needEvictionWithCurrentTime evicts at once when not every taint is tolerated),
    else the first of a toleration's seconds run out (the first by its words, of several)."""
    out: dict[tuple[str, str], RuleEviction] = {}
    first = {name: i for i, name in enumerate(TAINT_MANAGER_RULES)}
    taken = (e for e in evictions if e.controller in first)
    for e in sorted(taken, key=lambda e: (e.binding, e.cluster, first[e.controller], e.message)):
        out.setdefault((e.binding, e.cluster), e)
    return out


def taint_manager(world: World, by_rule: Mapping[tuple[str, str], RuleEviction]) -> Iterator[EvictionTrigger]:
    """The taint manager's evictions at ``world.now``, by binding, in each binding's target order: those its rules
    decided (rules/taint_manager.fr: a NoExecute taint no toleration tolerates, or a toleration's seconds run out)."""
    if not world.controllers.taint_manager:
        return
    for key in world.bindings.targeting(no_execute_tainted(world)):  # the others have nothing to evict from
        if world.failover.get(key) is None:
            continue
        for name in world.bindings[key].cluster_names:
            e = by_rule.get((key, name))
            if e is not None:
                yield key, name, e, e.message


def task_timeout(task: EvictionTask, default: int = GRACEFUL_EVICTION_TIMEOUT) -> int:
    """Seconds a task may live: its grace period, else --graceful-eviction-timeout (``default``)."""
    return task.grace_period_seconds if task.grace_period_seconds is not None else default


def new_clusters_healthy(world: World, binding: Binding) -> bool:
    """assessSingleTask's test: every cluster the binding targets reports its workload Healthy (vacuous if none)."""
    return all((s := world.health(binding, c)) is not None and s.health == "Healthy" for c in binding.cluster_names)


def graceful_eviction(world: World, binding: Binding) -> tuple[Binding, list[EvictionTask]]:
    """assessEvictionTasks (pkg/controllers/gracefuleviction/evictiontask.go): stamp new tasks; drop those timed out
    or whose new clusters are healthy."""
    if not binding.eviction_tasks:
        return binding, []  # nothing to assess (most bindings, at every step)
    kept: list[EvictionTask] = []
    dropped: list[EvictionTask] = []
    healthy = new_clusters_healthy(world, binding)
    for task in binding.eviction_tasks:
        if task.creation_timestamp is None or task.creation_timestamp == world.now:
            # first sight: stamped, never assessed in the same pass (evictiontask.go assessEvictionTasks)
            kept.append(task if task.creation_timestamp else evolve(task, creation_timestamp=world.now))
            continue
        timeout = task_timeout(task, world.controllers.graceful_eviction_timeout)
        if task.suppress_deletion is not None:
            (kept if task.suppress_deletion else dropped).append(task)
        elif world.now > after(task.creation_timestamp, timeout) or healthy:
            dropped.append(task)  # timed out (strictly), or every new cluster is Healthy (vacuous if none)
        else:
            kept.append(task)
    if not dropped and all(a is b for a, b in zip(kept, binding.eviction_tasks, strict=True)):
        return binding, dropped  # as it was: the same binding
    return evolve(binding, eviction_tasks=tuple(kept)), dropped


def injected_labels(binding: Binding, cluster: str, gate: bool = True) -> dict[str, str]:
    """injectReservedLabelState (pkg/controllers/binding/common.go): the newest task's state, for a single new
    Directly target; nothing
    without the StatefulFailoverInjection ``gate`` (pkg/controllers/binding/common.go)."""
    if not gate or len(binding.clusters) != 1 or not binding.eviction_tasks:
        return {}
    task = binding.eviction_tasks[-1]
    if task.purge_mode != "Directly" or cluster in task.clusters_before_failover:
        return {}
    return dict(task.preserved_label_state)


def binding_controller(world: World, key: str) -> list[Entry]:
    """Which clusters keep a Work (pkg/util/helper/binding.go, binding_controller.go): delete orphans, then create
    and label the targets."""
    binding = world.bindings[key]
    works = world.works.setdefault(key, {})
    existing = set(binding.cluster_names) | {
        t.from_cluster for t in binding.eviction_tasks if t.purge_mode != "Directly"
    }
    entries = []
    for cluster in sorted(set(works) - existing):
        del works[cluster]
        entries.append(Entry(world.now, EntryKind.WORK_DELETED, key, cluster))
    gate, single = world.controllers.stateful_failover_injection, len(binding.clusters) == 1
    for cluster in binding.cluster_names:
        labels = injected_labels(binding, cluster, gate) if single else {}  # none for a binding of several
        held = works.get(cluster)
        if held is None:
            works[cluster] = labels
            detail = {"injectedLabels": labels} if labels else {}
            entries.append(Entry(world.now, EntryKind.WORK_CREATED, key, cluster, detail))
        elif held != labels:
            works[cluster] = labels
            entries.append(Entry(world.now, EntryKind.LABELS, key, cluster, {"injectedLabels": labels}))
    return entries


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


def _rule_task(world: World, binding: Binding, e: RuleEviction, before: tuple[str, ...]) -> EvictionTask:
    """A rule's eviction follows the policy's application failover (purge mode, grace, state)."""
    task = _task(world, binding, e.cluster, True, before)
    return replace(task, reason=e.reason, message=e.message, producer=f"fleetrules rule {e.rule}")


def _failed(world: World, key: str, cluster: str, error: str, source: str) -> Entry:
    """No task is built; the output says why and where the rule that asked for it is written."""
    return Entry(world.now, EntryKind.EVICTION_FAILED, key, cluster, {"error": error, "source": source})


def _preservation_blocked(
    world: World, app_triggers: Sequence[tuple[str, str]], before: Mapping[str, tuple[str, ...]]
) -> dict[str, tuple[str, str]]:
    """binding → (the cluster at which building its tasks failed, why). The application failover controller
    builds every task of a binding before it updates it, and returns at the first error (applicationfailover
    rb_application_failover_controller.go evictBinding): then no cluster of that binding is evicted."""
    blocked: dict[str, tuple[str, str]] = {}
    for key, cluster in app_triggers:
        binding = world.bindings.get(key)
        if key in blocked or binding is None or cluster not in binding.cluster_names:
            continue
        try:
            _task(world, binding, cluster, True, before[key])
        except PreservationError as exc:
            blocked[key] = (cluster, str(exc))
    return blocked


EvictionTrigger = tuple[str, str, "RuleEviction", str]  # binding, cluster, the rule's eviction, why


def fail_over(world: World, by_rules: Sequence[RuleEviction] = ()) -> tuple[list[Entry], set[str]]:
    """Run the failover controllers (and rules' evictions) at ``world.now``; returns what happened
    and the bindings evicted. ``by_rules``: the evictions rules decided on the current facts, the built-in
    rules' that are the controllers' decisions (``controller``) and users' rules'."""
    entries: list[Entry] = []
    evicted: set[str] = set()
    app = application_failover(world, (e for e in by_rules if e.controller == APPLICATION_FAILOVER))
    triggers: list[EvictionTrigger] = [*app, *taint_manager(world, taint_manager_by_rule(by_rules))]
    triggers += [
        (e.binding, e.cluster, e, f"rule {e.rule}: {e.reason}")
        for e in sorted(by_rules, key=lambda e: (e.binding, e.cluster, e.rule))
        if not e.controller
    ]
    # clustersBeforeFailover: the binding's clusters when the pass began, whatever it evicts first
    before = {key: world.bindings[key].cluster_names for key, _, _, _ in triggers if key in world.bindings}
    blocked = _preservation_blocked(world, [(k, c) for k, c, _, _ in app], before)
    for key, cluster, why, because in triggers:
        binding = world.bindings.get(key)
        if binding is None or cluster not in binding.cluster_names:
            continue  # not a target (any more): the first eviction stands
        f = world.failover[key]
        controller = why.controller
        by_taint = controller in TAINT_MANAGER_RULES
        if controller == APPLICATION_FAILOVER and key in blocked:
            at, error = blocked[key]
            if at == cluster:  # the pass stopped at this cluster: say why, once
                source = f.app_state.source if f.app_state else ""
                message = f"state preservation failed: {error}; no cluster of this binding is evicted in this pass"
                entries.append(_failed(world, key, cluster, message, source))
            continue
        state = f.cluster_state if by_taint else f.app_state
        try:
            task = (
                _rule_task(world, binding, why, before[key])
                if not controller  # a user's rule: the application failover's task
                else _task(world, binding, cluster, not by_taint, before[key])
            )
        except PreservationError as exc:
            source = state.source if state else ""
            entries.append(_failed(world, key, cluster, f"state preservation failed: {exc}", source))
            continue
        problems = task_problems(task)
        if problems:
            entries.append(_failed(world, key, cluster, "invalid eviction task: " + "; ".join(problems), why.source))
            continue
        world.bindings[key] = _evict(binding, cluster, task)
        evicted.add(key)
        detail: dict[str, Any] = {"because": because, "rule": why.rule, "source": why.source}
        task = world.bindings[key].eviction_tasks[-1]
        entries.append(
            Entry(world.now, EntryKind.EVICTED, key, cluster, detail, task=task, explanation=why.explanation)
        )
    return _once(world, entries), evicted


def _once(world: World, entries: list[Entry]) -> list[Entry]:
    """The entries without the failures said already. A controller whose eviction fails returns the error and
    is retried through its queue's rate-limited backoff (controller-runtime's default: 5 ms doubling up to
    1000 s per item): each retry fails alike until what it read changes (the workload's status, the binding),
    which is an event of its own. So a failure is said when it first happens, and again only after it stopped
    (evicted, healthy, untainted) or its error changed; the retries between say nothing new, and the timeline
    does not depend on when some unrelated event moved the clock."""
    failing = set()
    out = []
    for e in entries:
        if e.kind is EntryKind.EVICTION_FAILED:
            failure = (e.binding, e.cluster, str(e.detail.get("error", "")))
            failing.add(failure)
            if failure in world.failing:
                continue
        out.append(e)
    world.failing = failing
    return out
