"""The application failover controller (pkg/controllers/applicationfailover): its clock of workloads Unhealthy on
a cluster (workloadUnhealthyMap), the ``unhealthy_workload`` facts rules/application_failover.fr reads, and the
evictions that rule decides, as tasks under the policy's application failover.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from engine.inputs.facts import rfc3339
from engine.karmada.controllers.world import EvictionTrigger, RuleEviction, World


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
