"""The graceful eviction controller (pkg/controllers/gracefuleviction/evictiontask.go): a task stays until its new
clusters are healthy or its grace period (or --graceful-eviction-timeout) runs out.
"""

from __future__ import annotations

from engine.inputs.facts import Binding, EvictionTask, evolve
from engine.karmada.controllers.world import World, after
from engine.karmada.gates import GRACEFUL_EVICTION_TIMEOUT


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
