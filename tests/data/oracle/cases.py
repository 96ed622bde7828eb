"""Random scheduling cases for Karmada's own generic scheduler (tests/data/oracle/main.go) and fleetrules.

    python tests/data/oracle/cases.py COUNT SEED > tests/data/oracle/cases.json

Each case: 1-6 clusters (labels, provider, region, zones, NoSchedule/NoExecute taints, the API enablement of
apps/v1 Deployment or not, a resource summary) and one fresh ResourceBinding spec (a Deployment's replicas and
CPU request; cluster affinity by names, exclusions, labels and fields; tolerations; a spread constraint by
cluster or region; Duplicated, Aggregated, static weights or dynamic weights; in three cases of ten, the clusters
it was scheduled to before)."""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from typing import Any


def cluster(rng: random.Random, i: int) -> dict[str, Any]:
    name = f"m{i}"
    labels = {"env": rng.choice(["prod", "dev"])} if rng.random() < 0.8 else {}
    spec: dict[str, Any] = {}
    if rng.random() < 0.8:
        spec["region"] = rng.choice(["r1", "r2", "r3"])
    if rng.random() < 0.5:
        spec["provider"] = rng.choice(["p1", "p2"])
    if rng.random() < 0.4:
        spec["zones"] = rng.sample(["z1", "z2", "z3"], rng.randint(1, 2))
    taints = []
    if rng.random() < 0.25:
        taints.append({"key": "maintenance", "effect": "NoSchedule"})
    if rng.random() < 0.15:
        taints.append({"key": "drain", "effect": rng.choice(["NoSchedule", "NoExecute"])})
    if taints:
        spec["taints"] = taints
    resources = [{"name": "deployments", "kind": "Deployment"}] if rng.random() < 0.9 else []
    cpu = rng.choice([0, 2, 4, 8, 16])
    status = {
        "apiEnablements": [{"groupVersion": "apps/v1", "resources": resources}],
        "resourceSummary": {
            "allocatable": {"cpu": str(cpu), "pods": "110", "memory": "64Gi"},
            "allocated": {"cpu": str(rng.randint(0, cpu)), "pods": "10", "memory": "8Gi"},
        },
    }
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, **({"labels": labels} if labels else {})},
        "spec": spec,
        "status": status,
    }


def placement(rng: random.Random, names: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    affinity: dict[str, Any] = {}
    if rng.random() < 0.3:
        affinity["clusterNames"] = sorted(rng.sample(names, rng.randint(1, len(names))))
    if rng.random() < 0.2:
        affinity["exclude"] = sorted(rng.sample(names, 1))
    if rng.random() < 0.3:
        affinity["labelSelector"] = {"matchLabels": {"env": "prod"}}
    if rng.random() < 0.2:
        op = rng.choice(["In", "NotIn"])
        affinity["fieldSelector"] = {"matchExpressions": [{"key": "region", "operator": op, "values": ["r1"]}]}
    if affinity:
        out["clusterAffinity"] = affinity
    if rng.random() < 0.3:
        out["clusterTolerations"] = [{"key": "maintenance", "operator": "Exists", "effect": "NoSchedule"}]
    if rng.random() < 0.3:
        field = rng.choice(["cluster", "region"])
        low = rng.randint(1, 2)
        out["spreadConstraints"] = [{"spreadByField": field, "minGroups": low, "maxGroups": rng.randint(low, 3)}]
        if field == "region":  # the webhook: a spread by region needs one by cluster too
            out["spreadConstraints"].append({"spreadByField": "cluster", "minGroups": 1})
    kind = rng.choice(["Duplicated", "Aggregated", "Static", "Dynamic"])
    if kind == "Duplicated":
        out["replicaScheduling"] = {"replicaSchedulingType": "Duplicated"}
    elif kind == "Aggregated":
        out["replicaScheduling"] = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
    elif kind == "Static":
        weights = [
            {"targetCluster": {"clusterNames": [n]}, "weight": rng.randint(1, 3)}
            for n in rng.sample(names, rng.randint(1, len(names)))
        ]
        out["replicaScheduling"] = {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": weights},
        }
    else:
        out["replicaScheduling"] = {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"dynamicWeight": "AvailableReplicas"},
        }
    return out


