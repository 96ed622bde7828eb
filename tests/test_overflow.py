"""clusterAffinities[].overflowAffinities (Karmada v1.18+): the ClusterAffinity filter lets a workload onto the
term's overflow groups, clusters are sorted by overflow tier, and replicas fill the tiers in order.

Sources: pkg/scheduler/core/common.go assignWorkloadReplicas / enableOverflow, spreadconstraint
group_clusters.go getClusterOverflowOrder and util.go sortClusters, plugins/clusteraffinity Filter,
pkg/util/validation ValidateOverflowAffinities and ValidatePlacement (karmada f8fdd02).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import evaluate, load_facts, load_rules
from engine.errors import RuleError
from engine.inputs.facts import Cluster, TargetCluster
from engine.render.karmada import policies_yaml
from engine.schedule.replicas import Candidate, Request, Strategy, Unschedulable, assign_overflow
from engine.syntax.fmt import format_file
from engine.syntax.parse import parse


def _tiered(available: dict[str, tuple[int, int, int]]) -> list[Candidate]:
    """name → (overflow order, AvailableReplicas, AllocatableReplicas)."""
    return [Candidate(Cluster(n), 0, a, al, o) for n, (o, a, al) in available.items()]


# pkg/scheduler/core/common_test.go TestAssignReplicas, the "Overflow: …" cases (dynamic weight by available)
@pytest.mark.parametrize(
    ("name", "clusters", "replicas", "previous", "expected"),
    [
        ("primary group has enough capacity, no overflow needed",
         {"member1": (0, 10, 10), "member2": (1, 10, 10)}, 5, {}, {"member1": 5}),
        ("primary group capacity exhausted, remaining replicas overflow to next tier",
         {"member1": (0, 2, 2), "member2": (1, 10, 10)}, 5, {}, {"member1": 2, "member2": 3}),
        ("AvailableReplicas greater than AllocatableReplicas due to previously assigned replicas",
         {"member1": (0, 5, 2), "member2": (1, 10, 10)}, 8, {"member1": 3}, {"member1": 5, "member2": 3}),
    ],
)  # fmt: skip
def test_karmada_assign_replicas_overflow(
    name: str,
    clusters: dict[str, tuple[int, int, int]],
    replicas: int,
    previous: dict[str, int],
    expected: dict[str, int],
) -> None:
    request = Request(replicas, True, tuple(TargetCluster(n, r) for n, r in previous.items()))
    assert assign_overflow(Strategy.DYNAMIC_WEIGHT, _tiered(clusters), request) == expected, name


def test_karmada_all_tiers_exhausted_scheduling_fails() -> None:
    request = Request(10, True, ())
    with pytest.raises(Unschedulable, match="Clusters available replicas are not enough to schedule"):
        assign_overflow(Strategy.DYNAMIC_WEIGHT, _tiered({"member1": (0, 2, 2), "member2": (1, 2, 2)}), request)


# ---------------------------------------------------------------- the language

POLICY = """policy burst {
  select { kind Deployment }
  clusters primary {
    labels { tier = primary }
    overflow burst {
      labels { tier = burst }
    }
    overflow spot {
      names spot1
    }
  }
  replicas divided by available
}
"""


def _problems(text: str, tmp_path: Path) -> list[str]:
    path = tmp_path / "p.fr"
    path.write_text(text)
    with pytest.raises(RuleError) as info:
        load_rules([path])
    return [d.message for d in info.value.diagnostics]


def test_overflow_groups_format_and_convert_both_ways(tmp_path: Path) -> None:
    formatted = format_file(parse(POLICY, "p.fr"))
    assert "    labels { tier = primary }\n    overflow burst {\n      labels { tier = burst }\n    }\n" in formatted
    assert format_file(parse(formatted, "p.fr")) == formatted
    path = tmp_path / "p.fr"
    path.write_text(POLICY)
    rule_set = load_rules([path])
    text = policies_yaml(rule_set.files, rule_set.sources)
    assert "overflowAffinities:\n" in text and "affinityName: spot" in text
    back = tmp_path / "p.yaml"
    back.write_text(text)
    (policy,) = load_rules([back]).policies
    (term,) = [s for s in policy.statements if hasattr(s, "overflow")]
    assert [o.name.value for o in term.overflow] == ["burst", "spot"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (POLICY.replace("replicas divided by available", "replicas divided"),
         "overflowAffinities can only be used together with dynamic weight or aggregated scheduling"),
        (POLICY.replace("clusters primary {", "clusters {"),
         "overflow groups belong to a named clusters block"),
        (POLICY.replace("    labels { tier = primary }\n", ""),
         "overflowAffinities can only be used together with the inline ClusterAffinity"),
        (POLICY.replace("overflow spot", "overflow burst"),
         "overflow affinity name must be unique and must not duplicate the primary group's affinityName"),
        (POLICY.replace("overflow spot", "overflow primary"),
         "overflow affinity name must be unique and must not duplicate the primary group's affinityName"),
    ],
)  # fmt: skip
def test_karmada_validation(tmp_path: Path, text: str, message: str) -> None:
    assert any(message in p for p in _problems(text, tmp_path))


def test_aggregated_allows_overflow(tmp_path: Path) -> None:
    path = tmp_path / "p.fr"
    path.write_text(POLICY.replace("replicas divided by available", "replicas aggregated"))
    load_rules([path])


# ---------------------------------------------------------------- end to end


def _cluster(name: str, tier: str, cpu: int) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "labels": {"tier": tier}},
        "status": {"resourceSummary": {"allocatable": {"cpu": str(cpu), "memory": "64Gi", "pods": "100"}}},
    }


def _deployment(name: str, replicas: int) -> dict[str, Any]:
    container = {"name": "app", "image": "app:1", "resources": {"requests": {"cpu": "1"}}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [container]}}},
    }


def test_replicas_fill_the_primary_group_then_overflow_in_order(tmp_path: Path) -> None:
    path = tmp_path / "p.fr"
    path.write_text(POLICY)
    clusters = [_cluster("p1", "primary", 2), _cluster("p2", "primary", 1), _cluster("b1", "burst", 3)]
    clusters += [_cluster("spot1", "none", 50), _cluster("other", "none", 50)]
    rules = load_rules([path])
    result = evaluate(rules, load_facts(objects=[*clusters, _deployment("small", 3), _deployment("big", 8)]))
    small = result.placement("default/small-deployment")
    assert dict(small.replicas) == {"p1": 2, "p2": 1}  # the primary group holds all three
    big = result.placement("default/big-deployment")
    # primary (3 CPUs), then burst (3), then spot (the rest); `other` matches no group: filtered out
    assert dict(big.replicas) == {"b1": 3, "p1": 2, "p2": 1, "spot1": 2}
    assert "other" in big.rejected and "spot1" not in big.rejected
    huge = evaluate(rules, load_facts(objects=[*clusters[:3], _deployment("huge", 9)]))
    placement = huge.placement("default/huge-deployment")
    assert placement.unschedulable
    assert placement.message == "failed to assign replicas: Clusters available replicas are not enough to schedule."


def test_a_non_workload_uses_the_primary_group_only(tmp_path: Path) -> None:
    path = tmp_path / "p.fr"
    path.write_text(POLICY.replace("kind Deployment", "kind ConfigMap"))
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "default"}}
    clusters = [_cluster("p1", "primary", 2), _cluster("b1", "burst", 3)]
    result = evaluate(load_rules([path]), load_facts(objects=[*clusters, config_map]))
    placement = result.placement("default/cfg-configmap")
    assert placement.clusters == ("p1",) and "b1" in placement.rejected
