"""Which bindings the scheduler runs (karmada pkg/scheduler/scheduler.go doScheduleBinding, helper.go
placementChanged; pkg/scheduler/scheduler.go doScheduleBinding).

A binding already scheduled is run again only when something the scheduler watches changed; every
other binding is settled: it keeps spec.clusters and counts as a peer for the bindings that are run.
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import assert_never

from engine.inputs.facts import Binding, Cluster
from engine.inputs.matching import cluster_matches
from engine.inputs.policies import failover_statements, placement_statements
from engine.syntax import ast


class Trigger(enum.StrEnum):
    """Why a binding is scheduled in this evaluation."""

    PENDING = "not scheduled yet"
    PLACEMENT = "placement changed"
    REPLICAS = "replicas changed"
    RESCHEDULE = "reschedule triggered"
    DELETING = "a target cluster is being deleted"
    RULES = "rules of the rule set decide about it"
    FAILOVER = "evicted by failover at the evaluation time"
    # pkg/scheduler/event_handler.go updateCluster, enqueueAffectedBindings; scheduler.go doScheduleBinding
    CLUSTER_CHANGED = (
        "a cluster its placement's affinity matches is about to change, which requeues it, and the scheduler "
        "schedules a Duplicated binding (or one of no workload) whenever it takes it from the queue"
    )
    ALL = "every binding is rescheduled (--reschedule all)"


# what a settled binding is reported with
SETTLED = (
    "kept on its clusters: placement as applied (policy.karmada.io/applied-placement), replicas as "
    "assigned, no reschedule triggered, no target cluster being deleted"
)
# what a settled binding of a Lazy policy whose placement changed is reported with
LAZY = (
    "kept on its clusters: its policy's activationPreference is Lazy, so the policy's changed placement waits "
    "for the next change of the workload itself (pkg/detector ApplyPolicy); --reschedule all places it as the "
    "policy says now"
)

# what is said of a binding scheduled by the placement it holds (``held_placements``)
HELD_SCHEDULED = (
    "its policy's activationPreference is Lazy and the policy's placement changed since the binding was "
    "scheduled: placed by the placement the binding holds (its applied-placement annotation), as Karmada's "
    "scheduler does; --reschedule all places it by the policy as it is now"
)

# what is said of a workload that a Lazy policy claimed without making its binding
UNPROPAGATED = (
    "not propagated: its policy's activationPreference is Lazy and the policy claimed the workload without "
    "making its binding (a policy that came after the workload: pkg/detector ApplyPolicy skips the binding for "
    "a change Karmada made), so it propagates at the workload's next change; --reschedule all places it as the "
    "policy says now"
)


def _parts(stmts: Sequence[ast.PolicyStmt]) -> dict[str, tuple[ast.PolicyStmt, ...]]:
    return {
        "affinity": tuple(s for s in stmts if isinstance(s, ast.ClusterAffinity) and s.name is None),
        "terms": tuple(s for s in stmts if isinstance(s, ast.ClusterAffinity) and s.name is not None),
        "tolerations": tuple(s for s in stmts if isinstance(s, ast.Toleration)),
        "spread": tuple(s for s in stmts if isinstance(s, ast.Spread)),
        "replicas": tuple(s for s in stmts if isinstance(s, ast.Replicas)),
        "workload": tuple(s for s in stmts if isinstance(s, ast.WorkloadTerm)),
    }


def placement_changed(policy: ast.Policy, applied: str, observed_term: str) -> bool:
    """placementChanged: the policy's placement against the one the binding was last scheduled with
    (clusterAffinity, clusterTolerations, spreadConstraints, replicaScheduling; clusterAffinities by
    the observed term)."""
    if not applied:
        return True
    theirs = _applied_parts(applied)
    if theirs is None:
        return False  # Karmada logs the unmarshal error and does not reschedule
    if not theirs:
        return True
    mine = _parts(policy.statements)
    if mine == theirs:
        return False
    if any(mine[k] != theirs[k] for k in ("affinity", "tolerations", "spread", "replicas")):
        return True
    if not observed_term:  # clusterAffinitiesChanged: no observed term, any other difference counts
        return True
    own, was = _term(mine, observed_term), _term(theirs, observed_term)
    return own is None or was is None or own != was


@functools.lru_cache(maxsize=4096)
def _applied_parts(applied: str) -> Mapping[str, tuple[ast.PolicyStmt, ...]] | None:
    """An applied-placement annotation's statements by part (``_parts``), read once per distinct text (a fleet's
    bindings of one policy hold the same annotation); None when it is not JSON of an object, {} when it is not a
    Placement. Read only."""
    try:
        raw = json.loads(applied)
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    stmts = placement_statements(raw)
    return {} if stmts is None else _parts(stmts)


def _term(parts: Mapping[str, tuple[ast.PolicyStmt, ...]], name: str) -> ast.PolicyStmt | None:
    """The clusterAffinities term of that name, if there is one."""
    return next(
        (t for t in parts["terms"] if isinstance(t, ast.ClusterAffinity) and t.name and t.name.value == name), None
    )


def replicas_changed(binding: Binding) -> bool:
    """IsBindingReplicasChanged, by the binding's own spec.placement.replicaScheduling."""
    if binding.replica_scheduling is None:
        return False
    if binding.replica_scheduling == "Duplicated":
        return any(t.replicas != binding.replicas for t in binding.clusters)
    return sum(t.replicas for t in binding.clusters) != binding.replicas


