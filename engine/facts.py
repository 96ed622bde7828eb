"""Cluster, workload and binding facts from Karmada objects (shared/spec/semantics.md S1).

Objects come from YAML or JSON files (multi-document, ``kind: List`` expanded) or from Python
dicts shaped like what ``kubectl get -o yaml`` prints. Everything is validated on the way in:
a wrong object raises FactError naming the file, the document and the field, and a field that
fleetrules does not know is reported as a warning rather than dropped in silence.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from engine.check import did_you_mean
from engine.errors import Diagnostic, FactError, error, warning
from engine.karmada import POLICY_KINDS, convert_objects
from engine.load import display_path, expand

MAX_YAML_NODES = 1_000_000  # after expanding aliases: a "billion laughs" document stays small on disk


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe loading (the C parser when PyYAML has libyaml) that refuses duplicate keys, which PyYAML
    would resolve silently to the last value, as Kubernetes' own decoder (sigs.k8s.io/yaml) refuses them."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, Hashable) and key in seen:
                first = seen[key].start_mark
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {first.line + 1})", key_node.start_mark
                )
            if isinstance(key, Hashable):
                seen[key] = key_node
        return super().construct_mapping(node, deep)  # type: ignore[no-any-return]


def _expanded_size(document: Any, limit: int) -> int:
    """Nodes in ``document`` with every alias expanded, counted once per distinct object; stops past ``limit``."""
    sizes: dict[int, int] = {}

    def size(value: Any) -> int:
        if not isinstance(value, (dict, list)):
            return 1
        known = sizes.get(id(value))
        if known is not None:
            return known
        sizes[id(value)] = limit + 1  # a cycle (recursive alias) counts as unbounded
        children = (*value.keys(), *value.values()) if isinstance(value, dict) else value
        total = 1
        for child in children:
            total += size(child)
            if total > limit:
                break
        sizes[id(value)] = total
        return total

    return size(document)


FACT_SUFFIXES = (".yaml", ".yml", ".json")
MAX_FACT_FILE_BYTES = 64 * 1024 * 1024

# Fields of the Karmada API that fleetrules reads or knowingly passes over; others are warned about.
_CLUSTER_SPEC = {
    "id", "syncMode", "apiEndpoint", "secretRef", "impersonatorSecretRef", "insecureSkipTLSVerification",
    "proxyURL", "proxyHeader", "provider", "region", "zone", "zones", "taints", "resourceModels",
}  # fmt: skip
_CLUSTER_STATUS = {
    "kubernetesVersion", "apiEnablements", "conditions", "nodeSummary", "resourceSummary", "remedyActions",
}  # fmt: skip
_BINDING_SPEC = {
    "resource", "replicaRequirements", "replicas", "clusters", "placement", "gracefulEvictionTasks", "requiredBy",
    "propagateDeps", "schedulerName", "conflictResolution", "failover", "rescheduleTriggeredAt",
    "preserveResourcesOnDeletion", "suspension", "workloadAffinityGroups", "components",
}  # fmt: skip
_BINDING_STATUS = {
    "schedulerObservedGeneration", "schedulerObservingAffinityName", "lastScheduledTime", "conditions",
    "aggregatedStatus",
}  # fmt: skip
_TOP = {"apiVersion", "kind", "metadata", "spec", "status"}


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str
    time_added: dt.datetime | None = None


@dataclass(frozen=True)
class Cluster:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    provider: str = ""
    region: str = ""
    zones: tuple[str, ...] = ()
    taints: tuple[Taint, ...] = ()
    ready: str = "True"  # status of the Ready condition: True | False | Unknown
    ready_since: dt.datetime | None = None
    deleting: bool = False
    source: str = "<python>"


@dataclass(frozen=True)
class Workload:
    api_version: str
    kind: str
    namespace: str
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    status: Any = None
    source: str = "<python>"


@dataclass(frozen=True)
class TargetCluster:
    name: str
    replicas: int = 0


@dataclass(frozen=True)
class EvictionTask:
    """A GracefulEvictionTask of a binding (pkg/apis/work/v1alpha2/binding_types.go)."""

    from_cluster: str
    purge_mode: str = "Gracefully"
    reason: str = ""
    message: str = ""
    producer: str = ""
    replicas: int | None = None
    grace_period_seconds: int | None = None
    suppress_deletion: bool | None = None
    preserved_label_state: Mapping[str, str] = field(default_factory=dict)
    clusters_before_failover: tuple[str, ...] = ()
    creation_timestamp: dt.datetime | None = None


@dataclass(frozen=True)
class ClusterStatus:
    """One status.aggregatedStatus item: the workload's health and status in one cluster."""

    cluster: str
    health: str = "Unknown"  # Healthy | Unhealthy | Unknown
    status: Any = None
    # fleetrules extension: since when the health has been what it is (Karmada keeps this in memory)
    since: dt.datetime | None = None


