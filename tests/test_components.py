"""Multi-component workloads (spec.components, the MultiplePodTemplatesScheduling gate): the general
estimator's component sets (karmada pkg/estimator/client/general_test.go TestGetMaxAvailableComponentSetsGeneral,
TestGetMaximumSetsBasedOnResourceModels) and the scheduler's handling of them (pkg/scheduler/core/common.go
SelectClusters and AssignReplicas, estimation.go isMultiTemplateSchedulingApplicable)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import evaluate, load_facts, load_rules
from engine.inputs.facts import Cluster, Component
from engine.render.results import to_json, to_text
from engine.schedule.replicas import component_sets, sets_by_models
from tests.gates import ON

GPU = "nvidia.com/gpu"


def cluster(summary: dict[str, Any] | None = None, models: list[dict[str, Any]] | None = None) -> Cluster:
    obj: dict[str, Any] = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "c"}}
    if models is not None:
        obj["spec"] = {"resourceModels": models}
    if summary is not None:
        obj["status"] = {"resourceSummary": summary}
    (found,) = load_facts(objects=[obj]).clusters
    return found


def components(*items: tuple[str, int, dict[str, str]]) -> tuple[Component, ...]:
    """Components as a ResourceBinding carries them, read by the facts loader (quantity formats kept)."""
    rb = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "x", "namespace": "n"},
        "spec": {
            "resource": {"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment", "name": "x"},
            "components": [
                {"name": name, "replicas": n, "replicaRequirements": {"resourceRequest": request}}
                for name, n, request in items
            ],
        },
    }
    (binding,) = load_facts(objects=[rb]).bindings
    return binding.components


JM_TM_CPU = components(("jobmanager", 1, {"cpu": "1"}), ("taskmanager", 2, {"cpu": "1.5"}))
JM_TM_MIXED = components(
    ("jobmanager", 1, {"cpu": "1", "memory": "2Gi"}), ("taskmanager", 2, {"cpu": "2000m", "memory": "2Gi"})
)
SUMMARY = {
    "allocatable": {"pods": "100", "cpu": "10", "memory": "8Gi"},
    "allocated": {"pods": "20", "cpu": "0", "memory": "2Gi"},
}

# TestGetMaxAvailableComponentSetsGeneral
GENERAL = [
    ("nil resource summary", None, JM_TM_CPU, 0),
    ("no allowed pods", {"allocatable": {"pods": "10"}, "allocated": {"pods": "10"}}, JM_TM_CPU, 0),
    ("empty component list should return max pod allowance", {"allocatable": {"pods": "10"}}, (), 10),
    ("basic resource estimation", SUMMARY, JM_TM_CPU, 2),
    ("resource estimation with mixed components", SUMMARY, JM_TM_MIXED, 1),
    (
        "estimation limited by pod count",
        {"allocatable": {"pods": "3", "cpu": "100", "memory": "1Ti"}},
        components(("small-component", 3, {"cpu": "10m", "memory": "1Mi"})),
        1,
    ),
    (
        "custom resource estimation with GPUs",
        {
            "allocatable": {"pods": "20", "cpu": "40", "memory": "64Gi", GPU: "8"},
            "allocated": {"pods": "0", "cpu": "0", "memory": "0Gi", GPU: "0"},
        },
        components(("gpu-worker", 2, {"cpu": "4", "memory": "8Gi", GPU: "1"})),
        4,
    ),
]


@pytest.mark.parametrize(("summary", "parts", "expected"), [c[1:] for c in GENERAL], ids=[c[0] for c in GENERAL])
def test_general_estimator_component_sets(
    summary: dict[str, Any] | None, parts: tuple[Component, ...], expected: int
) -> None:
    assert component_sets(cluster(summary), parts) == expected


def test_quantities_are_compared_as_quantity_as_int64_reads_them() -> None:
    """quantityAsInt64: millis of a decimal quantity, the value of a binary one, whatever the resource. Memory
    allocatable written in bytes (decimal) against a request in Gi (binary) counts a thousand times the sets."""
    request = components(("worker", 1, {"memory": "1Gi"}))
    binary = {"allocatable": {"pods": "1000000", "memory": "4Gi"}}
    decimal = {"allocatable": {"pods": "1000000", "memory": str(4 * 2**30)}}
    assert component_sets(cluster(binary), request) == 4
    assert component_sets(cluster(decimal), request) == 4000


def grades(*minimums: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {"grade": g, "ranges": [{"name": k, "min": v, "max": "1000000"} for k, v in m.items()]}
        for g, m in enumerate(minimums)
    ]


def modelled(models: list[dict[str, Any]], counts: list[int], **summary: Any) -> Cluster:
    modelings = [{"grade": g, "count": n} for g, n in enumerate(counts)]
    return cluster({"allocatableModelings": modelings, **summary}, models)


CPU3 = grades({"cpu": "500m"}, {"cpu": "1000m"}, {"cpu": "2000m"})
JM_TM = (("jobmanager", 1, {"cpu": "1", "memory": "2Gi"}), ("taskmanager", 3, {"cpu": "3", "memory": "10Gi"}))
# TestGetMaximumSetsBasedOnResourceModels (upper bound 100)
MODELS = [
    ("No resource requirement", modelled(CPU3, [5, 0, 10]), components(("no-resource", 1, {})), 100),
    (
        "CPU-only: 3 grades, only highest compliant",
        modelled(CPU3, [5, 0, 10]),
        components(("cpu-job", 1, {"cpu": "1500m"})),
        10,
    ),
    (
        "Multi-resource with GPUs across grades",
        modelled(
            grades(
                {"cpu": "1000m", "memory": "2Gi", GPU: "0"},
                {"cpu": "2000m", "memory": "4Gi", GPU: "1"},
                {"cpu": "4000m", "memory": "8Gi", GPU: "2"},
            ),
            [4, 3, 2],
        ),
        components(("gpu-worker", 2, {"cpu": "2000m", "memory": "4Gi", GPU: "1"})),
        3,
    ),
    (
        "No compliant grades = 0 sets",
        modelled(grades({"cpu": "1000m"}, {"cpu": "2000m"}), [10, 10]),
        components(("too-heavy", 1, {"cpu": "3000m"})),
        0,
    ),
    (
        "Multi-component JM/TM across grades (CPU+Mem)",
        modelled(
            grades(
                {"cpu": "1000m", "memory": "2Gi"},
                {"cpu": "3000m", "memory": "10Gi"},
                {"cpu": "4000m", "memory": "12Gi"},
            ),
            [2, 6, 3],
            allocatable={"cpu": "32", "memory": "100Gi", "pods": "1000"},
            allocated={"cpu": "4", "memory": "4Gi", "pods": "50"},
        ),
        components(*JM_TM),
        3,
    ),
    (
        "Three-component CRD across 4 grades (CPU+Mem)",
        modelled(
            grades(
                {"cpu": "1000m", "memory": "2Gi"},
                {"cpu": "2000m", "memory": "4Gi"},
                {"cpu": "3000m", "memory": "6Gi"},
                {"cpu": "8000m", "memory": "12Gi"},
            ),
            [2, 3, 2, 6],
        ),
        components(*JM_TM, ("cache", 1, {"cpu": "500m", "memory": "1Gi"})),
        2,
    ),
]


@pytest.mark.parametrize(("found", "parts", "expected"), [c[1:] for c in MODELS], ids=[c[0] for c in MODELS])
def test_sets_by_resource_models(found: Cluster, parts: tuple[Component, ...], expected: int) -> None:
    assert sets_by_models(found, parts, 100) == expected


def test_no_resource_models_leave_the_summary_bound() -> None:
    """'No grades defined → error': applyResourceModelBound logs it and keeps the summary's sets."""
    bare = cluster({"allocatable": {"pods": "100", "cpu": "10"}, "allocatableModelings": [{"grade": 0, "count": 3}]})
    assert sets_by_models(bare, JM_TM_CPU, 100) is None
    assert component_sets(bare, JM_TM_CPU) == 2


