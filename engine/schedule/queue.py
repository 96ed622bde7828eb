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

from engine.codes import Code
from engine.detector.templates import priority_class
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
    named = priority_class(policy) if policy is not None else None
    if named is not None and named in classes:
        return classes[named]
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
    first: list[tuple[str, str]] = []  # (the group, NAMESPACE) whose first member decides where it goes
    shared: list[tuple[str, str]] = []  # (the group, NAMESPACE) whose member left without a cluster is the order's
    for (kind, namespace, group), members in sorted(groups.items()):
        run = sorted(k for k in members if k in placed and not placed[k].settled)
        levels: dict[int, list[str]] = defaultdict(list)  # the members scheduled now, by their priority
        for key in run:
            levels[priority(by_key[key])].append(key)
        if kind == "affinity_group":
            tied = levels[max(levels)] if levels else []
            if len(tied) >= 2 and not any(placed[k].settled and placed[k].clusters for k in members if k in placed):
                first.append((group, namespace))
        elif any(len(tied) >= 2 and any(placed[k].unschedulable for k in tied) for tied in levels.values()):
            shared.append((group, namespace))
    out = []
    unseen = (
        "at equal priority the order they were added, which a snapshot does not show (fleetrules takes NAMESPACE/NAME)"
    )
    if first:
        groups_said = listed([f"{g} in {ns}" for g, ns in first], 3)
        message = (
            f"the first binding of workload affinity group(s) {groups_said} the scheduler takes chooses where the "
            f"group goes ({len(first)} group(s) scheduled together now), {unseen}: another order may place them "
            "elsewhere"
        )
        out.append(warning(message, subject="queue", code=Code.EVALUATION))
    if shared:
        groups_said = listed([f"{g} in {ns}" for g, ns in shared], 3)
        message = (
            f"which member of anti-affinity group(s) {groups_said} is left without a cluster depends on the order the "
            f"scheduler takes them in ({len(shared)} group(s)), {unseen}"
        )
        out.append(warning(message, subject="queue", code=Code.EVALUATION))
    return out
