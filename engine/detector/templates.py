"""Which resource templates Karmada's resource detector sees at all, and the binding it names for each.

The detector's event filter (pkg/detector/detector.go ``ResourceDetector.EventFilter``) drops, before any policy
is matched:

- a template in one of Karmada's reserved namespaces (pkg/util/names ``IsReservedNamespace``: karmada-system,
  karmada-cluster and every ``karmada-es-*``, where the Works live);
- a template in a namespace the controller manager's ``--skipped-propagating-namespaces`` names (regular
  expressions, each anchored as ``^…$``; ``kube-.*`` by default). A cluster-scoped template has the namespace
  "", which a pattern such as ``.*`` matches too, as in Karmada;
- the ConfigMap kube-system/extension-apiserver-authentication, which kube-apiserver makes and manages.

A template it sees gets the binding ``names.GenerateBindingName`` names (engine.inputs.facts.binding_name). The API
server takes a ResourceBinding only with a DNS subdomain for a name, so a template whose binding name is not one (a
ClusterRole named ``a&b``) is never bound.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.detector.policy import Choice
from engine.inputs.facts import Binding, Facts
from engine.kube import validation as k8s
from engine.kube.goregexp import compile_anchored
from engine.results import NotPropagated
from engine.syntax import ast

RESERVED_NAMESPACES = ("karmada-system", "karmada-cluster")
EXECUTION_SPACE_PREFIX = "karmada-es-"


@dataclass(frozen=True)
class SkippedNamespaces:
    """--skipped-propagating-namespaces: the patterns as given and compiled."""

    patterns: tuple[str, ...]
    compiled: tuple[re.Pattern[str], ...]

    def matching(self, namespace: str) -> str | None:
        """The first pattern that matches the namespace (Go's MatchString: the anchors are in the pattern)."""
        for pattern, regexp in zip(self.patterns, self.compiled, strict=True):
            if regexp.search(namespace):
                return pattern
        return None


DEFAULT_SKIPPED_NAMESPACES = SkippedNamespaces(("kube-.*",), (compile_anchored("kube-.*"),))


def priority_class(policy: ast.Policy) -> str | None:
    """The PriorityClass a policy's ``priority class`` statement (spec.schedulePriority) names, if any."""
    named = next((s for s in policy.statements if isinstance(s, ast.SchedulePriority)), None)
    return named.class_name.value if named is not None else None


def is_reserved_namespace(namespace: str) -> bool:
    """names.IsReservedNamespace."""
    return namespace in RESERVED_NAMESPACES or namespace.startswith(EXECUTION_SPACE_PREFIX)


def not_propagated(binding: Binding, skipped: SkippedNamespaces) -> NotPropagated | None:
    """Why the detector does not bind a template (a binding made from a workload), or None when it does."""
    namespace, kind, name = binding.namespace, binding.kind, binding.resource_name

    def because(reason: str, message: str) -> NotPropagated:
        return NotPropagated(binding.key, kind, namespace, name, reason, message)

    if is_reserved_namespace(namespace):
        return because("ReservedNamespace", f"namespace {namespace} is reserved by Karmada")
    pattern = skipped.matching(namespace)
    if pattern is not None:
        where = f"namespace {namespace}" if namespace else 'a cluster-scoped template (namespace "")'
        return because("SkippedNamespace", f"{where} matches --skipped-propagating-namespaces {pattern}")
    if namespace == "kube-system" and kind == "ConfigMap" and name == "extension-apiserver-authentication":
        return because("ManagedByAPIServer", "made and managed by kube-apiserver; the detector never propagates it")
    if k8s.dns1123_subdomain_problems(binding.name):
        message = "its binding's name (NAME-KIND) is not a DNS-1123 subdomain: the API server refuses the binding"
        return because("InvalidBindingName", message)
    return None


def detected(
    bindings: Sequence[Binding], skipped: SkippedNamespaces
) -> tuple[tuple[Binding, ...], tuple[NotPropagated, ...]]:
    """The bindings the scheduler sees (those in the snapshot, whatever their namespace, and those the detector
    makes for the templates it sees), and the templates it does not bind."""
    kept, dropped = [], []
    for binding in bindings:
        why = not_propagated(binding, skipped) if binding.from_workload else None
        if why is None:
            kept.append(binding)
        else:
            dropped.append(why)
    return tuple(kept), tuple(dropped)


def unbuilt_bindings(
    facts: Facts, choices: Mapping[str, Choice], priority_based: bool = True
) -> tuple[NotPropagated, ...]:
    """The templates whose binding the detector fails to build once a policy claims them: a policy's
    schedulePriority names a PriorityClass the snapshot does not hold (BuildResourceBinding: "Failed to get Kube
    PriorityClass", with the PriorityBasedScheduling gate on)."""
    if not priority_based:
        return ()
    out = []
    for binding in facts.bindings:
        policy = choices[binding.key].policy if binding.key in choices else None
        if not binding.from_workload or policy is None:
            continue
        named = priority_class(policy)
        if named is not None and named not in facts.priority_classes:
            message = (
                f"policy {policy.name.value} names the PriorityClass {named}, which the snapshot does "
                "not hold: the detector fails to build its binding (Failed to get Kube PriorityClass)"
            )
            out.append(
                NotPropagated(
                    binding.key,
                    binding.kind,
                    binding.namespace,
                    binding.resource_name,
                    "PriorityClassNotFound",
                    message,
                )
            )
    return tuple(out)
