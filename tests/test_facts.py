"""Facts: Karmada objects from YAML, with errors at the field's file, line and column."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import FactError, UsageError, load_facts
from engine.inputs.facts import binding_name


def write(tmp_path: Path, text: str, name: str = "facts.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_kubectl_shaped_objects(tmp_path: Path) -> None:
    write(
        tmp_path,
        """apiVersion: v1
kind: List
items:
- apiVersion: cluster.karmada.io/v1alpha1
  kind: Cluster
  metadata: {name: m1, labels: {env: prod}}
  spec:
    provider: aws
    region: eu-west-1
    zones: [a, b]
    taints: [{key: k, value: v, effect: NoExecute, timeAdded: "2026-12-01T10:00:00Z"}]
  status:
    conditions: [{type: Ready, status: "False", lastTransitionTime: 2026-12-01T09:59:00Z}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
""",
    )
    facts = load_facts([tmp_path])
    (cluster,) = facts.clusters
    assert (cluster.name, cluster.provider, cluster.zones, cluster.ready) == ("m1", "aws", ("a", "b"), "False")
    assert cluster.taints[0].time_added is not None and cluster.ready_since is not None
    (binding,) = facts.bindings
    assert binding.key == "shop/web-deployment" == f"shop/{binding_name('web', 'Deployment')}"
    assert binding.labels == {"app": "web"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: Cluster\nmetadata: {}\n", "facts.yaml:2:11: error: Cluster ?: metadata.name: required"),
        (
            "kind: Cluster\nmetadata: {name: m1, labels: {v: 1}}\n",
            "metadata.labels.v: label keys and values must be strings",
        ),
        ("kind: Cluster\nmetadata: {name: m1}\nspec: {zones: zone-a}\n", "spec.zones: expected a list, found a string"),
        (
            "kind: Cluster\nmetadata: {name: m1}\nspec: {taints: [{key: k, effect: Sometimes}]}\n",
            "unknown taint effect 'Sometimes'",
        ),
        (
            "kind: Cluster\nmetadata: {name: m1}\n---\nkind: Cluster\nmetadata: {name: m1}\n",
            "facts.yaml:5:18: error: Cluster m1: metadata.name: duplicate Cluster m1 (also at facts.yaml:1)",
        ),
        ("- just\n- a list\n", "expected a Kubernetes object (a mapping), found a list"),
        ("metadata: {name: x}\n", "kind: required"),
        ("kind: ResourceBinding\nmetadata: {name: b, namespace: n}\nspec: {}\n", "spec.resource: required"),
        (
            "kind: ResourceBinding\nmetadata: {name: b, namespace: n}\nspec:\n  resource: {kind: D, name: d}\n"
            "status: {aggregatedStatus: [{clusterName: m1, health: Sick}]}\n",
            "status.aggregatedStatus[0].health: expected Healthy, Unhealthy or Unknown",
        ),
        ("a: [unclosed\n", "facts.yaml:2:1: error: invalid YAML"),
        (
            "kind: Cluster\nmetadata: {name: m1}\nstatus:\n"
            '  conditions: [{type: Ready, status: "True", lastTransitionTime: yesterday}]\n',
            "expected an RFC 3339 time",
        ),
        # replica counts are int32 in Kubernetes; a larger one would keep Webster dividing for hours
        (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 99999999999}\n",
            "facts.yaml:4:18: error: Deployment web: spec.replicas: must be at most 2147483647 (an int32)",
        ),
        (
            "kind: Cluster\nmetadata: {name: m1}\nstatus: {resourceSummary: {allocatable: {cpu: 2x}}}\n",
            "status.resourceSummary.allocatable.cpu: quantities must match the regular expression",
        ),
    ],
)
def test_bad_facts_name_file_line_column_and_field(
    tmp_path: Path, text: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, text)
    with pytest.raises(FactError) as caught:
        load_facts(["facts.yaml"])
    rendered = str(caught.value)
    assert message in rendered
    assert "facts.yaml" in rendered


def test_unknown_fields_are_warnings_not_silence(tmp_path: Path) -> None:
    write(tmp_path, "kind: Cluster\nmetadata: {name: m1}\nspec: {regoin: eu}\n")
    facts = load_facts([tmp_path])
    (warning,) = facts.warnings
    assert "spec.regoin: unknown field, not evaluated; did you mean 'region'?" in warning.message


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file or directory"):
        load_facts([tmp_path / "nope"])


def test_an_annotation_key_is_checked_lowercased_and_a_label_key_as_it_is() -> None:
    """ValidateAnnotations checks IsQualifiedName(strings.ToLower(key)): an annotation's case does not
    matter; ValidateLabels checks a label key as it is (a prefix is a lowercase DNS subdomain)."""
    meta: dict[str, Any] = {"name": "w", "namespace": "n", "annotations": {"Example.com/Owner": "team"}}
    facts = load_facts(objects=[{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta}])
    assert facts.workloads[0].annotations == {"Example.com/Owner": "team"}
    meta = {"name": "w", "namespace": "n", "labels": {"Example.com/owner": "team"}}
    with pytest.raises(FactError, match="prefix part"):
        load_facts(objects=[{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta}])


def test_evolve_is_replace_and_keeps_only_the_cached_properties_that_still_hold() -> None:
    """engine.inputs.facts.evolve, which a simulation changes bindings and tasks with at every step, gives what
    dataclasses.replace gives; a cached property made of a field that changed is made again, the others kept."""
    from dataclasses import fields, replace
    from functools import cached_property

    from engine.inputs import facts
    from engine.inputs.facts import Binding, ClusterStatus, EvictionTask, TargetCluster, evolve

    cached = {n for n, v in vars(Binding).items() if isinstance(v, cached_property)}
    assert cached == set(facts._MADE_OF)  # a new cached property says what it is made of
    assert set().union(*facts._MADE_OF.values()) <= {f.name for f in fields(Binding)}
    binding = Binding(
        "shop",
        "web",
        "Deployment",
        clusters=(TargetCluster("a", 1), TargetCluster("b", 2)),
        aggregated_status=(ClusterStatus("a", "Healthy"), ClusterStatus("a", "Unhealthy")),
    )
    changes: list[dict[str, Any]] = [
        {"clusters": (TargetCluster("c", 3),)},
        {"aggregated_status": (ClusterStatus("b", "Unhealthy"),)},
        {"name": "api"},
        {"namespace": "ops"},
        {"cluster_scoped": True},
        {"eviction_tasks": (EvictionTask("a"),), "replicas": 4},
    ]
    for change in changes:
        for prop in cached:
            getattr(binding, prop)  # made, and kept on the binding
        made, expected = evolve(binding, **change), replace(binding, **change)
        assert made == expected and type(made) is Binding, change
        for prop in cached:
            assert getattr(made, prop) == getattr(expected, prop), (change, prop)
    task = EvictionTask("a")
    assert evolve(task, replicas=2) == replace(task, replicas=2)
    with pytest.raises(TypeError, match="no field 'cluster'"):
        evolve(binding, cluster=())
