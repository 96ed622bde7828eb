"""A policy diff (engine.review.diff) as text, JSON and Markdown."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engine.render.results import names
from engine.results import SHOWN_NAMES, Reason, Rejection, summarize
from engine.review.diff import Change, Diff


def _score(value: int | None) -> str:
    return "rejected" if value is None else str(value)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _summary(d: Diff) -> str:
    moved, unsched, evictions = d.count("moved"), d.count("unschedulable"), d.count("eviction")
    resized = d.count("replicas") - sum("moved" in c.categories() and "replicas" in c.categories() for c in d.changes)
    dependencies = sum(c.attached for c in d.changes)
    return (
        f"{plural(moved, 'binding')} moved"
        + (f" ({dependencies} of them dependencies' bindings)" if dependencies else "")
        + ", "
        + (f"{plural(resized, 'binding')} with replicas shifted, " if resized else "")
        + f"{unsched} newly unschedulable, "
        f"{plural(evictions, 'binding')} with new evictions, {plural(len(d.changes), 'binding')} changed in all"
    )


def clusters_text(clusters: tuple[str, ...], unschedulable: bool) -> str:
    """A binding's clusters as the reports show them, or that it is unschedulable, or (none)."""
    return ", ".join(clusters) if clusters else ("unschedulable" if unschedulable else "(none)")


def _where(r: Rejection) -> str:
    return f"[{r.reason.rule} at {r.reason.source}]"


def _names(r: Rejection) -> str:
    """The clusters of a summary line in Markdown: each in code, then how many more."""
    return names([f"`{c}`" for c in r.clusters], r.count)


@dataclass(frozen=True)
class ScoreChange:
    """Clusters whose score went from ``before`` to ``after`` (None: rejected): how many, and the first names."""

    before: int | None
    after: int | None
    count: int
    clusters: tuple[str, ...]


def score_changes(c: Change, names: int = SHOWN_NAMES) -> list[ScoreChange]:
    """A changed binding's score changes grouped by what they went from and to, as rejections are grouped by
    reason: the most clusters first, each group with the first ``names`` of its clusters by name. A policy moved to
    another region changes the scores of every cluster of both: the report stays sized by the binding."""
    groups: dict[tuple[int | None, int | None], list[str]] = {}
    for cluster, change in c.scores.items():
        groups.setdefault(change, []).append(cluster)
    ordered = sorted(groups.items(), key=lambda g: (-len(g[1]), sorted(g[1])[0]))
    return [ScoreChange(b, a, len(cs), tuple(sorted(cs)[:names])) for (b, a), cs in ordered]


def to_text(d: Diff, every_cluster: bool = False) -> str:
    lines = [_summary(d)]
    for c in d.changes:
        lines.append("")
        before, after = clusters_text(c.before, c.was_unschedulable), clusters_text(c.after, c.is_unschedulable)
        lines.append(f"{c.binding}{' (dependency)' if c.attached else ''}: {before} -> {after}")
        for r in summarize(c.rejections_added):
            lines.append(f"  + {names(r.clusters, r.count)} rejected: {r.reason.message}  {_where(r)}")
        for r in summarize(c.rejections_removed):
            lines.append(f"  - {names(r.clusters, r.count)} no longer rejected: {r.reason.message}  {_where(r)}")
        if c.replicas:
            lines.append("  replicas: " + ", ".join(f"{k} {o} -> {n}" for k, (o, n) in c.replicas.items()))
        if every_cluster:
            lines += [f"  ~ {k} score {_score(o)} -> {_score(n)}" for k, (o, n) in c.scores.items()]
        else:
            for g in score_changes(c):
                lines.append(f"  ~ {names(g.clusters, g.count)} score {_score(g.before)} -> {_score(g.after)}")
        lines += [
            f"  + eviction from {e.get('cluster')}: {e.get('task', {}).get('reason', e.get('error', ''))}"
            for e in c.evictions_added
        ]
        lines += [f"  - eviction from {e.get('cluster')} no longer made" for e in c.evictions_removed]
    return "\n".join(lines) + "\n"


