"""Karmada objects → facts (engine.inputs.facts), from YAML files or Python objects.

Objects come from YAML or JSON files (multi-document, ``kind: List`` expanded) or from Python
dicts shaped like what ``kubectl get -o yaml`` prints. Everything is validated on the way in:
a wrong object raises FactError at the field's ``file:line:col`` (a Python object: its number and the
field), and a field that fleetrules does not know is reported as a warning, not dropped in silence.

Each object is read by engine.inputs.kinds, on engine.inputs.reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.codes import Code
from engine.collector import with_fewer_collections
from engine.errors import Diagnostic, FactError, Span, UsageError, error, warning
from engine.inputs import controlplane
from engine.inputs.controlplane import ControlPlaneFlag
from engine.inputs.converting import PolicyObject
from engine.inputs.facts import (
    Binding,
    Cluster,
    Facts,
    TaintPolicy,
    Workload,
    binding_name,
    claim_of,
)
from engine.inputs.files import Paths, display_path, expand
from engine.inputs.kinds import (
    CLUSTER_SCOPED,
    INTERPRETER_KINDS,
    check_metadata,
    not_propagated,
    read_binding,
    read_cluster,
    read_health_hooks,
    read_workload,
    unnamed,
)
from engine.inputs.marks import Document, Marks
from engine.inputs.matching import taint_by_policies
from engine.inputs.policies import POLICY_KINDS, convert_objects
from engine.inputs.reader import TOP_FIELDS, Reader, type_name
from engine.inputs.taint_policies import convert_taint_policies
from engine.inputs.yaml import load_text, read_text
from engine.kube.interpreter import HookRule

FACT_SUFFIXES = (".yaml", ".yml", ".json")


def _objects(documents: Iterable[Document], origin: str) -> Iterator[tuple[str, Any, Marks | None, Span | None]]:
    """(subject, object, marks, where the document begins) of each object; ``kind: List`` expanded, and a typed
    list as the API server returns one (``DeploymentList``, ``ClusterList``: its items without their kind and
    apiVersion, which are the list's). A list whose ``items`` is null, as an empty one, has no objects."""
    for document in documents:
        value, marks = document.value, document.marks if origin else None
        if value is None:
            continue
        subject = f"{origin} document {document.index}" if origin else f"object {document.index}"
        at = None
        if marks is not None and document.start is not None:
            at = Span(marks.file, *document.start, document.start[0], document.start[1] + 1)
        kind = value.get("kind") if isinstance(value, dict) else None
        if isinstance(kind, str) and kind.endswith("List") and "items" in value and value.get("items") is None:
            continue
        if isinstance(kind, str) and kind.endswith("List") and isinstance(value.get("items"), list):
            typed = kind[: -len("List")] if kind != "List" else ""
            for item_index, item in enumerate(value["items"]):
                if typed and isinstance(item, dict) and "kind" not in item:
                    item = _typed(item, typed, value.get("apiVersion"), marks)
                yield f"{subject} items[{item_index}]", item, marks, None
        else:
            yield subject, value, marks, at


def _typed(item: dict[str, Any], kind: str, api_version: Any, marks: Marks | None) -> dict[str, Any]:
    """An item of a typed list with the kind and apiVersion the list gives it, at the item's position."""
    out = {"apiVersion": api_version, "kind": kind, **item} if isinstance(api_version, str) else {"kind": kind, **item}
    if marks is not None:
        marks.alias(out, item)
    return out


class FactSet:
    """Accumulates objects from several sources; `build` resolves workloads into bindings."""

    def __init__(self) -> None:
        self.problems: list[Diagnostic] = []
        self.clusters: dict[str, Cluster] = {}
        self.bindings: dict[str, Binding] = {}
        self.workloads: dict[tuple[str, str, str], Workload] = {}
        self.policies: list[PolicyObject] = []
        self.seen: dict[tuple[str, str, str], str] = {}
        self.sources: dict[str, str] = {}  # the text of each file, to show the lines problems are on
        self.taint_policies: list[PolicyObject] = []  # ClusterTaintPolicy objects
        self.health_hooks: list[HookRule] = []  # kinds a snapshot's interpreter objects can judge the health of
        self.priority_classes: dict[str, int] = {}  # the PriorityClasses' values, by name (schedulePriority)
        self.control_plane: list[ControlPlaneFlag] = []  # the flags its components' objects run with

    def add(self, subject: str, obj: Any, marks: Marks | None = None, at: Span | None = None) -> None:
        """Read one object; ``at``: where its document begins (what a value that is no mapping is reported at)."""
        r = Reader(subject, self.problems, obj, marks)
        if not isinstance(obj, dict):
            message = f"expected a Kubernetes object (a mapping), found {type_name(obj)}"
            if at is not None and not isinstance(obj, list):
                self.problems.append(error(message, at, code=Code.OBJECT))
            else:
                r.fail("", message)
            return
        kind = obj.get("kind")
        meta = r.mapping(obj.get("metadata"), "metadata")
        if not isinstance(kind, str) or not kind:
            r.fail("kind", "required")
            return
        name = meta.get("name") if isinstance(meta.get("name"), str) else "?"
        r.subject = f"{subject} ({kind} {name})"
        r.what = f"{kind} {name}"
        position = marks.position(obj) if marks is not None else None
        where = f"{marks.file}:{position.line}" if marks is not None and position is not None else subject
        before = len(self.problems)
        # keyed as the API server keys it: a namespaced object given without a namespace is in "default"
        namespace = str(meta.get("namespace") or ("" if kind in CLUSTER_SCOPED else "default"))
        identity = (kind, namespace, str(name))
        if identity in self.seen:
            r.fail(
                "metadata.name",
                f"duplicate {kind} {'/'.join(p for p in identity[1:] if p)} (also at {self.seen[identity]})",
            )
            return
        self.seen[identity] = where
        check_metadata(r, kind, meta)
        if kind != "Cluster" and isinstance(meta.get("name"), str) and unnamed(r, obj, kind, meta["name"]):
            return
        if kind in POLICY_KINDS:
            self.policies.append(PolicyObject(where, obj, marks))
            return
        if kind in INTERPRETER_KINDS and str(obj.get("apiVersion", "")).startswith("config.karmada.io/"):
            self.health_hooks += read_health_hooks(r, obj)
            return
        if kind == "ClusterTaintPolicy" and str(obj.get("apiVersion", "")).startswith("policy.karmada.io/"):
            self.taint_policies.append(PolicyObject(where, obj, marks))
            return
        component = controlplane.component_of(kind, namespace, str(name))
        if component is not None:  # still a template too (of a reserved namespace: never propagated)
            read = f"Deployment {namespace}/{name} ({where})"
            self.control_plane += [ControlPlaneFlag(f, component, read) for f in controlplane.deployment_flags(obj)]
        if kind == "Karmada" and str(obj.get("apiVersion", "")).startswith("operator.karmada.io/"):
            read = f"Karmada {namespace}/{name} ({where})"
            for component, flags in controlplane.operator_flags(obj).items():
                self.control_plane += [ControlPlaneFlag(f, component, read) for f in flags]
            return
        if kind == "PriorityClass" and str(obj.get("apiVersion", "")).startswith("scheduling.k8s.io/"):
            value = r.integer(obj, "value", "", minimum=-(2**31))  # still a template too, which policies may select
            if value is not None:
                self.priority_classes[str(name)] = value
        if kind not in ("Cluster", "ResourceBinding", "ClusterResourceBinding") and not_propagated(obj):
            return  # the detector never sees it: not a resource template
        if kind in ("Cluster", "ResourceBinding", "ClusterResourceBinding"):
            r.known(obj, TOP_FIELDS, "")  # a resource template's other fields are its content: propagated, not read
        if kind == "Cluster":
            cluster = read_cluster(r, obj, meta, where)
            if len(self.problems) == before or not any(p.is_error for p in self.problems[before:]):
                self.clusters[cluster.name] = cluster
        elif kind in ("ResourceBinding", "ClusterResourceBinding"):
            binding = read_binding(r, obj, meta, where)
            if not any(p.is_error for p in self.problems[before:]):
                self.bindings[binding.key] = binding
        else:
            workload = read_workload(r, obj, meta, where)
            if not any(p.is_error for p in self.problems[before:]):
                self.workloads[(workload.kind, workload.namespace, workload.name)] = workload

    def build(self) -> Facts:
        policies, problems = convert_objects(sorted(self.policies, key=lambda p: p.source))
        self.problems += problems
        taint_policies, problems = convert_taint_policies(sorted(self.taint_policies, key=lambda p: p.source))
        self.problems += problems
        clusters = self._tainted(taint_policies) if taint_policies else self.clusters
        errors = [p for p in self.problems if p.is_error]
        if errors:
            raise FactError(errors, self.sources)
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
                replicas=workload.replicas,
                requirements=workload.requirements,
                uid=workload.uid,
                labels=workload.labels,
                source=workload.source,
                claim=claim_of(workload.labels, workload.annotations),
                cluster_scoped=not namespace,  # Karmada makes a ClusterResourceBinding for it
                from_workload=True,
                dependencies=workload.dependencies,
            )
            other = bindings.get(pending.key)
            if other is not None:  # two names GenerateBindingName makes one of (``a:b`` and ``a.b``): one is bound
                message = (
                    f"{kind} {name}: not bound: its binding {pending.key} is {other.kind} {other.resource_name}'s "
                    "(Karmada's detector: failed to update binding due to different owner reference UID; which "
                    "template holds it depends on which the detector saw first)"
                )
                self.problems.append(warning(message, subject=workload.source, code=Code.OBJECT))
                continue
            bindings[pending.key] = pending
        return Facts(
            clusters=tuple(sorted(clusters.values(), key=lambda c: c.name)),
            bindings=tuple(sorted(bindings.values(), key=lambda b: b.key)),
            workloads=tuple(sorted(self.workloads.values(), key=lambda w: (w.namespace, w.kind, w.name))),
            policies=tuple(policies),
            warnings=tuple(p for p in self.problems if not p.is_error),
            health_hooks=tuple(self.health_hooks),
            taint_policies=tuple(taint_policies),
            priority_classes=dict(sorted(self.priority_classes.items())),
            control_plane=tuple(self.control_plane),
            shown_clusters=tuple(sorted(self.clusters.values(), key=lambda c: c.name))
            if clusters != self.clusters
            else (),
        )

    def _tainted(self, policies: list[TaintPolicy]) -> dict[str, Cluster]:
        """The clusters as the ClusterTaintPolicy controller leaves them when it reconciles each (it does at once,
        and whenever a cluster's conditions change): a control plane's dump already shows its taints, and then
        nothing changes; a taint it adds is stamped with the latest transition of the conditions the policies
        read (the change that made the controller act). What changed is said where the Failover gate, which
        starts the controller, is known (engine.karmada.notes.scheduling_gate_notes)."""
        read = {m.type for p in policies for m in (*p.add_on, *p.remove_on)}
        out = {}
        for name, cluster in self.clusters.items():
            times = [c.since for c in cluster.conditions if c.type in read and c.since is not None]
            out[name] = taint_by_policies(cluster, policies, max(times, default=None))
        return out


