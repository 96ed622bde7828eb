"""Two versions of the rules over the same facts: what changed for each binding, and which rules did it.

Rejections are compared by (cluster, rule, message), not by source line, so that moving a rule
within its file is not a change. Evictions are compared without their creation time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.results import Placement, Reason, Result

CATEGORIES = ("moved", "unschedulable", "eviction", "rejection", "score")


@dataclass(frozen=True)
class Change:
    binding: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    was_unschedulable: bool
    is_unschedulable: bool
    scores: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)
    rejections_added: dict[str, tuple[Reason, ...]] = field(default_factory=dict)
    rejections_removed: dict[str, tuple[Reason, ...]] = field(default_factory=dict)
    evictions_added: tuple[dict[str, Any], ...] = ()
    evictions_removed: tuple[dict[str, Any], ...] = ()

    @property
    def moved(self) -> bool:
        return self.before != self.after

    @property
    def rules(self) -> tuple[str, ...]:
        """The rules responsible: those whose rejections or evictions appeared or disappeared."""
        names = {r.rule for rs in (*self.rejections_added.values(), *self.rejections_removed.values()) for r in rs}
        names |= {
            str(e.get("rule", e.get("task", {}).get("reason", "")))
            for e in (*self.evictions_added, *self.evictions_removed)
        }
        return tuple(sorted(n for n in names if n))

    def categories(self) -> set[str]:
        found = set()
        if self.moved:
            found.add("moved")
        if self.is_unschedulable and not self.was_unschedulable:
            found.add("unschedulable")
        if self.evictions_added:
            found.add("eviction")
        if self.rejections_added or self.rejections_removed:
            found.add("rejection")
        if self.scores:
            found.add("score")
        return found


@dataclass(frozen=True)
class Diff:
    changes: tuple[Change, ...]

    def count(self, category: str) -> int:
        return sum(category in c.categories() for c in self.changes)


def _reasons(p: Placement | None) -> dict[str, set[tuple[str, str]]]:
    return {c: {(r.rule, r.message) for r in rs} for c, rs in (p.rejected if p else {}).items()}


def _subtract(a: Placement | None, b: Placement | None) -> dict[str, tuple[Reason, ...]]:
    """Reasons in ``a`` that ``b`` does not have (with ``a``'s sources)."""
    others = _reasons(b)
    out = {}
    for cluster, reasons in (a.rejected if a else {}).items():
        extra = tuple(r for r in reasons if (r.rule, r.message) not in others.get(cluster, set()))
        if extra:
            out[cluster] = extra
    return out


def _evictions(result: Result, binding: str) -> list[dict[str, Any]]:
    out = []
    for e in result.evictions:
        if e.get("binding") == binding:
            item = json.loads(json.dumps(e))
            item.pop("time", None)
            item.get("task", {}).pop("creationTimestamp", None)
            out.append(item)
    return out


def _minus(a: Iterable[dict[str, Any]], b: Iterable[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    keys = {json.dumps(x, sort_keys=True) for x in b}
    return tuple(x for x in a if json.dumps(x, sort_keys=True) not in keys)


def compare(base: Result, head: Result, threshold: int = 0) -> Diff:
    """Every binding whose placement, rejections, evictions or scores (by more than ``threshold``) changed."""
    before = {p.binding: p for p in base.placements}
    after = {p.binding: p for p in head.placements}
    changes = []
    for key in sorted(
        before.keys() | after.keys() | {str(e.get("binding")) for e in (*base.evictions, *head.evictions)}
    ):
        b, a = before.get(key), after.get(key)
        scores = {}
        for cluster in sorted(set(b.scores if b else {}) | set(a.scores if a else {})):
            old, new = (b.scores.get(cluster) if b else None), (a.scores.get(cluster) if a else None)
            if old != new and (old is None or new is None or abs(old - new) > threshold):
                scores[cluster] = (old, new)
        old_ev, new_ev = _evictions(base, key), _evictions(head, key)
        change = Change(
            binding=key,
            before=b.clusters if b else (),
            after=a.clusters if a else (),
            was_unschedulable=bool(b and b.unschedulable),
            is_unschedulable=bool(a and a.unschedulable),
            scores=scores,
            rejections_added=_subtract(a, b),
            rejections_removed=_subtract(b, a),
            evictions_added=_minus(new_ev, old_ev),
            evictions_removed=_minus(old_ev, new_ev),
        )
        if change.categories():
            changes.append(change)
    return Diff(tuple(changes))


# ---------------------------------------------------------------- rendering


def _score(value: int | None) -> str:
    return "rejected" if value is None else str(value)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _summary(d: Diff) -> str:
    moved, unsched, evictions = d.count("moved"), d.count("unschedulable"), d.count("eviction")
    return (
        f"{_plural(moved, 'binding')} moved, {unsched} newly unschedulable, "
        f"{_plural(evictions, 'binding')} with new evictions, {_plural(len(d.changes), 'binding')} changed in all"
    )


def _clusters(clusters: tuple[str, ...], unschedulable: bool) -> str:
    return ", ".join(clusters) if clusters else ("unschedulable" if unschedulable else "(none)")


def to_text(d: Diff) -> str:
    lines = [_summary(d)]
    for c in d.changes:
        lines.append("")
        lines.append(
            f"{c.binding}: {_clusters(c.before, c.was_unschedulable)} -> {_clusters(c.after, c.is_unschedulable)}"
        )
        for cluster, reasons in c.rejections_added.items():
            lines += [f"  + {cluster} rejected: {r.message}  [{r.rule} at {r.source}]" for r in reasons]
        for cluster, reasons in c.rejections_removed.items():
            lines += [f"  - {cluster} no longer rejected: {r.message}  [{r.rule} at {r.source}]" for r in reasons]
        for cluster, (old, new) in c.scores.items():
            lines.append(f"  ~ {cluster} score {_score(old)} -> {_score(new)}")
        lines += [
            f"  + eviction from {e.get('cluster')}: {e.get('task', {}).get('reason', e.get('error', ''))}"
            for e in c.evictions_added
        ]
        lines += [f"  - eviction from {e.get('cluster')} no longer made" for e in c.evictions_removed]
    return "\n".join(lines) + "\n"


def to_data(d: Diff) -> dict[str, Any]:
    def reasons(m: dict[str, tuple[Reason, ...]]) -> dict[str, list[dict[str, str]]]:
        return {c: [{"rule": r.rule, "source": r.source, "message": r.message} for r in rs] for c, rs in m.items()}

    return {
        "summary": {
            "moved": d.count("moved"),
            "newlyUnschedulable": d.count("unschedulable"),
            "newEvictions": d.count("eviction"),
            "changed": len(d.changes),
        },
        "changes": [
            {
                "binding": c.binding,
                "before": list(c.before),
                "after": list(c.after),
                "unschedulable": {"before": c.was_unschedulable, "after": c.is_unschedulable},
                "rules": list(c.rules),
                "rejectionsAdded": reasons(c.rejections_added),
                "rejectionsRemoved": reasons(c.rejections_removed),
                "scores": {k: {"before": o, "after": n} for k, (o, n) in c.scores.items()},
                "evictionsAdded": list(c.evictions_added),
                "evictionsRemoved": list(c.evictions_removed),
            }
            for c in d.changes
        ],
    }


def to_json(d: Diff) -> str:
    return json.dumps(to_data(d), indent=2, ensure_ascii=False) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(d: Diff) -> str:
    """For a pull-request comment: the summary, a table, and the reasons folded away."""
    lines = ["### fleetrules: placement changes", "", f"**{_summary(d)}**", ""]
    if not d.changes:
        return "\n".join([*lines, "No binding's placement, rejections, scores or evictions changed.", ""])
    lines += ["| binding | before | after | rules |", "| --- | --- | --- | --- |"]
    for c in d.changes:
        before, after = _clusters(c.before, c.was_unschedulable), _clusters(c.after, c.is_unschedulable)
        flag = " ⚠️" if c.is_unschedulable and not c.was_unschedulable else ""
        rules = _cell(", ".join(f"`{r}`" for r in c.rules))
        lines.append(f"| `{c.binding}` | {_cell(before)} | {_cell(after)}{flag} | {rules} |")
    lines.append("")
    for c in d.changes:
        lines += ["<details>", f"<summary><code>{c.binding}</code></summary>", ""]
        for cluster, reasons in c.rejections_added.items():
            lines += [f"- ➕ `{cluster}` rejected: {_cell(r.message)} (`{r.rule}`, {r.source})" for r in reasons]
        for cluster, reasons in c.rejections_removed.items():
            lines += [f"- ➖ `{cluster}` no longer rejected: {_cell(r.message)} (`{r.rule}`)" for r in reasons]
        lines += [f"- score of `{k}`: {_score(o)} → {_score(n)}" for k, (o, n) in c.scores.items()]
        lines += [
            f"- ➕ eviction from `{e.get('cluster')}`: {e.get('task', {}).get('reason', e.get('error', ''))}"
            for e in c.evictions_added
        ]
        lines += ["", "</details>", ""]
    return "\n".join(lines)
