"""What a resource template depends on, as Karmada's default resource interpreter says
(pkg/resourceinterpreter/default/native/dependencies.go ``getAllDefaultDependenciesInterpreter``; the pod's part
pkg/util/helper/pod.go ``GetDependenciesFromPodTemplate`` and pkg/util/lifted/visitpod.go, lifted from Kubernetes'
pkg/api/v1/pod ``VisitPodSecretNames`` and ``VisitPodConfigmapNames``).

Each kind below reads its pod template: the ConfigMaps and Secrets its containers (init, ordinary, ephemeral)
take in ``envFrom`` and ``env[].valueFrom``, those its volumes mount (a projected volume's sources too; a
volume's first source only, as the lifted switch reads it), its ``imagePullSecrets``, the Secrets of the
volume plugins that name one (azureFile, cephfs, cinder, flexVolume, rbd, scaleIO, iscsi, storageos, csi), its
``serviceAccountName`` (not "default"), and the PersistentVolumeClaims of its volumes; a StatefulSet's
volumeClaimTemplates are the StatefulSet's own and are no dependencies; an Ingress depends on its TLS Secrets; a
ServiceImport on its derived Service and the EndpointSlices labelled with its name. Names are sorted (Karmada
iterates sets, in no order).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

# pkg/util/names GenerateDerivedServiceName; discovery.k8s.io's label of an EndpointSlice's Service
_DERIVED = "derived-"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"


@dataclass(frozen=True, order=True)
class Dependent:
    """configv1alpha1.DependentObjectReference: by name, or by a label selector (``labels``) when ``name`` is ""."""

    api_version: str
    kind: str
    namespace: str
    name: str = ""
    labels: tuple[tuple[str, str], ...] = ()  # matchLabels


def dependencies(obj: Mapping[str, Any]) -> tuple[Dependent, ...]:
    """The dependencies of a template (a kubectl object), () for a kind the default interpreter has none for."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    meta = _mapping(obj.get("metadata"))
    namespace = str(meta["namespace"]) if isinstance(meta.get("namespace"), str) else ""
    spec = _mapping(obj.get("spec"))
    if (api_version, kind) == ("networking.k8s.io/v1", "Ingress"):
        tls = {str(_mapping(t)["secretName"]) for t in _list(spec.get("tls")) if _mapping(t).get("secretName")}
        return tuple(Dependent("v1", "Secret", namespace, n) for n in sorted(tls))
    if (api_version, kind) == ("multicluster.x-k8s.io/v1alpha1", "ServiceImport"):
        derived = _DERIVED + str(meta.get("name", ""))
        return (
            Dependent("v1", "Service", namespace, derived),
            Dependent("discovery.k8s.io/v1", "EndpointSlice", namespace, labels=((SERVICE_NAME_LABEL, derived),)),
        )
    template = _pod_spec(str(api_version), str(kind), spec)
    if template is None:
        return ()
    found = pod_dependencies(template, namespace)
    if kind == "StatefulSet":  # the claims of its volumeClaimTemplates are its own
        own = {_mapping(_mapping(t).get("metadata")).get("name") for t in _list(spec.get("volumeClaimTemplates"))}
        found = tuple(d for d in found if d.kind != "PersistentVolumeClaim" or d.name not in own)
    return found


def _pod_spec(api_version: str, kind: str, spec: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod spec the kind's interpreter reads (GetPodFromTemplate), None for a kind it has none for."""
    if api_version == "v1" and kind == "Pod":
        return spec
    if api_version == "batch/v1" and kind == "CronJob":
        job = _mapping(_mapping(spec.get("jobTemplate")).get("spec"))
        return _mapping(_mapping(job.get("template")).get("spec"))
    if (api_version, kind) in _TEMPLATED:
        return _mapping(_mapping(spec.get("template")).get("spec"))
    return None


_TEMPLATED = {
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "StatefulSet"),
    ("batch/v1", "Job"),
}
# the volume sources whose Secret VisitPodSecretNames visits, in its switch's order, and where the name is
_SECRET_VOLUMES = (
    ("azureFile", ("secretName",)),
    ("cephfs", ("secretRef", "name")),
    ("cinder", ("secretRef", "name")),
    ("flexVolume", ("secretRef", "name")),
    ("projected", None),
    ("rbd", ("secretRef", "name")),
    ("secret", ("secretName",)),
    ("scaleIO", ("secretRef", "name")),
    ("iscsi", ("secretRef", "name")),
    ("storageos", ("secretRef", "name")),
    ("csi", ("nodePublishSecretRef", "name")),
)


