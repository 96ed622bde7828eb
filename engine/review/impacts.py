"""What a resilience sweep reports: the failure scenarios (a cluster, a region, zone or provider, or k clusters failing
in one way), what each does to the fleet (moves, unschedulable bindings, lost spread and state), their ranking by
blast radius, and what changed between two sweeps' results. A fleetrules extension: Karmada has no offline
failover analysis.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from engine.errors import UsageError, listed
from engine.inputs.facts import NOT_READY, Cluster

FAILURES = {
    "no-execute": f"gains the NoExecute taint {NOT_READY} (as a ClusterTaintPolicy adds it to a NotReady cluster)",
    "not-ready": "goes NotReady (the cluster controller's NoSchedule taint, and the taints of the snapshot's "
    "ClusterTaintPolicies: only a NoExecute one evicts)",
    "unhealthy": "keeps running, but every application on it turns Unhealthy (application failover)",
}


GROUPINGS = ("cluster", "region", "zone", "provider")


RESILIENCE_GATES = ("unschedulable", "spread-lost", "state-lost")


MAX_SCENARIOS = 100_000


MAX_K = 1_000  # clusters failing together in one scenario


# the base time: scenarios happen at it, tolerations and grace periods run from it
BASE_TIME = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Scenario:
    """Some clusters failing one way at once."""

    failure: str  # a key of FAILURES
    clusters: tuple[str, ...]
    name: str  # "member1", "region eu", "member1+member2"


@dataclass(frozen=True)
class Move:
    """Where a binding a scenario moved goes, and the state its eviction carries there: sized by what changed
    (a Duplicated binding leaving one of its fifty clusters names that one cluster, not the forty-nine it keeps)."""

    binding: str
    left: tuple[str, ...]  # the clusters it left (all of them: it is left unschedulable, when ``took`` and
    took: tuple[str, ...]  # ``stays`` are none); the clusters it took
    stays: int = 0  # how many of its clusters it keeps
    # the labels its eviction tasks preserved (statePreservation), injected on the new clusters
    state: tuple[tuple[str, str], ...] = ()
    # the very move the fleet makes with no cluster failing (``nothing_fails``): not the scenario's doing
    anyway: bool = False

    @classmethod
    def of(cls, binding: str, before: Sequence[str], after: Sequence[str], state: tuple[tuple[str, str], ...]) -> Move:
        """The move from the clusters ``before`` to those ``after`` (none: left unschedulable)."""
        kept = set(before) & set(after)
        left = tuple(c for c in before if c not in kept)
        return cls(binding, left, tuple(c for c in after if c not in kept), len(kept), state)

    @property
    def unschedulable(self) -> bool:
        return not self.took and not self.stays

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"binding": self.binding, "left": list(self.left), "took": list(self.took)}
        out["stays"] = self.stays
        if self.state:
            out["preservedState"] = dict(self.state)
        if self.anyway:
            out["anyway"] = True
        return out


@dataclass(frozen=True)
class Repeat:
    """A loop the scenario's fleet never leaves (engine.failover.simulate, ``repeats``): from ``after`` seconds past
    the failure, the same stretch every ``every`` for as long as the failure stands, which Karmada's controllers and
    scheduler would keep up (a NoExecute taint a policy tolerates for a while on its only cluster; a rule that
    evicts without the filter that goes with it)."""

    after: int  # seconds after the failure
    every: str  # "10s"
    bindings: tuple[str, ...]  # the bindings the stretch changes
    rules: tuple[str, ...] = ()  # the rules whose evictions it makes: "NAME (FILE:LINE)"

    @property
    def said(self) -> str:
        """In words, as a simulation's timeline says it (simulate's ``loop_warnings``)."""
        return f"what happens after {self.after}s happens again every {self.every}"

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"after": f"{self.after}s", "every": self.every, "bindings": list(self.bindings)}
        if self.rules:
            out["rules"] = list(self.rules)
        return out


@dataclass(frozen=True)
class Impact:
    """What a scenario did to the fleet, against the base state."""

    scenario: Scenario
    evicted: tuple[tuple[str, str, str], ...] = ()  # (binding, cluster, purge mode)
    moved: tuple[str, ...] = ()  # bindings on other clusters afterwards
    unschedulable: tuple[str, ...] = ()  # bindings left without a cluster (or whose placement failed)
    spread_lost: tuple[str, ...] = ()  # anti-affinity groups (NAMESPACE/GROUP) on fewer clusters than before
    state_preserved: tuple[str, ...] = ()  # bindings whose eviction task carries preserved state
    state_lost: tuple[tuple[str, str], ...] = ()  # (binding, why): a preservation that failed
    replicas_lost: int = 0  # replicas the fleet runs fewer of afterwards
    sources: tuple[str, ...] = ()  # FILE:LINE of the policies of the bindings left unschedulable
    moves: tuple[Move, ...] = ()  # each binding moved or left unschedulable: from where to where, with what state
    repeats: tuple[Repeat, ...] = ()  # the loops its fleet never leaves: measured where each is found
    # the bindings of dependencies (propagateDeps) on other clusters afterwards (they follow the workloads needing them)
    dependencies_moved: tuple[str, ...] = ()

    @property
    def harms(self) -> frozenset[str]:
        """The RESILIENCE_GATES this scenario has."""
        found = {"unschedulable": self.unschedulable, "spread-lost": self.spread_lost, "state-lost": self.state_lost}
        return frozenset(gate for gate, items in found.items() if items)

    def subjects(self, gate: str) -> frozenset[str]:
        """The bindings (or groups) behind one gate."""
        if gate == "unschedulable":
            return frozenset(self.unschedulable)
        if gate == "spread-lost":
            return frozenset(self.spread_lost)
        return frozenset(b for b, _ in self.state_lost)

    @property
    def rank(self) -> tuple[int, ...]:
        return (
            len(self.unschedulable),
            len(self.spread_lost),
            len(self.state_lost),
            self.replicas_lost,
            len(self.evicted),
            len(self.moved),
        )

    def data(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario.name,
            "failure": self.scenario.failure,
            "clusters": list(self.scenario.clusters),
            "evicted": [{"binding": b, "cluster": c, "purgeMode": m} for b, c, m in self.evicted],
            "moved": list(self.moved),
            "unschedulable": list(self.unschedulable),
            "spreadLost": list(self.spread_lost),
            "statePreserved": list(self.state_preserved),
            "stateLost": [{"binding": b, "error": why} for b, why in self.state_lost],
            "replicasLost": self.replicas_lost,
            "sources": list(self.sources),
            "moves": [m.data() for m in self.moves],
            "repeats": [r.data() for r in self.repeats],
        } | ({"dependenciesMoved": list(self.dependencies_moved)} if self.dependencies_moved else {})


def scenarios(
    clusters: Sequence[Cluster], failures: Sequence[str] = ("no-execute",), by: str = "cluster", k: int = 1
) -> list[Scenario]:
    """The scenarios of a sweep: each group of clusters (by name, or sharing a region, zone or provider;
    clusters without the property are left out), or with ``k`` > 1 each set of k groups, failing each
    way in ``failures``."""
    if isinstance(failures, str):
        failures = [failures]
    if not all(isinstance(c, Cluster) for c in clusters):
        raise UsageError("clusters: expected the Cluster facts of load_facts() (facts.clusters)")
    unknown = [f for f in failures if f not in FAILURES]
    if unknown:
        raise UsageError(f"failure: unknown {unknown[0]!r}; known: {', '.join(FAILURES)}")
    if by not in GROUPINGS:
        raise UsageError(f"by: {by!r} is not one of {', '.join(GROUPINGS)}")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise UsageError(f"k: expected a whole number from 1 to {MAX_K}, found {k!r}")
    groups: dict[str, list[str]] = defaultdict(list)
    for c in sorted(clusters, key=lambda c: c.name):
        if c.deleting:
            continue
        values = {"cluster": [c.name], "region": [c.region], "zone": list(c.zones), "provider": [c.provider]}[by]
        for value in values:
            if value:
                groups[value].append(c.name)
    names = sorted(groups)
    combinations = list(itertools.islice(itertools.combinations(names, k), MAX_SCENARIOS + 1))
    if len(combinations) * len(failures) > MAX_SCENARIOS:
        raise UsageError(f"more than {MAX_SCENARIOS} scenarios: choose a smaller --k or a coarser --by")
    out = []
    for failure in failures:
        for combination in combinations:
            members = tuple(sorted({c for g in combination for c in groups[g]}))
            label = "+".join(combination) if by == "cluster" else "+".join(f"{by} {g}" for g in combination)
            out.append(Scenario(failure, members, label))
    return out


def nothing_fails(failure: str = "no-execute") -> Scenario:
    """The scenario in which no cluster fails: what the fleet does anyway, within the simulation's horizon (an
    application failover or an eviction already under way in the snapshot), which every scenario's impact
    includes (``anyway``)."""
    return Scenario(failure, (), "nothing fails")


def anyway(impact: Impact, shown: int = 3) -> str | None:
    """In words, what ``nothing_fails``'s ``impact`` says the fleet does with no cluster failing; None if nothing."""
    if impact.moves:
        moved = [f"{m.binding} {', '.join(m.left) or '-'} -> {', '.join(m.took) or 'nowhere'}" for m in impact.moves]
    else:
        moved = sorted({f"{b} evicted from {c}" for b, c, _ in impact.evicted})
    if not moved:
        return None
    more = f" and {len(moved) - shown} more" if len(moved) > shown else ""
    return (
        f"with no cluster failing, the fleet changes anyway before the simulation's horizon: {'; '.join(moved[:shown])}"
        f"{more} (a failover or an eviction already under way in the snapshot); every scenario's impact includes "
        "what follows from it"
    )


