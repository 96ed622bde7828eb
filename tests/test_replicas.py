"""Replica estimation, Webster and the assign stage against Karmada's own unit tests
(pkg/util/helper/webstermethod_test.go, pkg/scheduler/core/assignment_test.go,
pkg/estimator/client/general_test.go); each case cites its Go test."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from engine.inputs.facts import Cluster, ResourceModel, ResourceSummary, TargetCluster
from engine.kube.quantity import parse_quantity
from engine.schedule.replicas import (
    Candidate,
    Request,
    SchedulingError,
    Strategy,
    Unschedulable,
    assign,
    estimate,
    names_descending,
    webster,
)

CLASSIC = {"PartyA": 100000, "PartyB": 80000, "PartyC": 30000, "PartyD": 20000}


# webstermethod_test.go TestAllocateWebsterSeats: the Wikipedia example, round by round
@pytest.mark.parametrize(
    ("seats", "expected"),
    [
        (1, (1, 0, 0, 0)),
        (2, (1, 1, 0, 0)),
        (3, (2, 1, 0, 0)),
        (4, (2, 1, 1, 0)),
        (5, (2, 2, 1, 0)),
        (6, (2, 2, 1, 1)),
        (7, (3, 2, 1, 1)),
        (8, (3, 3, 1, 1)),
    ],
)
def test_webster_classic_rounds(seats: int, expected: tuple[int, ...]) -> None:
    assert tuple(webster(seats, CLASSIC, {}).values()) == expected


def test_webster_edges() -> None:
    # TestAllocateWebsterSeats: empty votes → nothing; no seats → every party at 0
    assert webster(1, {}, {}) == {}
    assert webster(0, {"PartyA": 100, "PartyB": 200}, {}) == {"PartyA": 0, "PartyB": 0}
    # ties: fewer seats first, then the name
    assert webster(1, {"PartyA": 3, "PartyB": 1}, {"PartyA": 1, "PartyB": 0}) == {"PartyA": 1, "PartyB": 1}
    assert webster(1, {"PartyA": 1, "PartyB": 1}, {}) == {"PartyA": 1, "PartyB": 0}
    # ExampleAllocateWebsterSeats
    assert webster(4, {"Alpha": 5, "Beta": 3, "Gamma": 2}, {}) == {"Alpha": 2, "Beta": 1, "Gamma": 1}


def test_tie_breaker_by_uid() -> None:
    # pkg/util/helper/binding.go (Webster's tie break): fnv32a of the test UIDs, even → names ascending, odd →
    # descending
    assert not names_descending("4858ca61-3ff8-4095-8267-f3d059d8074c")
    assert names_descending("d43fdeeb-d750-4e2b-bee3-64eb94534f4c")
    assert not names_descending("")
    assert webster(1, {"a": 1, "b": 1}, {}, "d43fdeeb-d750-4e2b-bee3-64eb94534f4c") == {"a": 0, "b": 1}
    assert webster(1, {"a": 1, "b": 1}, {}, "4858ca61-3ff8-4095-8267-f3d059d8074c") == {"a": 1, "b": 0}


def _candidates(allocatable: dict[str, int], previous: dict[str, int] | None = None) -> list[Candidate]:
    previous = previous or {}
    return [Candidate(Cluster(name), 0, n + previous.get(name, 0), n) for name, n in allocatable.items()]


def _request(replicas: int, previous: dict[str, int] | None = None, fresh: bool = False) -> Request:
    targets = tuple(TargetCluster(name, n) for name, n in (previous or {}).items())
    return Request(replicas, True, targets, fresh=fresh)


def _weights(table: list[tuple[str, int]]):  # type: ignore[no-untyped-def]
    return lambda cluster: max([w for name, w in table if name == cluster.name], default=0)


THREE = {"m1": 0, "m2": 0, "m3": 0}


# assignment_test.go Test_assignByStaticWeightStrategy
@pytest.mark.parametrize(
    ("replicas", "weights", "expected"),
    [
        (12, [("m1", 3), ("m2", 2), ("m3", 1)], {"m1": 6, "m2": 4, "m3": 2}),
        (12, None, {"m1": 4, "m2": 4, "m3": 4}),
        (13, [("m1", 3), ("m2", 2), ("m3", 1)], {"m1": 7, "m2": 4, "m3": 2}),
        (14, [("m1", 3), ("m2", 2), ("m3", 1)], {"m1": 7, "m2": 5, "m3": 2}),
        (2, [("m1", 1)], {"m1": 2}),
        (3, [("m1", 1), ("m2", 1), ("m1", 2)], {"m1": 2, "m2": 1}),
    ],
)
def test_static_weight(replicas: int, weights: list[tuple[str, int]] | None, expected: dict[str, int]) -> None:
    clusters = _candidates(THREE if weights is None or len({n for n, _ in weights}) > 2 else {"m1": 0, "m2": 0})
    table = _weights(weights) if weights is not None else None
    assert assign(Strategy.STATIC_WEIGHT, clusters, _request(replicas), table) == expected


def test_static_weight_zero_replicas_is_not_a_workload() -> None:
    # Test_assignByStaticWeightStrategy "replicas 0": every cluster at 0, which AssignReplicas only
    # reaches for a non-workload (replicas 0 and no replicaRequirements)
    clusters = _candidates({"m1": 0, "m2": 0})
    assert assign(Strategy.STATIC_WEIGHT, clusters, Request(0, False, ())) == {"m1": 0, "m2": 0}


PREV = {"m1": 2, "m2": 4, "m3": 6}


# assignment_test.go Test_dynamicScale (Steady mode)
@pytest.mark.parametrize(
    ("strategy", "allocatable", "previous", "replicas", "expected"),
    [
        (Strategy.DYNAMIC_WEIGHT, {"m1": 1, "m2": 1, "m3": 1}, PREV, 6, {"m1": 1, "m2": 2, "m3": 3}),
        (Strategy.DYNAMIC_WEIGHT, {"m1": 10, "m2": 10, "m3": 10}, PREV, 24, {"m1": 6, "m2": 8, "m3": 10}),
        (Strategy.AGGREGATED, {"m1": 1, "m2": 1, "m3": 1}, {"m1": 4, "m2": 8}, 6, {"m2": 6}),
        (Strategy.AGGREGATED, {"m1": 100, "m2": 100}, {"m1": 4, "m2": 8}, 8, {"m2": 8}),
        (Strategy.AGGREGATED, {"m1": 4, "m2": 6, "m3": 8}, {"m1": 4, "m2": 8}, 24, {"m1": 7, "m2": 12, "m3": 5}),
        (Strategy.AGGREGATED, {"m1": 6, "m2": 6, "m3": 20}, {"m1": 4, "m2": 8}, 24, {"m1": 10, "m2": 14}),
        (Strategy.AGGREGATED, {"m1": 4, "m3": 8, "m4": 12}, {"m1": 4, "m2": 8}, 24, {"m1": 7, "m3": 7, "m4": 10}),
        (Strategy.DYNAMIC_WEIGHT, {"m1": 3, "m2": 3}, {"m1": 6, "m3": 6}, 12, {"m1": 9, "m2": 3}),
    ],
)
def test_dynamic_scale(
    strategy: Strategy, allocatable: dict[str, int], previous: dict[str, int], replicas: int, expected: dict[str, int]
) -> None:
    clusters = _candidates(allocatable, previous)
    assert assign(strategy, clusters, _request(replicas, previous)) == expected


# assignment_test.go Test_dynamicScale / Test_dynamicScaleUp: not enough available replicas
@pytest.mark.parametrize(
    ("strategy", "allocatable", "previous", "replicas", "available"),
    [
        (Strategy.DYNAMIC_WEIGHT, {"m1": 1, "m2": 1, "m3": 1}, PREV, 24, 3),
        (Strategy.AGGREGATED, {"m1": 1, "m2": 1, "m3": 1}, {"m1": 4, "m2": 8}, 24, 3),
        (Strategy.DYNAMIC_WEIGHT, {"m1": 3, "m2": 3, "m3": 3}, {}, 12, 9),
        (Strategy.AGGREGATED, {"m1": 3, "m2": 3, "m3": 3}, {}, 12, 9),
    ],
)
def test_not_enough_replicas(
    strategy: Strategy, allocatable: dict[str, int], previous: dict[str, int], replicas: int, available: int
) -> None:
    with pytest.raises(
        Unschedulable,
        match=rf"^failed to scale up: Clusters available replicas {available} are not enough to schedule\.$",
    ):
        assign(strategy, _candidates(allocatable, previous), _request(replicas, previous))


# assignment_test.go Test_dynamicScaleUp (no previous assignment, 12 replicas)
@pytest.mark.parametrize(
    ("strategy", "allocatable", "expected"),
    [
        (Strategy.DYNAMIC_WEIGHT, {"m1": 6, "m2": 8, "m3": 10}, {"m1": 3, "m2": 4, "m3": 5}),
        (Strategy.DYNAMIC_WEIGHT, {"m1": 8, "m2": 8, "m3": 10}, {"m1": 4, "m2": 4, "m3": 4}),
        (Strategy.AGGREGATED, {"m1": 6, "m2": 8, "m3": 10}, {"m2": 5, "m3": 7}),
        (Strategy.AGGREGATED, {"m1": 12, "m2": 8, "m3": 10}, {"m1": 12}),
    ],
)
def test_dynamic_scale_up(strategy: Strategy, allocatable: dict[str, int], expected: dict[str, int]) -> None:
    assert assign(strategy, _candidates(allocatable), _request(12)) == expected


def test_fresh_mode_divides_from_scratch() -> None:
    # dynamicFreshScale: the previous replicas count as available again, and are not kept
    clusters = _candidates({"m1": 0, "m2": 6}, {"m1": 6})
    assert assign(Strategy.DYNAMIC_WEIGHT, clusters, _request(6, {"m1": 6}, fresh=True)) == {"m1": 3, "m2": 3}
    assert assign(Strategy.DYNAMIC_WEIGHT, clusters, _request(6, {"m1": 6})) == {"m1": 6}


# assignment_test.go Test_assignByDuplicatedStrategy
def test_duplicated() -> None:
    assert assign(Strategy.DUPLICATED, _candidates({"m1": 0, "m2": 0}), _request(2)) == {"m1": 2, "m2": 2}
    with pytest.raises(SchedulingError, match=r"^no clusters available to schedule$"):  # AssignReplicas
        assign(Strategy.DUPLICATED, [], _request(2))
    # replicas 0 with replicaRequirements: every cluster gets 0, and removeZeroReplicasCluster drops them
    assert assign(Strategy.DUPLICATED, _candidates({"m1": 0}), _request(0)) == {}


def _summary(allocatable: dict[str, str], allocated: dict[str, str] | None = None) -> ResourceSummary:
    def parse(d: dict[str, str] | None) -> dict[str, Fraction]:
        return {k: parse_quantity(v) for k, v in (d or {}).items()}

    return ResourceSummary(parse(allocatable), parse(allocated))


def test_general_estimator_by_summary() -> None:
    # general.go maxAvailableReplicas / getMaximumReplicasBasedOnClusterSummary
    cluster = Cluster("m1", resource_summary=_summary({"cpu": "10", "memory": "20Gi", "pods": "100"}, {"cpu": "2"}))
    assert estimate(cluster, None) == 100  # no replicaRequirements: allowed pods
    assert estimate(cluster, {"cpu": parse_quantity("500m")}) == 16
    assert estimate(cluster, {"cpu": parse_quantity("1"), "memory": parse_quantity("4Gi")}) == 5
    assert estimate(cluster, {"nvidia.com/gpu": parse_quantity("1")}) == 0  # not allocatable there
    assert estimate(Cluster("m2"), None) == 0  # no resourceSummary
    full = Cluster("m3", resource_summary=_summary({"pods": "10"}, {"pods": "12"}))
    assert estimate(full, None) == 0


def test_general_estimator_by_resource_models() -> None:
    # getMaximumReplicasBasedOnResourceModels: nodes of each grade at its minimums, 110 pods each
    summary = _summary({"cpu": "100", "memory": "200Gi", "pods": "1000"})
    summary = ResourceSummary(summary.allocatable, allocatable_modelings=((0, 2), (1, 1)))
    models = (
        ResourceModel(0, {"cpu": Fraction(1), "memory": parse_quantity("4Gi")}),
        ResourceModel(1, {"cpu": Fraction(4), "memory": parse_quantity("16Gi")}),
    )
    cluster = Cluster("m1", resource_summary=summary, resource_models=models)
    # 2 nodes x floor(1 CPU / 2) = 0, 1 node x min(4/2, 16/1) = 2
    assert estimate(cluster, {"cpu": Fraction(2), "memory": parse_quantity("1Gi")}) == 2
    # no requests: 110 pods on each of the 3 nodes
    assert estimate(cluster, {}) == 330


def test_an_aggregated_scale_down_of_many_clusters_keeps_the_clusters_gos_sort_puts_first() -> None:
    """dynamicScaleDown sorts the binding's clusters by replicas with sort.Sort, which is not stable above
    12 clusters: of clusters tied on replicas, the Aggregated division keeps those Go's order puts first
    (orders from Go itself: tests/data/gosort), not those first in spec.clusters."""
    from tests.test_gosort import CASES, ORDERS

    def first_two_of_the_most(values: list[int], order: list[int]) -> list[int]:
        return [at for at in order if values[at] == max(values)][:2]

    found = [
        k
        for k, values in enumerate(CASES)
        if len(values) > 12
        and set(values) == {0, 1}
        and first_two_of_the_most(values, ORDERS[k]) != first_two_of_the_most(values, list(range(len(values))))
    ]
    assert found
    values = CASES[found[0]]
    previous = {f"m{i:02d}": v + 1 for i, v in enumerate(values)}  # in spec.clusters order: 1 or 2 replicas
    names = list(previous)
    kept = assign(Strategy.AGGREGATED, _candidates(dict.fromkeys(names, 0), previous), _request(4, previous))
    assert kept == {names[at]: 2 for at in first_two_of_the_most(values, ORDERS[found[0]])}


def test_webster_allocates_as_karmadas_own_code_on_random_cases() -> None:
    """400 random cases run through Karmada's AllocateWebsterSeats itself (tests/data/webster): seats,
    votes (ties, zeros, trillions), initial seats, tie-breaking by the uid's fnv32a."""
    data = Path(__file__).parent / "data" / "webster"
    cases, allocations = (json.loads((data / name).read_text()) for name in ("cases.json", "allocations.json"))
    assert len(cases) == len(allocations) == 400
    for case, allocation in zip(cases, allocations, strict=True):
        assert webster(case["seats"], case["votes"], case["initial"], case["uid"]) == allocation, case