def case(rng: random.Random) -> dict[str, Any]:
    clusters = [cluster(rng, i) for i in range(1, rng.randint(1, 6) + 1)]
    names = [c["metadata"]["name"] for c in clusters]
    spec: dict[str, Any] = {
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "n", "name": "w", "uid": "u-1"},
        "replicas": rng.randint(1, 6),
        "placement": placement(rng, names),
    }
    if rng.random() < 0.7:
        spec["replicaRequirements"] = {"resourceRequest": {"cpu": rng.choice(["500m", "1", "2"])}}
    if rng.random() < 0.3:  # scheduled before: its targets (some maybe no longer fit), a reschedule now
        spec["clusters"] = [
            {"name": n, "replicas": rng.randint(1, 3)} for n in sorted(rng.sample(names, rng.randint(1, len(names))))
        ]
    return {"clusters": clusters, "spec": spec}


NOW = "2026-12-02T10:00:00Z"


def taint_case(rng: random.Random) -> dict[str, Any]:
    """One decision of the taint manager: 0-3 taints of a cluster (NoExecute or not, with their time), 0-3
    tolerations of a placement (valid as the webhook admits them), and the time."""
    taints = []
    for _ in range(rng.randint(0, 3)):
        taint: dict[str, Any] = {"key": rng.choice(["a", "b"]), "effect": rng.choice(["NoExecute", "NoSchedule"])}
        if rng.random() < 0.3:
            taint["value"] = "x"
        if rng.random() < 0.9:
            taint["timeAdded"] = f"2026-12-02T09:{rng.randint(50, 59):02d}:{rng.randint(0, 59):02d}Z"
        taints.append(taint)
    tolerations = []
    for _ in range(rng.randint(0, 3)):
        key = rng.choice(["", "a", "b"])
        operator = "Exists" if not key else rng.choice(["Exists", "Equal", ""])
        toleration: dict[str, Any] = {"key": key, "operator": operator} if operator else {"key": key}
        if operator != "Exists" and rng.random() < 0.5:
            toleration["value"] = "x"
        effect = rng.choice(["", "NoExecute", "NoSchedule"])
        if effect:
            toleration["effect"] = effect
        if rng.random() < 0.6:
            toleration["tolerationSeconds"] = rng.choice([0, 30, 300, 900])
        tolerations.append(toleration)
    return {"taints": taints, "tolerations": tolerations, "now": NOW}


def _selectors(rng: random.Random, namespace: str | None) -> list[dict[str, Any]]:
    out = []
    for _ in range(rng.randint(1, 2)):
        kind = rng.choice([("apps/v1", "Deployment"), ("v1", "ConfigMap")])
        selector: dict[str, Any] = {"apiVersion": kind[0], "kind": kind[1]}
        if namespace is not None:  # as the mutating webhook sets a PropagationPolicy's
            selector["namespace"] = namespace
        elif rng.random() < 0.4:
            selector["namespace"] = rng.choice(["n1", "n2"])
        if rng.random() < 0.4:
            selector["name"] = rng.choice(["a", "b"])
        elif rng.random() < 0.5:
            selector["labelSelector"] = {"matchLabels": {"app": rng.choice(["x", "y"])}}
        out.append(selector)
    return out


def policy_case(rng: random.Random) -> dict[str, Any]:
    """One choice of the detector: an unclaimed template (a Deployment or ConfigMap, by name, namespace and
    label) and 0-4 PropagationPolicies and 0-3 ClusterPropagationPolicies with random selectors and priorities."""
    kind = rng.choice([("apps/v1", "Deployment"), ("v1", "ConfigMap")])
    meta: dict[str, Any] = {"name": rng.choice(["a", "b", "c"]), "namespace": rng.choice(["n1", "n2"])}
    if rng.random() < 0.7:
        meta["labels"] = {"app": rng.choice(["x", "y"])}
    template = {"apiVersion": kind[0], "kind": kind[1], "metadata": meta}
    pps, cpps = [], []
    for name in rng.sample(["p1", "p2", "p3", "p4"], rng.randint(0, 4)):
        namespace = rng.choice(["n1", "n2"])
        spec: dict[str, Any] = {"resourceSelectors": _selectors(rng, namespace)}
        if rng.random() < 0.4:
            spec["priority"] = rng.choice([0, 1, 5])
        pps.append({"metadata": {"name": name, "namespace": namespace}, "spec": spec})
    for name in rng.sample(["c1", "c2", "c3"], rng.randint(0, 3)):
        spec = {"resourceSelectors": _selectors(rng, None)}
        if rng.random() < 0.4:
            spec["priority"] = rng.choice([0, 1, 5])
        cpps.append({"metadata": {"name": name}, "spec": spec})
    return {"template": template, "propagationPolicies": pps, "clusterPropagationPolicies": cpps}


