"""propagateDeps: the default resource interpreter's dependencies (karmada
pkg/resourceinterpreter/default/native/dependencies_test.go: Test_getDeploymentDependencies and the same for
ReplicaSet, Job, CronJob, Pod, DaemonSet, StatefulSet, Test_getIngressDependencies,
Test_getServiceImportDependencies, Test_getAllDefaultDependenciesInterpreter) and the dependencies distributor
(pkg/dependenciesdistributor: buildAttachedBinding, mergeBindingSnapshot, handleDependentResource)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine import Result, evaluate, load_facts, load_rules, to_json, to_text
from engine.cli import main
from engine.karmada.gates import Controllers
from engine.kube.dependencies import Dependent, dependencies
from engine.render.diff import to_data
from engine.render.diff import to_text as diff_text
from engine.render.resilience import to_text as sweep_text
from engine.review.diff import compare
from engine.review.impacts import scenarios
from engine.review.resilience import sweep

NS = "karmada-test"

# dependencies_test.go testPairs: a pod spec and the references Karmada finds in it (kinds in its order: ConfigMaps,
# Secrets, the ServiceAccount, PersistentVolumeClaims)
POD_SPECS: list[tuple[dict[str, Any], list[tuple[str, str]]]] = [
    (
        {
            "serviceAccountName": "test-serviceaccount",
            "volumes": [
                {"name": "initcontainer-volume-mount", "configMap": {"name": "test-configmap"}},
                {"name": "cloud-secret-volume", "secret": {"secretName": "cloud-secret"}},
                {"name": "container-volume-mount", "persistentVolumeClaim": {"claimName": "test-pvc"}},
            ],
        },
        [
            ("ConfigMap", "test-configmap"),
            ("Secret", "cloud-secret"),
            ("ServiceAccount", "test-serviceaccount"),
            ("PersistentVolumeClaim", "test-pvc"),
        ],
    ),
    (
        {
            "serviceAccountName": "test-serviceaccount",
            "imagePullSecrets": [{"name": "test-secret"}],
            "initContainers": [
                {
                    "envFrom": [
                        {
                            "configMapRef": {"name": "initcontainer-envfrom-configmap"},
                            "secretRef": {"name": "test-secret"},
                        }
                    ],
                    "env": [{"valueFrom": {"secretKeyRef": {"name": "test-secret"}}}],
                }
            ],
        },
        [
            ("ConfigMap", "initcontainer-envfrom-configmap"),
            ("Secret", "test-secret"),
            ("ServiceAccount", "test-serviceaccount"),
        ],
    ),
    (
        {
            "containers": [
                {
                    "envFrom": [{"configMapRef": {"name": "test-configmap"}}],
                    "env": [{"valueFrom": {"configMapKeyRef": {"name": "test-configmap"}}}],
                }
            ],
            "volumes": [
                {
                    "name": "container-volume-mount",
                    "persistentVolumeClaim": {"claimName": "test-pvc"},
                    "azureFile": {"secretName": "test-secret"},
                }
            ],
        },
        [("ConfigMap", "test-configmap"), ("Secret", "test-secret"), ("PersistentVolumeClaim", "test-pvc")],
    ),
]


def _with_pod(api_version: str, kind: str, pod: dict[str, Any] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if pod is not None:
        if kind == "Pod":
            spec = pod
        elif kind == "CronJob":
            spec = {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": {"spec": pod}}}}
        else:
            spec = {"template": {"spec": pod}}
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": f"fake-{kind.lower()}", "namespace": NS},
        "spec": spec,
    }


KINDS = [
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("batch/v1", "Job"),
    ("batch/v1", "CronJob"),
    ("v1", "Pod"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "StatefulSet"),
]


@pytest.mark.parametrize(("api_version", "kind"), KINDS)
@pytest.mark.parametrize("pair", [None, 0, 1, 2], ids=["without dependencies", "with 1", "with 2", "with 3"])
def test_the_default_interpreters_dependencies(api_version: str, kind: str, pair: int | None) -> None:
    pod, want = (None, []) if pair is None else POD_SPECS[pair]
    got = dependencies(_with_pod(api_version, kind, pod))
    assert [(d.kind, d.name) for d in got] == want
    assert all(d.api_version == "v1" and d.namespace == NS for d in got)


def test_a_statefulsets_own_claims_are_no_dependencies() -> None:
    """ "statefulset with partial dependencies 4": the claim of a volumeClaimTemplate is the StatefulSet's."""
    obj = _with_pod("apps/v1", "StatefulSet", POD_SPECS[0][0])
    obj["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "test-pvc"}}]
    assert [(d.kind, d.name) for d in dependencies(obj)] == POD_SPECS[0][1][:3]


def test_only_the_default_interpreters_kinds() -> None:
    """Test_getAllDefaultDependenciesInterpreter: these GVKs and no others (an extensions/v1beta1 Deployment, a
    custom resource: none)."""
    assert dependencies(_with_pod("extensions/v1beta1", "Deployment", POD_SPECS[0][0])) == ()
    assert dependencies(_with_pod("flink.apache.org/v1beta1", "FlinkDeployment", POD_SPECS[0][0])) == ()


def test_ingress_and_service_import() -> None:
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "test-ingress", "namespace": NS},
        "spec": {"tls": [{"secretName": "cloud-secret"}, {"secretName": "test-secret"}, {"hosts": ["x"]}]},
    }
    assert dependencies(ingress) == (
        Dependent("v1", "Secret", NS, "cloud-secret"),
        Dependent("v1", "Secret", NS, "test-secret"),
    )
    service_import = {
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ServiceImport",
        "metadata": {"name": "fake-serviceImport", "namespace": NS},
        "spec": {"type": "ClusterSetIP"},
    }
    assert dependencies(service_import) == (
        Dependent("v1", "Service", NS, "derived-fake-serviceImport"),
        Dependent(
            "discovery.k8s.io/v1",
            "EndpointSlice",
            NS,
            labels=(("kubernetes.io/service-name", "derived-fake-serviceImport"),),
        ),
    )