def test_the_models_bound_the_summary() -> None:
    """The JM/TM cluster by its summary alone: 28 CPUs left hold 2 sets of 10; the models would hold 3."""
    found = MODELS[4][1]
    assert isinstance(found, Cluster)
    assert component_sets(found, components(*JM_TM)) == 2


# ---------------------------------------------------------------- the scheduler


def member(name: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "status": {"resourceSummary": {"allocatable": {"pods": "110", "cpu": cpu, "memory": "64Gi"}}},
    }


def flink(parts: list[dict[str, Any]] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "resource": {
            "apiVersion": "flink.apache.org/v1beta1",
            "kind": "FlinkDeployment",
            "namespace": "s",
            "name": "job",
        },
        "replicas": 1,
    }
    if parts is not None:
        spec["components"] = parts
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "job-flinkdeployment", "namespace": "s"},
        "spec": spec,
    }


PARTS = [
    {"name": "jobmanager", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "1"}}},
    {"name": "taskmanager", "replicas": 4, "replicaRequirements": {"resourceRequest": {"cpu": "2"}}},
]


def evaluated(tmp_path: Path, policy: str, parts: list[dict[str, Any]] | None) -> Any:
    (tmp_path / "p.fr").write_text(f"policy s/p {{\n  select {{ kind FlinkDeployment }}\n{policy}\n}}\n")
    objects = [member("big", "8"), member("huge", "64"), member("small", "4"), flink(parts)]
    return evaluate(load_rules([tmp_path / "p.fr"]), load_facts(objects=objects), controllers=ON)


