"""Replicas: how many a cluster can take, and how many each selected cluster gets.

- ``estimate``: the general replica estimator (karmada pkg/estimator/client/general.go), from a
  Cluster's status.resourceSummary and resource models against the binding's resource request.
  The scheduler-estimator service (per-node accounting in member clusters) is not modelled.
- ``webster``: the Sainte-Laguë apportionment with Karmada's tie-breaking (pkg/util/helper/webstermethod.go,
  binding.go tieBreakerByUID).
- ``assign``: the assign stage (pkg/scheduler/core/assignment.go, division_algorithm.go, common.go):
  Duplicated, StaticWeight, and Aggregated / DynamicWeight with Karmada's Steady and Fresh modes.
"""

from __future__ import annotations

import enum
import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from engine.inputs.facts import Cluster, Component, Resources, ResourceSummary, TargetCluster
from engine.kube import gosort
from engine.kube.quantity import as_int64, milli_value, value
from engine.kube.resources import CPU, PODS, to_units, units
from engine.kube.validation import INT32_MAX

MAX_INT32 = INT32_MAX  # Go's math.MaxInt32, as Karmada's estimators use it
PODS_PER_MODEL_NODE = 110  # maxPodsCountPerNode: the pods a resource-model node holds


class Strategy(enum.StrEnum):
    """The assign strategy (newAssignState)."""

    DUPLICATED = "Duplicated"
    AGGREGATED = "Aggregated"
    STATIC_WEIGHT = "StaticWeight"
    DYNAMIC_WEIGHT = "DynamicWeight"


class SchedulingError(Exception):
    """An error of the select or assign stage: Karmada keeps the binding's clusters and retries. The
    message is the condition message Karmada writes (``failed to select clusters: …``)."""


class Unschedulable(SchedulingError):
    """framework.UnschedulableError: not enough replicas (condition reason Unschedulable)."""


# ---------------------------------------------------------------- the general estimator


def _allowed_pods(summary_allocatable: Resources, allocated: Resources, allocating: Resources) -> int:
    """getAllowedPodNumber: allocatable - allocated - allocating pods, at least 0."""
    zero = Fraction(0)
    pods = (
        units(PODS, summary_allocatable.get(PODS, zero))
        - units(PODS, allocated.get(PODS, zero))
        - units(PODS, allocating.get(PODS, zero))
    )
    return max(pods, 0)


