"""The dependencies distributor (karmada pkg/dependenciesdistributor): with propagateDeps, what a scheduled workload
references goes where the workload goes.

For each binding whose policy says ``propagate dependencies`` (spec.propagateDeps; an application failover block
implies it, as Karmada's webhook requires it) and that has clusters (the distributor drops one not scheduled yet),
the resource interpreter's dependencies of its template (engine.kube.dependencies) are looked up in the snapshot
(``handleDependentResource``: by name, or every object a label selector matches; one the snapshot does not hold is
passed over, and said here). Each found object gets an attached binding (``buildAttachedBinding``): in the
workload binding's namespace, named as the detector names bindings (names.GenerateBindingName), with the binding in
its ``spec.requiredBy`` with that binding's clusters; several workloads requiring one object share its binding
(``mergeBindingSnapshot``). Its Works go to every cluster of its requiredBy and, where a policy of its own places it
too, to that placement's clusters (the binding controller's mergeTargetClusters). The PropagateDeps gate is on
unless a control plane turns it off, which fleetrules does not model.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace

from engine.inputs.facts import Binding, Workload, binding_name
from engine.kube.dependencies import Dependent
from engine.results import Attached, Dependency, Placement
from engine.syntax import ast


def propagates(policy: ast.Policy) -> bool:
    """spec.propagateDeps: ``propagate dependencies``, or an application failover block (which Karmada's webhook
    admits only with propagateDeps, and which fleetrules writes with it: engine.render.karmada)."""
    return any(
        isinstance(s, ast.PropagateDeps) or (isinstance(s, ast.Failover) and s.kind.value == "application")
        for s in policy.statements
    )


class Templates:
    """The snapshot's resource templates, as the distributor fetches them: by name, or by labels."""

    def __init__(self, workloads: Sequence[Workload]) -> None:
        self.by_name = {(w.api_version, w.kind, w.namespace, w.name): w for w in workloads}
        self.by_kind: dict[tuple[str, str, str], list[Workload]] = defaultdict(list)
        for w in workloads:
            self.by_kind[(w.api_version, w.kind, w.namespace)].append(w)

    def fetch(self, dependent: Dependent) -> list[Workload]:
        if dependent.name:
            found = self.by_name.get((dependent.api_version, dependent.kind, dependent.namespace, dependent.name))
            return [found] if found is not None else []
        wanted = dependent.labels
        return sorted(
            (
                w
                for w in self.by_kind.get((dependent.api_version, dependent.kind, dependent.namespace), ())
                if all(w.labels.get(k) == v for k, v in wanted)
            ),
            key=lambda w: w.name,
        )


def attached_key(binding: Binding, template: Workload) -> str:
    """The attached binding of ``template`` for ``binding``: in the binding's namespace, named as the detector names
    bindings (buildAttachedBinding)."""
    name = binding_name(template.name, template.kind)
    return f"{binding.namespace}/{name}" if binding.namespace else name


def dependency_keys(
    bindings: Sequence[Binding], policies: Mapping[str, ast.Policy | None], workloads: Sequence[Workload]
) -> dict[str, tuple[str, ...]]:
    """Each binding whose policy propagates dependencies → the attached bindings of those the snapshot holds (what
    a sweep follows when the binding moves)."""
    templates = Templates(workloads)
    out = {}
    for binding in bindings:
        policy = policies.get(binding.key)
        if policy is None or not binding.dependencies or not propagates(policy):
            continue
        keys = {attached_key(binding, t) for d in binding.dependencies for t in templates.fetch(d)}
        if keys:
            out[binding.key] = tuple(sorted(keys))
    return out


def distribute(
    placements: Sequence[Placement],
    bindings: Mapping[str, Binding],
    policies: Mapping[str, ast.Policy | None],
    workloads: Sequence[Workload],
) -> tuple[tuple[Placement, ...], tuple[Attached, ...]]:
    """The placements with their dependencies, and the attached bindings, by key."""
    templates: Templates | None = None  # made when a placement needs it (a fleet of custom resources: never)
    required: dict[str, list[tuple[str, tuple[str, ...]]]] = defaultdict(list)  # attached key → (requirer, clusters)
    objects: dict[str, Workload] = {}
    placed = {p.binding: p for p in placements}
    out = []
    for p in placements:
        binding, policy = bindings.get(p.binding), policies.get(p.binding)
        if binding is None or policy is None or not p.clusters or not binding.dependencies or not propagates(policy):
            out.append(p)
            continue
        found: list[Dependency] = []
        templates = templates or Templates(workloads)
        for dependent in binding.dependencies:
            selector = ",".join(f"{k}={v}" for k, v in dependent.labels)
            matched = templates.fetch(dependent)
            if not matched:
                found.append(Dependency(dependent.kind, dependent.name, selector=selector))
            for template in matched:
                key = attached_key(binding, template)
                objects[key] = template
                required[key].append((p.binding, p.clusters))
                found.append(Dependency(template.kind, template.name, key, selector))
        out.append(replace(p, dependencies=tuple(found)))
    attached = []
    for key in sorted(required):
        template, requirers = objects[key], sorted(required[key])
        own = placed.get(key)
        own_clusters = own.clusters if own is not None and own.policy is not None else ()
        clusters = sorted({c for _, cs in requirers for c in cs} | set(own_clusters))
        attached.append(
            Attached(
                key,
                template.kind,
                template.namespace,
                template.name,
                tuple(r for r, _ in requirers),
                tuple(clusters),
                tuple(own_clusters),
            )
        )
    return tuple(out), tuple(attached)
