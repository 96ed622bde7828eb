"""How facts are encoded for the engine: the one place that knows the fact fields' names.

Rules name label keys and list elements freely (``c.labels["topology.kubernetes.io/region"]``,
``"eu-1" in c.zones``); the engine's facts are flat, so each key a program names becomes one
property (``L0``, ``L1``, …), each tested list element one flag (``F0``, …), and a placement fact
carries its cluster's labels too (``CL0``, …). Every property a program names is present on every
fact of its type, ``ABSENT`` when unset (durable-rules fails a join on a missing property).
Facts are owned by keys that say what they stand for: ``c/NAME`` a cluster, ``b/NS/NAME`` a binding,
``p/NAME`` a policy's scope, ``g/N`` a group of bindings' (engine.compile.lift).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.compile.ir import ABSENT
from engine.inputs.facts import Binding, Cluster, EvictionTask, Facts, Taint, rfc3339
from engine.kube import gotime
from engine.syntax import ast
from engine.syntax.schema import DEFAULT_TOLERATION_SECONDS, DEPRECATED_PURGE_MODES, MEMBER, POLICY_SCOPE

_ENCODED_PREFIXES = ("L", "C", "F")  # label, cluster label (on placements), list flag
_HIDDEN = ("id", "t", "sid", "key")


@dataclass
class Symbols:
    """Flat property names for label keys and for list-element flags, shared by a whole program."""

    labels: dict[str, str] = field(default_factory=dict)
    flags: dict[tuple[str, str], str] = field(default_factory=dict)

    def label(self, key: str) -> str:
        return self.labels.setdefault(key, f"L{len(self.labels)}")

    def flag(self, list_field: str, value: str) -> str:
        return self.flags.setdefault((list_field, value), f"F{len(self.flags)}")

    @property
    def size(self) -> int:
        """How many properties label keys and list values add to a fact."""
        return len(self.labels) + len(self.flags)


def derived_prop(name: str) -> str:
    return f"f_{name}"


def cluster_owner(name: str) -> str:
    return f"c/{name}"


def binding_owner(key: str) -> str:
    return f"b/{key}"


def policy_owner(name: str) -> str:
    return f"p/{name}"


def labels(symbols: Symbols, values: Mapping[str, str], prefix: str = "") -> dict[str, str]:
    """Every label the program refers to, ABSENT where the object lacks it."""
    return {f"{prefix}{prop}": values.get(key, ABSENT) for key, prop in symbols.labels.items()}


def flags(symbols: Symbols, list_field: str, values: Iterable[str]) -> dict[str, int]:
    present = set(values)
    return {prop: 1 for (f, value), prop in symbols.flags.items() if f == list_field and value in present}


def member(owner: str, list_field: str, value: str) -> dict[str, Any]:
    return {"owner": owner, "field": list_field, "value": value}


def cluster(symbols: Symbols, c: Cluster) -> dict[str, Any]:
    props: dict[str, Any] = {"key": cluster_owner(c.name), "name": c.name, "ready": c.ready == "True"}
    props |= {"provider": c.provider, "region": c.region, "zone_count": len(c.zones)}
    return props | labels(symbols, c.labels) | flags(symbols, "zones", c.zones)


@dataclass(frozen=True)
class Groups:
    """A binding's instantiated workload affinity groups and their topology keys."""

    affinity: str = ""
    anti_affinity: str = ""
    affinity_topology: str = ""
    anti_affinity_topology: str = ""


def binding(symbols: Symbols, b: Binding, policy: str, groups: Groups) -> dict[str, Any]:
    props: dict[str, Any] = {
        "key": binding_owner(b.key),
        "namespace": b.namespace,
        "name": b.name,
        "kind": b.kind,
        "api_version": b.api_version,
        "replicas": b.replicas,
        "policy": policy,
        "affinity_group": groups.affinity,
        "anti_affinity_group": groups.anti_affinity,
        "affinity_topology": groups.affinity_topology,
        "anti_affinity_topology": groups.anti_affinity_topology,
    }
    return props | labels(symbols, b.labels) | flags(symbols, "clusters", b.cluster_names)


def policy_scope(name: str) -> dict[str, Any]:
    return {"key": policy_owner(name), "policy": name}


def group_scope(number: int, keys: Sequence[str], binding: Mapping[str, Any]) -> dict[str, Any]:
    """The group_scope fact of the bindings alike in ``keys`` (engine.compile.lift), of which ``binding`` is one."""
    return {"key": f"g/{number}"} | {k: binding[k] for k in keys if k in binding}