@dataclass(frozen=True)
class Binding:
    """A ResourceBinding, or the pending one Karmada would create for a workload."""

    namespace: str
    name: str
    kind: str
    api_version: str = ""
    resource_name: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    replicas: int = 0
    clusters: tuple[TargetCluster, ...] = ()
    eviction_tasks: tuple[EvictionTask, ...] = ()
    aggregated_status: tuple[ClusterStatus, ...] = ()
    # spec.workloadAffinityGroups as stored on a real binding ("key=value"); None: derive from the policy
    affinity_group: str | None = None
    anti_affinity_group: str | None = None
    observed_affinity_name: str = ""
    source: str = "<python>"

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def cluster_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.clusters)


@dataclass(frozen=True)
class Facts:
    clusters: tuple[Cluster, ...] = ()
    bindings: tuple[Binding, ...] = ()
    workloads: tuple[Workload, ...] = ()
    # PropagationPolicy / ClusterPropagationPolicy objects found among the facts (raw, with source)
    policies: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    warnings: tuple[Diagnostic, ...] = ()


def binding_name(name: str, kind: str) -> str:
    """names.GenerateBindingName: the binding Karmada creates for a resource template."""
    return f"{name}-{kind.lower()}"


class _Reader:
    """Validates one object; collects problems under a subject such as ``f.yaml#2 (Cluster m1)``."""

    def __init__(self, subject: str, problems: list[Diagnostic]) -> None:
        self.subject = subject
        self.problems = problems

    def fail(self, path: str, message: str) -> None:
        self.problems.append(error(f"{path}: {message}" if path else message, subject=self.subject))

    def warn(self, path: str, message: str) -> None:
        self.problems.append(warning(f"{path}: {message}", subject=self.subject))

    def mapping(self, value: Any, path: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(path, f"expected a mapping, found {_type_name(value)}")
            return {}
        return value

    def sequence(self, value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(path, f"expected a list, found {_type_name(value)}")
            return []
        return value

    def string(self, obj: Mapping[str, Any], key: str, path: str, required: bool = False) -> str:
        value = obj.get(key)
        if value is None:
            if required:
                self.fail(_join(path, key), "required")
            return ""
        if not isinstance(value, str):
            self.fail(_join(path, key), f"expected a string, found {_type_name(value)}")
            return ""
        return value

    def integer(self, obj: Mapping[str, Any], key: str, path: str, minimum: int | None = None) -> int | None:
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(_join(path, key), f"expected an integer, found {_type_name(value)}")
            return None
        if minimum is not None and value < minimum:
            self.fail(_join(path, key), f"must be at least {minimum}, found {value}")
            return None
        return value

    def boolean(self, obj: Mapping[str, Any], key: str, path: str) -> bool | None:
        value = obj.get(key)
        if value is None or isinstance(value, bool):
            return value
        self.fail(_join(path, key), f"expected true or false, found {_type_name(value)}")
        return None

    def time(self, obj: Mapping[str, Any], key: str, path: str) -> dt.datetime | None:
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, dt.datetime):
            return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        if isinstance(value, str):
            try:
                return parse_time(value)
            except ValueError:
                pass
        self.fail(_join(path, key), f"expected an RFC 3339 time, found {value!r}")
        return None

    def labels(self, obj: Mapping[str, Any], key: str, path: str) -> dict[str, str]:
        raw = self.mapping(obj.get(key), _join(path, key))
        out: dict[str, str] = {}
        for k, v in raw.items():
            if not isinstance(k, str) or not isinstance(v, str):
                self.fail(_join(path, f"{key}.{k}"), f"label keys and values must be strings (quote {v!r})")
            else:
                out[k] = v
        return out

    def known(self, obj: Mapping[str, Any], allowed: set[str], path: str) -> None:
        for key in obj:
            if key not in allowed:
                self.warn(_join(path, str(key)), f"unknown field, not evaluated{did_you_mean(str(key), allowed)}")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number"}.get(
        type(value), type(value).__name__
    )