def webhook_case(rng: random.Random) -> dict[str, Any]:
    """A PropagationPolicy's namespace and spec, each field as the CRD admits it (its defaults set), some valid and
    some not as the webhook sees them: resource selectors of another namespace or without a name under
    preemption, spread constraints (min above max, negative, twice by one field, by region without one by
    cluster, by label and field at once), field selectors, cluster affinity terms, application failover."""
    spec: dict[str, Any] = {"resourceSelectors": []}
    for _ in range(rng.randint(1, 2)):
        selector: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment"}
        if rng.random() < 0.15:
            selector["namespace"] = "other"
        if rng.random() < 0.6:
            selector["name"] = "w"
        spec["resourceSelectors"].append(selector)
    if rng.random() < 0.2:
        spec["preemption"] = "Always"
    placement: dict[str, Any] = {}
    if rng.random() < 0.5:
        constraints = []
        for _ in range(rng.randint(1, 2)):
            constraint: dict[str, Any] = {}
            if rng.random() < 0.9:
                constraint["spreadByField"] = rng.choice(["cluster", "region", "zone", "provider"])
            if rng.random() < 0.1 or "spreadByField" not in constraint:
                constraint["spreadByLabel"] = "tier"
            constraint["minGroups"] = rng.choice([-1, 0, 1, 2, 3])
            if rng.random() < 0.7:
                constraint["maxGroups"] = rng.choice([-1, 0, 1, 2, 3])
            constraints.append(constraint)
        placement["spreadConstraints"] = constraints
    if rng.random() < 0.2:
        key = rng.choice(["region", "zone", "provider", "country"])
        op = rng.choice(["In", "NotIn", "Exists"])
        placement["clusterAffinity"] = {
            "fieldSelector": {"matchExpressions": [{"key": key, "operator": op, "values": ["r1"]}]}
        }
    if rng.random() < 0.15:
        terms = [{"affinityName": rng.choice(["a", "b"]), "clusterNames": ["m1"]} for _ in range(rng.randint(1, 2))]
        placement["clusterAffinities"] = terms
    if placement:
        spec["placement"] = placement
    if rng.random() < 0.3:
        purge = rng.choice(["Directly", "Gracefully", "Never"])
        application: dict[str, Any] = {
            "decisionConditions": {"tolerationSeconds": rng.choice([-1, 0, 60])},
            "purgeMode": purge,
        }
        if rng.random() < 0.6:
            application["gracePeriodSeconds"] = rng.choice([-5, 0, 10])
        spec["failover"] = {"application": application}
        spec["propagateDeps"] = rng.random() < 0.8
    return {"namespace": "n", "spec": spec}


GROUP, ANTI = "app.example.com/group", "app.example.com/anti"


def _terms(rng: random.Random, names: list[str]) -> list[dict[str, Any]]:
    """2-3 clusterAffinities terms, each by names or by labels."""
    terms = []
    for i in range(rng.randint(2, 3)):
        if rng.random() < 0.6:
            affinity: dict[str, Any] = {"clusterNames": sorted(rng.sample(names, rng.randint(1, len(names))))}
        else:
            affinity = {"labelSelector": {"matchLabels": {"env": rng.choice(["prod", "dev"])}}}
        terms.append({"affinityName": f"t{i}", **affinity})
    return terms