def pod_dependencies(pod: Mapping[str, Any], namespace: str) -> tuple[Dependent, ...]:
    """GetDependenciesFromPodTemplate: ConfigMaps, Secrets, the ServiceAccount and PersistentVolumeClaims."""
    config_maps: set[Any] = set()
    secrets: set[Any] = set()
    claims: set[Any] = set()
    secrets.update(_mapping(r).get("name") for r in _list(pod.get("imagePullSecrets")))
    for container in _containers(pod):
        for source in _list(container.get("envFrom")):
            source = _mapping(source)
            config_maps.add(_mapping(source.get("configMapRef")).get("name"))
            secrets.add(_mapping(source.get("secretRef")).get("name"))
        for variable in _list(container.get("env")):
            value_from = _mapping(_mapping(variable).get("valueFrom"))
            config_maps.add(_mapping(value_from.get("configMapKeyRef")).get("name"))
            secrets.add(_mapping(value_from.get("secretKeyRef")).get("name"))
    for volume in _list(pod.get("volumes")):
        volume = _mapping(volume)
        secrets.update(_volume_secrets(volume))
        config_maps.update(_volume_config_maps(volume))
        claim = _mapping(volume.get("persistentVolumeClaim")).get("claimName")
        if claim:
            claims.add(claim)
    account = pod.get("serviceAccountName")
    out = [Dependent("v1", "ConfigMap", namespace, n) for n in _names(config_maps)]
    out += [Dependent("v1", "Secret", namespace, n) for n in _names(secrets)]
    if isinstance(account, str) and account not in ("", "default"):
        out.append(Dependent("v1", "ServiceAccount", namespace, account))
    out += [Dependent("v1", "PersistentVolumeClaim", namespace, n) for n in _names(claims)]
    return tuple(out)


def _volume_secrets(volume: Mapping[str, Any]) -> list[Any]:
    """The Secrets of the volume's first source among those VisitPodSecretNames' switch reads."""
    for source, path in _SECRET_VOLUMES:
        if volume.get(source) is None:
            continue
        if path is None:  # projected: each of its sources' Secret
            return [_mapping(p.get("secret")).get("name") for p in _projected(volume) if p.get("secret") is not None]
        value: Any = volume[source]
        for step in path:
            value = _mapping(value).get(step)
        return [value]
    return []


def _volume_config_maps(volume: Mapping[str, Any]) -> list[Any]:
    """The ConfigMaps of the volume's first source among those VisitPodConfigmapNames' switch reads."""
    first = _first_of(volume, ("projected", "configMap"))
    if first == "projected":
        return [_mapping(p.get("configMap")).get("name") for p in _projected(volume) if p.get("configMap") is not None]
    if first == "configMap":
        return [_mapping(volume["configMap"]).get("name")]
    return []


def _projected(volume: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for source in _list(_mapping(volume.get("projected")).get("sources")):
        yield _mapping(source)


def _first_of(volume: Mapping[str, Any], sources: tuple[str, ...]) -> str | None:
    return next((s for s in sources if volume.get(s) is not None), None)


def _containers(pod: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """VisitContainers with AllContainers: init containers, containers, ephemeral containers."""
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for container in _list(pod.get(field)):
            yield _mapping(container)


def _names(found: set[Any]) -> list[str]:
    """skipEmptyNames: the non-empty names, sorted."""
    return sorted(n for n in found if isinstance(n, str) and n)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
