"""Resilience sweeps: what each cluster failure does to the fleet (a fleetrules extension; Karmada has no
offline failover analysis).

A sweep evaluates the rules over the facts once, runs the failover controllers to a steady state (the
base), and then for each scenario (engine.review.impacts) applies the failure at the base time and steps the
controllers and the scheduler through the policies' own toleration and grace periods (engine.failover.simulate),
until nothing more is due. What changed against the base is the scenario's impact. After each scenario only what
it changed is put back (the failed clusters' facts, the bindings it touched), so the compiled program, the
session and the base placements serve every scenario.

Scenarios run in one process, on a local process pool, or on a Dask cluster: each worker builds the
base once and takes scenarios in chunks; results come back in scenario order, so every way of running
gives the same bytes.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.collector import with_fewer_collections
from engine.detector.dependencies import dependency_keys
from engine.errors import NO_SPAN, UsageError
from engine.failover.loops import fleet_state
from engine.failover.simulate import Simulator
from engine.inputs.events import Event, EventKind
from engine.inputs.facts import NOT_READY, Binding, Facts, parse_time
from engine.inputs.rule_files import RuleSet
from engine.karmada.gates import DEFAULT_CONTROLLERS, Controllers
from engine.pipeline import scheduler_for
from engine.results import Entry, EntryKind
from engine.review.impacts import BASE_TIME, Impact, Move, Repeat, Scenario

MAX_WORKERS = 1_024  # local worker processes


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
