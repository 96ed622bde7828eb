"""Fleets shaped like users' fleets, as one `kubectl get -o yaml` snapshot each (Karmada objects only).

    .venv/bin/python benchmarks/fleets.py regional 1000 10000 > fleet.yaml

``regional`` is the shape of issue 26: namespaces each with its own PropagationPolicy named ``ha``, cluster
affinity to one region of 20 (95 % of the clusters rejected for every workload), required anti-affinity by a
pipeline label in groups of four, FlinkDeployments, one in ten already scheduled (a ResourceBinding with
the applied-placement annotation, spec.placement and workloadAffinityGroups), Duplicated. Its variants add
what real fleets have besides: ``unschedulable`` (some namespaces' policies name a region with no cluster, so
their bindings get a FitError), ``divided`` (Divided by available replicas, spread over regions, clusters
with resource summaries), ``preferred`` (a toleration of the tainted clusters), ``spread`` (one cluster
per pipeline: spread by cluster, at most one), ``interleaved`` (a group's members far apart in name order:
pipeline-00000, -00250, -00500 and -00750 of a namespace of 1,000, where ``regional`` has them side by side),
``namespaces`` (``regional`` with a namespace and a policy per five workloads: 2,000 policies at 10,000).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from typing import Any

import yaml

REGIONS = 20
NAMESPACES = 20
GROUP_SIZE = 4
PIPELINE = "app.example.com/pipeline"
REGION = "topology.kubernetes.io/region"
FLINK = "flink.apache.org/v1beta1"
APPLIED = "policy.karmada.io/applied-placement"

Object = dict[str, Any]


def _cluster(i: int, rng: random.Random, resources: bool) -> Object:
    region = f"region-{i % REGIONS:02d}"
    spec: Object = {"region": region, "zones": [f"{region}-{'abc'[i % 3]}"], "syncMode": "Push"}
    if i % 50 == 7:
        spec["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    status: Object = {
        "conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady", "message": "cluster is healthy"}],
        "kubernetesVersion": "v1.31.4",
        "apiEnablements": [
            {"groupVersion": "apps/v1", "resources": [{"kind": "Deployment", "name": "deployments"}]},
            {"groupVersion": FLINK, "resources": [{"kind": "FlinkDeployment", "name": "flinkdeployments"}]},
        ],
    }
    if resources:
        cpu = rng.choice([32, 64, 128])
        status["resourceSummary"] = {
            "allocatable": {"cpu": str(cpu), "memory": f"{cpu * 4}Gi", "pods": "1100"},
            "allocated": {"cpu": str(rng.randrange(cpu // 2)), "memory": f"{cpu}Gi", "pods": "100"},
        }
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": f"member-{i:05d}", "labels": {REGION: region, "env": "prod"}},
        "spec": spec,
        "status": status,
    }


def _placement(namespace: int, variant: str) -> Object:
    region = f"region-{namespace % REGIONS:02d}"
    if variant == "unschedulable" and namespace % 5 == 4:
        region = "region-retired"  # no cluster is in it: every binding of this namespace is unschedulable
    placement: Object = {"clusterAffinity": {"labelSelector": {"matchLabels": {REGION: region}}}}
    if variant == "divided":
        regions = [f"region-{(namespace + k) % REGIONS:02d}" for k in range(3)]
        selector = {"matchExpressions": [{"key": REGION, "operator": "In", "values": regions}]}
        placement["clusterAffinity"] = {"labelSelector": selector}
        placement["spreadConstraints"] = [
            {"spreadByField": "region", "minGroups": 2, "maxGroups": 3},
            {"spreadByField": "cluster", "minGroups": 2, "maxGroups": 6},
        ]
        placement["replicaScheduling"] = {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Aggregated",
        }
    else:
        if variant == "spread":  # one cluster per pipeline, as the Flink HA example has it
            placement["spreadConstraints"] = [{"spreadByField": "cluster", "maxGroups": 1, "minGroups": 1}]
        placement["replicaScheduling"] = {"replicaSchedulingType": "Duplicated"}
        placement["workloadAffinity"] = {"antiAffinity": {"groupByLabelKey": PIPELINE}}
    if variant == "preferred":
        placement["clusterTolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "gpu"}]
    return placement


def _namespace(namespace: int) -> str:
    return f"team-{namespace:02d}"


def _policy(namespace: int, variant: str) -> Object:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "ha", "namespace": _namespace(namespace)},
        "spec": {
            "resourceSelectors": [{"apiVersion": FLINK, "kind": "FlinkDeployment"}],
            "placement": _placement(namespace, variant),
        },
    }


def _workload(i: int, variant: str, namespaces: int = NAMESPACES) -> Object:
    namespace = i % namespaces
    local = i // namespaces
    spec: Object = {
        "image": "flink:1.20",
        "flinkVersion": "v1_20",
        "jobManager": {"replicas": 1, "resource": {"cpu": 1, "memory": "2048m"}},
        "taskManager": {"replicas": 2, "resource": {"cpu": 1, "memory": "2048m"}},
        "job": {"jarURI": "local:///opt/flink/examples/streaming/StateMachineExample.jar", "parallelism": 2},
    }
    return {
        "apiVersion": FLINK,
        "kind": "FlinkDeployment",
        "metadata": {
            "name": f"pipeline-{local:05d}",
            "namespace": _namespace(namespace),
            "labels": {PIPELINE: f"p{local // GROUP_SIZE:04d}"},
            "uid": f"00000000-0000-4000-8000-{i:012d}",
        },
        "spec": spec,
    }


def _binding(workload: Object, placement: Object, cluster: str) -> Object:
    meta = workload["metadata"]
    name = f"{meta['name']}-flinkdeployment"
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "annotations": {
                APPLIED: json.dumps(placement, separators=(",", ":"), sort_keys=True),
                "propagationpolicy.karmada.io/name": "ha",
                "propagationpolicy.karmada.io/namespace": meta["namespace"],
            },
        },
        "spec": {  # a copy: kubectl writes no YAML aliases
            "resource": {
                "apiVersion": FLINK,
                "kind": "FlinkDeployment",
                "name": meta["name"],
                "namespace": meta["namespace"],
                "uid": meta["uid"],
            },
            "replicas": 1,
            "placement": json.loads(json.dumps(placement)),
            "clusters": [{"name": cluster, "replicas": 1}],
            "workloadAffinityGroups": {"antiAffinityGroup": f"{PIPELINE}={meta['labels'][PIPELINE]}"},
            "schedulerName": "default-scheduler",
        },
        "status": {
            "conditions": [
                {
                    "type": "Scheduled",
                    "status": "True",
                    "reason": "Success",
                    "message": "Binding has been scheduled successfully.",
                }
            ],
            "lastScheduledTime": "2026-12-01T09:00:00Z",
            "schedulerObservedGeneration": 1,
        },
    }


def regional(
    clusters: int, workloads: int, variant: str = "", seed: int = 7, namespaces: int = NAMESPACES
) -> list[Object]:
    """The objects of issue 26's shape (``variant``: "" or one of SHAPES' other names), in ``namespaces``
    namespaces, each with its own policy."""
    rng = random.Random(seed)
    objects = [_cluster(i, rng, resources=variant == "divided") for i in range(clusters)]
    policies = [_policy(n, variant) for n in range(namespaces)]
    objects += policies
    # the clusters of each region, for the bindings already scheduled
    by_region: dict[str, list[str]] = {}
    for c in objects[:clusters]:
        by_region.setdefault(c["metadata"]["labels"][REGION], []).append(c["metadata"]["name"])
    groups = max(1, workloads // namespaces // GROUP_SIZE)  # per namespace
    for i in range(workloads):
        workload = _workload(i, variant, namespaces)
        local = i // namespaces
        position = local % GROUP_SIZE  # in its group
        if variant == "interleaved":
            workload["metadata"]["labels"][PIPELINE] = f"p{local % groups:04d}"
            position = local // groups
        if variant == "divided":
            workload["spec"]["taskManager"]["replicas"] = rng.randrange(2, 12)
        objects.append(workload)
        namespace = i % namespaces
        members = by_region.get(f"region-{namespace % REGIONS:02d}", [])
        # one in ten already scheduled, on the cluster of its position in its group (so the group stays apart)
        if (
            i // namespaces % 10 == 0
            and members
            and variant != "divided"
            and not (variant == "unschedulable" and namespace % 5 == 4)
        ):
            objects.append(
                _binding(workload, policies[namespace]["spec"]["placement"], members[position % len(members)])
            )
    return objects


SHAPES: dict[str, Callable[[int, int], list[Object]]] = {
    "regional": regional,
    "unschedulable": lambda c, w: regional(c, w, "unschedulable"),
    "divided": lambda c, w: regional(c, w, "divided"),
    "preferred": lambda c, w: regional(c, w, "preferred"),
    "spread": lambda c, w: regional(c, w, "spread"),
    "interleaved": lambda c, w: regional(c, w, "interleaved"),
    # a policy per application, as real control planes have: 2,000 namespaces of 5 workloads at 10,000 workloads
    "namespaces": lambda c, w: regional(c, w, namespaces=max(NAMESPACES, w // 5)),
}


def write(objects: list[Object], out: Any) -> None:
    """``objects`` as kubectl prints a list of them: one YAML List."""
    yaml.dump(
        {"apiVersion": "v1", "kind": "List", "items": objects, "metadata": {"resourceVersion": ""}},
        out,
        Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
        default_flow_style=False,
        sort_keys=False,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shape", choices=sorted(SHAPES))
    parser.add_argument("clusters", type=int)
    parser.add_argument("workloads", type=int)
    args = parser.parse_args()
    write(SHAPES[args.shape](args.clusters, args.workloads), sys.stdout)


if __name__ == "__main__":
    main()