def scope_value(keys: Sequence[str], binding: Mapping[str, Any]) -> tuple[Any, ...]:
    """What the bindings of one group_scope fact share: their values of ``keys`` (absent ones as absent)."""
    return tuple((k in binding, repr(binding.get(k))) for k in keys)


# The fact types a session may keep in batches (engine.backend.indexed.Batch): a binding's placements, each its
# binding's part (the same in all) and one cluster's part (its name and labels: ``in_part``).
BATCHED = frozenset({"placement"})


def in_part(prop: str) -> bool:
    """Whether a placement's property is of its cluster's part (the name, the labels ``C…``), not its binding's."""
    return prop == "cluster" or prop.startswith("C")


def placement_common(binding_props: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A binding's placements' binding part (the same in each), and the binding's ``scheduled`` fact."""
    base = {k: binding_props[k] for k in ("namespace", "affinity_group", "anti_affinity_group")}
    base["binding"] = binding_props["name"]
    common = base | {k: v for k, v in binding_props.items() if k.startswith("L")}
    return common, base


def cluster_parts(
    symbols: Symbols, targets: Sequence[Cluster | str], seen: dict[str, tuple[Cluster, dict[str, Any]]] | None = None
) -> tuple[dict[str, Any], ...]:
    """The cluster part of a placement on each of ``targets``: its name and labels, the same dict for every
    binding on the cluster (``seen`` keeps them by name, for as long as the cluster's labels stay: a cluster
    tainted or made not ready is the same part, so the batches placed on it stay alike)."""
    parts = []
    for target in targets:
        if isinstance(target, Cluster):
            known = seen.get(target.name) if seen is not None else None
            if known is None or (known[0] is not target and known[0].labels != target.labels):
                known = (target, {"cluster": target.name} | labels(symbols, target.labels, "C"))
                if seen is not None:
                    seen[target.name] = known
            elif known[0] is not target and seen is not None:
                seen[target.name] = known = (target, known[1])  # the next lookup of this cluster: one identity test
            parts.append(known[1])
        else:
            parts.append({"cluster": target})
    return tuple(parts)


def taint(cluster_name: str, t: Taint) -> dict[str, Any]:
    value = f"={t.value}" if t.value else ""
    display = f"{{{t.key}{value}:{t.effect}}}"  # as Karmada's TaintToleration message shows it
    return {"cluster": cluster_name, "key": t.key, "value": t.value, "effect": t.effect, "display": display}


def eviction_task(b: Binding, task: EvictionTask) -> dict[str, Any]:
    return {
        "namespace": b.namespace,
        "binding": b.name,
        "from_cluster": task.from_cluster,
        "purge_mode": task.purge_mode,
        "reason": task.reason,
        "producer": task.producer,
    }


def taint_age(cluster_name: str, t: Taint, now: dt.datetime) -> dict[str, Any]:
    """A NoExecute taint's clock (``t.time_added`` set): the seconds since, rounded down."""
    assert t.time_added is not None
    seconds = math.floor((now - t.time_added).total_seconds())
    return {**taint(cluster_name, t), "since": rfc3339(t.time_added), "seconds": seconds}


def toleration_used(cluster_name: str, position: int, toleration: Mapping[str, Any]) -> dict[str, Any]:
    """A toleration (a ``cluster_toleration`` fact with tolerationSeconds: engine.compile.policies.tolerations) the
    taint manager uses on the cluster; its seconds as Go adds them to a time, in whole seconds rounded up."""
    seconds = toleration.get("seconds")
    nanoseconds = gotime.duration_of_seconds(int(seconds)) if seconds is not None else 0
    fields = {k: toleration[k] for k in ("policy", "key", "operator", "value", "effect")}
    return fields | {
        "cluster": cluster_name,
        "position": position,
        "timed": seconds is not None,
        "seconds": -(-nanoseconds // 1_000_000_000),
    }


def unhealthy_workload(namespace: str, binding: str, cluster: str, since: str, seconds: int) -> dict[str, Any]:
    return {"namespace": namespace, "binding": binding, "cluster": cluster, "since": since, "seconds": seconds}


def shown(symbols: Symbols, fact: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """(the fact's type, its fields as people name them), for explanations; unset fields left out."""
    fields = {
        k: str(v)
        for k, v in fact.items()
        if k not in _HIDDEN and not k.startswith(_ENCODED_PREFIXES) and v not in ("", ABSENT)
    }
    named = sorted((k, fact[p]) for k, p in symbols.labels.items() if fact.get(p, ABSENT) != ABSENT)
    if named:
        fields["labels"] = "{" + ", ".join(f"{k}={v}" for k, v in named) + "}"
    return str(fact.get("t", "?")), fields


# ---------------------------------------------------------------- a policy's facts


def groups(policy: ast.Policy, labels: Mapping[str, str]) -> Groups:
    """The instantiated groups (detector getWorkloadAffinityGroups): ``key=value`` of the workload's label."""
    found: dict[bool, tuple[str, str]] = {}
    for term in policy.statements:
        if isinstance(term, ast.WorkloadTerm) and not term.preferred and term.key.value in labels:
            topology = term.topology.value if term.topology else ""
            found.setdefault(term.anti, (f"{term.key.value}={labels[term.key.value]}", topology))
    aff, aff_top = found.get(False, ("", ""))
    anti, anti_top = found.get(True, ("", ""))
    return Groups(aff, anti, aff_top, anti_top)


def tolerations(policy: ast.Policy, seconds: bool = False) -> list[dict[str, Any]]:
    """One ``cluster_toleration`` fact per ``tolerate`` statement (fields of corev1.Toleration);
    with ``seconds``, also tolerationSeconds (None when unset), which only the taint manager reads."""
    out = []
    for t in policy.statements:
        if isinstance(t, ast.Toleration):
            fact: dict[str, Any] = {
                "policy": policy.name.value,
                "key": t.key.value if t.key else "",
                "operator": "Equal" if t.value is not None else "Exists",
                "value": t.value.value if t.value else "",
                "effect": t.effect.value if t.effect else "",
            }
            if seconds:
                fact["seconds"] = t.seconds.seconds if t.seconds else None
            out.append(fact)
    return out


def application_failover_fact(policy: ast.Policy) -> dict[str, Any] | None:
    """The policy's ``application_failover`` fact (spec.failover.application, Karmada's defaults applied:
    tolerationSeconds 300, purgeMode Gracefully; a deprecated purge mode by its new name), for the
    application-failover rule (rules/application_failover.fr); None without a ``failover application`` block."""
    block = next((s for s in policy.statements if isinstance(s, ast.Failover) and s.kind.value == "application"), None)
    if block is None:
        return None
    seconds = next((s.duration.seconds for s in block.statements if isinstance(s, ast.FailoverToleration)), None)
    purge = next((s.mode.value for s in block.statements if isinstance(s, ast.Purge)), "Gracefully")
    return {
        "policy": policy.name.value,
        "toleration_seconds": DEFAULT_TOLERATION_SECONDS if seconds is None else seconds,
        "purge_mode": DEPRECATED_PURGE_MODES.get(purge, purge),
    }


def spread_facts(policy: ast.Policy) -> list[dict[str, Any]]:
    """One ``spread_constraint`` fact per spread statement, for the SpreadConstraint filter
    (rules/spread_constraint.fr)."""
    return [
        {"policy": policy.name.value, "field": s.field.value} for s in policy.statements if isinstance(s, ast.Spread)
    ]


# ---------------------------------------------------------------- the input facts, in one pass


@dataclass(frozen=True)
class Owned:
    """The facts ``owner`` has for ``what`` (one batch of ``fact_type``); ``values``: of a list field's members,
    the values they stand for (kept whether or not facts are made of them)."""

    owner: str
    what: str
    fact_type: str
    facts: list[dict[str, Any]]
    values: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Made:
    """One fact of the input; ``of``: what it stands for, as the session's store keeps its id (a cluster's name,
    a policy's name, a binding's key), "" for a fact kept by no one."""

    fact_type: str
    props: dict[str, Any]
    of: str = ""


@dataclass(frozen=True)
class GroupScope:
    """The group_scope fact of the bindings alike in the values the lifted rules read, and those bindings' keys."""

    props: dict[str, Any]
    bindings: tuple[str, ...]


def input_facts(
    symbols: Symbols,
    facts: Facts,
    policies: Sequence[ast.Policy],
    policy_of: Mapping[str, ast.Policy | None],
    held: frozenset[str],
    workload_affinity: bool,
    group_keys: Sequence[str],
    members: bool,
) -> Iterator[Owned | Made | GroupScope]:
    """Every fact an evaluation starts from, made from the objects in one pass and in the order rules need them:
    what rules only test for absence first (members, tolerations and the policies' other facts, tasks, taints, the
    APIs a cluster does not serve), then clusters, the policies' scopes, bindings, the bindings' group scopes. So
    that no rule fires on a partial picture. ``policy_of``: each binding's policy (None: none selects it); ``held``:
    the bindings holding an older placement (their groups as recorded); ``members``: a rule matches member facts
    (else the lists' values alone are given)."""
    live = [c for c in facts.clusters if not c.deleting]
    lists = [(cluster_owner(c.name), "zones", c.zones) for c in live]
    lists += [(binding_owner(b.key), "clusters", b.cluster_names) for b in facts.bindings]
    for owner, list_field, values in lists:
        made = [member(owner, list_field, v) for v in values] if members else []
        yield Owned(owner, list_field, MEMBER, made, tuple(values))
    for policy in policies:
        for toleration in tolerations(policy):
            yield Made("cluster_toleration", toleration)
        for spread in spread_facts(policy):
            yield Made("spread_constraint", spread)
        app = application_failover_fact(policy)
        if app is not None:
            yield Made("application_failover", app)
    for b in facts.bindings:
        yield Owned(binding_owner(b.key), "tasks", "eviction_task", [eviction_task(b, t) for t in b.eviction_tasks])
    for c in live:
        yield Owned(cluster_owner(c.name), "taints", "taint", [taint(c.name, t) for t in c.taints])
    apis = sorted({(b.api_version, b.kind) for b in facts.bindings if b.api_version})
    for c in live:
        for api_version, kind in apis if c.api_enablements is not None else ():
            if c.api_enablement(api_version, kind) != "APIEnabled":  # APIDisabled or APIUnknown
                yield Made("api_unavailable", {"cluster": c.name, "api_version": api_version, "kind": kind})
    for c in live:
        yield Made("cluster", cluster(symbols, c), c.name)
    for name in sorted({p.name.value for p in policy_of.values() if p is not None}):
        yield Made(POLICY_SCOPE, policy_scope(name), name)
    grouped = _Grouped()
    made_bindings: list[tuple[str, dict[str, Any]]] = []
    for b in facts.bindings:
        chosen = policy_of[b.key]
        g = grouped.of(chosen, b.labels) if chosen is not None else Groups()
        recorded = b.affinity_group is not None or b.anti_affinity_group is not None
        if chosen is None or not b.labels or (b.key in held and recorded):
            # no workload manifest, no evaluated policy, or a binding the detector has not refreshed since
            # its policy changed (lazy activation): the groups recorded on the binding
            g = Groups(
                b.affinity_group or "", b.anti_affinity_group or "", g.affinity_topology, g.anti_affinity_topology
            )
        if not workload_affinity:  # the detector records no groups (pkg/detector/detector.go)
            g = Groups()
        props = binding(symbols, b, chosen.name.value if chosen is not None else "", g)
        made_bindings.append((b.key, props))
        yield Made("binding", props, b.key)
    yield from _group_scopes(group_keys, [(k, p) for k, p in made_bindings if policy_of[k] is not None])


class _Grouped:
    """A binding's groups (``groups``), once per policy and values of the labels its workload terms group by."""

    def __init__(self) -> None:
        self.keys: dict[str, tuple[str, ...]] = {}
        self.found: dict[tuple[str, tuple[str | None, ...]], Groups] = {}

    def of(self, policy: ast.Policy, labels: Mapping[str, str]) -> Groups:
        keys = self.keys.get(policy.name.value)
        if keys is None:
            terms = [s for s in policy.statements if isinstance(s, ast.WorkloadTerm)]
            keys = self.keys[policy.name.value] = tuple(t.key.value for t in terms)
        key = (policy.name.value, tuple(labels.get(k) for k in keys))
        found = self.found.get(key)
        if found is None:
            found = self.found[key] = groups(policy, labels)
        return found


def _group_scopes(keys: Sequence[str], bindings: Sequence[tuple[str, dict[str, Any]]]) -> Iterator[GroupScope]:
    """One group_scope fact per value of the fields the rules lifted to it read (``keys``), for the bindings a
    policy selects (the others are not decided), numbered in the bindings' order."""
    if not keys:
        return
    scopes: dict[tuple[Any, ...], tuple[dict[str, Any], list[str]]] = {}
    for key, props in bindings:
        value = scope_value(keys, props)
        if value not in scopes:
            scopes[value] = (group_scope(len(scopes), keys, props), [])
        scopes[value][1].append(key)
    for props, members_of in scopes.values():
        yield GroupScope(props, tuple(members_of))
