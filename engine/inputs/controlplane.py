"""The control plane's own flags, read from what runs it: the karmada-controller-manager and karmada-scheduler
Deployments in karmada-system (their containers' command and args, as `kubectl -n karmada-system get deploy -o
yaml` prints them; artifacts/deploy/karmada-controller-manager.yaml and karmada-scheduler.yaml), or a Karmada
operator ``Karmada`` object (operator.karmada.io/v1alpha1: spec.components.karmadaControllerManager and
karmadaScheduler, their featureGates and extraArgs: operator/pkg/apis/operator/v1alpha1/type.go).

Every flag the two components know is taken, each with where it was read: those fleetrules models
(``MODELLED_FLAGS``) set what it computes; the others are said, as not modelled (``UNMODELLED_FLAGS``) or as
changing nothing fleetrules computes (``INERT_FLAGS``: --kubeconfig, --v, …).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NAMESPACE = "karmada-system"
COMPONENTS = {"karmada-controller-manager": "karmadaControllerManager", "karmada-scheduler": "karmadaScheduler"}
# the control plane's flags fleetrules models (engine.karmada.gates.Controllers reads them)
MODELLED_FLAGS = (
    "enable-no-execute-taint-eviction",
    "no-execute-taint-eviction-purge-mode",
    "graceful-eviction-timeout",
    "feature-gates",
    "skipped-propagating-namespaces",
    "enable-taint-manager",
)
# flags of karmada-controller-manager and karmada-scheduler (cmd/controller-manager/app/options, cmd/scheduler/app/
# options, pkg/sharedcli, pkg/controllers/federatedhpa/config) that change what fleetrules computes, which it does
# not model: taken, and said (the answer is as with Karmada's default)
UNMODELLED_FLAGS = frozenset({
    "controllers", "plugins", "skipped-propagating-apis", "enable-empty-workload-propagation",
    "enable-scheduler-estimator", "disable-scheduler-estimator-in-pull-mode", "enable-cluster-resource-modeling",
    "resource-eviction-rate",
})  # fmt: skip
# their flags that change nothing fleetrules computes from a snapshot (connections, concurrency, leader election,
# servers, logging, the cluster status controller's periods, FederatedHPA): taken, and said to be ignored
INERT_FLAGS = frozenset({
    "kubeconfig", "master", "scheduler-name", "cluster-api-burst", "cluster-api-context", "cluster-api-kubeconfig",
    "cluster-api-qps", "cluster-cache-sync-timeout", "cluster-failure-threshold", "cluster-monitor-grace-period",
    "cluster-monitor-period", "cluster-startup-grace-period", "cluster-status-update-frequency",
    "cluster-success-threshold", "concurrent-cluster-propagation-policy-syncs", "concurrent-cluster-syncs",
    "concurrent-clusterresourcebinding-syncs", "concurrent-dependent-resource-syncs", "concurrent-namespace-syncs",
    "concurrent-propagation-policy-syncs", "concurrent-resource-template-syncs", "concurrent-resourcebinding-syncs",
    "concurrent-work-syncs", "enable-pprof", "federated-resource-quota-sync-period", "health-probe-bind-address",
    "kube-api-burst", "kube-api-qps", "leader-elect", "leader-elect-lease-duration", "leader-elect-renew-deadline",
    "leader-elect-resource-name", "leader-elect-resource-namespace", "leader-elect-retry-period",
    "metrics-bind-address", "profiling-bind-address", "rate-limiter-base-delay", "rate-limiter-bucket-size",
    "rate-limiter-max-delay", "rate-limiter-qps", "resync-period", "insecure-skip-estimator-verify",
    "scheduler-estimator-ca-file", "scheduler-estimator-cert-file", "scheduler-estimator-key-file",
    "scheduler-estimator-port", "scheduler-estimator-service-namespace", "scheduler-estimator-service-prefix",
    "scheduler-estimator-timeout", "horizontal-pod-autoscaler-cpu-initialization-period",
    "horizontal-pod-autoscaler-downscale-delay", "horizontal-pod-autoscaler-downscale-stabilization",
    "horizontal-pod-autoscaler-initial-readiness-delay", "horizontal-pod-autoscaler-sync-period",
    "horizontal-pod-autoscaler-tolerance", "horizontal-pod-autoscaler-upscale-delay",
    # klog and component-base's logs (cmd/scheduler/app/scheduler.go: logs.AddFlags, klogflag.Add)
    "v", "vmodule", "add_dir_header", "alsologtostderr", "log_backtrace_at", "log_dir", "log_file",
    "log_file_max_size", "logtostderr", "one_output", "skip_headers", "skip_log_headers", "stderrthreshold",
    "logging-format", "log-flush-frequency", "log-json-info-buffer-size", "log-json-split-stream",
    "log-text-info-buffer-size", "log-text-split-stream",
})  # fmt: skip
KNOWN_FLAGS = frozenset(MODELLED_FLAGS) | UNMODELLED_FLAGS | INERT_FLAGS
# pflag: `--flag` alone is `--flag=true`
BOOL_FLAGS = frozenset({
    "enable-no-execute-taint-eviction", "enable-taint-manager", "leader-elect", "enable-pprof",
    "enable-scheduler-estimator", "enable-cluster-resource-modeling", "enable-empty-workload-propagation",
    "disable-scheduler-estimator-in-pull-mode", "insecure-skip-estimator-verify", "add_dir_header",
    "alsologtostderr", "logtostderr", "one_output", "skip_headers", "skip_log_headers", "log-json-split-stream",
    "log-text-split-stream",
})  # fmt: skip


@dataclass(frozen=True)
class ControlPlaneFlag:
    flag: str  # FLAG=VALUE, as --controller takes it
    component: str  # karmada-controller-manager or karmada-scheduler
    source: str  # the object it was read from, and where


def component_of(kind: str, namespace: str, name: str) -> str | None:
    """The component a Deployment runs, when it is one of the control plane's."""
    return name if kind == "Deployment" and namespace == NAMESPACE and name in COMPONENTS else None


def deployment_flags(obj: Mapping[str, Any], known: Collection[str] = KNOWN_FLAGS) -> list[str]:
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


def command_line_flags(words: Sequence[str], known: Collection[str]) -> list[str]:
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


def operator_flags(obj: Mapping[str, Any], known: Collection[str] = KNOWN_FLAGS) -> dict[str, list[str]]:
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