def test_projected_volumes_and_the_secret_plugins() -> None:
    """VisitPodSecretNames and VisitPodConfigmapNames: a projected volume's sources; the volume plugins that name a
    Secret; "default" is no ServiceAccount dependency; empty names are skipped."""
    pod = {
        "serviceAccountName": "default",
        "ephemeralContainers": [{"envFrom": [{"secretRef": {"name": "debug"}}]}],
        "volumes": [
            {"projected": {"sources": [{"configMap": {"name": "p-cm"}}, {"secret": {"name": "p-secret"}}]}},
            {"csi": {"driver": "x", "nodePublishSecretRef": {"name": "csi-secret"}}},
            {"cephfs": {"secretRef": {"name": ""}}},
            {"rbd": {"secretRef": {"name": "rbd-secret"}}},
        ],
    }
    got = [(d.kind, d.name) for d in dependencies(_with_pod("v1", "Pod", pod))]
    assert got == [
        ("ConfigMap", "p-cm"),
        ("Secret", "csi-secret"),
        ("Secret", "debug"),
        ("Secret", "p-secret"),
        ("Secret", "rbd-secret"),
    ]


# ---------------------------------------------------------------- the distributor

CLUSTERS = [
    {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": c}}
    for c in ("m1", "m2", "m3")
]


def _app(name: str, config: str = "shared", secret: str = "") -> dict[str, Any]:
    env = [{"valueFrom": {"secretKeyRef": {"name": secret}}}] if secret else []
    pod = {"containers": [{"name": "c", "envFrom": [{"configMapRef": {"name": config}}], "env": env}]}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"replicas": 1, "template": {"spec": pod}},
    }


def _config_map(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "shop"}}


