"""The scheduler's queue (karmada pkg/scheduler/internal/queue): which binding the scheduler takes first.

``Less`` (types.go) orders bindings by their priority, the higher first, then by when they were queued. A
binding's priority is its spec.schedulePriority.priority (``SchedulePriorityValue``: 0 when absent), which the
detector writes from its policy's schedulePriority (pkg/detector BuildResourceBinding: the value of the Kubernetes
PriorityClass it names) with the PriorityBasedScheduling gate (beta, on). When they were queued a snapshot does not
show: the scheduler lists the bindings at its start in the API server's order, NAMESPACE/NAME, which fleetrules
takes for every binding. Where that order decides an outcome among bindings of equal priority, ``order_notes``
says so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine.errors import Diagnostic, listed, warning
from engine.inputs.facts import Binding
from engine.results import Placement
from engine.syntax import ast


def queue_priority(
    binding: Binding, policy: ast.Policy | None, classes: Mapping[str, int], priority_based: bool = True
) -> int:
    """spec.schedulePriority.priority as the detector writes it: its policy's PriorityClass's value (a
    ``priority class`` statement), else what the binding records, else 0; 0 for all without the gate."""
    if not priority_based:
        return 0
    named = next((s for s in policy.statements if isinstance(s, ast.SchedulePriority)), None) if policy else None
    if named is not None and named.class_name.value in classes:
        return classes[named.class_name.value]
    return binding.schedule_priority or 0


def queue_order(bindings: Sequence[Binding], priority: Callable[[Binding], int]) -> list[Binding]:
    """The bindings (in NAMESPACE/NAME order) as the queue gives them: the higher priority first, NAMESPACE/NAME
    among equals."""
    priorities = {b.key: priority(b) for b in bindings}
    if not any(priorities.values()):
        return list(bindings)
    return sorted(bindings, key=lambda b: -priorities[b.key])  # a stable sort: NAMESPACE/NAME among equals


def order_notes(
    placed: Mapping[str, Placement],
    binding_facts: Mapping[str, Mapping[str, Any]],
    bindings: Sequence[Binding],
    priority: Callable[[Binding], int],
) -> list[Diagnostic]:
    """Where the queue's order among bindings of equal priority decides an outcome: the first of a workload
    affinity group to be scheduled, with no member placed before, chooses where the group goes; the members of an
    anti-affinity group scheduled together share out the clusters, and which is left without one depends on the
    order."""
    groups: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for key, props in binding_facts.items():
        for kind in ("affinity_group", "anti_affinity_group"):
            if props.get(kind):
                groups[(kind, str(props["namespace"]), str(props[kind]))].append(key)
    by_key = {b.key: b for b in bindings}
    out = []
    for (kind, namespace, group), members in sorted(groups.items()):
        run = sorted(k for k in members if k in placed and not placed[k].settled)
        levels: dict[int, list[str]] = defaultdict(list)  # the members scheduled now, by their priority
        for key in run:
            levels[priority(by_key[key])].append(key)
        if kind == "affinity_group":
            tied = levels[max(levels)] if levels else []
            if len(tied) < 2 or any(placed[k].settled and placed[k].clusters for k in members if k in placed):
                continue
            said = (
                f"the first of them the scheduler takes chooses where workload affinity group {group} goes, and at "
                "equal priority that is the one added first, which the snapshot does not show (fleetrules takes "
                f"{tied[0]}, by NAMESPACE/NAME): another order may place the group elsewhere"
            )
            out.append(warning(f"bindings {listed(tied, 3)} in {namespace}: {said}", subject=tied[0]))
            continue
        for _, tied in sorted(levels.items(), reverse=True):
            if len(tied) < 2 or not any(placed[k].unschedulable for k in tied):
                continue
            said = (
                f"which member of anti-affinity group {group} is left without a cluster depends on the order the "
                "scheduler takes them in, at equal priority the order they were added, which the snapshot does not "
                "show (fleetrules takes NAMESPACE/NAME)"
            )
            out.append(warning(f"bindings {listed(tied, 3)} in {namespace}: {said}", subject=tied[0]))
    return out
