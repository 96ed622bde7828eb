"""Resilience sweeps: what each cluster failure does to the fleet (a fleetrules extension; Karmada has no
offline failover analysis).

A sweep evaluates the rules over the facts once, runs the failover controllers to a steady state (the
base), and then for each scenario — a cluster, a region, zone or provider, or a set of k clusters
failing in one way — applies the failure at the base time and steps the controllers and the scheduler
through the policies' own toleration and grace periods (engine.failover.simulate), until nothing more
is due. What changed against the base is the scenario's impact. After each scenario only what it
changed is put back (the failed clusters' facts, the bindings it touched), so the compiled program,
the session and the base placements serve every scenario.

Scenarios run in one process, on a local process pool, or on a Dask cluster: each worker builds the
base once and takes scenarios in chunks; results come back in scenario order, so every way of running
gives the same bytes.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import itertools
import os
import signal
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.collector import with_fewer_collections
from engine.errors import NO_SPAN, UsageError, listed
from engine.failover.simulate import Simulator, fleet_state
from engine.inputs.events import Event, EventKind
from engine.inputs.facts import NOT_READY, Binding, Cluster, Facts, parse_time
from engine.inputs.rule_files import RuleSet
from engine.karmada.gates import DEFAULT_CONTROLLERS, Controllers
from engine.pipeline import scheduler_for
from engine.results import Entry, EntryKind
from engine.schedule.dependencies import dependency_keys

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
MAX_WORKERS = 1_024  # local worker processes
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


class Base:
    """The evaluated base state of a sweep, and each scenario run on it and undone."""

    def __init__(
        self, rules: RuleSet, facts: Facts, controllers: Controllers = DEFAULT_CONTROLLERS, reference: bool = False
    ) -> None:
        # no placement of a sweep is explained (an impact names clusters and moves): nothing of it is kept for one
        self.scheduler = scheduler_for(rules, facts, reference, controllers, explanations=False)
        self.simulator = Simulator(self.scheduler, BASE_TIME, controllers)
        # failures only take clusters away: a binding left unschedulable stays so until its groups or feasible
        # clusters change (not decided again each step; its message is not part of an impact); kept from the
        # base's placement on, so that the first scenario does not decide every unschedulable binding again
        self.scheduler.keep_unschedulable = True
        self.simulator.schedule_triggered()  # what the scheduler would run now, as an evaluation places it
        self.simulator.step()  # every binding placed, Works created: the fleet before anything fails
        world = self.simulator.world
        self.clusters = dict(world.clusters)
        self.bindings: dict[str, Binding] = dict(world.bindings)
        # the labels of a Work are replaced, never changed in place (controllers.binding_controller): a scenario's
        # Works are put back as copies of the base's lists, sharing its labels
        self.works = {key: {c: dict(labels) for c, labels in works.items()} for key, works in world.works.items()}
        self.unhealthy_since = dict(world.unhealthy_since)
        self.health_since = dict(world.health_since)
        self.failing = set(world.failing)  # evictions failing before anything fails: not the scenario's doing
        self.due_now = self.simulator.due_now
        world.bindings.touched.clear()
        world.clusters.touched.clear()
        # a base that a step leaves as it is: each scenario starts on it put back, and its first step is skipped
        self.settled = self._settles()
        self.sources = {
            key: f"{p.span.file}:{p.span.line}" for key, p in self.scheduler.binding_policy.items() if p is not None
        }
        self.groups: dict[str, str] = {}  # binding → NAMESPACE/GROUP of its anti-affinity group
        self.members: dict[str, list[str]] = defaultdict(list)  # NAMESPACE/GROUP → its bindings
        self._replicas_of: dict[str, int] = {}  # binding → the replicas it runs in the base (_replicas)
        self._spread_of: dict[str, int] = {}  # NAMESPACE/GROUP → how many clusters its members hold in the base
        # binding → the attached bindings of its dependencies, and each attached binding → the bindings requiring it
        self.dependencies = dependency_keys(
            tuple(self.bindings.values()), self.scheduler.binding_policy, facts.workloads
        )
        self.requirers: dict[str, list[str]] = defaultdict(list)
        for key, attached in sorted(self.dependencies.items()):
            for dependency in attached:
                self.requirers[dependency].append(key)
        for key, props in self.scheduler.store.binding_facts.items():
            if props.get("anti_affinity_group"):
                group = self.groups[key] = f"{props['namespace']}/{props['anti_affinity_group']}"
                self.members[group].append(key)

    def close(self) -> None:
        self.scheduler.close()

    def run(self, scenario: Scenario) -> Impact:
        simulator = self.simulator
        simulator.entries, simulator.after_failover = [], {}
        try:
            entries = simulator.run(self._events(scenario), settled=self.settled)
            return self._impact(scenario, entries)
        finally:
            self._restore()

    def _events(self, scenario: Scenario) -> list[Event]:
        out = []
        for name in scenario.clusters:
            if scenario.failure == "no-execute":
                fields = {"cluster": name, "key": NOT_READY, "effect": "NoExecute"}
                out.append(Event(BASE_TIME, EventKind.TAINT, fields, NO_SPAN))
            elif scenario.failure == "not-ready":
                out.append(Event(BASE_TIME, EventKind.READY, {"cluster": name, "status": "False"}, NO_SPAN))
            else:
                for key in sorted(self.simulator.world.bindings.on.get(name, ())):
                    fields = {"binding": key, "cluster": name, "status": "Unhealthy"}
                    out.append(Event(BASE_TIME, EventKind.HEALTH, fields, NO_SPAN))
        return out

    def _settles(self) -> bool:
        """Whether a step on the base changes nothing the controllers and the scheduler read (simulate.fleet_state)
        and makes no entry: a scenario's first step, before its failure, would be that step again. The base is put
        back either way."""
        simulator = self.simulator
        before, mark = fleet_state(simulator), len(simulator.entries)
        simulator.step()
        settled = len(simulator.entries) == mark and fleet_state(simulator) == before
        del simulator.entries[mark:]
        self._restore()
        return settled

    def _replicas(self, key: str) -> int:
        """The replicas the binding runs in the base (_replicas), found once."""
        found = self._replicas_of.get(key)
        if found is None:
            found = self._replicas_of[key] = _replicas(self.bindings[key])
        return found

    def _spread(self, group: str) -> int:
        """How many clusters the anti-affinity group's members hold in the base, found once."""
        found = self._spread_of.get(group)
        if found is None:
            found = self._spread_of[group] = len(
                set().union(*(self.bindings[k].cluster_names for k in self.members[group]))
            )
        return found

    def _restore(self) -> None:
        """Put back what the scenario changed: the clusters it failed, the bindings it touched."""
        world, scheduler = self.simulator.world, self.scheduler
        world.now = BASE_TIME
        for name in sorted(world.clusters.touched):
            cluster = self.clusters[name]
            if world.clusters[name] is not cluster:
                world.clusters[name] = cluster
                scheduler.store.update_cluster(cluster)
        world.clusters.touched.clear()
        for key in sorted(world.bindings.touched):
            binding = self.bindings[key]
            world.bindings[key] = binding
            world.works[key] = dict(self.works.get(key, {}))
            scheduler.store.restore(binding)
        world.bindings.touched.clear()
        world.bindings.changed.clear()
        world.unhealthy_since = dict(self.unhealthy_since)
        world.health_since = dict(self.health_since)
        world.failing = set(self.failing)
        self.simulator.due_now = self.due_now

    def _impact(self, scenario: Scenario, entries: Sequence[Entry]) -> Impact:
        world = self.simulator.world
        touched = sorted(world.bindings.touched)
        evicted, preserved, lost, repeats = [], [], [], []
        failed_placement = set()
        state: dict[str, dict[str, str]] = defaultdict(dict)  # binding → the labels its evictions preserved
        for e in entries:
            if e.kind is EntryKind.EVICTED and e.task is not None:
                evicted.append((e.binding, e.cluster, e.task.purge_mode))
                if e.task.preserved_label_state:
                    preserved.append(e.binding)
                    state[e.binding].update(e.task.preserved_label_state)
            elif e.kind is EntryKind.EVICTION_FAILED:
                lost.append((e.binding, str(e.detail.get("error", ""))))
            elif e.kind is EntryKind.UNSCHEDULABLE:
                failed_placement.add(e.binding)
            elif e.kind is EntryKind.SCHEDULED:
                failed_placement.discard(e.binding)
            elif e.kind is EntryKind.REPEATS:
                since = int((parse_time(str(e.detail["after"])) - BASE_TIME).total_seconds())
                bindings, rules = tuple(e.detail["bindings"]), tuple(e.detail.get("rules", ()))
                repeats.append(Repeat(since, str(e.detail["every"]), bindings, rules))
        moved, unschedulable, replicas_lost, moves = [], [], 0, []
        for key in touched:
            before, after = self.bindings[key], world.bindings[key]
            carried = tuple(sorted(state.get(key, {}).items()))
            if before.cluster_names and (not after.cluster_names or key in failed_placement):
                unschedulable.append(key)
                moves.append(Move.of(key, before.cluster_names, (), carried))
            elif after.cluster_names != before.cluster_names:
                moved.append(key)
                moves.append(Move.of(key, before.cluster_names, after.cluster_names, carried))
            if after.clusters is not before.clusters:
                replicas_lost += max(0, self._replicas(key) - _replicas(after))
        spread_lost = []
        for group in sorted({self.groups[key] for key in touched if key in self.groups}):
            new = set().union(*(world.bindings[key].cluster_names for key in self.members[group]))
            if len(new) < self._spread(group):
                spread_lost.append(group)
        followed = sorted({d for key in touched for d in self.dependencies.get(key, ())})
        dependencies_moved = tuple(
            d for d in followed if self._union(d, self.bindings) != self._union(d, world.bindings)
        )
        return Impact(
            scenario,
            tuple(evicted),
            tuple(moved),
            tuple(unschedulable),
            tuple(spread_lost),
            tuple(sorted(set(preserved))),
            tuple(lost),
            replicas_lost,
            tuple(sorted({self.sources[key] for key in unschedulable if key in self.sources})),
            tuple(moves),
            tuple(repeats),
            dependencies_moved,
        )

    def _union(self, attached: str, bindings: Mapping[str, Binding]) -> frozenset[str]:
        """The clusters of the bindings requiring an attached binding: where its Works are."""
        return frozenset(c for key in self.requirers[attached] for c in bindings[key].cluster_names)