def reschedule_required(binding: Binding) -> bool:
    """util.RescheduleRequired: a manual reschedule (spec.rescheduleTriggeredAt) later than the last
    scheduling; it also makes the assignment Fresh."""
    triggered, last = binding.reschedule_triggered_at, binding.last_scheduled_time
    return triggered is not None and last is not None and triggered > last


def _lazy_holds(binding: Binding, policy: ast.Policy) -> bool:
    """The policy is Lazy and the binding was scheduled with an applied placement: the detector does not
    refresh the binding for a change of the policy (only for a change of the workload), so its
    spec.placement is still the applied one. Without an annotation the scheduler runs it whatever the policy."""
    return policy.lazy and bool(binding.clusters) and bool(binding.applied_placement)


# what is said of a binding scheduled while its spec.placement is not its policy's (lazy activation) and
# its applied-placement annotation is no placement fleetrules can read
HELD_PLACEMENT = (
    "its policy's activationPreference is Lazy and the policy's placement changed since the binding was "
    "scheduled, so Karmada's scheduler places it by the placement the binding holds (its spec.placement, the "
    "applied-placement annotation, which fleetrules cannot read as a placement); fleetrules places it by the "
    "policy's placement as it is now, and the clusters may differ"
)


def schedules_with_held_placement(binding: Binding, policy: ast.Policy) -> bool:
    """Whether Karmada's scheduler, running this binding, reads a placement other than the policy's: the
    scheduler reads the binding's spec.placement, which a Lazy policy's change did not refresh (whether or
    not the binding still has clusters: one failover emptied is scheduled by it too)."""
    return (
        policy.lazy
        and bool(binding.applied_placement)
        and placement_changed(policy, binding.applied_placement, binding.observed_affinity_name)
    )


def waits_for_the_workload(binding: Binding, policy: ast.Policy) -> bool:
    """A workload a Lazy policy claimed and has no binding: the detector, applying a policy for a change
    Karmada made (the policy's creation, here), claims the workload (its permanent-id label, name
    annotations) and makes no binding, so nothing propagates until the workload itself changes
    (test/e2e lazy_activation_policy_test.go, Simple Case 2). A workload no policy has claimed yet is
    new to the detector, a change of the user's: its binding is made and scheduled."""
    claim = binding.claim
    return policy.lazy and binding.from_workload and claim is not None and claim.policy == policy.name.value


@dataclass(frozen=True)
class HeldPlacement:
    """A binding's policy as it is now, and as Karmada's scheduler reads it for the binding: the policy
    with the placement the binding holds (``variant``, a policy of its own named ``NAME#held-N``)."""

    policy: ast.Policy
    variant: ast.Policy


# the statements of spec.placement that Karmada has words for (fleetrules' preferred workload terms and
# terms within a topology are not among them: they stay as the policy says)
def _karmada_placement(stmt: ast.PolicyStmt) -> bool:
    match stmt:
        case ast.WorkloadTerm():
            return not stmt.preferred and stmt.topology is None
        case ast.ClusterAffinity() | ast.Toleration() | ast.Spread() | ast.Replicas():
            return True
        case (
            ast.Select()
            | ast.Priority()
            | ast.SchedulePriority()
            | ast.Preemption()
            | ast.Activation()
            | ast.PropagateDeps()
            | ast.Failover()
        ):
            return False
        case _:
            assert_never(stmt)


