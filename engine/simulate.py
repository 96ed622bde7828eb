"""Failover through time: events change the world, Karmada's controllers react (engine.failover).

The engine session lives for the whole simulation: an event or an eviction retracts and asserts
only the facts it changes (a cluster's taints, a binding's targets and tasks), and only the
bindings it affects are placed again. Time advances to the next event or to the next moment a
controller would act (a toleration or grace period running out), whichever comes first.

Events file (YAML)::

    start: 2026-12-02T10:00:00Z
    events:
    - at: 30s
      health: {binding: streaming/fraud-detector-flinkdeployment, cluster: member1, status: Unhealthy}
    - at: 5m
      taint: {cluster: member2, key: cluster.karmada.io/not-ready, effect: NoExecute}
    - at: 6m
      untaint: {cluster: member2, key: cluster.karmada.io/not-ready, effect: NoExecute}
    - at: 7m
      ready: {cluster: member2, status: "False"}   # the cluster controller's NoSchedule taints
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from engine.errors import Diagnostic, FactError, error
from engine.evaluate import _Evaluation
from engine.facts import Binding, ClusterStatus, Facts, Taint, TargetCluster, parse_time
from engine.failover import (
    NOT_READY,
    UNREACHABLE,
    Entry,
    RuleEviction,
    World,
    binding_controller,
    fail_over,
    failover_of,
    graceful_eviction,
    rfc3339,
    taint_eviction_due,
    task_timeout,
)
from engine.karmada import policies_from_objects
from engine.load import RuleSet, display_path
from engine.parse import duration_seconds
from engine.program import program

HORIZON = dt.timedelta(hours=24)  # a simulation never runs longer than this past its last event
_EVENT_KINDS = {"health", "taint", "untaint", "ready"}
_OFFSET = re.compile(r"[0-9]+|([0-9]+[smhd])+")


@dataclass(frozen=True)
class Event:
    at: dt.datetime
    kind: str
    fields: dict[str, str]
    source: str


def load_events(path: Path) -> tuple[dt.datetime, list[Event]]:
    """The events file; FactError naming the file, the event and the field on any problem."""
    shown = display_path(path)
    problems: list[Diagnostic] = []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise FactError([error(f"cannot read events: {exc}", subject=shown)]) from None
    if not isinstance(data, dict) or not isinstance(data.get("events"), list):
        raise FactError([error("expected a mapping with 'start' and a list 'events'", subject=shown)])
    try:
        start = parse_time(str(data.get("start", "")))
    except ValueError:
        raise FactError(
            [error(f"start: expected an RFC 3339 time, found {data.get('start')!r}", subject=shown)]
        ) from None
    events = []
    for index, raw in enumerate(data["events"]):
        where = f"{shown} events[{index}]"
        kinds = sorted(set(raw) & _EVENT_KINDS) if isinstance(raw, dict) else []
        at = str(raw.get("at", "")) if isinstance(raw, dict) else ""
        if len(kinds) != 1 or not isinstance(raw[kinds[0]], dict):
            problems.append(
                error(f"an event is one of {', '.join(sorted(_EVENT_KINDS))} with its fields", subject=where)
            )
            continue
        if not _OFFSET.fullmatch(at):
            problems.append(
                error(f"at: expected a duration after start such as 90s or 5m, found {at!r}", subject=where)
            )
            continue
        seconds = int(at) if at.isdigit() else duration_seconds(at)
        fields = {str(k): str(v) for k, v in raw[kinds[0]].items()}
        events.append(Event(start + dt.timedelta(seconds=seconds), kinds[0], fields, where))
    if problems:
        raise FactError(problems)
    return start, sorted(events, key=lambda e: e.at)


class Simulator:
    def __init__(self, rules: RuleSet, facts: Facts, start: dt.datetime) -> None:
        policies = (*rules.policies, *policies_from_objects(facts.policies))
        self.engine = _Evaluation(program(tuple(policies), tuple(rules.rules)), policies, facts)
        self.engine.load()
        chosen = self.engine.binding_policy
        self.world = World(
            now=start,
            clusters={c.name: c for c in facts.clusters},
            bindings={b.key: b for b in facts.bindings if chosen[b.key] is not None},
            failover={k: failover_of(p) for k, p in chosen.items() if p is not None},
        )
        for binding in self.world.bindings.values():  # what already runs
            for status in binding.aggregated_status:
                if status.since is not None:
                    self.world.health_since[(binding.key, status.cluster)] = status.since
            self.world.works[binding.key] = {c: {} for c in binding.cluster_names}
            for task in binding.eviction_tasks:
                if task.purge_mode != "Directly":
                    self.world.works[binding.key][task.from_cluster] = {}
        self.entries: list[Entry] = []

    # ------------------------------------------------------------ events
    def apply(self, event: Event) -> None:
        f, world = event.fields, self.world
        if event.kind == "health":
            self._health(f["binding"], f["cluster"], f.get("status", "Unknown"), event)
            return
        cluster = world.clusters.get(f.get("cluster", ""))
        if cluster is None:
            raise FactError([error(f"cluster: no cluster {f.get('cluster')!r}", subject=event.source)])
        taints = list(cluster.taints)
        if event.kind == "taint":
            taints = [t for t in taints if (t.key, t.effect) != (f["key"], f.get("effect", "NoSchedule"))]
            taints.append(Taint(f["key"], f.get("value", ""), f.get("effect", "NoSchedule"), world.now))
        elif event.kind == "untaint":
            taints = [t for t in taints if (t.key, t.effect) != (f["key"], f.get("effect", "NoSchedule"))]
        else:  # ready: the cluster controller's NoSchedule taints (§4.3)
            taints = [t for t in taints if t.key not in (NOT_READY, UNREACHABLE) or t.effect != "NoSchedule"]
            status = f.get("status", "True")
            if status != "True":
                taints.append(Taint(NOT_READY if status == "False" else UNREACHABLE, "", "NoSchedule", world.now))
            cluster = replace(cluster, ready=status)
        cluster = replace(cluster, taints=tuple(taints))
        world.clusters[cluster.name] = cluster
        self.engine.update_cluster(cluster)
        self.entries.append(
            Entry(world.now, event.kind, "", cluster.name, {k: v for k, v in f.items() if k != "cluster"})
        )

    def _health(self, key: str, cluster: str, health: str, event: Event) -> None:
        binding = self.world.bindings.get(key)
        if binding is None:
            raise FactError([error(f"binding: no placed binding {key!r}", subject=event.source)])
        statuses = [s for s in binding.aggregated_status if s.cluster != cluster]
        old = next((s for s in binding.aggregated_status if s.cluster == cluster), None)
        statuses.append(ClusterStatus(cluster, health, old.status if old else None))
        self.world.bindings[key] = replace(binding, aggregated_status=tuple(sorted(statuses, key=lambda s: s.cluster)))
        self.entries.append(Entry(self.world.now, "health", key, cluster, {"health": health}))

    # ------------------------------------------------------------ one moment
    def evictions(self) -> list[dict[str, Any]]:
        """What failover did in the steps so far, as `eval` reports it: each task with the binding's
        clusters afterwards and the labels injected there."""
        out = []
        for e in self.entries:
            if e.kind not in ("evicted", "eviction-failed"):
                continue
            data = e.data()
            if e.kind == "evicted":
                binding = self.world.bindings[e.binding]
                data["clusters"] = list(binding.cluster_names)
                data["injectedLabels"] = {
                    c: labels for c, labels in self.world.works.get(e.binding, {}).items() if labels
                }
            out.append(data)
        return out

    def step(self) -> None:
        world = self.world
        entries, evicted = fail_over(world, self._rule_evictions())
        self.entries += entries
        for key in sorted(evicted | {k for k, b in world.bindings.items() if not b.clusters}):
            self._schedule(key)
        for key in sorted(world.bindings):
            binding, dropped = graceful_eviction(world, world.bindings[key])
            if binding != world.bindings[key]:
                world.bindings[key] = binding
                self.engine.update_binding(binding)
            for task in dropped:
                self.entries.append(Entry(world.now, "task-removed", key, task.from_cluster))
            if dropped and not binding.clusters:
                self._schedule(key)  # the evicted cluster is schedulable again
            self.entries += binding_controller(world, key)

    def _rule_evictions(self) -> list[RuleEviction]:
        """The `evict` actions the engine's rules have taken on the current facts."""
        keys = {fact_id: key for key, fact_id in self.engine.binding_ids.items()}
        out = []
        for d in self.engine.session.evictions:
            rule = self.engine.program.rules[d.rule]
            source = f"{rule.span.file}:{rule.span.line}"
            if d.binding in keys:
                out.append(RuleEviction(keys[d.binding], d.cluster, rule.name, source, d.reason, d.message))
        return out

    def _schedule(self, key: str) -> None:
        binding = self.world.bindings[key]
        self.engine.update_binding(binding)
        placement = self.engine.decide(binding)
        if placement.clusters != binding.cluster_names:
            targets = tuple(replace_target(binding, c) for c in placement.clusters)
            self.world.bindings[key] = replace(binding, clusters=targets)
            self.engine.update_binding(self.world.bindings[key])
        kind = "unschedulable" if placement.unschedulable else "scheduled"
        if placement.clusters != binding.cluster_names or placement.unschedulable:
            detail: dict[str, Any] = {"clusters": list(placement.clusters)}
            if placement.message:
                detail["message"] = placement.message
            self.entries.append(Entry(self.world.now, kind, key, "", detail))

    def next_deadline(self) -> dt.datetime | None:
        """The next moment a controller acts without an event: a toleration or grace period ends."""
        world, times = self.world, []
        for (key, _), since in world.unhealthy_since.items():
            f = world.failover.get(key)
            if f is not None and f.app:
                times.append(since + dt.timedelta(seconds=f.toleration_seconds + 1))
        for key, binding in world.bindings.items():
            f = world.failover.get(key)
            for name in binding.cluster_names:
                due = taint_eviction_due(f, world.clusters[name], world.now) if f and name in world.clusters else False
                if isinstance(due, dt.datetime):
                    times.append(due + dt.timedelta(seconds=1))
            for task in binding.eviction_tasks:
                if task.creation_timestamp is not None and task.suppress_deletion is None:
                    times.append(task.creation_timestamp + dt.timedelta(seconds=task_timeout(task) + 1))
        future = [t for t in times if t > world.now]
        return min(future) if future else None

    def run(self, events: Sequence[Event]) -> list[Entry]:
        pending = list(events)
        end = (pending[-1].at if pending else self.world.now) + HORIZON
        try:
            self.step()
            while True:
                deadline = self.next_deadline()
                candidates = [t for t in (pending[0].at if pending else None, deadline) if t is not None]
                if not candidates or min(candidates) > end:
                    break
                self.world.now = min(candidates)
                while pending and pending[0].at <= self.world.now:
                    self.apply(pending.pop(0))
                self.step()
        finally:
            self.engine.session.close()
        return self.entries


def replace_target(binding: Binding, cluster: str) -> TargetCluster:
    """The binding's TargetCluster for ``cluster``, kept if it had one (Duplicated: same replicas)."""
    current = next((t for t in binding.clusters if t.name == cluster), None)
    return current or TargetCluster(cluster, binding.replicas)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={v}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def timeline_text(entries: Sequence[Entry], start: dt.datetime) -> str:
    lines = []
    for e in entries:
        offset = int((e.time - start).total_seconds())
        stamp = f"{rfc3339(e.time)} (+{offset}s)"
        what = e.kind + (f" {e.binding}" if e.binding else "") + (f" @ {e.cluster}" if e.cluster else "")
        details = ", ".join(f"{k}={_show(v)}" for k, v in e.detail.items() if k != "task")
        lines.append(f"{stamp}  {what}" + (f"  {details}" if details else ""))
        task = e.detail.get("task")
        if task:
            lines += [f"    {k}: {_show(v)}" for k, v in task.items()]
    return "\n".join(lines) + "\n"