def _by_summary(cluster: Cluster, request: Resources) -> int:
    """getMaximumReplicasBasedOnClusterSummary: the fewest replicas any requested resource leaves room for."""
    summary = cluster.resource_summary
    assert summary is not None
    most = 2**63 - 1
    for name, quantity in request.items():
        if value(quantity) <= 0:
            continue
        if name not in summary.allocatable:
            return 0
        left = summary.allocatable[name] - summary.allocated.get(name, Fraction(0))
        left -= summary.allocating.get(name, Fraction(0))
        if value(left) <= 0:
            return 0
        if name == CPU:
            most = min(most, milli_value(left) // milli_value(quantity))
        else:
            most = min(most, value(left) // value(quantity))
    return most


def _model_grades(cluster: Cluster) -> list[tuple[dict[str, int], int]] | None:
    """buildModelNodes by grade: each grade's node (its minimums and 110 pods, util.Resource units) and how
    many allocatableModelings count, grades ascending; None when the models cannot be used."""
    summary = cluster.resource_summary
    if summary is None or not cluster.resource_models:
        return None
    templates = {m.grade: {**to_units(m.minimums), PODS: PODS_PER_MODEL_NODE} for m in cluster.resource_models}
    counts: dict[int, int] = {}
    for grade, count in summary.allocatable_modelings:
        counts[grade] = counts.get(grade, 0) + count
    return [(templates[g], counts.get(g, 0)) for g in sorted(templates)]


def _by_models(cluster: Cluster, request: Resources) -> int | None:
    """getMaximumReplicasBasedOnResourceModels: one replica at a time, first fit onto the model nodes; as
    the nodes of a grade are alike, each holds as many as fit on one."""
    grades = _model_grades(cluster)
    if grades is None:
        return None
    need = {name: amount for name, amount in to_units(request).items() if amount > 0 and name != PODS}
    total = 0
    for node, count in grades:
        fits = min([node.get(PODS, 0), *(node.get(name, 0) // amount for name, amount in need.items())])
        total += max(fits, 0) * count
    return min(total, MAX_INT32)


def _room(cluster: Cluster) -> tuple[ResourceSummary, int] | None:
    """The cluster's resourceSummary and the pods it still allows (getAllowedPodNumber); None without a
    summary or when no pod fits, where both estimators answer 0."""
    summary = cluster.resource_summary
    if summary is None:
        return None
    pods = _allowed_pods(summary.allocatable, summary.allocated, summary.allocating)
    return (summary, pods) if pods > 0 else None


def estimate(cluster: Cluster, request: Resources | None) -> int:
    """GeneralEstimator.maxAvailableReplicas: the replicas the cluster can still take; 0 without a
    resourceSummary. ``request`` is replicaRequirements.resourceRequest (None: no replicaRequirements)."""
    room = _room(cluster)
    if room is None:
        return 0
    summary, most = room
    if request is None:
        return min(most, MAX_INT32)
    if summary.allocatable_modelings:
        by_models = _by_models(cluster, request)
        if by_models is not None:
            return min(most, by_models, MAX_INT32)
    return min(most, _by_summary(cluster, request), MAX_INT32)


def _simulate(nodes: list[dict[str, int]], components: Sequence[Component], upper_bound: int) -> int:
    """SchedulingSimulator.SimulateScheduling (pkg/estimator/scheduling_simulator_components.go): whole sets,
    each component's replicas first fit onto the nodes in order, node resources consumed, until a set does
    not fit or ``upper_bound`` sets are placed. Model nodes carry no labels or taints: every node matches."""
    needs = [({k: v for k, v in to_units(c.requirements or {}).items() if k != PODS}, c.replicas) for c in components]
    sets = 0
    while sets < upper_bound:
        for need, replicas in needs:
            remaining = replicas
            for node in nodes:
                fits = min([node.get(PODS, 0), *(node.get(k, 0) // v for k, v in need.items() if v > 0)])
                if fits <= 0:
                    continue
                take = min(fits, remaining)
                for k, v in need.items():
                    node[k] = node.get(k, 0) - v * take
                node[PODS] -= take
                remaining -= take
                if remaining == 0:
                    break
            if remaining > 0:
                return sets
        sets += 1
    return sets


def component_sets(cluster: Cluster, components: Sequence[Component]) -> int:
    """GeneralEstimator.maxAvailableComponentSets: how many whole sets of a multi-component workload the
    cluster can still take, by its resourceSummary (quantities as quantityAsInt64 reads them: millis of a
    decimal quantity, the value of a binary one), then by its resource models."""
    room = _room(cluster)
    if room is None:
        return 0
    summary, allowed = room
    pods_per_set = sum(c.replicas for c in components)
    if pods_per_set <= 0:
        return min(allowed, MAX_INT32)
    most = allowed // pods_per_set
    per_set: dict[str, int] = {}
    for c in components:
        for name, quantity in (c.requirements or {}).items():
            per_set[name] = per_set.get(name, 0) + as_int64(quantity, name in c.binary) * c.replicas
    for name, need in per_set.items():
        if need <= 0:
            continue
        zero = Fraction(0)
        left = summary.allocatable.get(name, zero) - summary.allocated.get(name, zero)
        left -= summary.allocating.get(name, zero)
        have = as_int64(left, name in summary.binary) if name in summary.allocatable else 0
        if have <= 0:
            return 0
        most = min(most, have // need)
    by_models = sets_by_models(cluster, components, most) if summary.allocatable_modelings else None
    return min(most, MAX_INT32 if by_models is None else by_models, MAX_INT32)


def sets_by_models(cluster: Cluster, components: Sequence[Component], upper_bound: int) -> int | None:
    """getMaximumSetsBasedOnResourceModels: whole sets simulated onto the resource-model nodes, at most
    ``upper_bound``; None when the cluster has no resource models (Karmada's error: the bound is skipped)."""
    grades = _model_grades(cluster)
    if grades is None:
        return None
    return _simulate([dict(node) for node, count in grades for _ in range(count)], components, upper_bound)


# ---------------------------------------------------------------- Webster


def _fnv32a(text: str) -> int:
    h = 0x811C9DC5
    for byte in text.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def names_descending(uid: str) -> bool:
    """tieBreakerByUID: names break ties in descending order when fnv32a(uid) is odd."""
    return bool(uid) and _fnv32a(uid) & 1 == 1


def webster(seats: int, votes: Mapping[str, int], initial: Mapping[str, int], uid: str = "") -> dict[str, int]:
    """AllocateWebsterSeats: ``seats`` new seats one at a time to the party with the largest
    votes / (2·seats + 1); ties to fewer seats, then by name (ascending, or descending by the uid).
    Every party is in the result (zero seats too), sorted by name."""
    parties = {name: (0, n) for name, n in initial.items()}
    for name, v in votes.items():
        parties[name] = (v, parties.get(name, (0, 0))[1])
    if not parties:
        return {}
    descending = names_descending(uid)
    rank = {name: (-i if descending else i) for i, name in enumerate(sorted(parties))}

    def key(name: str, v: int, n: int) -> tuple[float, int, int]:
        return (-(float(v) / float(2 * n + 1)), n, rank[name])

    heap = [(key(name, v, n), name) for name, (v, n) in parties.items()]
    heapq.heapify(heap)
    seats_of = {name: n for name, (_, n) in parties.items()}
    for _ in range(seats):
        _, name = heapq.heappop(heap)
        seats_of[name] += 1
        heapq.heappush(heap, (key(name, parties[name][0], seats_of[name]), name))
    return dict(sorted(seats_of.items()))


# ---------------------------------------------------------------- assignment


@dataclass(frozen=True)
class Candidate:
    """spreadconstraint.ClusterDetailInfo: a selected cluster with what the assign stage reads."""

    cluster: Cluster
    score: int
    available: int  # allocatable + replicas the binding has there already
    allocatable: int
    overflow: int = 0

    @property
    def name(self) -> str:
        return self.cluster.name


@dataclass(frozen=True)
class Request:
    """What the assign stage reads of the binding."""

    replicas: int
    workload: bool  # replicas > 0 or replicaRequirements set
    previous: tuple[TargetCluster, ...]
    uid: str = ""
    fresh: bool = False  # a manual reschedule: Fresh assignment mode


Weights = Callable[[Cluster], int] | None  # a static weight list; None: no weightPreference (all 1)


def _by_replicas(targets: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """sort.Sort(TargetClustersList): replicas descending, clusters of equal replicas in the order Go's
    unstable sort leaves them (stable up to 12 clusters; above, not: engine.kube.gosort)."""
    return gosort.descending(targets, lambda t: t[1])


def _divide(
    strategy: Strategy, target: int, available: list[tuple[str, int]], scheduled: list[tuple[str, int]], uid: str
) -> dict[str, int]:
    """dynamicDivideReplicas."""
    total = sum(n for _, n in available)
    if total < target:
        raise Unschedulable(f"Clusters available replicas {total} are not enough to schedule")
    if strategy is Strategy.AGGREGATED:
        prior = {name for name, n in scheduled if n > 0}
        if prior:
            available = [t for t in available if t[0] in prior] + [t for t in available if t[0] not in prior]
        running = 0
        for i, (_, n) in enumerate(available):
            running += n
            if running >= target:
                available = available[: i + 1]
                break
    result = webster(target, dict(available), {}, uid)
    for name, n in scheduled:  # MergeTargetClusters
        result[name] = result.get(name, 0) + n
    return result


def _dynamic(strategy: Strategy, candidates: Sequence[Candidate], request: Request) -> dict[str, int]:
    """assignByDynamicStrategy."""
    names = {c.name for c in candidates}
    scheduled = [(t.name, t.replicas) for t in request.previous if t.name in names]
    assigned = sum(n for _, n in scheduled)
    try:
        if request.fresh:
            before = dict(scheduled)
            available = _by_replicas([(c.name, c.allocatable + before.get(c.name, 0)) for c in candidates])
            return _divide(strategy, request.replicas, available, [], request.uid)
        if assigned > request.replicas:
            return _divide(strategy, request.replicas, _by_replicas(scheduled), [], request.uid)
        if assigned < request.replicas:
            available = _by_replicas([(c.name, c.allocatable) for c in candidates])
            return _divide(strategy, request.replicas - assigned, available, scheduled, request.uid)
    except Unschedulable as exc:
        step = "do fresh scale" if request.fresh else "scale down" if assigned > request.replicas else "scale up"
        raise Unschedulable(f"failed to {step}: {exc}.") from None
    return dict(scheduled)


def _static(candidates: Sequence[Candidate], weights: Weights, request: Request) -> dict[str, int]:
    """assignByStaticWeightStrategy: Webster over the static weights, from nothing; a cluster no weight
    entry matches is left out; when no cluster has a weight, every one has weight 1."""
    votes = {c.name: weights(c.cluster) for c in candidates} if weights is not None else {}
    votes = {name: w for name, w in votes.items() if w > 0}
    if not votes:
        votes = {c.name: 1 for c in candidates}
    return webster(request.replicas, votes, {}, request.uid)


def assign(
    strategy: Strategy, candidates: Sequence[Candidate], request: Request, weights: Weights = None
) -> dict[str, int]:
    """AssignReplicas: cluster → replicas, clusters with none dropped; a non-workload goes to every
    selected cluster with no replica count (0). Raises Unschedulable (not enough replicas) or
    SchedulingError (no cluster selected)."""
    if not candidates:
        raise SchedulingError("no clusters available to schedule")
    if not request.workload:
        return {c.name: 0 for c in candidates}
    if strategy is Strategy.DUPLICATED:
        result = {c.name: request.replicas for c in candidates}
    elif strategy is Strategy.STATIC_WEIGHT:
        result = _static(candidates, weights, request)
    else:
        result = _dynamic(strategy, candidates, request)
    return {name: n for name, n in sorted(result.items()) if n > 0}


def assign_overflow(
    strategy: Strategy, candidates: Sequence[Candidate], request: Request, weights: Weights = None
) -> dict[str, int]:
    """assignWorkloadReplicas with overflow (pkg/scheduler/core/common.go): the clusters by overflow tier, the
    term's own first; each tier takes as many of the remaining replicas as it has available (the binding's
    own replicas there included) and divides them as ``assign`` does; replicas left after the last tier are
    an Unschedulable error. A scale-down so empties the last tiers first."""
    if not request.workload:
        return assign(strategy, candidates, request, weights)
    tiers: dict[int, list[Candidate]] = {}
    for c in candidates:
        tiers.setdefault(c.overflow, []).append(c)
    out: dict[str, int] = {}
    remaining = request.replicas
    for tier in sorted(tiers):
        members = tiers[tier]
        share = min(remaining, sum(c.available for c in members))
        out |= assign(strategy, members, replace(request, replicas=share), weights)
        remaining -= share
        if remaining <= 0:
            break
    if remaining > 0:
        raise Unschedulable("Clusters available replicas are not enough to schedule.")
    return dict(sorted(out.items()))
