"""Results → text for people, JSON and YAML for machines (S7). Output is deterministic: bindings by
NS/NAME, clusters by name, reasons by rule, source and message."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import yaml

from engine.errors import expect
from engine.inputs.facts import rfc3339, task_data
from engine.render.timeline import show
from engine.results import BindingState, Eviction, Explanation, Placement, Result
from engine.schedule.reschedule import SETTLED


def placement_data(p: Placement) -> dict[str, Any]:
    data: dict[str, Any] = {
        "binding": p.binding,
        "policy": p.policy,
        "clusters": list(p.clusters),
    }
    if _divides(p):
        data["replicas"] = {c: p.replicas.get(c, 0) for c in p.clusters}
    if p.components:
        data["components"] = [{"name": name, "replicas": n} for name, n in p.components]
    data |= {
        "feasible": list(p.feasible),
        "scores": dict(p.scores),
        "rejected": {
            c: [{"rule": r.rule, "source": r.source, "message": r.message} for r in rs] for c, rs in p.rejected.items()
        },
        "unschedulable": p.unschedulable,
    }
    if p.message:
        data["message"] = p.message
    data["previous"] = list(p.previous)
    if p.affinity_term is not None:
        data["affinityTerm"] = p.affinity_term
    if p.settled:
        data["settled"] = p.settled_why or SETTLED
    elif p.trigger:
        data["scheduledBecause"] = str(p.trigger)
    if p.at_now is not None:
        data["atNow"] = p.at_now.data()
    return data


def _divides(p: Placement) -> bool:
    """Whether the placement has replica counts to show (a workload; a non-workload's are all 0)."""
    return any(p.replicas.get(c, 0) for c in p.clusters)


def _clusters(p: Placement) -> str:
    if not p.clusters:
        return "(none)"
    if not _divides(p):
        return ", ".join(p.clusters)
    return ", ".join(f"{c} ({_count(p.replicas.get(c, 0))})" for c in p.clusters)


def _count(replicas: int) -> str:
    return f"{replicas} replica" if replicas == 1 else f"{replicas} replicas"


def result_data(result: Result) -> dict[str, Any]:
    expect("result", result, Result, "a Result from evaluate()")
    data: dict[str, Any] = {
        "placements": [placement_data(p) for p in result.placements],
        "evictions": [e.data() for e in result.evictions],
    }
    if result.unmatched:
        data["unmatched"] = list(result.unmatched)
    return data


def to_json(result: Result) -> str:
    return json.dumps(result_data(result), indent=2, ensure_ascii=False) + "\n"


def to_yaml(result: Result) -> str:
    return yaml.safe_dump(result_data(result), sort_keys=False, allow_unicode=True, width=1000)


def to_text(result: Result) -> str:
    expect("result", result, Result, "a Result from evaluate()")
    lines: list[str] = []
    for p in result.placements:
        lines.append(f"{p.binding}  (policy {p.policy})")
        if p.settled:
            lines.append(f"  settled: {p.settled_why or SETTLED}")
        if p.unschedulable:
            lines.append(f"  UNSCHEDULABLE: {p.message}")
        if p.clusters or not p.unschedulable:
            lines.append(f"  clusters: {_clusters(p)}")
        if p.components:
            each = ", ".join(f"{name} {n}" for name, n in p.components)
            lines.append(f"  components: {each} (a whole set on each cluster)")
        if p.previous and p.previous != p.clusters:
            lines.append(f"  previously: {', '.join(p.previous)}")
        if p.feasible:
            lines.append("  feasible: " + ", ".join(f"{c} ({p.scores[c]})" for c in p.feasible))
        if p.rejected:
            lines.append("  rejected:")
            for cluster, reasons in p.rejected.items():
                for r in reasons:
                    lines.append(f"    {cluster}: {r.message}  [{r.rule} at {r.source}]")
        if p.at_now is not None:
            lines += _state_lines(p.at_now)
        lines.append("")
    for key in result.unmatched:
        lines.append(f"{key}: no policy selects it")
    if result.evictions:
        lines.append(f"evictions at {rfc3339(result.now) if result.now else '?'}:")
        lines += [f"  {eviction_line(e)}" for e in result.evictions]
    return "\n".join(lines).rstrip("\n") + "\n" if lines else "no bindings\n"


def _state_lines(state: BindingState) -> list[str]:
    """The binding's tasks and Works at the evaluation time, in the text output."""
    lines = []
    for t in state.tasks:
        since = rfc3339(t.creation_timestamp) if t.creation_timestamp else "?"
        grace = f", grace {t.grace_period_seconds}s" if t.grace_period_seconds is not None else ""
        keep = ", deletion suppressed" if t.suppress_deletion else ""
        lines.append(f"  task: from {t.from_cluster} ({t.reason}, purge {t.purge_mode}{grace}{keep}) since {since}")
    if state.tasks_ended:
        lines.append(f"  tasks ended now: {', '.join(state.tasks_ended)}")
    works = [
        c + ("" if not labels else " (labels " + ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) + ")")
        for c, labels in sorted(state.works.items())
    ]
    lines.append(f"  works: {', '.join(works) or '(none)'}")
    if state.works_deleted:
        lines.append(f"  works deleted now: {', '.join(state.works_deleted)}")
    return lines


