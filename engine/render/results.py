"""Results → text for people, JSON and YAML for machines. Output is deterministic: bindings by
NS/NAME, clusters by name, reasons by rule, source and message."""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import yaml

from engine.errors import expect
from engine.inputs.facts import rfc3339, task_data
from engine.render.timeline import show
from engine.results import (
    SHOWN_NAMES,
    Attached,
    BindingState,
    Eviction,
    Explanation,
    NotPropagated,
    Placement,
    Reason,
    Result,
    summarize,
)
from engine.schedule.reschedule import SETTLED

# the version of the JSON and YAML shape of `eval`'s output (docs/output.md)
SCHEMA_VERSION = 2
# how many feasible clusters a summary shows, the best first
SHOWN_FEASIBLE = 5


def placement_data(p: Placement, every_cluster: bool = False) -> dict[str, Any]:
    """A placement as JSON and YAML show it (docs/output.md): sized by the binding, whatever the number of
    clusters: the feasible and rejected clusters counted and summarised; ``every_cluster`` adds every
    feasible cluster with its score and every rejected cluster with its reasons."""
    data: dict[str, Any] = {
        "binding": p.binding,
        "policy": p.policy,
        "clusters": list(p.clusters),
    }
    if _divides(p):
        data["replicas"] = {c: p.replicas.get(c, 0) for c in p.clusters}
    if p.components:
        data["components"] = [{"name": name, "replicas": n} for name, n in p.components]
    feasible: dict[str, Any] = {"count": len(p.feasible)}
    feasible["best"] = [{"cluster": c, "score": p.scores.get(c, 0)} for c in best(p, SHOWN_FEASIBLE)]
    if every_cluster:
        feasible["scores"] = {c: p.scores.get(c, 0) for c in p.feasible}
    rejected: dict[str, Any] = {"count": len(p.rejected)}
    rejected["reasons"] = [
        {**_reason_data(r.reason), "count": r.count, "clusters": list(r.clusters)} for r in summarize(p.rejected)
    ]
    if every_cluster:
        rejected["clusters"] = {c: [_reason_data(r) for r in rs] for c, rs in p.rejected.items()}
    data |= {"feasible": feasible, "rejected": rejected, "unschedulable": p.unschedulable}
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
    if p.dependencies:
        data["dependencies"] = [d.data() for d in p.dependencies]
    return data


def _reason_data(r: Reason) -> dict[str, str]:
    return {"rule": r.rule, "source": r.source, "message": r.message}


def best(p: Placement, count: int) -> list[str]:
    """The first ``count`` feasible clusters in the scheduler's order: the highest score first, then by name."""
    scores = p.scores
    if len(p.feasible) <= count:
        return sorted(p.feasible, key=lambda c: (-scores.get(c, 0), c))
    return heapq.nsmallest(count, p.feasible, key=lambda c: (-scores.get(c, 0), c))


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


def names(shown: Sequence[str], count: int) -> str:
    """Cluster names as a summary shows them: all of them, or the first and how many more."""
    listed = ", ".join(shown)
    return listed if count <= len(shown) else f"{listed} and {count - len(shown)} more"


def _sections(result: Result, every_cluster: bool) -> Iterator[tuple[str, Iterable[Any]]]:
    """The lists of the JSON and YAML document after its schema version, each made as it is written."""
    yield "placements", (placement_data(p, every_cluster) for p in result.placements)
    yield "evictions", (e.data() for e in result.evictions)
    if result.unmatched:
        yield "unmatched", result.unmatched
    if result.not_propagated:
        yield "notPropagated", (n.data() for n in result.not_propagated)
    if result.attached:
        yield "attached", (a.data() for a in result.attached)


def result_data(result: Result, every_cluster: bool = False) -> dict[str, Any]:
    """The result as JSON and YAML show it (docs/output.md); ``every_cluster``: see ``placement_data``."""
    expect("result", result, Result, "a Result from evaluate()")
    return {"schemaVersion": SCHEMA_VERSION} | {key: list(items) for key, items in _sections(result, every_cluster)}