def parse_time(text: str) -> dt.datetime:
    """RFC 3339 (``2026-01-02T03:04:05Z``) → an aware datetime; raises ValueError."""
    value = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone")
    return value


def _cluster(r: _Reader, obj: dict[str, Any], meta: dict[str, Any], source: str) -> Cluster:
    spec = r.mapping(obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    r.known(spec, _CLUSTER_SPEC, "spec")
    r.known(status, _CLUSTER_STATUS, "status")
    zones = [z for z in r.sequence(spec.get("zones"), "spec.zones") if isinstance(z, str)]
    if not zones and r.string(spec, "zone", "spec"):
        zones = [spec["zone"]]
    taints = []
    for i, raw in enumerate(r.sequence(spec.get("taints"), "spec.taints")):
        path = f"spec.taints[{i}]"
        t = r.mapping(raw, path)
        effect = r.string(t, "effect", path, required=True)
        if effect and effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            r.fail(f"{path}.effect", f"unknown taint effect {effect!r}")
        taint = Taint(r.string(t, "key", path, required=True), r.string(t, "value", path), effect)
        taints.append(Taint(taint.key, taint.value, taint.effect, r.time(t, "timeAdded", path)))
    ready, since = "Unknown" if status.get("conditions") is not None else "True", None
    for i, raw in enumerate(r.sequence(status.get("conditions"), "status.conditions")):
        c = r.mapping(raw, f"status.conditions[{i}]")
        if c.get("type") == "Ready":
            ready = r.string(c, "status", f"status.conditions[{i}]", required=True)
            since = r.time(c, "lastTransitionTime", f"status.conditions[{i}]")
            if ready not in ("True", "False", "Unknown"):
                r.fail(f"status.conditions[{i}].status", f"expected True, False or Unknown, found {ready!r}")
    return Cluster(
        name=r.string(meta, "name", "metadata", required=True),
        labels=r.labels(meta, "labels", "metadata"),
        provider=r.string(spec, "provider", "spec"),
        region=r.string(spec, "region", "spec"),
        zones=tuple(zones),
        taints=tuple(taints),
        ready=ready,
        ready_since=since,
        deleting=meta.get("deletionTimestamp") is not None,
        source=source,
    )


def _eviction_task(r: _Reader, raw: Any, path: str) -> EvictionTask:
    t = r.mapping(raw, path)
    preserved = r.labels(t, "preservedLabelState", path)
    before = [c for c in r.sequence(t.get("clustersBeforeFailover"), f"{path}.clustersBeforeFailover")]
    return EvictionTask(
        from_cluster=r.string(t, "fromCluster", path, required=True),
        purge_mode=r.string(t, "purgeMode", path) or "Gracefully",
        reason=r.string(t, "reason", path),
        message=r.string(t, "message", path),
        producer=r.string(t, "producer", path),
        replicas=r.integer(t, "replicas", path, minimum=0),
        grace_period_seconds=r.integer(t, "gracePeriodSeconds", path),
        suppress_deletion=r.boolean(t, "suppressDeletion", path),
        preserved_label_state=preserved,
        clusters_before_failover=tuple(str(c) for c in before),
        creation_timestamp=r.time(t, "creationTimestamp", path),
    )


def _split_group(r: _Reader, groups: Mapping[str, Any], key: str) -> str | None:
    value = r.string(groups, key, "spec.workloadAffinityGroups")
    return value if key in groups else None


def _binding(r: _Reader, obj: dict[str, Any], meta: dict[str, Any], source: str) -> Binding:
    spec = r.mapping(obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    r.known(spec, _BINDING_SPEC, "spec")
    r.known(status, _BINDING_STATUS, "status")
    resource = r.mapping(spec.get("resource"), "spec.resource")
    if "resource" not in spec:
        r.fail("spec.resource", "required")
    targets = []
    for i, raw in enumerate(r.sequence(spec.get("clusters"), "spec.clusters")):
        t = r.mapping(raw, f"spec.clusters[{i}]")
        targets.append(
            TargetCluster(
                r.string(t, "name", f"spec.clusters[{i}]", required=True),
                r.integer(t, "replicas", f"spec.clusters[{i}]", minimum=0) or 0,
            )
        )
    tasks = [
        _eviction_task(r, raw, f"spec.gracefulEvictionTasks[{i}]")
        for i, raw in enumerate(r.sequence(spec.get("gracefulEvictionTasks"), "spec.gracefulEvictionTasks"))
    ]
    statuses = []
    for i, raw in enumerate(r.sequence(status.get("aggregatedStatus"), "status.aggregatedStatus")):
        path = f"status.aggregatedStatus[{i}]"
        item = r.mapping(raw, path)
        health = r.string(item, "health", path) or "Unknown"
        if health not in ("Healthy", "Unhealthy", "Unknown"):
            r.fail(f"{path}.health", f"expected Healthy, Unhealthy or Unknown, found {health!r}")
        r.known(item, {"clusterName", "status", "applied", "appliedMessage", "health", "healthSince"}, path)
        cluster = r.string(item, "clusterName", path, required=True)
        statuses.append(ClusterStatus(cluster, health, item.get("status"), r.time(item, "healthSince", path)))
    groups = r.mapping(spec.get("workloadAffinityGroups"), "spec.workloadAffinityGroups")
    namespace = r.string(meta, "namespace", "metadata") or r.string(resource, "namespace", "spec.resource")
    return Binding(
        namespace=namespace,
        name=r.string(meta, "name", "metadata", required=True),
        kind=r.string(resource, "kind", "spec.resource", required=True),
        api_version=r.string(resource, "apiVersion", "spec.resource"),
        resource_name=r.string(resource, "name", "spec.resource", required=True),
        replicas=r.integer(spec, "replicas", "spec", minimum=0) or 0,
        clusters=tuple(targets),
        eviction_tasks=tuple(tasks),
        aggregated_status=tuple(statuses),
        affinity_group=_split_group(r, groups, "affinityGroup"),
        anti_affinity_group=_split_group(r, groups, "antiAffinityGroup"),
        observed_affinity_name=r.string(status, "schedulerObservingAffinityName", "status"),
        source=source,
    )


def _workload(r: _Reader, obj: dict[str, Any], meta: dict[str, Any], source: str) -> Workload:
    return Workload(
        api_version=r.string(obj, "apiVersion", "", required=True),
        kind=r.string(obj, "kind", "", required=True),
        namespace=r.string(meta, "namespace", "metadata") or "default",
        name=r.string(meta, "name", "metadata", required=True),
        labels=r.labels(meta, "labels", "metadata"),
        status=obj.get("status"),
        source=source,
    )


def _objects(documents: Iterable[Any], origin: str) -> Iterator[tuple[str, Any]]:
    for index, document in enumerate(documents, start=1):
        if document is None:
            continue
        subject = f"{origin} document {index}" if origin else f"object {index}"
        if isinstance(document, dict) and document.get("kind") == "List" and isinstance(document.get("items"), list):
            for item_index, item in enumerate(document["items"]):
                yield f"{subject} items[{item_index}]", item
        else:
            yield subject, document


class FactSet:
    """Accumulates objects from several sources; `build` resolves workloads into bindings."""

    def __init__(self) -> None:
        self.problems: list[Diagnostic] = []
        self.clusters: dict[str, Cluster] = {}
        self.bindings: dict[str, Binding] = {}
        self.workloads: dict[tuple[str, str, str], Workload] = {}
        self.policies: list[tuple[str, Mapping[str, Any]]] = []
        self.seen: dict[tuple[str, str, str], str] = {}

    def add(self, subject: str, obj: Any) -> None:
        r = _Reader(subject, self.problems)
        if not isinstance(obj, dict):
            r.fail("", f"expected a Kubernetes object (a mapping), found {_type_name(obj)}")
            return
        kind = obj.get("kind")
        meta = r.mapping(obj.get("metadata"), "metadata")
        if not isinstance(kind, str) or not kind:
            r.fail("kind", "required")
            return
        name = meta.get("name") if isinstance(meta.get("name"), str) else "?"
        r.subject = f"{subject} ({kind} {name})"
        before = len(self.problems)
        identity = (kind, str(meta.get("namespace") or ""), str(name))
        if identity in self.seen:
            r.fail(
                "metadata.name",
                f"duplicate {kind} {'/'.join(p for p in identity[1:] if p)} (also in {self.seen[identity]})",
            )
            return
        self.seen[identity] = subject
        if kind in POLICY_KINDS:
            self.policies.append((subject, obj))
            return
        r.known(
            obj,
            _TOP
            | (
                {"data", "binaryData", "stringData", "type", "immutable"}
                if kind not in ("Cluster", "ResourceBinding")
                else set()
            ),
            "",
        )
        if kind == "Cluster":
            cluster = _cluster(r, obj, meta, subject)
            if len(self.problems) == before or not any(p.is_error for p in self.problems[before:]):
                self.clusters[cluster.name] = cluster
        elif kind in ("ResourceBinding", "ClusterResourceBinding"):
            binding = _binding(r, obj, meta, subject)
            if not any(p.is_error for p in self.problems[before:]):
                self.bindings[binding.key] = binding
        else:
            workload = _workload(r, obj, meta, subject)
            if not any(p.is_error for p in self.problems[before:]):
                self.workloads[(workload.kind, workload.namespace, workload.name)] = workload

    def build(self) -> Facts:
        self.problems += convert_objects(self.policies)[1]
        errors = [p for p in self.problems if p.is_error]
        if errors:
            raise FactError(errors)
        bindings = dict(self.bindings)
        by_resource = {(b.kind, b.namespace, b.resource_name): b for b in bindings.values()}
        for (kind, namespace, name), workload in self.workloads.items():
            existing = by_resource.get((kind, namespace, name))
            if existing is not None:
                bindings[existing.key] = _with_labels(existing, workload)
                continue
            pending = Binding(
                namespace=namespace,
                name=binding_name(name, kind),
                kind=kind,
                api_version=workload.api_version,
                resource_name=name,
                labels=workload.labels,
                source=workload.source,
            )
            if pending.key in bindings:
                raise FactError([error(f"binding {pending.key} exists twice", subject=workload.source)])
            bindings[pending.key] = pending
        return Facts(
            clusters=tuple(sorted(self.clusters.values(), key=lambda c: c.name)),
            bindings=tuple(sorted(bindings.values(), key=lambda b: b.key)),
            workloads=tuple(sorted(self.workloads.values(), key=lambda w: (w.namespace, w.kind, w.name))),
            policies=tuple(sorted(self.policies, key=lambda p: p[0])),
            warnings=tuple(p for p in self.problems if not p.is_error),
        )


def _with_labels(binding: Binding, workload: Workload) -> Binding:
    return replace(binding, labels=workload.labels, api_version=binding.api_version or workload.api_version)


def _read_documents(path: Path, shown: str, problems: list[Diagnostic]) -> list[Any]:
    try:
        size = path.stat().st_size
        if size > MAX_FACT_FILE_BYTES:
            problems.append(error(f"{size} bytes; fact files are limited to {MAX_FACT_FILE_BYTES}", subject=shown))
            return []
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        problems.append(error(f"cannot read: {exc.strerror or exc}", subject=shown))
        return []
    except UnicodeDecodeError as exc:
        problems.append(error(f"not UTF-8 text (byte {exc.start})", subject=shown))
        return []
    try:
        documents = list(yaml.load_all(text, Loader=_Loader))
        for number, document in enumerate(documents, 1):
            if _expanded_size(document, MAX_YAML_NODES) > MAX_YAML_NODES:
                message = f"document {number}: YAML aliases expand to more than {MAX_YAML_NODES:,} values"
                problems.append(error(message, subject=shown))
                return []
        return documents
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        problems.append(error(f"{where}invalid YAML: {problem}", subject=shown))
        return []
    except RecursionError:
        problems.append(error("invalid YAML: nested too deeply", subject=shown))
        return []


def fact_files(paths: Sequence[str | Path]) -> list[Path]:
    return expand(paths, FACT_SUFFIXES)


def load_facts(paths: Sequence[str | Path] = (), objects: Iterable[Mapping[str, Any]] = ()) -> Facts:
    """Facts from YAML/JSON files and directories and from Python objects; raises FactError."""
    facts = FactSet()
    for path in fact_files(paths):
        shown = display_path(path)
        problems = len(facts.problems)
        documents = _read_documents(path, shown, facts.problems)
        if not any(d is not None for d in documents) and len(facts.problems) == problems:
            facts.problems.append(warning("no objects in this file", subject=shown))
        for subject, obj in _objects(documents, shown):
            facts.add(subject, obj)
    for subject, obj in _objects(objects, ""):
        facts.add(subject, obj)
    return facts.build()