def fleet_binding(rng: random.Random, index: int, names: list[str]) -> dict[str, Any]:
    """One workload of a fleet and its fresh (or formerly scheduled) binding: a placement of its own, workload
    affinity and anti-affinity by labels, in one of two namespaces."""
    namespace, name = rng.choice(["n1", "n2"]), f"w{index:02d}"
    labels = {}
    if rng.random() < 0.8:
        labels[GROUP] = rng.choice(["g1", "g2", "g3"])
    if rng.random() < 0.8:
        labels[ANTI] = rng.choice(["a1", "a2"])
    spread = placement(rng, names)
    if rng.random() < 0.3:  # clusterAffinities instead of clusterAffinity
        spread.pop("clusterAffinity", None)
        spread["clusterAffinities"] = _terms(rng, names)
    terms: dict[str, Any] = {}
    if rng.random() < 0.6:
        terms["affinity"] = {"groupByLabelKey": GROUP}
    if rng.random() < 0.6:
        terms["antiAffinity"] = {"groupByLabelKey": ANTI}
    if terms:
        spread["workloadAffinity"] = terms
    spec: dict[str, Any] = {
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": namespace, "name": name},
        "replicas": rng.randint(1, 4),
        "placement": spread,
    }
    if rng.random() < 0.5:
        spec["replicaRequirements"] = {"resourceRequest": {"cpu": rng.choice(["500m", "1", "2"])}}
    # the detector's groups (getWorkloadAffinityGroups): KEY=VALUE of the workload's label, when it has it
    groups = {}
    for field, term in (("affinityGroup", "affinity"), ("antiAffinityGroup", "antiAffinity")):
        key = terms.get(term, {}).get("groupByLabelKey")
        if key in labels:
            groups[field] = f"{key}={labels[key]}"
    if groups:
        spec["workloadAffinityGroups"] = groups
    if rng.random() < 0.2:  # scheduled before (its placement applied no longer known): scheduled again
        spec["clusters"] = [{"name": n, "replicas": 1} for n in sorted(rng.sample(names, rng.randint(1, len(names))))]
    if rng.random() < 0.15:  # several pod templates (a FlinkDeployment's job manager and task managers)
        spec["components"] = [
            {"name": "jobmanager", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "1"}}},
            {
                "name": "taskmanager",
                "replicas": rng.randint(1, 3),
                "replicaRequirements": {"resourceRequest": {"cpu": rng.choice(["500m", "2"])}},
            },
        ]
    return {"namespace": namespace, "name": f"{name}-deployment", "labels": labels, "spec": spec}


def fleet_case(rng: random.Random) -> dict[str, Any]:
    """A fleet of 2-6 clusters and 20-30 bindings, scheduled one after another in NAMESPACE/NAME order, each placement
    feeding the next (the WorkloadAffinity and WorkloadAntiAffinity plugins read the scheduler's cache)."""
    clusters = [cluster(rng, i) for i in range(1, rng.randint(2, 6) + 1)]
    names = [c["metadata"]["name"] for c in clusters]
    bindings = [fleet_binding(rng, i, names) for i in range(rng.randint(20, 30))]
    bindings.sort(key=lambda b: (b["namespace"], b["name"]))
    return {"clusters": clusters, "bindings": bindings}


_NAMES = ["a", "b", "c", ""]


def _ref(rng: random.Random) -> str:
    return rng.choice(_NAMES)


