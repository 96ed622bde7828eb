"""Failover through time: events change the world, Karmada's controllers react (engine.karmada.controllers).

The simulation runs on the scheduler's session: an event or an eviction retracts and asserts only
the facts it changes (a cluster's taints, a binding's targets and tasks), and only the bindings it
affects are placed again. Time advances to the next event or to the next moment a controller would
act (a toleration or grace period running out), whichever comes first. Events: engine.inputs.events.

"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from engine.codes import Code
from engine.compile import encoding, ir
from engine.errors import Diagnostic, FactError, warning
from engine.failover.loops import Clock, Loops, shifted
from engine.inputs.events import Event, EventKind
from engine.inputs.facts import (
    Cluster,
    ClusterStatus,
    Condition,
    Taint,
    TargetCluster,
    evolve,
    rfc3339,
    scheduling_taints,
)
from engine.inputs.matching import taint_by_policies, taint_changes
from engine.karmada.controllers.application_failover import application_timers, unhealthy_workloads
from engine.karmada.controllers.binding import binding_controller
from engine.karmada.controllers.failover import fail_over
from engine.karmada.controllers.graceful_eviction import graceful_eviction, new_clusters_healthy, task_timeout
from engine.karmada.controllers.taint_manager import (
    next_taint_resync,
    no_execute_tainted,
    taint_wakeups,
    used_tolerations,
)
from engine.karmada.controllers.world import (
    APPLICATION_FAILOVER,
    TAINT_MANAGER_RULES,
    Bindings,
    Clusters,
    Failover,
    RuleEviction,
    World,
    after,
    comparison_horizon,
    failover_of,
    label_problems,
)
from engine.karmada.gates import DEFAULT_CONTROLLERS, Controllers
from engine.karmada.notes import failover_gate_notes
from engine.kube.interpreter import health_hook
from engine.results import BindingState, Entry, EntryKind, Eviction, Placement
from engine.schedule.reschedule import is_workload, requeued, waits_for_the_workload
from engine.schedule.scheduler import Scheduler

HORIZON = dt.timedelta(hours=24)  # a simulation never runs longer than this past its last event


class Simulator:
    """The failover controllers and the scheduler over time, on a scheduler whose facts are loaded
    (its placement facts on the bindings' spec.clusters)."""

    def __init__(
        self, scheduler: Scheduler, start: dt.datetime, controllers: Controllers = DEFAULT_CONTROLLERS
    ) -> None:
        self.scheduler = scheduler
        self.store = scheduler.store  # the session's facts, which every change the controllers make goes through
        facts = scheduler.facts
        self.due_now = False  # an application failover due at the moment the last step ended
        chosen = scheduler.binding_policy
        self.warnings: list[Diagnostic] = failover_gate_notes(controllers, scheduler.evaluated, facts)
        # one Failover per policy, shared by its bindings (not rebuilt for each of thousands)
        policies = {p.name.value: p for p in chosen.values() if p is not None}
        behaviour = {name: failover_of(p, controllers) for name, p in policies.items()}
        self.world = World(
            now=start,
            clusters=Clusters({c.name: c for c in facts.clusters}),
            # a workload a Lazy policy claimed without a binding has none in Karmada: nothing acts on it
            bindings=Bindings(
                {
                    b.key: b
                    for b in facts.bindings
                    if (p := chosen[b.key]) is not None and not waits_for_the_workload(b, p)
                }
            ),
            failover={k: behaviour[p.name.value] for k, p in chosen.items() if p is not None},
            controllers=controllers,
        )
        for key, binding in sorted(self.world.bindings.items()):
            f = self.world.failover[key]
            if f.app and not health_hook(binding.api_version, binding.kind, facts.health_hooks):
                # bindingFilter: no InterpretHealth hook for the kind, no application failover
                self.world.failover[key] = replace(f, app=False)
                kind = f"{binding.api_version} {binding.kind}".strip()
                message = (
                    f"binding {key}: application failover never fires for it: Karmada cannot interpret the health "
                    f"of {kind} (no InterpretHealth hook; a ResourceInterpreterCustomization with "
                    "healthInterpretation in the facts adds one)"
                )
                self.warnings.append(warning(message, subject=key, code=Code.EVALUATION))
        for binding in self.world.bindings.values():  # what already runs
            for status in binding.aggregated_status:
                if status.since is not None:
                    self.world.health_since[(binding.key, status.cluster)] = status.since
            self.world.works[binding.key] = {c: {} for c in binding.cluster_names}
            for task in binding.eviction_tasks:
                if task.purge_mode != "Directly":
                    self.world.works[binding.key][task.from_cluster] = {}
        self.entries: list[Entry] = []
        self.after_failover: dict[str, Placement] = {}  # an evicted binding → where the scheduler put it
        # the bindings a cluster's change requeued since the last step, which the scheduler schedules again there
        self.requeued: set[str] = set()
        self.repeats: list[Entry] = []  # the ``repeats`` entries of the last run (loops listed once)
        # the seconds rules compare an unhealthy workload's timer or a taint's age with (a user's `u.seconds > 60`): a
        # timer or a taint reaching one is a moment to look again, as the application failover's toleration is
        self.unhealthy_marks = ir.numbers_compared(scheduler.compiled.rules, "unhealthy_workload")
        self.taint_marks = ir.numbers_compared(scheduler.compiled.rules, "taint_age")
        self._used_of: dict[tuple[int, int], tuple[Failover, Cluster, list[tuple[int, Mapping[str, Any]]]]] = {}

    # ------------------------------------------------------------ events
    def apply(self, event: Event) -> None:
        f, world = event.fields, self.world
        if event.kind is EventKind.HEALTH:
            self._health(f["binding"], f["cluster"], f.get("status", "Unknown"), event)
            return
        cluster = world.clusters.get(f.get("cluster", ""))
        if cluster is None:
            raise event.error(f"cluster: no cluster {f.get('cluster')!r}")
        taints = list(cluster.taints)
        before = cluster
        if event.kind is EventKind.TAINT:
            taints = [t for t in taints if (t.key, t.effect) != (f["key"], f.get("effect", "NoSchedule"))]
            taints.append(Taint(f["key"], f.get("value", ""), f.get("effect", "NoSchedule"), world.now))
        elif event.kind is EventKind.UNTAINT:
            taints = [t for t in taints if (t.key, t.effect) != (f["key"], f.get("effect", "NoSchedule"))]
        else:
            # ready or another condition: the cluster controller's NoSchedule taints
            # (pkg/controllers/cluster/cluster_controller.go) for Ready
            kind, status = f.get("type", "Ready"), f.get("status", "True")
            if kind == "Ready":
                taints = list(scheduling_taints(tuple(taints), status, world.now))
                cluster = replace(cluster, ready=status)
            cluster = replace(cluster, conditions=_with_condition(cluster.conditions, kind, status, world.now))
        cluster = replace(cluster, taints=tuple(taints))
        self.entries.append(
            Entry(world.now, EntryKind(event.kind), "", cluster.name, {k: v for k, v in f.items() if k != "cluster"})
        )
        if cluster.conditions != before.conditions and world.controllers.failover:  # the ClusterTaintPolicy
            # controller (started with the Failover gate) reconciles it at once
            tainted = taint_by_policies(cluster, self.scheduler.facts.taint_policies, world.now)
            self.entries += _taint_changes(world.now, cluster, tainted)
            cluster = tainted
        world.clusters[cluster.name] = cluster
        self.store.update_cluster(cluster)
        if {(t.key, t.value, t.effect) for t in cluster.taints} != {(t.key, t.value, t.effect) for t in before.taints}:
            self._requeue(cluster)

    def _requeue(self, cluster: Cluster) -> None:
        """A change of the cluster's spec (its taints): the scheduler requeues the bindings its affinity matches,
        and schedules those it would (reschedule.requeued) at the step."""
        answers: dict[tuple[str, str, bool], bool] = {}  # the bindings of a policy alike answer alike
        for key, binding in self.world.bindings.items():
            policy = self.scheduler.binding_policy.get(key)
            if policy is None or not binding.clusters:
                continue
            alike = (policy.name.value, binding.observed_affinity_name, is_workload(binding))
            found = answers.get(alike)
            if found is None:
                found = answers[alike] = requeued(binding, policy, (cluster,))
            if found:
                self.requeued.add(key)

    def _health(self, key: str, cluster: str, health: str, event: Event) -> None:
        binding = self.world.bindings.get(key)
        if binding is None:
            raise event.error(f"binding: no placed binding {key!r}")
        statuses = [s for s in binding.aggregated_status if s.cluster != cluster]
        old = next((s for s in binding.aggregated_status if s.cluster == cluster), None)
        statuses.append(ClusterStatus(cluster, health, old.status if old else None))
        self.world.bindings[key] = replace(binding, aggregated_status=tuple(sorted(statuses, key=lambda s: s.cluster)))
        self.entries.append(Entry(self.world.now, EntryKind.HEALTH, key, cluster, {"health": health}))

    # ------------------------------------------------------------ one moment
    def evictions(self) -> tuple[Eviction, ...]:
        """What failover did in the steps so far, as `eval` reports it: each task with the binding's
        clusters afterwards and the labels injected there."""
        out = []
        for e in self.entries:
            if e.kind is EntryKind.EVICTED:
                works = self.world.works.get(e.binding, {})
                out.append(
                    Eviction(
                        e.time,
                        e.binding,
                        e.cluster,
                        e.task,
                        rule=str(e.detail.get("rule", "")),
                        source=str(e.detail.get("source", "")),
                        because=str(e.detail.get("because", "")),
                        clusters=self.world.bindings[e.binding].cluster_names,
                        injected_labels={c: labels for c, labels in works.items() if labels},
                        label_problems=tuple(p for labels in works.values() for p in label_problems(labels)),
                        explanation=e.explanation,
                    )
                )
            elif e.kind is EntryKind.EVICTION_FAILED:
                error = str(e.detail.get("error", ""))
                out.append(Eviction(e.time, e.binding, e.cluster, None, error, source=str(e.detail.get("source", ""))))
        return tuple(out)

    def states(self) -> dict[str, BindingState]:
        """Each binding now: its open tasks, its Works, and the tasks ended and Works deleted at this moment
        (the entries read once for all bindings, not once per binding)."""
        ended: dict[str, list[str]] = defaultdict(list)
        deleted: dict[str, list[str]] = defaultdict(list)
        for e in self.entries:
            if e.time == self.world.now and e.kind is EntryKind.TASK_REMOVED:
                ended[e.binding].append(e.cluster)
            elif e.time == self.world.now and e.kind is EntryKind.WORK_DELETED:
                deleted[e.binding].append(e.cluster)
        return {
            key: BindingState(
                tasks=binding.eviction_tasks,
                works=dict(self.world.works.get(key, {})),
                tasks_ended=tuple(ended.get(key, ())),
                works_deleted=tuple(deleted.get(key, ())),
            )
            for key, binding in self.world.bindings.items()
        }

    def step(self) -> None:
        world = self.world
        application_timers(world)  # the application failover controller's timers, before its rule is asked
        self._sync_clock()
        entries, evicted = fail_over(world, self._rule_evictions())
        self.entries += entries
        # the unplaced bindings, less those a sweep keeps unschedulable (Scheduler.kept), found at once
        unplaced = world.bindings.unplaced
        if self.scheduler.keep_unschedulable:
            unplaced = unplaced - self.scheduler.kept_keys(world.bindings)
        again, self.requeued = self.requeued, set()
        for key in sorted(evicted | unplaced | again):
            placement = self._schedule(key)
            if key in evicted:
                self.after_failover[key] = placement
        # the bindings whose tasks or Works can change: those changed since the last step, those with tasks
        for key in sorted(world.bindings.changed | world.bindings.with_tasks):
            binding, dropped = graceful_eviction(world, world.bindings[key])
            if binding is not world.bindings[key] and binding != world.bindings[key]:
                world.bindings[key] = binding
                self.store.update_binding(binding)
            for task in dropped:
                self.entries.append(Entry(world.now, EntryKind.TASK_REMOVED, key, task.from_cluster))
            if dropped and not binding.clusters:
                self._schedule(key)  # the evicted cluster is schedulable again
            self.entries += binding_controller(world, key)
        # the application failover controller reconciles every binding updated in this step at once (its timers
        # of workloads Unhealthy on new targets start now); one already due is evicted at its next reconcile
        changed, world.bindings.changed = world.bindings.changed, set()
        application_timers(world, changed)
        # the clock's facts as the step leaves the fleet (a binding placed on a tainted cluster brings its policy's
        # tolerations there): what the rules are asked about now and by next_deadline
        timed = self._sync_clock()
        self.due_now = self._application_failover_due(changed & timed)

    def _sync_clock(self) -> set[str]:
        """The session's facts of the controllers' clock made as they stand now: the application failover
        controller's timers (``unhealthy_workload``), the NoExecute taints' ages and the tolerations the taint
        manager uses on their clusters (``taint_age``, ``toleration_used``). The bindings with a timer."""
        world, store = self.world, self.store
        timers = unhealthy_workloads(world)
        store.update_clocked(
            "unhealthy_workload",
            {
                encoding.binding_owner(key): [
                    encoding.unhealthy_workload(world.bindings[key].namespace, world.bindings[key].name, *timer)
                    for timer in held
                ]
                for key, held in timers.items()
            },
        )
        ages: dict[str, list[dict[str, Any]]] = {}
        used: dict[str, list[dict[str, Any]]] = {}
        for name in sorted(no_execute_tainted(world)):
            cluster = world.clusters[name]
            owner = encoding.cluster_owner(name)
            ages[owner] = [
                encoding.taint_age(name, t, world.now)
                for t in cluster.taints
                if t.effect == "NoExecute" and t.time_added is not None
            ]
            policies = {id(f): f for key in world.bindings.targeting({name}) if (f := world.failover.get(key))}
            used[owner] = [
                encoding.toleration_used(name, at, toleration)
                for f in policies.values()
                for at, toleration in self._used(f, cluster)
            ]
        store.update_clocked("taint_age", {owner: facts for owner, facts in ages.items() if facts})
        store.update_clocked("toleration_used", {owner: facts for owner, facts in used.items() if facts})
        return set(timers)

    def _used(self, f: Failover, cluster: Cluster) -> list[tuple[int, Mapping[str, Any]]]:
        """The tolerations of the policy of ``f`` the taint manager uses on ``cluster`` (used_tolerations), found
        once while both are the same objects (a policy's is shared by its bindings; a cluster is replaced as it
        changes)."""
        known = self._used_of.get((id(f), id(cluster)))
        if known is None or known[0] is not f or known[1] is not cluster:
            if len(self._used_of) > 10_000:
                self._used_of.clear()
            known = self._used_of[(id(f), id(cluster))] = (f, cluster, used_tolerations(f, cluster))
        return known[2]

    def _application_failover_due(self, keys: set[str]) -> bool:
        """Whether the application-failover rule evicts one of the bindings ``keys`` (with a timer, reconciled in this
        step) now: their reconcile found a timer run out (a task removed, a target kept Unhealthy)."""
        if not keys:
            return False
        evictions = self._rule_evictions(explained=False)
        return any(e.controller == APPLICATION_FAILOVER and e.binding in keys for e in evictions)

    def schedule_triggered(self) -> None:
        """Before the first step: the scheduled bindings the scheduler would run now (Scheduler.why_run:
        placement or replicas changed, a reschedule triggered, a target being deleted, a rule deciding about
        it), placed as an evaluation places them; bindings without clusters are placed by the first step."""
        for key, binding in sorted(self.world.bindings.items()):
            policy = self.scheduler.binding_policy[key]
            if policy is not None and binding.clusters and self.scheduler.why_run(binding, policy) is not None:
                self._schedule(key)

    def _rule_evictions(self, explained: bool = True) -> list[RuleEviction]:
        """The `evict` actions the rules take on the current facts: the built-in taint-manager rule's (none
        without a NoExecute taint a binding's policy does not tolerate), the application-failover rule's (none
        without a workload Unhealthy for longer than its policy tolerates) and users' rules'; ``explained``: each with
        the facts it matched, where the session keeps them (not for a deadline, which reads the pairs alone)."""
        evictions = self.store.evictions()
        if not evictions:
            return []
        keys = self.store.binding_keys
        explainer = self.scheduler.explainer if explained and self.scheduler.explanations else None
        out = []
        for d in evictions:
            rule = self.scheduler.compiled.rules[d.rule]
            source = f"{rule.span.file}:{rule.span.line}"
            key = keys.get(d.binding)
            if key is not None:
                why = explainer.explanation(d) if explainer is not None else None
                controller = rule.name if rule.builtin else ""  # a built-in rule evicts as a controller decides
                out.append(RuleEviction(key, d.cluster, rule.name, source, d.reason, d.message, controller, why))
        return out

    def _schedule(self, key: str) -> Placement:
        binding = self.world.bindings[key]
        kept = self.scheduler.kept(binding)
        if kept is not None:  # left unschedulable, and nothing gave it room since (resilience sweeps)
            return kept
        self.store.update_binding(binding)
        placement = self.scheduler.decide_unless_kept(binding)
        replicas = placement.replicas
        same = placement.clusters == binding.cluster_names
        # the same clusters in another order, each with the replicas it has: nothing changes (a binding scheduled
        # again on a cluster's change lists them in the order its attempt found them, which sharing may not keep)
        alike = same or (
            not placement.unschedulable
            and len(placement.clusters) == len(binding.clusters)
            and set(placement.clusters) == set(binding.cluster_names)
        )
        if alike and (
            placement.unschedulable  # a failure that is not a FitError keeps them as they are
            or all(replicas.get(t.name, 0) == t.replicas for t in binding.clusters)  # as they are (most, in a sweep)
        ):
            targets = binding.clusters
        else:  # spec.clusters as the scheduler writes them: each cluster with the replicas it assigned
            targets = tuple(TargetCluster(c, replicas.get(c, 0)) for c in placement.clusters)
        if targets != binding.clusters:
            self.world.bindings[key] = evolve(binding, clusters=targets)
            self.store.update_binding(self.world.bindings[key])
        kind = EntryKind.UNSCHEDULABLE if placement.unschedulable else EntryKind.SCHEDULED
        if not alike or placement.unschedulable:
            detail: dict[str, Any] = {"clusters": list(placement.clusters)}
            if placement.message:
                detail["message"] = placement.message
            self.entries.append(Entry(self.world.now, kind, key, "", detail))
        return placement

    def next_deadline(self) -> dt.datetime | None:
        """The next moment a controller acts without an event: a toleration or grace period ends."""
        world, times = self.world, []
        if self.due_now:
            times.append(after(world.now, 1))
        for (key, _), since in world.unhealthy_since.items():
            f = world.failover.get(key)
            if f is not None and f.app:
                times.append(after(since, f.toleration_seconds + 1))
                times += [after(since, seconds) for mark in self.unhealthy_marks for seconds in (mark, mark + 1)]
        bindings = world.bindings
        tainted = no_execute_tainted(world)
        for name in tainted if self.taint_marks else ():
            added = [t.time_added for t in world.clusters[name].taints if t.effect == "NoExecute" and t.time_added]
            times += [after(t, seconds) for t in added for mark in self.taint_marks for seconds in (mark, mark + 1)]
        managed = tainted if world.controllers.taint_manager else set()  # where the taint manager may evict
        evictions = self._rule_evictions(explained=False) if managed else []
        due = {(e.binding, e.cluster) for e in evictions if e.controller in TAINT_MANAGER_RULES}
        for key in set(bindings.targeting(managed)) | bindings.with_tasks:
            binding, f = bindings[key], world.failover.get(key)
            for name in binding.cluster_names:
                if name not in managed or f is None or name not in world.clusters:
                    continue  # no NoExecute taint (or no taint manager): no deadline of its there
                if (key, name) not in due:  # where its rule may come to evict
                    times += taint_wakeups(world.clusters[name], self._used(f, world.clusters[name]))
                elif not any(failed[:2] == (key, name) for failed in world.failing):
                    # placed there after this moment's sweep: the cluster's next resync evicts it (an eviction
                    # that failed is retried when what it read changes, which is an event: fail_over's _once)
                    times.append(next_taint_resync(world.clusters[name], world.now))
            for task in binding.eviction_tasks:
                just_stamped = task.creation_timestamp == world.now and task.suppress_deletion is None
                if just_stamped and new_clusters_healthy(world, binding):
                    # stamping the task updates the binding, which the controller reconciles again at once:
                    # the task whose new clusters are all Healthy goes then (a second later on this clock)
                    times.append(after(world.now, 1))
                if task.creation_timestamp is not None and task.suppress_deletion is None:
                    timeout = task_timeout(task, world.controllers.graceful_eviction_timeout)
                    # a zero or negative timeout (Karmada takes one) ends the task at its next assessment
                    times.append(after(task.creation_timestamp, max(timeout, 0) + 1))
        future = [t for t in times if t > world.now]
        return min(future) if future else None

    def check(self, events: Sequence[Event]) -> None:
        """FactError at each event naming a cluster or binding the fleet does not have (as ``apply`` would raise
        when it came to it): said before the run, so that a timeline written as it comes is never cut short."""
        problems: list[Diagnostic] = []
        for event in events:
            if event.kind is EventKind.HEALTH:
                if event.fields["binding"] not in self.world.bindings:
                    problems += event.error(f"binding: no placed binding {event.fields['binding']!r}").diagnostics
            elif event.fields.get("cluster", "") not in self.world.clusters:
                problems += event.error(f"cluster: no cluster {event.fields.get('cluster')!r}").diagnostics
        if problems:
            raise FactError(problems)

    def run(
        self,
        events: Sequence[Event],
        progress: Callable[[int], None] | None = None,
        settled: bool = False,
        flush: Callable[[Sequence[Entry]], None] | None = None,
    ) -> tuple[Entry, ...]:
        """Step through ``events`` and the deadlines they cause; the timeline. ``progress`` hears how many
        steps of ``len(events) + 1`` are done (the start, then each event's). ``settled``: the world is one a step
        leaves as it is (a sweep's base put back, found so once: engine.review.resilience), so the step at the
        start, which would change nothing, is not taken.

        A loop the controllers and the scheduler keep up between events (a binding evicted and placed back on the
        same cluster, again and again: an `evict` rule without the filter that goes with it, or a NoExecute taint
        the policy tolerates for a while) is listed once: where the fleet comes back to a state it was in, with
        no event between, the rest of the way to the next event is that stretch again (the controllers compare
        times with the clock only through spans they know and the taint manager's sweep: ``Clock``), so the timeline
        says so (a ``repeats`` entry; ``repeats``) and
        lists nothing more until the next event, or ends (a loop of a second was 86,400 steps to the horizon).

        ``flush``: hears the timeline in pieces, each once nothing can change it any more (at each event, what
        came before it; at the end, the rest), and then the run keeps none of it and returns nothing: a timeline
        of 600 events over 10,000 bindings is hundreds of thousands of entries, written as they come."""
        self.repeats = []
        pending = list(events)
        end = after(pending[-1].at if pending else self.world.now, int(HORIZON.total_seconds()))
        loops = Loops()
        if not settled:
            self.step()
        if progress is not None:
            progress(1)
        while True:
            deadline = self.next_deadline()
            candidates = [t for t in (pending[0].at if pending else None, deadline) if t is not None]
            if not candidates or min(candidates) > end:
                break
            self.world.now = min(candidates)
            applied = bool(pending) and pending[0].at <= self.world.now
            if applied:
                self._loop_ends(loops.event(), self.world.now)
                if flush is not None and self.entries:  # before the event: final (loops look after it only)
                    flush(self.entries)
                    self.entries = []
            while pending and pending[0].at <= self.world.now:
                self.apply(pending.pop(0))
            mark = len(self.entries)
            self.step()
            if loops.looping is not None:  # the stretch again: not listed
                del self.entries[mark:]
            elif not applied and loops.seen(self, mark):
                self.entries.append(loops.said(self))
                self.repeats.append(self.entries[-1])
                if not pending or pending[0].at > end:
                    break  # nothing comes to change it
                # the whole periods before the next event passed at once: the fleet as it is, its times later
                periods = (pending[0].at - self.world.now) // loops.period - 1
                if periods > 0:
                    self._later(loops.period * periods)
            if progress is not None:
                progress(1 + len(events) - len(pending))
        if flush is not None:
            if self.entries:
                flush(self.entries)
            self.entries = []
        return tuple(self.entries)

    def _later(self, delta: dt.timedelta) -> None:
        """The fleet ``delta`` (whole periods of a loop: ``run``) later: the same state, each recent time in it
        ``delta`` later (those further back stay: ``Clock``). Unless a value cannot be moved so (then the steps are
        taken one by one)."""
        world = self.world
        clock = Clock(world.now, comparison_horizon(world))
        try:
            clusters = {name: shifted(c, delta, clock) for name, c in world.clusters.items()}
            bindings = {key: shifted(b, delta, clock) for key, b in world.bindings.items()}
            unhealthy = shifted(world.unhealthy_since, delta, clock)
            healthy = shifted(world.health_since, delta, clock)
        except TypeError:
            return
        world.now += delta
        for name, cluster in clusters.items():
            if cluster is not world.clusters[name]:
                world.clusters[name] = cluster
                self.store.update_cluster(cluster)
        changed = world.bindings.changed
        for key, binding in bindings.items():
            if binding is not world.bindings[key]:
                world.bindings[key] = binding  # touched (a sweep puts it back), not changed: no controller sees it
                self.store.update_binding(binding)
        world.bindings.changed = changed
        world.unhealthy_since, world.health_since = unhealthy, healthy

    def loop_warnings(self) -> list[Diagnostic]:
        """What the last run's loops (``repeats`` entries) are, in words: one warning each."""
        out = []
        for e in self.repeats:
            bindings = [str(b) for b in e.detail.get("bindings", ())]
            named = ", ".join(bindings[:3]) + (f" and {len(bindings) - 3} more" if len(bindings) > 3 else "")
            until = e.detail.get("until")
            rules = e.detail.get("rules")
            message = (
                f"{named}: the timeline repeats from {rfc3339(e.time)}: what happened after {e.detail['after']} "
                f"happens again every {e.detail['every']}, "
                + (f"until the event at {until}" if until else "with no event to change it")
                + " (Karmada's controllers and scheduler would keep it up; the timeline lists it once)"
                + (f"; evictions by {', '.join(str(r) for r in rules)}" if rules else "")
            )
            out.append(warning(message, code=Code.EVALUATION))
        return out

    def _loop_ends(self, entry: Entry | None, at: dt.datetime) -> None:
        """The loop ``entry`` said (if one) went on until ``at``, when an event came: its entry says so."""
        if entry is None:
            return
        ended = replace(entry, detail={**entry.detail, "until": rfc3339(at)})
        self.entries[self.entries.index(entry)] = ended
        self.repeats[self.repeats.index(entry)] = ended


def _with_condition(
    conditions: tuple[Condition, ...], kind: str, status: str, now: dt.datetime
) -> tuple[Condition, ...]:
    """The conditions with ``kind`` at ``status`` (meta.SetStatusCondition: its transition time moves only when
    the status changes; a new type is added last)."""
    found = next((c for c in conditions if c.type == kind), None)
    if found is None:
        return (*conditions, Condition(kind, status, now))
    if found.status == status:
        return conditions
    return tuple(Condition(kind, status, now) if c is found else c for c in conditions)


def _taint_changes(now: dt.datetime, before: Cluster, after: Cluster) -> list[Entry]:
    """What the ClusterTaintPolicy controller added and removed, as timeline entries."""
    added, removed = taint_changes(before, after)
    by = {"by": "ClusterTaintPolicy"}
    return [
        *(Entry(now, EntryKind.TAINT, "", after.name, {"key": k, "effect": e, **by}) for k, e in added),
        *(Entry(now, EntryKind.UNTAINT, "", after.name, {"key": k, "effect": e, **by}) for k, e in removed),
    ]