def _replicas(binding: Binding) -> int:
    """The replicas the binding runs, over all its clusters (a Duplicated one runs its replicas on each)."""
    return sum(t.replicas for t in binding.clusters)


# ---------------------------------------------------------------- running a sweep


@dataclass(frozen=True)
class Sweep:
    """What a worker needs to build the base: plain data, sent once to each worker."""

    rules: RuleSet
    facts: Facts
    controllers: Controllers = DEFAULT_CONTROLLERS
    reference: bool = False
    key: str = field(default="", compare=False)  # identifies the sweep in a worker's cache


Progress = Callable[[int], None] | None  # hears how many scenarios are done
_BASES: dict[str, Base] = {}  # a worker's base states, by sweep (a process pool's or a Dask worker's)


def _base(sweep: Sweep) -> Base:
    base = _BASES.get(sweep.key)
    if base is None:
        for old in _BASES.values():
            old.close()
        _BASES.clear()
        base = _BASES[sweep.key] = Base(sweep.rules, sweep.facts, sweep.controllers, sweep.reference)
    return base


def _run_chunk(sweep: Sweep, chunk: Sequence[Scenario]) -> list[Impact]:
    base = _base(sweep)
    return [base.run(s) for s in chunk]


_JOB: Sweep | None = None  # a pool worker's sweep, given once when the worker starts