def to_json(result: Result, every_cluster: bool = False) -> str:
    """``result`` as JSON (`fleetrules eval -o json`), as the CLI prints it; ``every_cluster``: every
    rejected cluster with its rule and source line and every feasible one with its score (`--rejections all`)."""
    return "".join(json_chunks(result, every_cluster))


def json_chunks(result: Result, every_cluster: bool = False) -> Iterator[str]:
    """``to_json`` one placement at a time: an object whose lists hold one placement or eviction per line
    (a fleet's answer is written as it is made, and one binding is one line to grep)."""
    expect("result", result, Result, "a Result from evaluate()")
    yield f'{{\n  "schemaVersion": {SCHEMA_VERSION}'
    for key, items in _sections(result, every_cluster):
        yield f',\n  "{key}": '
        yield from _json_list(items)
    yield "\n}\n"


def _json_list(items: Iterable[Any]) -> Iterator[str]:
    first = True
    for item in items:
        yield ("[\n    " if first else ",\n    ") + json.dumps(item, ensure_ascii=False)
        first = False
    yield "[]" if first else "\n  ]"


def jsonl_chunks(result: Result, every_cluster: bool = False) -> Iterator[str]:
    """JSON Lines: the schema version, then one line per placement, eviction and unmatched binding, each an
    object of one key saying which it is."""
    expect("result", result, Result, "a Result from evaluate()")
    yield json.dumps({"schemaVersion": SCHEMA_VERSION}) + "\n"
    for p in result.placements:
        yield json.dumps({"placement": placement_data(p, every_cluster)}, ensure_ascii=False) + "\n"
    for e in result.evictions:
        yield json.dumps({"eviction": e.data()}, ensure_ascii=False) + "\n"
    for key in result.unmatched:
        yield json.dumps({"unmatched": key}, ensure_ascii=False) + "\n"
    for n in result.not_propagated:
        yield json.dumps({"notPropagated": n.data()}, ensure_ascii=False) + "\n"
    for a in result.attached:
        yield json.dumps({"attached": a.data()}, ensure_ascii=False) + "\n"


def to_yaml(result: Result, every_cluster: bool = False) -> str:
    """``result`` as YAML (`-o yaml`), as the CLI prints it; ``every_cluster``: every
    rejected cluster with its rule and source line and every feasible one with its score (`--rejections all`)."""
    return "".join(yaml_chunks(result, every_cluster))


def yaml_chunks(result: Result, every_cluster: bool = False) -> Iterator[str]:
    """``to_yaml`` one placement at a time (the same text)."""
    expect("result", result, Result, "a Result from evaluate()")
    yield f"schemaVersion: {SCHEMA_VERSION}\n"
    for key, items in _sections(result, every_cluster):
        yield from _yaml_list(key, items)


def _yaml(value: Any) -> str:
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True, width=1000)


def _yaml_list(key: str, items: Iterable[Any]) -> Iterator[str]:
    first = True
    for item in items:
        if first:
            yield f"{key}:\n"
            first = False
        yield _yaml([item])
    if first:
        yield f"{key}: []\n"


def to_text(result: Result, every_cluster: bool = False) -> str:
    """``result`` as text for people (`fleetrules eval`), as the CLI prints it; ``every_cluster``: every
    rejected cluster with its rule and source line and every feasible one with its score (`--rejections all`)."""
    return "".join(text_chunks(result, every_cluster))


def text_chunks(result: Result, every_cluster: bool = False) -> Iterator[str]:
    """The result for people, one binding at a time: its clusters, and its feasible and rejected clusters
    summarised by reason (``every_cluster``: each of them)."""
    expect("result", result, Result, "a Result from evaluate()")
    said = False
    for p in result.placements:
        yield ("\n" if said else "") + "\n".join(placement_lines(p, every_cluster)) + "\n"
        said = True
    tail = unmatched_lines(result.unmatched, every_cluster)
    tail += not_propagated_lines(result.not_propagated, every_cluster)
    tail += attached_lines(result.attached, every_cluster)
    if result.evictions:
        tail.append(f"evictions at {rfc3339(result.now) if result.now else '?'}:")
        tail += [f"  {eviction_line(e)}" for e in result.evictions]
    if tail:
        yield ("\n" if said else "") + "\n".join(tail) + "\n"
    elif not said:
        yield "no bindings\n"


