"""Two versions of the rules over the same facts: what changed for each binding, and which rules did it.

Rejections are compared by (cluster, rule, message), not by source line, so that moving a rule
within its file is not a change. Evictions are compared without their creation time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.results import Placement, Reason, Result, Summarized

CATEGORIES = ("moved", "replicas", "unschedulable", "eviction", "rejection", "score")


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
    # cluster → (replicas before, after) where the assignment changed (0: not a target); {} when equal
    replicas: dict[str, tuple[int, int]] = field(default_factory=dict)
    # a binding the dependencies distributor makes (its clusters: those of the workloads requiring it)
    attached: bool = False

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
        if self.replicas:
            found.add("replicas")
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


Rejected = Mapping[str, tuple[Reason, ...]]
# (shared rejections of a, of b) → (both, kept so that their ids stay theirs; a's reasons b has not)
Shared = dict[tuple[int, int], tuple[tuple[Rejected, Rejected], dict[str, tuple[Reason, ...]]]]


def _extra(reasons: Iterable[Reason], others: Iterable[Reason]) -> tuple[Reason, ...]:
    """``reasons`` whose (rule, message) none of ``others`` has."""
    known = {(r.rule, r.message) for r in others}
    return tuple(r for r in reasons if (r.rule, r.message) not in known)


def _plain(a: Rejected, b: Rejected) -> dict[str, tuple[Reason, ...]]:
    out = {}
    for cluster, reasons in a.items():
        extra = _extra(reasons, b.get(cluster, ()))
        if extra:
            out[cluster] = extra
    return out


def _subtract(a: Placement | None, b: Placement | None, shared: Shared) -> dict[str, tuple[Reason, ...]]:
    """Reasons in ``a`` that ``b`` does not have (with ``a``'s sources). Placements made of their policies'
    shared rejections are compared through them: the shared parts once per pair, then each binding's own
    few changes (a fleet's bindings are not walked cluster by cluster)."""
    ra: Rejected = a.rejected if a else {}
    rb: Rejected = b.rejected if b else {}
    if not (isinstance(ra, Summarized) and isinstance(rb, Summarized)):
        return _plain(ra, rb)
    (base_a, changes_a), (base_b, changes_b) = ra.parts(), rb.parts()
    key = (id(base_a), id(base_b))
    if key not in shared:
        shared[key] = ((base_a, base_b), _plain(base_a, base_b))
    common = shared[key][1]
    touched = changes_a.keys() | changes_b.keys()
    if not touched:
        return common
    out = {c: reasons for c, reasons in common.items() if c not in touched}
    for cluster in touched:
        extra = _extra(ra.get(cluster, ()), rb.get(cluster, ()))
        if extra:
            out[cluster] = extra
    return dict(sorted(out.items()))


def _evictions(result: Result, binding: str) -> list[dict[str, Any]]:
    out = []
    for eviction in result.evictions:
        if eviction.binding == binding:
            item = eviction.data()
            item.pop("time", None)
            item.get("task", {}).pop("creationTimestamp", None)
            out.append(item)
    return out


def _minus(a: Iterable[dict[str, Any]], b: Iterable[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    keys = {json.dumps(x, sort_keys=True) for x in b}
    return tuple(x for x in a if json.dumps(x, sort_keys=True) not in keys)


def _replicas(b: Placement | None, a: Placement | None) -> dict[str, tuple[int, int]]:
    """Each cluster whose replica count changed, for workloads (a non-workload's counts are all 0)."""
    old = {c: b.replicas.get(c, 0) for c in b.clusters} if b else {}
    new = {c: a.replicas.get(c, 0) for c in a.clusters} if a else {}
    if not any(old.values()) and not any(new.values()):
        return {}
    return {
        c: (old.get(c, 0), new.get(c, 0)) for c in sorted(old.keys() | new.keys()) if old.get(c, 0) != new.get(c, 0)
    }


def compare(base: Result, head: Result, threshold: int = 0) -> Diff:
    """Every binding whose placement, rejections, evictions or scores (by more than ``threshold``) changed."""
    before = {p.binding: p for p in base.placements}
    after = {p.binding: p for p in head.placements}
    added: Shared = {}
    removed: Shared = {}
    changes = []
    for key in sorted(before.keys() | after.keys() | {e.binding for e in (*base.evictions, *head.evictions)}):
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
            rejections_added=_subtract(a, b, added),
            rejections_removed=_subtract(b, a, removed),
            evictions_added=_minus(new_ev, old_ev),
            evictions_removed=_minus(old_ev, new_ev),
            replicas=_replicas(b, a),
        )
        if change.categories():
            changes.append(change)
    # the dependencies' bindings (propagateDeps) follow the workloads requiring them: moved where their clusters did
    old_attached = {a.binding: a.clusters for a in base.attached}
    new_attached = {a.binding: a.clusters for a in head.attached}
    for key in sorted(old_attached.keys() | new_attached.keys()):
        if old_attached.get(key, ()) != new_attached.get(key, ()):
            changes.append(
                Change(key, old_attached.get(key, ()), new_attached.get(key, ()), False, False, attached=True)
            )
    return Diff(tuple(sorted(changes, key=lambda c: c.binding)))