def test_assignment_is_karmadas_own_on_random_cases() -> None:
    """800 random Aggregated, DynamicWeight and StaticWeight assignments (up to 20 candidates with tied
    available replicas, previous clusters, Fresh mode) run through Karmada's own assignment code
    (tests/data/assign): the same replicas per cluster, or the same error."""
    data = Path(__file__).parent / "data" / "assign"
    cases, answers = (json.loads((data / name).read_text()) for name in ("cases.json", "assignments.json"))
    assert len(cases) == len(answers) == 800 and any(a["error"] for a in answers)
    strategies = {
        "Aggregated": Strategy.AGGREGATED,
        "DynamicWeight": Strategy.DYNAMIC_WEIGHT,
        "StaticWeight": Strategy.STATIC_WEIGHT,
    }
    for case, answer in zip(cases, answers, strict=True):
        candidates = [Candidate(Cluster(c["name"]), 0, c["available"], c["allocatable"]) for c in case["candidates"]]
        previous = tuple(TargetCluster(p["name"], p["replicas"]) for p in case["previous"])
        request = Request(case["replicas"], True, previous, case["uid"], case["fresh"])
        try:
            mine = {"replicas": assign(strategies[case["strategy"]], candidates, request), "error": ""}
        except SchedulingError as exc:
            mine = {"replicas": {}, "error": str(exc)}
        assert mine == answer, case