def held_placements(
    bindings: Sequence[Binding], choose: Callable[[Binding], ast.Policy | None]
) -> dict[str, HeldPlacement]:
    """The bindings Karmada's scheduler places by a placement other than their policy's (lazy activation:
    ``schedules_with_held_placement``), each with the policy as Karmada's scheduler and failover
    controllers read it for them: the placement of the binding's applied-placement annotation (the
    spec.placement it was scheduled with and still holds), the binding's own spec.failover (not refreshed
    either: none when it records none, the policy's when it records one fleetrules cannot read), and the
    policy's other statements (selectors, priority, activation, preferred terms). One variant per policy, placement and
    failover held, numbered in the bindings' order. A binding whose annotation is no placement fleetrules
    can read keeps its policy (and the warning)."""
    out: dict[str, HeldPlacement] = {}
    variants: dict[tuple[str, str, str | None], HeldPlacement | None] = {}
    count: dict[str, int] = {}
    for binding in bindings:
        if not binding.applied_placement:
            continue
        policy = choose(binding)
        if policy is None or not schedules_with_held_placement(binding, policy):
            continue
        key = (policy.name.value, binding.applied_placement, binding.failover)
        if key not in variants:
            raw = json.loads(binding.applied_placement)  # JSON: schedules_with_held_placement read it
            stmts = placement_statements(raw, binding.source)
            if stmts is None:
                variants[key] = None
            else:
                n = count[policy.name.value] = count.get(policy.name.value, 0) + 1
                kept = tuple(s for s in policy.statements if not _karmada_placement(s))
                failover = _held_failover(binding)
                if failover is not None:
                    kept = (*(s for s in kept if not isinstance(s, ast.Failover)), *failover)
                name = replace(policy.name, value=f"{policy.name.value}#held-{n}")
                variants[key] = HeldPlacement(policy, replace(policy, name=name, statements=(*kept, *stmts)))
        held = variants[key]
        if held is not None:
            out[binding.key] = held
    return out


def _held_failover(binding: Binding) -> tuple[ast.Failover, ...] | None:
    """The binding's spec.failover as `failover` blocks (none: it records none); None when it records
    one that is not a FailoverBehavior fleetrules can read."""
    if binding.failover is None:
        return ()
    raw = json.loads(binding.failover)
    return failover_statements(raw, binding.source) if isinstance(raw, dict) else None


def held_by_lazy_activation(binding: Binding, policy: ast.Policy) -> bool:
    """A scheduled binding whose policy changed its placement, kept on it by lazy activation."""
    return bool(binding.clusters) and schedules_with_held_placement(binding, policy)


def is_workload(binding: Binding) -> bool:
    """ResourceBindingSpec.IsWorkload: replicas, replicaRequirements or components."""
    return binding.replicas > 0 or binding.requirements is not None or bool(binding.components)


def requeued(binding: Binding, policy: ast.Policy, changed: Sequence[Cluster]) -> bool:
    """Whether a change of the ``changed`` clusters (their labels or spec: the cluster controller's taints, a
    ClusterTaintPolicy's) makes the scheduler schedule the binding again: enqueueAffectedBindings requeues a
    binding whose cluster affinity (the observed clusterAffinities term's; none: every binding) matches a changed
    cluster, and doScheduleBinding, finding nothing else changed, schedules it when its placement is Duplicated
    or it is no workload (``is_workload``)."""
    if not changed:
        return False
    replicas = next((s for s in policy.statements if isinstance(s, ast.Replicas)), None)
    if is_workload(binding) and replicas is not None and replicas.mode.value != "duplicated":
        return False
    terms = [s for s in policy.statements if isinstance(s, ast.ClusterAffinity) and s.name is not None]
    if terms:  # getAffinityIndex: the observed term, else the first
        term = next((t for t in terms if t.name and t.name.value == binding.observed_affinity_name), terms[0])
        affinity: Sequence[ast.ClusterStmt] | None = term.statements
    else:
        plain = [s for s in policy.statements if isinstance(s, ast.ClusterAffinity)]
        affinity = plain[0].statements if plain else None
    return any(affinity is None or cluster_matches(c, affinity) for c in changed)


def trigger(binding: Binding, policy: ast.Policy, clusters: Mapping[str, Cluster]) -> Trigger | None:
    """Why the scheduler would run ``binding`` now; None when it is settled."""
    if not binding.clusters:
        return None if waits_for_the_workload(binding, policy) else Trigger.PENDING
    if not _lazy_holds(binding, policy) and placement_changed(
        policy, binding.applied_placement, binding.observed_affinity_name
    ):
        return Trigger.PLACEMENT
    if replicas_changed(binding):
        return Trigger.REPLICAS
    if reschedule_required(binding):
        return Trigger.RESCHEDULE
    if any(clusters[t.name].deleting for t in binding.clusters if t.name in clusters):
        return Trigger.DELETING
    return None
