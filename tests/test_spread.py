"""Cluster selection under spread constraints against Karmada's unit tests
(pkg/scheduler/core/spreadconstraint: select_clusters_test.go, select_clusters_by_region_test.go,
select_groups_test.go); each case cites its Go test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.inputs.facts import Cluster
from engine.schedule.replicas import Candidate
from engine.schedule.spread import (
    Group,
    GroupInfo,
    Limits,
    SelectError,
    by_cluster,
    by_region,
    regions,
    select,
    select_groups,
)


def _c(name: str, score: int, available: int, provider: str = "", region: str = "", zone: str = "") -> Candidate:
    cluster = Cluster(name, provider=provider, region=region, zones=(zone,) if zone else ())
    return Candidate(cluster, score, available, available)


# TestSelectBestClusters: the clusters, already sorted
FLEET = [
    _c("member4", 60, 50, "P2", "R2", "Z2"),
    _c("member2", 40, 60, "P1", "R1", "Z2"),
    _c("member3", 30, 80, "P2", "R1", "Z1"),
    _c("member1", 20, 40, "P1", "R1", "Z1"),
]


def _names(cs: list[Candidate]) -> list[str]:
    return [c.name for c in cs]


@pytest.mark.parametrize(
    ("replicas", "duplicated", "ignore", "expected"),
    [
        (100, True, False, ["member4", "member2"]),  # select clusters by cluster score
        (120, True, False, ["member4", "member2"]),  # Duplicated: resources not considered
        (120, False, True, ["member4", "member2", "member3", "member1"]),  # static weights: constraints ignored
        (120, False, False, ["member4", "member3"]),  # Divided: member2 swapped out for member3
    ],
)
def test_select_best_clusters(replicas: int, duplicated: bool, ignore: bool, expected: list[str]) -> None:
    spreads = {"cluster": Limits(1, 2)}
    assert _names(select(FLEET, spreads, replicas, duplicated, ignore)) == expected


def test_select_best_clusters_errors() -> None:
    with pytest.raises(SelectError, match=r"^no enough resource when selecting 2 clusters$"):
        select(FLEET, {"cluster": Limits(1, 2)}, 200, False, False)
    with pytest.raises(SelectError, match=r"^the number of feasible clusters is less than spreadConstraint.MinGroups$"):
        select(FLEET, {"cluster": Limits(7, 7)}, 100, True, False)
    with pytest.raises(SelectError, match=r"^just support cluster and region spread constraint$"):
        select(FLEET, {"zone": Limits(1, 2)}, 100, True, False)


def test_no_max_groups_selects_nothing() -> None:
    # maxGroups unset is 0: needCnt = min(len, 0) selects no cluster
    # (spreadconstraint/select_clusters_by_cluster.go)
    assert select(FLEET, {"cluster": Limits(1, 0)}, 10, True, False) == []


def test_select_by_region() -> None:
    # select_clusters_by_region_test.go: R1 (score 100) m1 (100), m2 (80); R2 (80) m3, m4 (80), m5 (60)
    r1 = [_c("member1", 100, 40, region="R1"), _c("member2", 80, 40, region="R1")]
    r2 = [_c("member3", 80, 40, region="R2"), _c("member4", 80, 40, region="R2"), _c("member5", 60, 40, region="R2")]

    groups = {"R1": Group("R1", r1, 100), "R2": Group("R2", r2, 80)}
    assert _names(by_region(groups, Limits(1, 1), Limits(2, 2))) == ["member1", "member2"]
    assert _names(by_region(groups, Limits(1, 1), Limits(3, 3))) == ["member3", "member4", "member5"]


def test_region_group_scores() -> None:
    # group_clusters.go calcGroupScoreForDuplicate and calcGroupScore, the worked examples in the comments
    dup_a = [_c(f"a{i}", 100, n, region="A") for i, n in enumerate([60, 70, 40, 30, 10])]
    dup_b = [_c(f"b{i}", 0, 60, region="B") for i in range(4)]
    scored = regions([*dup_a, *dup_b], 50, True, Limits(1, 0), 1)
    assert (scored["A"].score, scored["B"].score) == (2100, 4000)
    div_1 = [_c(f"a{i}", 100, n, region="A") for i, n in enumerate([10, 10, 10, 10, 5])]
    div_2 = [_c(f"b{i}", 0, n, region="B") for i, n in enumerate([40, 30, 10, 10])]
    scored = regions([*div_1, *div_2], 100, False, Limits(2, 0), 1)
    assert (scored["A"].score, scored["B"].score) == (45100, 50000)


def _g(spec: str) -> list[GroupInfo]:
    out = []
    for item in spec.split():
        name, rest = item.split("(")
        value, weight = rest.rstrip(")").split(",")
        out.append(GroupInfo(name, int(value), int(weight)))
    return out


# select_groups_test.go TestSelectGroups, groups as name(value,weight)
@pytest.mark.parametrize(
    ("groups", "low", "high", "target", "expected"),
    [
        ("", 1, 1, 1, []),
        ("R1(1,80)", 2, 3, 1, []),
        ("R1(1,80) R2(2,30)", 2, 3, 4, []),
        ("R1(1,80)", 1, 3, 1, ["R1"]),
        ("R1(1,80) R3(1,80) R2(1,60) R5(2,60) R4(5,50) R6(3,50)", 1, 3, 10, ["R5", "R4", "R6"]),
        ("R1(1,80) R2(4,40) R3(1,30) R4(3,30) R5(3,20) R6(5,10)", 2, 6, 5, ["R1", "R2"]),
        ("R1(1,60) R2(1,50) R3(1,40) R4(3,30) R5(3,20) R6(3,10)", 1, 3, 6, ["R1", "R4", "R5"]),
    ],
)
def test_select_groups(groups: str, low: int, high: int, target: int, expected: list[str]) -> None:
    assert [g.name for g in select_groups(_g(groups), low, high, target)] == expected


def test_group_selection_is_karmadas_own_on_random_cases() -> None:
    """500 random cases run through Karmada's selectGroups itself (tests/data/select_groups): the same
    groups, in the same order."""
    data = Path(__file__).parent / "data" / "select_groups"
    cases, selections = (json.loads((data / name).read_text()) for name in ("cases.json", "selections.json"))
    assert len(cases) == len(selections) == 500 and any(selections)
    for case, selection in zip(cases, selections, strict=True):
        groups = [GroupInfo(g["name"], g["value"], g["weight"]) for g in case["groups"]]
        chosen = select_groups(groups, case["min"], case["max"], case["target"])
        assert [g.name for g in chosen] == selection, case


def test_cluster_selection_is_karmadas_own_on_random_cases() -> None:
    """600 random selections by region and by cluster run through Karmada's own code
    (tests/data/select_clusters): the same clusters in the same order, or the same error."""
    data = Path(__file__).parent / "data" / "select_clusters"
    cases, selections = (json.loads((data / name).read_text()) for name in ("cases.json", "selections.json"))
    assert len(cases) == len(selections) == 600 and any(s["error"] for s in selections)

    def candidate(c: dict[str, Any]) -> Candidate:
        return Candidate(Cluster(c["name"]), c["score"], c["available"], c["available"])

    for case, selection in zip(cases, selections, strict=True):
        cluster = Limits(case["cluster"]["min"], case["cluster"]["max"])
        try:
            if case["region"] is not None:
                groups: dict[str, Group] = {}
                for r in case["regions"]:
                    groups[r["name"]] = Group(r["name"], [candidate(x) for x in r["clusters"]], r["score"])
                chosen = by_region(groups, Limits(case["region"]["min"], case["region"]["max"]), cluster)
            else:
                replicas = None if case["replicas"] == -1 else case["replicas"]
                chosen = by_cluster([candidate(x) for x in case["clusters"]], cluster, replicas)
            answer = {"clusters": [c.name for c in chosen], "error": ""}
        except SelectError as exc:
            answer = {"clusters": [], "error": str(exc)}
        assert answer == selection, case
