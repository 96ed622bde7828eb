"""The control plane's own flags, read from what runs it: the karmada-controller-manager and karmada-scheduler
Deployments in karmada-system (their containers' command and args, as `kubectl -n karmada-system get deploy -o
yaml` prints them; artifacts/deploy/karmada-controller-manager.yaml and karmada-scheduler.yaml), or a Karmada
operator ``Karmada`` object (operator.karmada.io/v1alpha1: spec.components.karmadaControllerManager and
karmadaScheduler, their featureGates and extraArgs: operator/pkg/apis/operator/v1alpha1/type.go).

Only the flags fleetrules models are taken (``MODELLED_FLAGS``), each with where it was read; the others
(--kubeconfig, --v, --controllers, …) change nothing fleetrules computes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NAMESPACE = "karmada-system"
COMPONENTS = {"karmada-controller-manager": "karmadaControllerManager", "karmada-scheduler": "karmadaScheduler"}
BOOL_FLAGS = frozenset({"enable-no-execute-taint-eviction"})  # pflag: `--flag` alone is `--flag=true`
# the control plane's flags fleetrules models (engine.failover.controllers.Controllers reads them)
MODELLED_FLAGS = (
    "enable-no-execute-taint-eviction",
    "no-execute-taint-eviction-purge-mode",
    "graceful-eviction-timeout",
    "feature-gates",
    "skipped-propagating-namespaces",
)


@dataclass(frozen=True)
class ControlPlaneFlag:
    flag: str  # FLAG=VALUE, as --controller takes it
    component: str  # karmada-controller-manager or karmada-scheduler
    source: str  # the object it was read from, and where


def component_of(kind: str, namespace: str, name: str) -> str | None:
    """The component a Deployment runs, when it is one of the control plane's."""
    return name if kind == "Deployment" and namespace == NAMESPACE and name in COMPONENTS else None


def deployment_flags(obj: Mapping[str, Any], known: Sequence[str] = MODELLED_FLAGS) -> list[str]:
    """The ``known`` flags of a Deployment's containers, as FLAG=VALUE, in the order written (pflag: a later one
    of the same flag wins, and --feature-gates adds to the earlier)."""
    spec = obj.get("spec")
    template = spec.get("template") if isinstance(spec, dict) else None
    pod = template.get("spec") if isinstance(template, dict) else None
    containers = pod.get("containers") if isinstance(pod, dict) else None
    out: list[str] = []
    for container in containers if isinstance(containers, list) else []:
        if not isinstance(container, dict):
            continue
        words = [w for key in ("command", "args") for w in (container.get(key) or []) if isinstance(w, str)]
        out += command_line_flags(words, known)
    return out


def command_line_flags(words: Sequence[str], known: Sequence[str]) -> list[str]:
    """``--flag=value``, ``--flag value`` and a bool ``--flag`` among ``words``, the ``known`` ones as FLAG=VALUE."""
    out = []
    for index, word in enumerate(words):
        if not word.startswith("-"):
            continue
        name, sep, value = word.lstrip("-").partition("=")
        if name not in known:
            continue
        if not sep and name in BOOL_FLAGS:
            value = "true"
        elif not sep:  # pflag: the next word is the value (a component missing it would not have started)
            if index + 1 >= len(words):
                continue
            value = words[index + 1]
        out.append(f"{name}={value}")
    return out


def operator_flags(obj: Mapping[str, Any], known: Sequence[str] = MODELLED_FLAGS) -> dict[str, list[str]]:
    """A Karmada operator object's flags by component: featureGates as one --feature-gates (by name), then each
    known extraArg."""
    spec = obj.get("spec")
    components = spec.get("components") if isinstance(spec, dict) else None
    out: dict[str, list[str]] = {}
    for component, field in COMPONENTS.items():
        settings = components.get(field) if isinstance(components, dict) else None
        if not isinstance(settings, dict):
            continue
        flags = []
        gates = settings.get("featureGates")
        if isinstance(gates, dict) and gates:
            listed = ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in sorted(gates.items()))
            flags.append(f"feature-gates={listed}")
        extra = settings.get("extraArgs")
        if isinstance(extra, dict):
            flags += [f"{k}={v}" for k, v in sorted(extra.items()) if k in known]
        if flags:
            out[component] = flags
    return out