def _container(rng: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {"name": "c", "image": "x"}
    env_from = []
    for _ in range(rng.randint(0, 2)):
        source = rng.choice(["configMapRef", "secretRef"])
        env_from.append({source: {"name": _ref(rng)}})
    if env_from:
        out["envFrom"] = env_from
    env = []
    for _ in range(rng.randint(0, 2)):
        source = rng.choice(["configMapKeyRef", "secretKeyRef", "fieldRef"])
        ref = {"name": _ref(rng), "key": "k"} if source != "fieldRef" else {"fieldPath": "metadata.name"}
        env.append({"name": "V", "valueFrom": {source: ref}})
    if env:
        out["env"] = env
    return out


_VOLUMES: list[tuple[str, Callable[[str], dict[str, Any]]]] = [
    ("configMap", lambda n: {"name": n}),
    ("secret", lambda n: {"secretName": n}),
    ("persistentVolumeClaim", lambda n: {"claimName": n}),
    ("azureFile", lambda n: {"secretName": n, "shareName": "s"}),
    ("cephfs", lambda n: {"monitors": ["m"], "secretRef": {"name": n}}),
    ("cinder", lambda n: {"volumeID": "v", "secretRef": {"name": n}}),
    ("flexVolume", lambda n: {"driver": "d", "secretRef": {"name": n}}),
    ("rbd", lambda n: {"monitors": ["m"], "image": "i", "secretRef": {"name": n}}),
    ("scaleIO", lambda n: {"gateway": "g", "system": "s", "secretRef": {"name": n}}),
    ("iscsi", lambda n: {"targetPortal": "t", "iqn": "i", "lun": 0, "secretRef": {"name": n}}),
    ("storageos", lambda n: {"volumeName": "v", "secretRef": {"name": n}}),
    ("csi", lambda n: {"driver": "d", "nodePublishSecretRef": {"name": n}}),
    ("emptyDir", lambda n: {}),
]


def _pod_spec(rng: random.Random) -> dict[str, Any]:
    pod: dict[str, Any] = {}
    for field in ("initContainers", "containers", "ephemeralContainers"):
        if field == "containers" or rng.random() < 0.3:
            pod[field] = [_container(rng) for _ in range(rng.randint(1, 2))]
    if rng.random() < 0.4:
        pod["serviceAccountName"] = rng.choice(["sa", "default", ""])
    if rng.random() < 0.3:
        pod["imagePullSecrets"] = [{"name": _ref(rng)} for _ in range(rng.randint(1, 2))]
    volumes = []
    for i in range(rng.randint(0, 3)):
        if rng.random() < 0.2:
            sources: list[dict[str, Any]] = []
            for _ in range(rng.randint(1, 3)):
                kind = rng.choice(["configMap", "secret", "downwardAPI"])
                sources.append({kind: {"name": _ref(rng)}} if kind != "downwardAPI" else {kind: {"items": []}})
            volumes.append({"name": f"v{i}", "projected": {"sources": sources}})
        else:
            kind, make = rng.choice(_VOLUMES)
            volume: dict[str, Any] = {"name": f"v{i}", kind: make(_ref(rng))}
            if rng.random() < 0.1:  # a second source (the API server refuses it; the visitors' switch takes one)
                volume["persistentVolumeClaim"] = {"claimName": _ref(rng)}
            volumes.append(volume)
    if volumes:
        pod["volumes"] = volumes
    return pod


_TEMPLATE_KINDS = [
    ("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet"), ("apps/v1", "DaemonSet"),
    ("batch/v1", "Job"), ("batch/v1", "CronJob"), ("v1", "Pod"), ("networking.k8s.io/v1", "Ingress"),
    ("multicluster.x-k8s.io/v1alpha1", "ServiceImport"), ("v1", "ConfigMap"), ("v1", "Node"),
    ("extensions/v1beta1", "Deployment"), ("apps/v1beta1", "StatefulSet"),
]  # fmt: skip
_NAMESPACES = ["default", "team-a", "kube-system", "kube-public", "kube", "karmada-system", "karmada-cluster",
               "karmada-es-m1", "istio-system", "prod-eu", ""]  # fmt: skip
_PATTERNS = ["kube-.*", "istio-system", "prod-.*", ".*", "team|default", "karmada-.*", "kube", "[a-z]+-[a-z]+"]


def template_case(rng: random.Random) -> dict[str, Any]:
    """A resource template, in a namespace, and the controller manager's --skipped-propagating-namespaces."""
    api_version, kind = rng.choice(_TEMPLATE_KINDS)
    namespace = rng.choice(_NAMESPACES) if kind != "Node" else ""
    name = rng.choice(["w", "extension-apiserver-authentication"]) if kind == "ConfigMap" else "w"
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": meta}
    if kind == "Pod":
        obj["spec"] = _pod_spec(rng)
    elif kind == "CronJob":
        obj["spec"] = {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": _pod_spec(rng)}}}}
    elif kind == "Ingress":
        tls: list[dict[str, Any]] = [{"secretName": n} for n in rng.sample(["a", "b", "c"], rng.randint(0, 2))]
        if rng.random() < 0.2:  # the default certificate: no secretName
            tls.append({"hosts": ["x.example.com"]})
        obj["spec"] = {"tls": tls}
    elif kind == "ServiceImport":
        obj["spec"] = {"type": "ClusterSetIP"}
    elif kind not in ("ConfigMap", "Node"):
        obj["spec"] = {"template": {"spec": _pod_spec(rng)}}
        if kind == "StatefulSet" and rng.random() < 0.5:
            obj["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": rng.choice(["a", "b"])}}]
    skipped = rng.sample(_PATTERNS, rng.randint(0, 2)) if rng.random() < 0.7 else ["kube-.*"]
    return {"object": obj, "skipped": skipped}


def main() -> None:
    """cases.py [taints|policies|webhook|fleets] COUNT SEED: scheduling cases, the taint manager's decisions, the
    detector's policy choices, the webhooks' admissions, or whole fleets with workload affinity."""
    args = sys.argv[1:]
    makers = {
        "taints": taint_case,
        "policies": policy_case,
        "webhook": webhook_case,
        "fleets": fleet_case,
        "templates": template_case,
    }
    make = makers.get(args[0], case)
    if args[0] in makers:
        args = args[1:]
    count, seed = int(args[0]), int(args[1])
    rng = random.Random(seed)
    json.dump([make(rng) for _ in range(count)], sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