def test_one_cluster_is_chosen_by_whole_sets(tmp_path: Path) -> None:
    """isMultiTemplateSchedulingApplicable (spread by cluster, minGroups 1 = maxGroups 1): clusters are ordered
    by the sets they hold (one set needs 9 CPUs: big holds 0, huge 7, small 0), one set is needed, and the
    workload goes whole to the chosen cluster, each component's replicas recorded for it
    (common.go buildTargetComponents)."""
    result = evaluated(tmp_path, "  spread by cluster min 1 max 1\n  replicas divided by available", PARTS)
    (p,) = result.placements
    assert p.clusters == ("huge",) and p.replicas == {"huge": 0}
    assert p.components == (("jobmanager", 1), ("taskmanager", 4))
    data = json.loads(to_json(result))["placements"][0]
    assert data["components"] == [{"name": "jobmanager", "replicas": 1}, {"name": "taskmanager", "replicas": 4}]
    assert "  components: jobmanager 1, taskmanager 4 (a whole set on each cluster)" in to_text(result)


def test_without_a_set_anywhere_no_cluster_is_selected(tmp_path: Path) -> None:
    parts = [{**PARTS[0]}, {**PARTS[1], "replicas": 40}]  # one set needs 81 CPUs
    result = evaluated(tmp_path, "  spread by cluster min 1 max 1\n  replicas divided by available", parts)
    (p,) = result.placements
    assert p.unschedulable and p.message.startswith("failed to select clusters")


def test_components_without_a_one_cluster_placement_go_to_every_cluster(tmp_path: Path) -> None:
    """AssignReplicas: a workload of several components is not divided; every selected cluster gets it (no
    replica count, no components recorded: recordComponentResult needs the one-cluster placement)."""
    result = evaluated(tmp_path, "  replicas divided by available", PARTS)
    (p,) = result.placements
    assert p.clusters == ("big", "huge", "small") and set(p.replicas.values()) == {0} and p.components == ()
    # without components the same binding is divided by its one pod template
    legacy = evaluated(tmp_path, "  replicas divided by available", None)
    assert list(legacy.placements[0].replicas.values()) == [1]


def test_a_duplicated_multi_component_workload_takes_the_cluster_with_most_sets(tmp_path: Path) -> None:
    """Duplicated ignores available replicas as a need (shouldIgnoreAvailableResource) but the clusters are
    still ordered by them (score, then available sets, then name): huge, with 7 sets, comes first."""
    result = evaluated(tmp_path, "  spread by cluster min 1 max 1", PARTS)
    (p,) = result.placements
    assert p.clusters == ("huge",) and p.components == (("jobmanager", 1), ("taskmanager", 4))


def test_without_the_gate_components_are_not_read(tmp_path: Path) -> None:
    """The scheduler reads spec.components only with the MultiplePodTemplatesScheduling gate (alpha, off as
    Karmada ships it: pkg/scheduler/core common.go, util.go): off, the binding is placed as one without them, and
    the binding is named once with the setting that turns the gate on."""
    from engine.karmada.gates import DEFAULT_CONTROLLERS

    (tmp_path / "p.fr").write_text(
        "policy s/p {\n  select { kind FlinkDeployment }\n  replicas divided by available\n}\n"
    )
    objects = [member("big", "8"), member("huge", "64"), member("small", "4"), flink(PARTS)]
    rules = load_rules([tmp_path / "p.fr"])
    off = evaluate(rules, load_facts(objects=objects), controllers=DEFAULT_CONTROLLERS)
    legacy = evaluate(rules, load_facts(objects=[*objects[:3], flink(None)]), controllers=DEFAULT_CONTROLLERS)
    assert off.placements[0].replicas == legacy.placements[0].replicas and off.placements[0].components == ()
    (said,) = [w.message for w in off.warnings if "MultiplePodTemplatesScheduling" in w.message]
    assert said.startswith("binding s/") and said.endswith(
        "--controller feature-gates=MultiplePodTemplatesScheduling=true"
    )


def test_bad_components_are_errors_at_their_fields() -> None:
    from engine.errors import FactError

    rb = flink(None)
    rb["spec"]["components"] = [{"name": "jm", "replicas": "two"}, {"replicas": -1}, 7]
    with pytest.raises(FactError) as caught:
        load_facts(objects=[rb])
    text = caught.value.render()
    for said in (
        "spec.components[0].replicas: expected an integer",
        "spec.components[1].name: required",
        "spec.components[1].replicas: must be at least 0",
        "spec.components[2]: expected a mapping",
    ):
        assert said in text, text