RULES = """
policy shop/a {
  select { kind Deployment name a }
  propagate dependencies
  clusters { names m1 }
}
policy shop/b {
  select { kind Deployment name b }
  propagate dependencies
  clusters { names m2 }
}
"""


def _evaluate(tmp_path: Path, rules: str, objects: list[dict[str, Any]]) -> Result:
    (tmp_path / "rules.fr").write_text(rules)
    return evaluate(load_rules([tmp_path / "rules.fr"]), load_facts(objects=[*CLUSTERS, *objects]))


def test_workloads_sharing_a_config_map_share_its_binding(tmp_path: Path) -> None:
    """mergeBindingSnapshot: one attached binding, required by both, on the clusters of both."""
    result = _evaluate(tmp_path, RULES, [_app("a"), _app("b"), _config_map("shared")])
    (attached,) = result.attached
    assert attached.binding == "shop/shared-configmap"
    assert attached.required_by == ("shop/a-deployment", "shop/b-deployment")
    assert attached.clusters == ("m1", "m2")
    assert [d.binding for d in result.placement("shop/a-deployment").dependencies] == ["shop/shared-configmap"]
    assert result.unmatched == ()  # bound as a dependency: not "no policy selects it"
    text = to_text(result)
    assert "dependencies: ConfigMap shared → shop/shared-configmap" in text
    assert "shop/shared-configmap: m1, m2  (required by shop/a-deployment, shop/b-deployment)" in text
    assert json.loads(to_json(result))["attached"] == [
        {
            "binding": "shop/shared-configmap",
            "kind": "ConfigMap",
            "name": "shared",
            "requiredBy": ["shop/a-deployment", "shop/b-deployment"],
            "clusters": ["m1", "m2"],
        }
    ]


def test_a_missing_dependency_is_said_and_binds_nothing(tmp_path: Path) -> None:
    result = _evaluate(tmp_path, RULES, [_app("a", secret="db")])
    assert not result.attached
    deps = result.placement("shop/a-deployment").dependencies
    assert [(d.kind, d.name, d.missing) for d in deps] == [("ConfigMap", "shared", True), ("Secret", "db", True)]
    assert "ConfigMap shared (missing: not in the snapshot)" in to_text(result)


def test_without_propagate_dependencies_nothing_is_attached(tmp_path: Path) -> None:
    rules = RULES.replace("  propagate dependencies\n", "")
    result = _evaluate(tmp_path, rules, [_app("a"), _config_map("shared")])
    assert not result.attached and not result.placement("shop/a-deployment").dependencies
    assert result.unmatched == ("shop/shared-configmap",)


def test_an_unscheduled_workload_binds_nothing(tmp_path: Path) -> None:
    """The distributor drops a binding not scheduled yet (no clusters)."""
    rules = RULES.replace("names m1", "names nowhere")
    result = _evaluate(tmp_path, rules, [_app("a"), _config_map("shared")])
    assert result.placement("shop/a-deployment").unschedulable and not result.attached


def test_application_failover_implies_propagate_dependencies(tmp_path: Path) -> None:
    rules = RULES.replace("  propagate dependencies\n", "  failover application { toleration 1m }\n")
    result = _evaluate(tmp_path, rules, [_app("a"), _config_map("shared")])
    assert [a.binding for a in result.attached] == ["shop/shared-configmap"]


def test_a_dependency_its_own_policy_places_goes_to_both(tmp_path: Path) -> None:
    """The binding controller's Works go to the placement's clusters and its requiredBy's."""
    rules = RULES + "policy shop/configs {\n  select { kind ConfigMap }\n  clusters { names m3 }\n}\n"
    result = _evaluate(tmp_path, rules, [_app("a"), _config_map("shared")])
    (attached,) = result.attached
    assert attached.clusters == ("m1", "m3") and attached.placed == ("m3",)
    assert result.placement("shop/shared-configmap").clusters == ("m3",)