def eviction_line(e: Eviction) -> str:
    where = f"{e.binding} @ {e.cluster}"
    if e.task is None:
        return f"{where}: eviction failed: {e.error}" + (f"  [{e.source}]" if e.source else "")
    task = e.task
    out = f"{where}: evicted ({task.reason}, purge {task.purge_mode}"
    out += f", grace {task.grace_period_seconds}s)" if task.grace_period_seconds is not None else ")"
    out += f"; now on {', '.join(e.clusters) or '(none)'}"
    for cluster, labels in e.injected_labels.items():
        out += f"; labels on {cluster}: " + ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
    out += "".join(f"; the member cluster refuses it: {p}" for p in e.label_problems)
    return out + (f"  [{e.rule} at {e.source}]" if e.rule else "")


def explanation_lines(e: Explanation, indent: str = "  ") -> list[str]:
    lines = [f"{indent}{e.rule} ({e.source}) {e.action}"]
    for fact in e.facts:
        lines.append(f"{indent}  {fact.alias}: {fact.fact_type} {fact.description}")
        for derivation in fact.derived_by:
            lines += explanation_lines(derivation, indent + "    ")
    return lines


def eviction_lines(e: Eviction) -> list[str]:
    """What failover did to the binding on this cluster at the evaluation time, for `explain --now`."""
    when = rfc3339(e.time)
    if e.task is None:
        lines = [f"{e.binding} on {e.cluster}: eviction failed at {when}", f"  {e.error}"]
        return lines + ([f"  [{e.source}]"] if e.source else [])
    lines = [f"{e.binding} on {e.cluster}: evicted at {when}"]
    if e.because:
        lines.append(f"  by {e.because}" + (f"  [{e.rule} at {e.source}]" if e.rule else ""))
    lines.append("  task: " + ", ".join(f"{k} {show(v)}" for k, v in task_data(e.task).items()))
    lines.append(f"  now on: {', '.join(e.clusters) or '(none)'}")
    for target, labels in e.injected_labels.items():
        lines.append(f"  labels injected on {target}: " + ", ".join(f"{k}={v}" for k, v in sorted(labels.items())))
    lines += [f"  the member cluster refuses it: {problem}" for problem in e.label_problems]
    return lines


def explain_text(p: Placement, cluster: str, evictions: Sequence[Eviction] = ()) -> str:
    """Why ``cluster`` is or is not one of ``p``'s clusters; first what failover did there, if anything."""
    before = [line for e in evictions for line in eviction_lines(e)]
    if before:
        before.append("then, in the scheduler:")
    return "\n".join(before + _decision_lines(p, cluster)) + "\n"


def _decision_lines(p: Placement, cluster: str) -> list[str]:
    if p.settled:
        where = "one of its clusters" if cluster in p.clusters else "not one of its clusters"
        why = p.settled_why or f"{SETTLED}; --reschedule all"
        return [f"{p.binding} on {cluster}: {where}; the scheduler would not run it ({why})"]
    if cluster in p.clusters:
        verdict = f"selected (score {p.scores.get(cluster, 0)})"
        if p.replicas.get(cluster):
            verdict += f", {p.replicas[cluster]} of {sum(p.replicas.values())} replicas"
    elif cluster in p.feasible:
        verdict = f"feasible, not selected (score {p.scores.get(cluster, 0)})"
    elif cluster in p.rejected:
        verdict = "rejected"
    else:
        verdict = "not a candidate (unknown or deleting cluster)"
    lines = [f"{p.binding} on {cluster}: {verdict}"]
    for reason in p.rejected.get(cluster, ()):
        lines.append(f"  - {reason.message}  [{reason.rule} at {reason.source}]")
    chains = p.explanations.get(cluster, ())
    if chains:
        lines.append("because:")
        for e in chains:
            lines += explanation_lines(e)
    elif cluster not in p.rejected:
        lines.append("no rule rejected or preferred it")
    return lines