def _with_labels(binding: Binding, workload: Workload) -> Binding:
    """The binding with its resource template's labels, and the template's claim (the detector reads it there)."""
    claim = claim_of(workload.labels, workload.annotations) or binding.claim
    api_version = binding.api_version or workload.api_version
    return replace(
        binding,
        labels=workload.labels,
        api_version=api_version,
        claim=claim,
        uid=binding.uid or workload.uid,
        dependencies=workload.dependencies,
    )


def fact_files(paths: Paths) -> list[Path]:
    return expand(paths, FACT_SUFFIXES)


@with_fewer_collections(off=True)
def load_facts(
    paths: Paths = (), objects: Iterable[Mapping[str, Any]] = (), texts: Iterable[tuple[str, str]] = ()
) -> Facts:
    """Facts from YAML/JSON files and directories and from Python objects; raises FactError (and
    UsageError for arguments of the wrong kind)."""
    if isinstance(objects, (Mapping, str, bytes)) or not isinstance(objects, Iterable):
        raise UsageError(f"objects: expected a list of Kubernetes objects (mappings), found {type(objects).__name__}")
    if isinstance(texts, (Mapping, str, bytes)) or not isinstance(texts, Iterable):
        raise UsageError(f"texts: expected a list of (name, text) pairs, found {type(texts).__name__}")
    texts = list(texts)
    for item in texts:
        if not (isinstance(item, tuple) and len(item) == 2 and all(isinstance(x, str) for x in item)):
            raise UsageError(f"texts: expected (name, text) pairs of strings, found {item!r:.60}")
    facts = FactSet()
    read: list[tuple[str, str | None, list[Diagnostic]]] = []
    for path in fact_files(paths):
        shown = display_path(path)
        read.append((shown, *read_text(path, shown, "fact files")))
    read += [(name, text, []) for name, text in texts]  # YAML or JSON already read (standard input)
    for shown, text, problems in read:
        documents: list[Document] = []
        if text is not None:
            facts.sources[shown] = text
            documents, problems = load_text(text, shown)
        facts.problems += problems
        if not any(d.value is not None for d in documents) and not problems:
            facts.problems.append(warning("no objects in this file", subject=shown, code=Code.OBJECT))
        for subject, obj, marks, at in _objects(documents, shown):
            facts.add(subject, obj, marks, at)
    python = [Document(obj, index, Marks("<python>")) for index, obj in enumerate(objects, start=1)]
    for subject, obj, marks, at in _objects(python, ""):
        facts.add(subject, obj, marks, at)
    return facts.build()