def told_apart(impacts: Sequence[Impact], quiet: Impact) -> list[Impact]:
    """``impacts`` with each move the fleet makes with no cluster failing (``quiet``, the ``nothing_fails``
    scenario's impact: the same binding, from and to the same clusters, with the same state) marked ``anyway``: a
    move that differs because of the failure is the scenario's own."""
    same = set(quiet.moves)
    if not same:
        return list(impacts)
    return [
        replace(i, moves=tuple(replace(m, anyway=True) if m in same else m for m in i.moves))
        if any(m in same for m in i.moves)
        else i
        for i in impacts
    ]


def never_settle(impacts: Sequence[Impact], shown: int = 3) -> str | None:
    """In words, the scenarios whose fleet never settles (``Impact.repeats``); None if none."""
    looping = [i for i in impacts if i.repeats]
    if not looping:
        return None
    said = []
    for i in looping[:shown]:
        loop = i.repeats[0]
        said.append(f"{i.scenario.name} ({listed(loop.bindings, shown)}: {loop.said})")
    more = f" and {len(looping) - shown} more" if len(looping) > shown else ""
    verb = "scenario never settles" if len(looping) == 1 else "scenarios never settle"
    return (
        f"{len(looping)} {verb}: {'; '.join(said)}{more}; Karmada's controllers and scheduler would keep it up: "
        "each is measured where its loop is found"
    )


