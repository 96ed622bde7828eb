"""Unschedulable bindings kept between the steps of a sweep (engine.review.resilience).

A resilience sweep asks about every unschedulable binding at every step of every scenario: left unschedulable,
a binding stays so while nothing gives it room, and deciding it again each time was most of a sweep's work. A
binding is kept until its room may have grown: its own facts change, a group it belongs to by affinity moves,
or a feasible cluster of its policy that its anti-affinity group does not hold is one it did not find so (its
own decisions rejected it). The scheduler (engine.schedule.scheduler) records bindings here and asks here before
deciding a binding again; the store (engine.schedule.store) tells it what changed, as its ``Listener``."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from engine.inputs.facts import Binding
from engine.results import Placement
from engine.schedule.store import ANTI, OWNER


@runtime_checkable
class Watched(Protocol):
    """Bindings by key that tell a watcher the keys set in them (engine.karmada.controllers.world.Bindings)."""

    def watch(self) -> set[str]: ...

    def get(self, key: str) -> Binding | None: ...


@dataclass(frozen=True, slots=True)
class Kept:
    """A binding left unschedulable: its placement; per term of its policy, the feasible clusters its
    anti-affinity group did not hold then (its own decisions rejected them); its anti-affinity group; what it
    waits on: its owner and affinity group (a change drops it), its anti-affinity group (a move re-checks it)."""

    binding: Binding
    placement: Placement
    policy: str
    workload: bool
    blocked: tuple[frozenset[str], ...]
    anti: str | None
    on: tuple[tuple[str, str], ...]


class Waiting:
    """The unschedulable bindings kept, and what each waits on. ``feasible_now(policy, workload)``: the feasible
    clusters of each term of the policy, as its shared result has them now (the same objects while unchanged)."""

    def __init__(self, feasible_now: Callable[[str, bool], tuple[frozenset[str], ...]]) -> None:
        self._feasible_now = feasible_now
        self._kept: dict[str, Kept] = {}
        self._waiting_on: dict[tuple[str, str], set[str]] = defaultdict(set)
        # each anti-affinity group's clusters (its members' placements, counted), and the clusters each group left
        # since its kept members were checked (Waiting._recheck)
        self._occupied: dict[str, Counter[str]] = defaultdict(Counter)
        self._moved: dict[str, set[str]] = {}
        # (policy, workload) → the feasible clusters per term its kept bindings were last checked against
        self._checked: dict[tuple[str, bool], tuple[frozenset[str], ...]] = {}
        self._by_policy: dict[tuple[str, bool], set[str]] = defaultdict(set)  # (policy, workload) → kept keys
        # kept_keys of the watched bindings last asked about: its answer, the keys set in them since, and the keys
        # kept or forgotten since
        self._watched: tuple[Watched, set[str], set[str]] | None = None
        self._dirty: set[str] = set()

    def kept(self, binding: Binding) -> Placement | None:
        """The placement of this very binding when it was left unschedulable, if nothing since has given it room;
        else None."""
        kept = self._kept.get(binding.key)
        if kept is None or kept.binding is not binding:
            return None
        self._recheck([(kept.policy, kept.workload)])
        return kept.placement if binding.key in self._kept else None

    def kept_keys(self, bindings: Mapping[str, Binding] | Watched) -> set[str]:
        """The keys whose binding in ``bindings`` ``kept`` would answer for, found at once. Bindings that can be
        watched are asked about again from what changed since (a sweep asks at every step of every scenario about
        its 7,500 kept bindings, of which a scenario touches a few hundred)."""
        self._recheck(list(self._by_policy))
        if not isinstance(bindings, Watched):
            return {key for key, kept in self._kept.items() if bindings.get(key) is kept.binding}
        watched = self._watched
        if watched is None or watched[0] is not bindings:
            answer = {key for key, kept in self._kept.items() if bindings.get(key) is kept.binding}
            self._watched = (bindings, answer, bindings.watch())
        else:
            answer, since = watched[1], watched[2]
            for key in (*since, *self._dirty):
                kept = self._kept.get(key)
                if kept is not None and bindings.get(key) is kept.binding:
                    answer.add(key)
                else:
                    answer.discard(key)
            since.clear()
        self._dirty = set()
        return set(answer)

    def keep(
        self,
        binding: Binding,
        policy: str,
        workload: bool,
        placement: Placement,
        owner: str,
        groups: tuple[tuple[str, str], ...],
    ) -> None:
        """Keep the unschedulable ``placement`` of ``binding`` (of ``owner``'s facts and the affinity ``groups``,
        (AFFINITY or ANTI, NAMESPACE/GROUP)) until its room may have grown."""
        # the policy's kept bindings checked against its feasible clusters now, the very ones this binding's
        # blocked clusters are of: what ``_recheck`` compares the policy's feasible clusters with next
        self._recheck([(policy, workload)])
        anti = next((g for kind, g in groups if kind == ANTI), None)
        held = self._held_by(anti)
        blocked = tuple(t.difference(held) for t in self._feasible_now(policy, workload))
        on = ((OWNER, owner), *groups)
        self._kept[binding.key] = Kept(binding, placement, policy, workload, blocked, anti, on)
        self._dirty.add(binding.key)
        for what in on:
            self._waiting_on[what].add(binding.key)
        self._by_policy[(policy, workload)].add(binding.key)

    def forget(self, key: str) -> None:
        kept = self._kept.pop(key, None)
        if kept is not None:
            self._dirty.add(key)
            for what in kept.on:
                self._waiting_on[what].discard(key)
            self._by_policy[(kept.policy, kept.workload)].discard(key)

    def changed(self, what: tuple[str, str]) -> None:
        """An owner's facts or an affinity group's placements changed: the bindings waiting on it may have room."""
        for key in list(self._waiting_on.get(what, ())):
            self.forget(key)

    def occupy(self, group: str, before: Sequence[str], after: Sequence[str]) -> None:
        """A member of the anti-affinity group moved from the clusters ``before`` to ``after``."""
        occupied = self._occupied[group]
        was, now = set(before), set(after)
        if len(was) == len(before) and len(now) == len(after):  # no cluster named twice: where they differ only
            occupied.update(c for c in after if c not in was)
            gone = [c for c in before if c not in now]
            occupied.subtract(gone)
        else:  # a binding's spec.clusters naming a cluster twice: counted as named
            occupied.update(after)
            occupied.subtract(before)
            gone = [c for c in was if c not in now]
        left = [cluster for cluster in gone if occupied[cluster] <= 0]
        for cluster in left:
            del occupied[cluster]
        # a group holding only more clusters gives its kept members no room: they are checked when it leaves one
        if left and self._waiting_on.get((ANTI, group)):
            self._moved.setdefault(group, set()).update(left)

    def _recheck(self, policies: Iterable[tuple[str, bool]]) -> None:
        """Drop the kept bindings that may have room now: those of the anti-affinity groups that left a cluster
        since they were checked, and of the ``policies`` (policy, workload) whose feasible clusters grew since.
        WorkloadAntiAffinity rejects a group's clusters: a binding has room only on a feasible cluster its
        group does not hold and its own decisions did not reject (``Kept.blocked``). Checked once per
        change, not at every step. A kept binding had no room against its policy's feasible clusters as last
        checked (``_checked``) and its group's clusters then: room now can only be on a cluster feasible since or
        one its group left since, and only those are looked at."""
        moved, self._moved = self._moved, {}
        keys = {k for g in moved for k in self._waiting_on.get((ANTI, g), ())}
        # the policies of the bindings looked at are checked too: a cluster a group left, looked at now while not
        # feasible, is looked at again when it turns feasible (the clusters feasible since they were last checked)
        asked = dict.fromkeys(policies)
        asked.update(dict.fromkeys((k.policy, k.workload) for key in keys if (k := self._kept.get(key)) is not None))
        grown: dict[tuple[str, bool], tuple[frozenset[str], ...] | None] = {}  # None: every cluster to look at
        for policy, workload in asked:
            now = self._feasible_now(policy, workload)
            checked = self._checked.get((policy, workload))
            if checked is None or not all(a is b for a, b in zip(checked, now, strict=True)):
                self._checked[(policy, workload)] = now
                added = None if checked is None else tuple(a - b for a, b in zip(now, checked, strict=True))
                if added is None or any(added):  # the feasible clusters of no term grown: no room from them
                    grown[(policy, workload)] = added
                    keys.update(self._by_policy.get((policy, workload), ()))
        answers: dict[tuple[str, bool, str | None, int], bool] = {}  # peers of one group alike are checked once
        for key in keys:
            kept = self._kept.get(key)
            if kept is None:
                continue
            at = (kept.policy, kept.workload, kept.anti, id(kept.blocked))
            room = answers.get(at)
            if room is None:
                now = self._feasible_now(kept.policy, kept.workload)
                occupied = self._held_by(kept.anti)
                left = moved.get(kept.anti, ()) if kept.anti is not None else ()
                added = grown.get((kept.policy, kept.workload), ())
                if added is None:  # never checked: every feasible cluster
                    room = any(not t.difference(occupied) <= b for t, b in zip(now, kept.blocked, strict=True))
                else:
                    room = any(
                        c in t and c not in b and c not in occupied
                        for i, (t, b) in enumerate(zip(now, kept.blocked, strict=True))
                        for c in (*(added[i] if added else ()), *left)
                    )
                answers[at] = room
            if room:
                self.forget(key)

    def _held_by(self, group: str | None) -> Mapping[str, int]:
        """The clusters an anti-affinity group's members hold, counted (none for no group)."""
        return self._occupied.get(group, {}) if group is not None else {}