def unmatched_lines(unmatched: Sequence[str], every: bool = False) -> list[str]:
    """The bindings no policy selects: each on its line (``every``, or a few), else counted by kind (the binding
    name's last part) with the first names: a control plane's dump holds thousands (RBAC, CRDs, Services, …)."""
    if every or len(unmatched) <= SHOWN_NAMES:
        return [f"{key}: no policy selects it" for key in unmatched]
    by_kind: dict[str, list[str]] = {}
    for key in unmatched:
        by_kind.setdefault(key.rpartition("-")[2], []).append(key)
    lines = [f"no policy selects {len(unmatched)} bindings (--rejections all lists each):"]
    for kind, keys in sorted(by_kind.items(), key=lambda item: (-len(item[1]), item[0])):
        lines.append(f"  {kind} {len(keys)}: {names(keys[:SHOWN_NAMES], len(keys))}")
    return lines


def not_propagated_lines(templates: Sequence[NotPropagated], every: bool = False) -> list[str]:
    """The templates the detector never binds, counted by reason with the first names (``every``: all of them)."""
    if not templates:
        return []
    by_message: dict[str, list[str]] = {}
    for n in templates:
        by_message.setdefault(n.message, []).append(n.binding)
    lines = [f"not propagated: {_templates(len(templates))} the resource detector never binds"]
    for message, bindings in sorted(by_message.items()):
        shown = bindings if every else bindings[:SHOWN_NAMES]
        lines.append(f"  {message}: {names(shown, len(bindings))}")
    return lines


def attached_lines(attached: Sequence[Attached], every: bool = False) -> list[str]:
    """The bindings the dependencies distributor makes, each with its clusters (``every``: all, else the first)."""
    if not attached:
        return []
    lines = [f"attached: {len(attached)} dependencies bound where the workloads requiring them are"]
    for a in attached if every else attached[:SHOWN_NAMES]:
        lines.append(f"  {a.binding}: {', '.join(a.clusters) or '(none)'}  (required by {', '.join(a.required_by)})")
    if not every and len(attached) > SHOWN_NAMES:
        lines.append(f"  … and {len(attached) - SHOWN_NAMES} more (--rejections all lists every one)")
    return lines


def _templates(count: int) -> str:
    return "1 resource template" if count == 1 else f"{count} resource templates"


def placement_lines(p: Placement, every_cluster: bool = False) -> list[str]:
    """One placement in the text output."""
    lines = [f"{p.binding}  (policy {p.policy})"]
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
        if every_cluster:
            lines.append("  feasible: " + ", ".join(f"{c} ({p.scores[c]})" for c in p.feasible))
        else:
            shown = [f"{c} ({p.scores.get(c, 0)})" for c in best(p, SHOWN_FEASIBLE)]
            lines.append("  feasible: " + names(shown, len(p.feasible)))
    if p.rejected:
        candidates = len(p.feasible) + len(p.rejected)
        lines.append(f"  rejected: {len(p.rejected)} of {candidates} clusters")
        if every_cluster:
            for cluster, reasons in p.rejected.items():
                lines += [f"    {cluster}: {r.message}  [{r.rule} at {r.source}]" for r in reasons]
        else:
            for r in summarize(p.rejected):
                where = f"[{r.reason.rule} at {r.reason.source}]"
                lines.append(f"    {r.reason.message}: {names(r.clusters, r.count)}  {where}")
    if p.dependencies:
        lines.append("  dependencies: " + ", ".join(d.words() for d in p.dependencies))
    if p.at_now is not None:
        lines += _state_lines(p.at_now)
    return lines


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
    if e.explanation is not None:  # what the rule matched, as a rejection's explanation shows it
        lines += [f"    {f.alias}: {f.fact_type} {f.description}" for f in e.explanation.facts]
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
