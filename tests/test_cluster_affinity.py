"""S2 cluster affinity, as Karmada's ClusterMatches (karmada-reference.md §6.1 TestClusterMatches)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import RuleError
from engine.inputs.matching import cluster_matches
from engine.inputs.objects import load_facts
from engine.syntax import ast
from engine.syntax.parse import parse
from tests.helpers import cluster, key, run, workload

CLUSTER1 = cluster(
    "cluster1", {"foo": "bar"}, zones=["zone1", "zone2", "zone3"], region="region1", provider="provider1"
)
NO_ZONES = cluster("cluster0", {"foo": "bar"})
ALL_ZONES = "zone in (zone1, zone2, zone3)"

# (§6.1 case, the clusters block, is cluster1 feasible)
CASES = [
    (1, "exclude cluster1 names cluster1", False),
    (2, "exclude cluster1 labels { foo = bar }", False),
    (3, f"exclude cluster1 fields {{ {ALL_ZONES} }}", False),
    (4, "names cluster1", True),
    (5, "names cluster2", False),
    (6, "labels { foo = bar } names cluster1", True),
    (7, "labels { foo = unmatched } names cluster1", False),
    (8, f"names cluster1 fields {{ {ALL_ZONES}, region in (region1) }}", True),
    (9, "names cluster1 fields { provider in (provider1) }", True),
    (10, "names cluster1 fields { zone notin (zone1, zone2, zone3) }", False),
    (11, "names cluster1 fields { provider notin (provider1) }", False),
    (12, "names cluster1 fields { region notin (region1) }", False),
    (13, f"labels {{ foo = bar }} fields {{ {ALL_ZONES} }}", True),
    (14, "labels { foo = bar } fields { provider notin (provider1) }", False),
    (15, "", True),
    (18, "names cluster1 fields { zone in (zone2) }", True),
    (19, "names cluster1 fields { region in (region2) }", False),
    (20, "fields { provider in (provider2) }", False),
    (22, f"fields {{ {ALL_ZONES} }} labels {{ foo = bar }} names cluster2", False),
    (23, f"fields {{ {ALL_ZONES} }} labels {{ foo = Unmatched }} names cluster1", False),
    # label-selector semantics beyond the table: NotIn and DoesNotExist pass when the key is absent
    (0, "labels { missing notin (x) }", True),
    (0, "labels { !missing }", True),
    (0, "labels { foo }", True),
    (0, "labels { foo != bar }", False),
    (0, "labels { foo in (bar, baz) }", True),
]


def policy(block: str) -> str:
    return f"policy p {{\n  select {{ kind Deployment }}\n  clusters {{ {block} }}\n}}\n"


@pytest.mark.parametrize(("case", "block", "feasible"), CASES, ids=[f"case{c[0]}-{c[1]}" for c in CASES])
def test_cluster_matches(tmp_path: Path, case: int, block: str, feasible: bool) -> None:
    result = run(tmp_path, policy(block), [CLUSTER1, workload("app")])
    placement = result.placement(key("app"))
    assert ("cluster1" in placement.feasible) is feasible
    if not feasible:
        (reason, *_) = placement.rejected["cluster1"]
        assert reason.message.startswith("did not match the placement cluster affinity constraint")
        assert reason.rule.startswith("p/clusters.") and reason.source.endswith("rules.fr:3")


@pytest.mark.parametrize(("case", "block", "feasible"), CASES, ids=[f"case{c[0]}-{c[1]}" for c in CASES])
def test_python_cluster_matches_says_the_same(case: int, block: str, feasible: bool) -> None:
    """engine.inputs.matching (static weights' targetCluster) against the same table as the rules."""
    (term,) = [s for s in parse(policy(block)).policies[0].statements if isinstance(s, ast.ClusterAffinity)]
    facts = load_facts(objects=[CLUSTER1])
    assert cluster_matches(facts.clusters[0], term.statements) is feasible


@pytest.mark.parametrize(
    ("expression", "feasible"),
    [("zone in (foo)", False), ("zone notin (foo)", True)],
)
def test_match_zones_without_zones(tmp_path: Path, expression: str, feasible: bool) -> None:
    """§6.1 Test_matchZones: In fails and NotIn passes on a cluster with no zones."""
    result = run(tmp_path, policy(f"fields {{ {expression} }}"), [NO_ZONES, workload("app")])
    assert ("cluster0" in result.placement(key("app")).feasible) is feasible


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ('labels { "" = bar }', "invalid label key ''"),  # §6.1 case 16: Karmada matches nothing; we refuse it
        ('fields { "" in (x) }', "unknown field selector key ''"),  # case 17
        ("fields { metadata.name in (cluster1) }", "unknown field selector key 'metadata.name'"),  # case 21
    ],
)
def test_invalid_selectors_are_check_errors(tmp_path: Path, block: str, message: str) -> None:
    with pytest.raises(RuleError, match=message):
        run(tmp_path, policy(block), [CLUSTER1, workload("app")])


def test_ordered_terms_use_the_first_that_fits(tmp_path: Path) -> None:
    """§1.3: clusterAffinities — the first term with a feasible placement wins."""
    rules = (
        "policy p {\n  select { kind Deployment }\n"
        "  clusters primary { labels { tier = gold } }\n  clusters backup { names cluster1 }\n}\n"
    )
    result = run(tmp_path, rules, [CLUSTER1, workload("app")])
    placement = result.placement(key("app"))
    assert placement.affinity_term == "backup" and placement.clusters == ("cluster1",)
    gold = cluster("gold", {"tier": "gold"})
    result = run(tmp_path, rules, [CLUSTER1, gold, workload("app")])
    assert result.placement(key("app")).affinity_term == "primary"
    assert result.placement(key("app")).clusters == ("gold",)
