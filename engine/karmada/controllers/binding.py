"""The binding controller (pkg/controllers/binding, pkg/util/helper/binding.go): which clusters keep a Work, deleting
before creating for Directly, and the preserved labels injected into a new Work (injectReservedLabelState).
"""

from __future__ import annotations

from engine.inputs.facts import Binding
from engine.karmada.controllers.world import World
from engine.results import Entry, EntryKind


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