def to_data(d: Diff, every_cluster: bool = False) -> dict[str, Any]:
    """The diff as JSON shows it (docs/review.md), sized by the changed bindings as eval's answer is by the
    bindings: per change its clusters before and after, the rejections added and removed counted by rule and
    reason with the first names, the score changes grouped by what they went from and to, with the first names.
    ``every_cluster`` (`--rejections all`) adds every rejected cluster with its reasons and every score change."""

    def reasons(m: dict[str, tuple[Reason, ...]]) -> dict[str, list[dict[str, str]]]:
        return {c: [{"rule": r.rule, "source": r.source, "message": r.message} for r in rs] for c, rs in m.items()}

    def counted(m: dict[str, tuple[Reason, ...]]) -> dict[str, Any]:
        out: dict[str, Any] = {"count": len(m)}
        out["reasons"] = [
            {"rule": r.reason.rule, "source": r.reason.source, "message": r.reason.message, "count": r.count}
            | {"clusters": list(r.clusters)}
            for r in summarize(m)
        ]
        if every_cluster:
            out["clusters"] = reasons(m)
        return out

    def scores(c: Change) -> dict[str, Any]:
        out: dict[str, Any] = {"count": len(c.scores)}
        out["changes"] = [
            {"before": g.before, "after": g.after, "count": g.count, "clusters": list(g.clusters)}
            for g in score_changes(c)
        ]
        if every_cluster:
            out["clusters"] = {k: {"before": o, "after": n} for k, (o, n) in c.scores.items()}
        return out

    return {
        "summary": {
            "moved": d.count("moved"),
            "newlyUnschedulable": d.count("unschedulable"),
            "newEvictions": d.count("eviction"),
            "replicasChanged": d.count("replicas"),
            "changed": len(d.changes),
        }
        | ({"dependenciesMoved": moved} if (moved := sum(c.attached for c in d.changes)) else {}),
        "changes": [
            {
                "binding": c.binding,
                "before": list(c.before),
                "after": list(c.after),
                "unschedulable": {"before": c.was_unschedulable, "after": c.is_unschedulable},
                "rules": list(c.rules),
                "rejectionsAdded": counted(c.rejections_added),
                "rejectionsRemoved": counted(c.rejections_removed),
                "scores": scores(c),
                "replicas": {k: {"before": o, "after": n} for k, (o, n) in c.replicas.items()},
                "evictionsAdded": list(c.evictions_added),
                "evictionsRemoved": list(c.evictions_removed),
            }
            | ({"attached": True} if c.attached else {})
            for c in d.changes
        ],
    }


def to_json(d: Diff, every_cluster: bool = False) -> str:
    return json.dumps(to_data(d, every_cluster), indent=2, ensure_ascii=False) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(d: Diff) -> str:
    """For a pull-request comment: the summary, a table, and the reasons folded away."""
    lines = ["### fleetrules: placement changes", "", f"**{_summary(d)}**", ""]
    if not d.changes:
        return "\n".join([*lines, "No binding's placement, rejections, scores or evictions changed.", ""])
    lines += ["| binding | before | after | rules |", "| --- | --- | --- | --- |"]
    for c in d.changes:
        before, after = clusters_text(c.before, c.was_unschedulable), clusters_text(c.after, c.is_unschedulable)
        flag = " ⚠️" if c.is_unschedulable and not c.was_unschedulable else ""
        rules = _cell(", ".join(f"`{r}`" for r in c.rules))
        dependency = " (dependency)" if c.attached else ""
        lines.append(f"| `{c.binding}`{dependency} | {_cell(before)} | {_cell(after)}{flag} | {rules} |")
    lines.append("")
    for c in d.changes:
        lines += ["<details>", f"<summary><code>{c.binding}</code></summary>", ""]
        for r in summarize(c.rejections_added):
            where = f"(`{r.reason.rule}`, {r.reason.source})"
            lines.append(f"- ➕ {_names(r)} rejected: {_cell(r.reason.message)} {where}")
        for r in summarize(c.rejections_removed):
            lines.append(f"- ➖ {_names(r)} no longer rejected: {_cell(r.reason.message)} (`{r.reason.rule}`)")
        lines += [f"- replicas on `{k}`: {o} → {n}" for k, (o, n) in c.replicas.items()]
        lines += [
            f"- score of {names([f'`{k}`' for k in g.clusters], g.count)}: {_score(g.before)} → {_score(g.after)}"
            for g in score_changes(c)
        ]
        lines += [
            f"- ➕ eviction from `{e.get('cluster')}`: {e.get('task', {}).get('reason', e.get('error', ''))}"
            for e in c.evictions_added
        ]
        lines += ["", "</details>", ""]
    return "\n".join(lines)