def _start_worker(job: Sweep, parent: int) -> None:
    global _JOB
    _JOB = job
    _bound_to_parent(parent)
    _base(job)  # the program compiled and the base evaluated once, before the first chunk


def _bound_to_parent(parent: int) -> None:
    """A pool worker ignores Ctrl-C (the terminal sends it to the whole group: the parent stops the sweep and
    ends its workers) and, on Linux, is killed when its parent dies however it dies (a SIGTERM or SIGKILL of the
    parent left its workers running the rest of the sweep)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass  # no prctl: the parent's own cleanup still ends its workers
        if os.getppid() != parent:  # the parent died before the line above: nothing would kill this worker
            os._exit(1)


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _run_pool_chunk(chunk: Sequence[Scenario]) -> list[Impact]:
    assert _JOB is not None
    return _run_chunk(_JOB, chunk)


def _chunks(items: Sequence[Scenario], count: int) -> list[list[int]]:
    """Scenario positions dealt round-robin into ``count`` chunks: neighbouring scenarios (the clusters that
    hold most of the fleet often sort together) land on different workers."""
    count = max(1, min(count, len(items)))
    return [list(range(start, len(items), count)) for start in range(count)]


def _in_order(
    plan: Sequence[Scenario], chunks: list[list[int]], results: Iterator[list[Impact]], progress: Progress
) -> list[Impact]:
    out: list[Impact | None] = [None] * len(plan)
    done = 0
    for positions, impacts in zip(chunks, results, strict=True):
        for position, impact in zip(positions, impacts, strict=True):
            out[position] = impact
        done += len(impacts)
        if progress is not None:
            progress(done)
    return [i for i in out if i is not None]


@with_fewer_collections()
def sweep(
    rules: RuleSet,
    facts: Facts,
    plan: Sequence[Scenario],
    controllers: Controllers = DEFAULT_CONTROLLERS,
    workers: int | None = 1,
    scheduler: str | None = None,
    progress: Callable[[int], None] | None = None,
    reference: bool = False,
) -> list[Impact]:
    """The impact of each scenario of ``plan``, in its order: in this process (``workers`` 1), on a local
    process pool (``workers`` processes; None: one per core), or on the Dask cluster at ``scheduler``.
    ``progress`` hears how many scenarios are done."""
    if not isinstance(rules, RuleSet) or not isinstance(facts, Facts):
        raise UsageError("rules and facts: expected a RuleSet from load_rules() and Facts from load_facts()")
    if isinstance(plan, (str, bytes)) or not all(isinstance(s, Scenario) for s in plan):
        raise UsageError("plan: expected a list of Scenario, as scenarios() makes")
    if not isinstance(controllers, Controllers):
        raise UsageError("controllers: expected a Controllers from Controllers.parse()")
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS
    ):
        raise UsageError(f"workers: expected a whole number from 1 to {MAX_WORKERS}, found {workers!r}")
    job = Sweep(rules, facts, controllers, reference, key=uuid.uuid4().hex)  # a worker keeps one base per sweep
    if not plan:
        return []
    if scheduler is not None:
        return _on_dask(job, plan, scheduler, progress)
    count, _ = usable_workers(workers, len(plan))
    if count == 1:
        base = Base(rules, facts, controllers, reference)
        try:
            out = []
            for impact in (base.run(s) for s in plan):
                out.append(impact)
                if progress is not None:
                    progress(len(out))
            return out
        finally:
            base.close()
    return _on_pool(job, plan, count, progress)


WORKER_BYTES = 64 * 1024 * 1024  # the least a worker takes (a small fleet's: about 66 MB measured)


def usable_workers(requested: int | None, scenarios: int) -> tuple[int, str | None]:
    """How many local workers a sweep of ``scenarios`` runs on when ``requested`` (None: one per core), and
    why fewer, if so: never more than the scenarios, the cores, or the workers the memory available holds
    (each about this process's size, as a forked worker grows to; at least ``WORKER_BYTES``): 1,024 workers
    on a small machine was 66 GB asked of it."""
    cores = os.cpu_count() or 1
    each = max(WORKER_BYTES, _own_bytes())
    room = _available_bytes()
    by_memory = max(1, room // each) if room is not None else None
    bounds = [
        (scenarios, f"{scenarios} scenario{'s' * (scenarios != 1)}"),
        (cores, f"{cores} core{'s' * (cores != 1)}"),
    ]
    if by_memory is not None:
        bounds.append((by_memory, f"memory for {by_memory} of about {each // (1024 * 1024)} MiB each"))
    count, reason = min(bounds, key=lambda b: b[0])
    wanted = cores if requested is None else requested
    if wanted <= count:
        return wanted, None
    return count, None if requested is None or count == scenarios else f"--workers {requested}: {count} ({reason})"


def _own_bytes() -> int:
    """This process's resident size (what a forked worker starts sharing, and grows to), or 0 where unknown."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _available_bytes() -> int | None:
    """The memory available to new processes: the kernel's MemAvailable, less where a cgroup (a container)
    allows less; None where neither is known."""
    found: list[int] = []
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = Path("/sys/fs/cgroup/memory.current").read_text().strip()
        if limit != "max":
            found.append(max(0, int(limit) - int(used)))
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def _on_pool(job: Sweep, plan: Sequence[Scenario], count: int, progress: Callable[[int], None] | None) -> list[Impact]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    chunks = _chunks(plan, count * 4)
    forking = "fork" in multiprocessing.get_all_start_methods()
    if forking:
        # the base is built here once, and each forked worker starts with a copy of it (the compiled
        # program and durable-rules' engine state included: fleetrules' host runs no threads, so nothing is
        # mid-call at the fork); elsewhere each spawned worker compiles and builds its own
        _base(job)
    context = multiprocessing.get_context("fork" if forking else "spawn")
    try:
        pool = ProcessPoolExecutor(count, mp_context=context, initializer=_start_worker, initargs=(job, os.getpid()))
        processes: list[Any] = []
        try:
            futures = [pool.submit(_run_pool_chunk, [plan[i] for i in chunk]) for chunk in chunks]
            processes = list((pool._processes or {}).values())
            impacts = _in_order(plan, chunks, (f.result() for f in futures), progress)
        except BaseException as exc:  # Ctrl-C, a termination, a failure: stop now, not after the running chunks
            died = _died(processes) if isinstance(exc, BrokenProcessPool) else None  # before the others are ended
            for process in list((pool._processes or {}).values()):
                process.kill()
            pool.shutdown(wait=False, cancel_futures=True)
            if died is not None:
                raise UsageError(died) from None
            raise
        pool.shutdown(wait=True)
        return impacts
    finally:
        if forking:
            _BASES.pop(job.key).close()


def _died(processes: Sequence[Any]) -> str:
    """Which pool workers died and how (a signal, as the OOM killer's SIGKILL, or an exit code). The pool
    terminates its other workers itself once one dies (SIGTERM): the one that died first is the one with
    another end, waited for up to a second (it may not be reaped yet)."""
    deadline = time.monotonic() + 1
    while True:
        codes = [(process.pid, process.exitcode) for process in processes]  # None: still running
        first = [(pid, code) for pid, code in codes if code and code != -signal.SIGTERM]
        if first or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    dead = first or [(pid, code) for pid, code in codes if code]
    said = "; ".join(
        f"worker process {pid} "
        + (f"killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}")
        for pid, code in dead
    )
    oom = " (as the kernel's out-of-memory killer does: fewer --workers, or more memory)" if "SIGKILL" in said else ""
    return f"resilience: {said or 'a worker process died'}{oom}; the sweep stopped and its other workers were ended"


DASK_TIMEOUT = 5.0  # seconds: connecting to a Dask scheduler, and its handshake


def _on_dask(
    job: Sweep, plan: Sequence[Scenario], address: str, progress: Callable[[int], None] | None
) -> list[Impact]:
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler needs Dask's distributed: pip install 'fleetrules[dask]'") from None
    _probe(address)
    try:
        client = Client(address, timeout=f"{DASK_TIMEOUT}s")  # type: ignore[no-untyped-call]
    except Exception as exc:
        raise UsageError(f"--scheduler: not a Dask scheduler at {address}: {type(exc).__name__}: {exc}") from None
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        [shared] = client.scatter([job], broadcast=True)  # type: ignore[no-untyped-call]
        chunks = _chunks(plan, workers * 4)
        futures = [client.submit(_run_chunk, shared, [plan[i] for i in chunk], pure=False) for chunk in chunks]
        try:
            return _in_order(plan, chunks, (f.result() for f in futures), progress)
        except Exception as exc:
            from distributed.client import FutureCancelledError
            from distributed.scheduler import KilledWorker

            if not isinstance(exc, (FutureCancelledError, KilledWorker)):
                raise
            raise UsageError(f"resilience: a Dask worker died and the sweep stopped: {exc}") from None
    finally:
        client.close()  # type: ignore[no-untyped-call]


def _probe(address: str) -> None:
    """A UsageError unless what listens at ``address`` (tcp://, the default) speaks first as a Dask scheduler
    does: its handshake, a frame whose 8-byte length is that of a small message, within ``DASK_TIMEOUT``.
    distributed itself read a web server's "HTTP/1.1 400" as a length (MemoryError), and waited for ever on a
    service that accepts and says nothing (its timeout covers the connection, not the handshake)."""
    import socket
    import struct

    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location, default_port=8786)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--scheduler: not an address: {address!r} ({exc}); give tcp://HOST:PORT") from None
    if scheme != "tcp":
        return  # tls://, ws://, ucx://: left to distributed
    try:
        with socket.create_connection((host, port), timeout=DASK_TIMEOUT) as connection:
            first = b""
            while len(first) < 8:
                more = connection.recv(8 - len(first))
                if not more:
                    break
                first += more
    except TimeoutError:
        raise UsageError(
            f"--scheduler: not a Dask scheduler at {address}: it said nothing in {DASK_TIMEOUT:g} s"
        ) from None
    except OSError as exc:
        raise UsageError(f"--scheduler: cannot reach the Dask scheduler at {address}: {exc.strerror or exc}") from None
    if len(first) < 8 or not 0 < struct.unpack("<Q", first)[0] < 1 << 20:
        raise UsageError(f"--scheduler: not a Dask scheduler at {address}: it does not answer as one")


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
