"""Failover at one moment: the evictions the controllers' rules decide become graceful eviction tasks
(ResourceBindingSpec.GracefulEvictCluster), each with the state its policy preserves, in the order Karmada's
controllers take them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from engine.inputs.facts import Binding, EvictionTask, evolve
from engine.karmada.controllers.application_failover import application_failover
from engine.karmada.controllers.taint_manager import taint_manager, taint_manager_by_rule
from engine.karmada.controllers.world import (
    APP_PRODUCER,
    APPLICATION_FAILOVER,
    TAINT_MANAGER_RULES,
    TAINT_PRODUCER,
    EvictionTrigger,
    PreservationError,
    RuleEviction,
    World,
    preserved_state,
    task_problems,
)
from engine.results import Entry, EntryKind


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