def test_yaml_propagate_deps_and_the_dsl_convert_both_ways(tmp_path: Path) -> None:
    policy = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "a", "namespace": "shop"},
        "spec": {
            "propagateDeps": True,
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "a"}],
            "placement": {"clusterAffinity": {"clusterNames": ["m1"]}},
        },
    }
    path = tmp_path / "pp.json"
    path.write_text(json.dumps(policy))
    converted = CliRunner().invoke(main, ["convert", str(path)])
    assert converted.exit_code == 0 and "  propagate dependencies\n" in converted.stdout
    (tmp_path / "a.fr").write_text(converted.stdout)
    back = CliRunner().invoke(main, ["convert", str(tmp_path / "a.fr"), "--to", "yaml"])
    assert back.exit_code == 0 and "propagateDeps: true" in back.stdout
    result = evaluate(load_rules([path]), load_facts(objects=[*CLUSTERS, _app("a"), _config_map("shared")]))
    assert [a.binding for a in result.attached] == ["shop/shared-configmap"]


def test_propagate_what_else_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "r.fr").write_text("policy p {\n  select { kind Deployment }\n  propagate deps\n}\n")
    result = CliRunner().invoke(main, ["check", str(tmp_path / "r.fr")])
    assert result.exit_code == 1 and "unknown propagate 'deps'" in result.output


def test_an_attached_binding_in_the_snapshot_is_not_scheduled_nor_unmatched(tmp_path: Path) -> None:
    attached = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "shared-configmap", "namespace": "shop"},
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "ConfigMap", "name": "shared", "namespace": "shop"},
            "requiredBy": [{"namespace": "shop", "name": "a-deployment", "clusters": [{"name": "m1"}]}],
            "clusters": [],
        },
    }
    result = _evaluate(tmp_path, RULES.replace("  propagate dependencies\n", ""), [_config_map("shared"), attached])
    assert result.unmatched == () and not result.placements


def test_diff_counts_the_dependencies_that_move(tmp_path: Path) -> None:
    """A policy moving its workload moves the bindings of its dependencies too; diff says so."""

    objects = [_app("a"), _config_map("shared")]
    base = _evaluate(tmp_path, RULES, objects)
    head = _evaluate(tmp_path, RULES.replace("names m1", "names m3"), objects)
    d = compare(base, head)
    assert [(c.binding, c.before, c.after, c.attached) for c in d.changes] == [
        ("shop/a-deployment", ("m1",), ("m3",), False),
        ("shop/shared-configmap", ("m1",), ("m3",), True),
    ]
    assert to_data(d)["summary"]["dependenciesMoved"] == 1
    assert diff_text(d).startswith("2 bindings moved (1 of them dependencies' bindings)")
    assert "shop/shared-configmap (dependency): m1 -> m3" in diff_text(d)


def test_resilience_counts_the_dependencies_that_follow(tmp_path: Path) -> None:
    """An N-1 sweep: the cluster a workload leaves takes its dependencies' binding along."""

    rules = (
        "policy shop/a {\n  select { kind Deployment name a }\n  propagate dependencies\n"
        "  clusters { names m1, m2 }\n  spread by cluster max 1\n}\n"
    )
    (tmp_path / "rules.fr").write_text(rules)
    facts = load_facts(objects=[*CLUSTERS, _app("a"), _config_map("shared")])

    on = Controllers.parse(["enable-no-execute-taint-eviction=true", "feature-gates=Failover=true"])
    impacts = sweep(load_rules([tmp_path / "rules.fr"]), facts, scenarios(facts.clusters), on)
    by_name = {i.scenario.name: i for i in impacts}
    assert by_name["m1"].moved == ("shop/a-deployment",)
    assert by_name["m1"].dependencies_moved == ("shop/shared-configmap",)
    assert by_name["m2"].dependencies_moved == ()
    assert by_name["m1"].data()["dependenciesMoved"] == ["shop/shared-configmap"]
    assert "dependencies following them: shop/shared-configmap" in sweep_text(impacts)
