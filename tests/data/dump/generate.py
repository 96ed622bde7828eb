"""A real control plane's dump, generated: what `kubectl get -A -o yaml` (and `-o json`) prints for a Karmada
control plane with 8 member clusters, 25 application namespaces and the rest a control plane holds besides.

    python tests/data/dump/generate.py > dump.yaml        # the dump (deterministic)
    python tests/data/dump/generate.py --json > dump.json # the same as one JSON List
    python tests/data/dump/generate.py --bindings         # the bindings Karmada's detector makes of it, for the oracle

What is in it: Clusters with their controllers' status (conditions, API enablements, resource summaries; one
NotReady with the not-ready taint, one Ready still carrying it), kube-system and karmada-system workloads,
ConfigMaps, Secrets and ServiceAccounts (never propagated), RBAC (ClusterRoles and their bindings named
``system:…`` as every cluster has them), CustomResourceDefinitions, Namespaces, Services, and per application
namespace a PropagationPolicy, Deployments (some in anti-affinity groups, some requiring ConfigMaps and Secrets
with propagateDeps), their ConfigMaps, Secrets and Services; managedFields, last-applied annotations and status
noise on every object; a ``List`` of mixed versions, a typed ``DeploymentList`` and separate documents.

The expected placements (expected.json) are Karmada's: the bindings the detector makes of the dump (``bindings``
below, as pkg/detector BuildResourceBinding writes them: resource, replicas and replicaRequirements as the default
interpreter reads them, placement, workloadAffinityGroups) scheduled one after another by Karmada's own scheduler
(tests/data/oracle/fleets.go, recorded by tests/data/oracle/record.sh), never fleetrules' output.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from typing import Any

import yaml

Object = dict[str, Any]
SEED = 44
CLUSTERS = 8
APP_NAMESPACES = 25
TIME = "2026-12-01T08:00:00Z"
ANTI = "app.example.com/ha-group"
KUBE_SYSTEM = 100  # kube-system's ConfigMaps, Secrets and ServiceAccounts, of each
RBAC = 600  # ClusterRoles, and as many ClusterRoleBindings


def _noise(obj: Object, manager: str = "kubectl-client-side-apply") -> Object:
    """What the API server adds: uid, resourceVersion, creationTimestamp, managedFields, last-applied."""
    meta = obj.setdefault("metadata", {})
    applied = json.dumps({k: v for k, v in obj.items() if k != "status"}, separators=(",", ":"), sort_keys=True)
    meta.setdefault("annotations", {})["kubectl.kubernetes.io/last-applied-configuration"] = applied + "\n"
    meta["creationTimestamp"] = TIME
    meta["resourceVersion"] = str(1000 + len(applied))
    meta["uid"] = f"00000000-0000-4000-8000-{int(hashlib.sha256(applied.encode()).hexdigest(), 16) % 10**12:012d}"
    meta["managedFields"] = [
        {
            "apiVersion": obj["apiVersion"],
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:annotations": {".": {}}}},
            "manager": manager,
            "operation": "Update",
            "time": TIME,
        }
    ]
    return obj


def _cluster(i: int) -> Object:
    name = f"member-{i}"
    region = f"region-{(i - 1) // 3 + 1}"
    ready = "False" if i == 7 else "True"
    spec: Object = {"syncMode": "Push", "apiEndpoint": f"https://10.0.0.{i}:6443", "region": region}
    if i in (7, 8):  # 7 NotReady with the controller's taint; 8 Ready and still carrying it (about to lose it)
        spec["taints"] = [{"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule", "timeAdded": TIME}]
    kinds = [("apps/v1", ["Deployment", "StatefulSet", "DaemonSet"]), ("v1", ["ConfigMap", "Secret", "Service"])]
    kinds.append(("rbac.authorization.k8s.io/v1", ["ClusterRole", "ClusterRoleBinding"]))
    status = {
        "kubernetesVersion": "v1.34.1",
        "conditions": [
            {"type": "Ready", "status": ready, "reason": "ClusterReady", "lastTransitionTime": TIME},
            {"type": "CompleteAPIEnablements", "status": "True", "lastTransitionTime": TIME},
        ],
        "apiEnablements": [
            {"groupVersion": gv, "resources": [{"name": k.lower() + "s", "kind": k} for k in ks]} for gv, ks in kinds
        ],
        "resourceSummary": {
            "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "1100"},
            "allocated": {"cpu": str(8 * i), "memory": "64Gi", "pods": "200"},
        },
        "nodeSummary": {"totalNum": 10, "readyNum": 10},
    }
    labels = {"topology.kubernetes.io/region": region, "env": "prod" if i <= 6 else "staging"}
    obj = {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": status,
    }
    return _noise(obj, "karmada-controller-manager")


def _pod(rng: random.Random, deps: list[str]) -> Object:
    container: Object = {
        "name": "app",
        "image": "registry.example.com/app:1.0",
        "resources": {"requests": {"cpu": rng.choice(["100m", "250m", "500m"]), "memory": "128Mi"}},
    }
    volumes = []
    for dep in deps:
        kind, name = dep.split("/")
        if kind == "ConfigMap":
            container.setdefault("envFrom", []).append({"configMapRef": {"name": name}})
        else:
            volumes.append({"name": name, "secret": {"secretName": name}})
    pod: Object = {"containers": [container]}
    if volumes:
        pod["volumes"] = volumes
    return pod


def _deployment(rng: random.Random, namespace: str, name: str, deps: list[str], group: str | None) -> Object:
    labels = {"app": name}
    if group:
        labels[ANTI] = group
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": rng.randint(1, 4),
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": _pod(rng, deps)},
        },
        "status": {"replicas": 2, "readyReplicas": 2, "observedGeneration": 3},
    }
    return _noise(obj)


def _plain(api_version: str, kind: str, name: str, namespace: str | None = None, **rest: Any) -> Object:
    meta: Object = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return _noise({"apiVersion": api_version, "kind": kind, "metadata": meta, **rest})


def _policy(rng: random.Random, namespace: str, index: int) -> Object:
    """The namespace's PropagationPolicy: its Deployments (and with propagateDeps what they reference), by region,
    Duplicated or Divided, with anti-affinity in one namespace of three."""
    region = f"region-{index % 3 + 1}"
    placement: Object = {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"topology.kubernetes.io/region": region}}},
    }
    if index % 2:
        placement["replicaScheduling"] = {"replicaSchedulingType": "Duplicated"}
    else:
        placement["replicaScheduling"] = {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"dynamicWeight": "AvailableReplicas"},
        }
    if index % 3 == 0:
        placement["workloadAffinity"] = {"antiAffinity": {"groupByLabelKey": ANTI}}
        placement["spreadConstraints"] = [{"spreadByField": "cluster", "maxGroups": 1, "minGroups": 1}]
    spec: Object = {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}], "placement": placement}
    if index % 4 == 0:
        spec["propagateDeps"] = True
    return _plain("policy.karmada.io/v1alpha1", "PropagationPolicy", "apps", namespace, spec=spec)


def objects() -> tuple[list[Object], list[Object], list[Object]]:
    """(the List's objects, the DeploymentList's items, the separate documents)."""
    rng = random.Random(SEED)
    listed: list[Object] = [_cluster(i) for i in range(1, CLUSTERS + 1)]
    typed: list[Object] = []
    documents: list[Object] = []
    for ns in ("kube-system", "kube-public", "kube-node-lease", "karmada-system", "karmada-cluster", "default"):
        listed.append(_plain("v1", "Namespace", ns, status={"phase": "Active"}))
    for i in range(KUBE_SYSTEM):  # kube-system: never propagated
        listed.append(_plain("v1", "ConfigMap", f"kube-config-{i:02d}", "kube-system", data={"k": "v"}))
        listed.append(_plain("v1", "Secret", f"bootstrap-token-{i:02d}", "kube-system", type="Opaque"))
        listed.append(_plain("v1", "ServiceAccount", f"controller-{i:02d}", "kube-system"))
    listed.append(_plain("v1", "ConfigMap", "extension-apiserver-authentication", "kube-system"))
    for name in ("coredns", "metrics-server", "kube-state-metrics"):
        typed.append(_deployment(rng, "kube-system", name, [], None))
    for name in ("karmada-scheduler", "karmada-controller-manager", "karmada-webhook"):
        typed.append(_deployment(rng, "karmada-system", name, [], None))
    for i in range(RBAC):  # every cluster's RBAC: path-segment names
        role = f"system:controller:role-{i:03d}"
        listed.append(_plain("rbac.authorization.k8s.io/v1", "ClusterRole", role, rules=[]))
        subjects = [{"kind": "ServiceAccount", "name": "x", "namespace": "kube-system"}]
        ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}
        binding = _plain("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", role, roleRef=ref, subjects=subjects)
        listed.append(binding)
    listed.append(_plain("rbac.authorization.k8s.io/v1", "ClusterRole", "monitoring:metrics-reader", rules=[]))
    for i in range(100):
        crd = f"widgets{i:02d}.example.com"
        listed.append(_plain("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd, spec={"group": "example.com"}))
    documents.append(
        _plain(
            "policy.karmada.io/v1alpha1",
            "ClusterPropagationPolicy",
            "monitoring-rbac",
            spec={
                "resourceSelectors": [
                    {
                        "apiVersion": "rbac.authorization.k8s.io/v1",
                        "kind": "ClusterRole",
                        "name": "monitoring:metrics-reader",
                    }
                ],
                "placement": {"clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}}},
            },
        )
    )
    for n in range(APP_NAMESPACES):
        ns = f"team-{n:02d}"
        listed.append(_plain("v1", "Namespace", ns, status={"phase": "Active"}))
        documents.append(_policy(rng, ns, n))
        for d in range(4):
            name = f"svc-{d}"
            deps = [f"ConfigMap/{name}-config"] + ([f"Secret/{name}-creds"] if d % 2 else [])
            group = f"pair-{d // 2}" if n % 3 == 0 else None
            (typed if d == 0 else listed).append(_deployment(rng, ns, name, deps, group))
            listed.append(_plain("v1", "ConfigMap", f"{name}-config", ns, data={"LOG": "info"}))
            if d % 2:
                listed.append(_plain("v1", "Secret", f"{name}-creds", ns, type="Opaque"))
            ports = [{"port": 80, "targetPort": 8080}]
            listed.append(_plain("v1", "Service", name, ns, spec={"selector": {"app": name}, "ports": ports}))
    return listed, typed, documents


def dump() -> str:
    listed, typed, documents = objects()
    for item in typed:  # as the API server's typed list holds them: no kind nor apiVersion
        item.pop("kind")
        item.pop("apiVersion")
    parts = [
        {"apiVersion": "v1", "kind": "List", "items": listed, "metadata": {"resourceVersion": ""}},
        {"apiVersion": "apps/v1", "kind": "DeploymentList", "items": typed, "metadata": {"resourceVersion": "77"}},
        *documents,
    ]
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump_all(parts, Dumper=dumper, default_flow_style=False, sort_keys=False)


def _placement_of(documents: list[Object]) -> dict[str, Object]:
    """Each namespace's PropagationPolicy's spec ("" for the ClusterPropagationPolicy's)."""
    return {
        p["metadata"].get("namespace", ""): p["spec"]
        for p in documents
        if p["kind"] in ("PropagationPolicy", "ClusterPropagationPolicy")
    }


def bindings() -> tuple[list[Object], list[Object]]:
    """(the clusters as Karmada's scheduler sees them, the bindings the detector makes of the dump, in the order the
    scheduler takes them), for the oracle (tests/data/oracle/fleets.go). The scheduler sees the clusters after
    their controller acted: member-8 is Ready, so the cluster controller has taken its not-ready taint away. The
    detector binds the application namespaces' Deployments (kube-system and karmada-system are never propagated)
    and the ClusterRole monitoring:metrics-reader; each binding as BuildResourceBinding writes it: the resource, the
    replicas and the pod's requests as the default interpreter reads them, the policy's placement, and the
    workloadAffinityGroups of the workload's labels."""
    listed, typed, documents = objects()
    clusters = [json.loads(json.dumps(c)) for c in listed if c["kind"] == "Cluster"]
    for c in clusters:
        if c["metadata"]["name"] == "member-8":
            c["spec"].pop("taints")
    specs = _placement_of(documents)
    out = []
    for d in [*listed, *typed]:
        if d["kind"] != "Deployment" or not d["metadata"]["namespace"].startswith("team-"):
            continue
        meta, placement = d["metadata"], specs[d["metadata"]["namespace"]]["placement"]
        requests = d["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
        spec: Object = {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": meta["namespace"],
                         "name": meta["name"], "uid": meta["uid"]},
            "replicas": d["spec"]["replicas"],
            "replicaRequirements": {"resourceRequest": dict(requests)},
            "placement": placement,
        }  # fmt: skip
        anti = (placement.get("workloadAffinity") or {}).get("antiAffinity")
        if anti and anti["groupByLabelKey"] in meta["labels"]:
            key = anti["groupByLabelKey"]
            spec["workloadAffinityGroups"] = {"antiAffinityGroup": f"{key}={meta['labels'][key]}"}
        out.append({"namespace": meta["namespace"], "name": f"{meta['name']}-deployment", "spec": spec})
    role = "monitoring:metrics-reader"
    resource = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": role}
    spec = {"resource": resource, "placement": specs[""]["placement"]}
    out.append({"namespace": "", "name": "monitoring.metrics-reader-clusterrole", "spec": spec})
    out.sort(key=lambda b: f"{b['namespace']}/{b['name']}" if b["namespace"] else b["name"])
    return clusters, out


def main() -> None:
    if sys.argv[1:] == ["--bindings"]:  # the oracle's input: one fleet
        clusters, made = bindings()
        json.dump([{"clusters": clusters, "bindings": made}], sys.stdout)
        return
    if sys.argv[1:] == ["--json"]:  # as `kubectl get -o json` prints it: one List
        listed, typed, documents = objects()
        items = [*listed, *typed, *documents]
        json.dump({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}, sys.stdout)
        return
    sys.stdout.write(dump())


if __name__ == "__main__":
    main()
