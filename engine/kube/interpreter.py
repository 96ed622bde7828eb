"""Which resource kinds Karmada's resource interpreter can judge the health of.

The application failover controller only looks at bindings whose resource has the InterpretHealth
hook (applicationfailover bindingFilter → ResourceInterpreter.HookEnabled): the default interpreter's
kinds (pkg/resourceinterpreter/default/native/healthy.go), the third-party customizations shipped with
Karmada (pkg/resourceinterpreter/default/thirdparty/resourcecustomizations, those with a
healthInterpretation), and what a snapshot adds with ResourceInterpreterCustomization objects
(healthInterpretation) or ResourceInterpreterWebhookConfiguration rules (InterpretHealth or "*").
For any other kind, application failover never fires.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

_NATIVE = {
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "DaemonSet"),
    ("v1", "Service"),
    ("networking.k8s.io/v1", "Ingress"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "Pod"),
    ("policy/v1", "PodDisruptionBudget"),
}
_THIRD_PARTY = {
    ("apps.kruise.io/v1alpha1", "BroadcastJob"),
    ("apps.kruise.io/v1alpha1", "CloneSet"),
    ("apps.kruise.io/v1alpha1", "DaemonSet"),
    ("apps.kruise.io/v1alpha1", "SidecarSet"),
    ("apps.kruise.io/v1alpha1", "UnitedDeployment"),
    ("apps.kruise.io/v1beta1", "StatefulSet"),
    ("argoproj.io/v1alpha1", "Workflow"),
    ("batch.volcano.sh/v1alpha1", "Job"),
    ("flink.apache.org/v1beta1", "FlinkDeployment"),
    ("helm.toolkit.fluxcd.io/v2beta1", "HelmRelease"),
    ("kubeflow.org/v1", "Notebook"),
    ("kubeflow.org/v1", "PyTorchJob"),
    ("kubeflow.org/v1", "TFJob"),
    ("kubeflow.org/v2beta1", "MPIJob"),
    ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"),
    ("kyverno.io/v1", "ClusterPolicy"),
    ("kyverno.io/v1", "Policy"),
    ("ray.io/v1", "RayCluster"),
    ("ray.io/v1", "RayJob"),
    ("ray.io/v1", "RayService"),
    ("source.toolkit.fluxcd.io/v1", "GitRepository"),
    ("source.toolkit.fluxcd.io/v1beta2", "Bucket"),
    ("source.toolkit.fluxcd.io/v1beta2", "HelmChart"),
    ("source.toolkit.fluxcd.io/v1beta2", "HelmRepository"),
    ("source.toolkit.fluxcd.io/v1beta2", "OCIRepository"),
    ("sparkoperator.k8s.io/v1beta2", "SparkApplication"),
}
BUILT_IN_HEALTH = frozenset(_NATIVE | _THIRD_PARTY)


@dataclass(frozen=True)
class HookRule:
    """One rule of a ResourceInterpreterWebhookConfiguration (or a customization's exact target):
    API groups, versions and kinds, each a tuple of names or ("*",)."""

    groups: tuple[str, ...]
    versions: tuple[str, ...]
    kinds: tuple[str, ...]

    def matches(self, api_version: str, kind: str) -> bool:
        group, _, version = api_version.rpartition("/")
        return (
            ("*" in self.groups or group in self.groups)
            and ("*" in self.versions or version in self.versions)
            and ("*" in self.kinds or kind in self.kinds)
        )


def customization_rule(api_version: str, kind: str) -> HookRule:
    group, _, version = api_version.rpartition("/")
    return HookRule((group,), (version,), (kind,))


def health_hook(api_version: str, kind: str, extra: Iterable[HookRule] = ()) -> bool:
    """Whether Karmada can interpret the health of ``kind`` (an unknown apiVersion matches by kind alone)."""
    if not api_version:
        return any(k == kind for _, k in BUILT_IN_HEALTH) or any("*" in r.kinds or kind in r.kinds for r in extra)
    return (api_version, kind) in BUILT_IN_HEALTH or any(r.matches(api_version, kind) for r in extra)