def ranked(impacts: Sequence[Impact]) -> list[Impact]:
    """The scenarios by blast radius: most bindings left unschedulable first, then groups that lose their
    spread, state lost, replicas lost, evictions, moves; then by name."""
    return sorted(impacts, key=lambda i: (tuple(-x for x in i.rank), i.scenario.failure, i.scenario.name))


@dataclass(frozen=True)
class Change:
    """One scenario whose harm differs between two versions of the rules."""

    old: Impact
    new: Impact
    worse: frozenset[str]  # the gates with bindings (or groups) the new version adds
    added: dict[str, tuple[str, ...]]  # gate → what the new version adds
    removed: dict[str, tuple[str, ...]]  # gate → what it no longer has

    def data(self) -> dict[str, Any]:
        return {
            "scenario": self.new.scenario.name,
            "failure": self.new.scenario.failure,
            "added": {gate: list(items) for gate, items in self.added.items()},
            "removed": {gate: list(items) for gate, items in self.removed.items()},
        }


def resilience_changes(old: Sequence[Impact], new: Sequence[Impact]) -> list[Change]:
    """The scenarios (of the same plan) whose unschedulable bindings, lost spread or lost state differ, the
    ones made worse first (by how much), then by name."""
    out = []
    for before, after in zip(old, new, strict=True):
        added = {g: tuple(sorted(after.subjects(g) - before.subjects(g))) for g in RESILIENCE_GATES}
        removed = {g: tuple(sorted(before.subjects(g) - after.subjects(g))) for g in RESILIENCE_GATES}
        added, removed = {g: v for g, v in added.items() if v}, {g: v for g, v in removed.items() if v}
        if added or removed:
            out.append(Change(before, after, frozenset(added), added, removed))
    return sorted(
        out,
        key=lambda c: (-sum(len(v) for v in c.added.values()), c.new.scenario.failure, c.new.scenario.name),
    )
