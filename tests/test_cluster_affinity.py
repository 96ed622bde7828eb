"""Cluster affinity, as Karmada's ClusterMatches (pkg/util ClusterMatches, TestClusterMatches), and the
scheduler's loop over clusterAffinities terms (pkg/scheduler/scheduler.go scheduleResourceBindingWithClusterAffinities,
scheduler_test.go TestScheduleResourceBindingWithClusterAffinities)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from engine import RuleError, evaluate, load_rules
from engine.inputs.matching import cluster_matches
from engine.inputs.objects import load_facts
from engine.syntax import ast
from engine.syntax.parse import parse
from tests.helpers import binding, cluster, key, run, workload

CLUSTER1 = cluster(
    "cluster1", {"foo": "bar"}, zones=["zone1", "zone2", "zone3"], region="region1", provider="provider1"
)
NO_ZONES = cluster("cluster0", {"foo": "bar"})
ALL_ZONES = "zone in (zone1, zone2, zone3)"

# (TestClusterMatches case, the clusters block, is cluster1 feasible)
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
    """pkg/util/selector_test.go Test_matchZones: In fails and NotIn passes on a cluster with no zones."""
    result = run(tmp_path, policy(f"fields {{ {expression} }}"), [NO_ZONES, workload("app")])
    assert ("cluster0" in result.placement(key("app")).feasible) is feasible


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ('labels { "" = bar }', "invalid label key ''"),  # TestClusterMatches: Karmada matches nothing; we refuse it
        ('fields { "" in (x) }', "unknown field selector key ''"),  # case 17
        ("fields { metadata.name in (cluster1) }", "unknown field selector key 'metadata.name'"),  # case 21
    ],
)
def test_invalid_selectors_are_check_errors(tmp_path: Path, block: str, message: str) -> None:
    with pytest.raises(RuleError, match=message):
        run(tmp_path, policy(block), [CLUSTER1, workload("app")])


def test_ordered_terms_use_the_first_that_fits(tmp_path: Path) -> None:
    """propagation_types.go ClusterAffinities — the first term with a feasible placement wins."""
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


TERMS = (
    "policy p {\n  select { kind Deployment }\n"
    "  clusters affinity1 { names cluster1 }\n  clusters affinity2 { names cluster2 }\n}\n"
)


def _scheduled(observed: str, triggered: str | None, last: str | None) -> dict[str, Any]:
    """A binding scheduled before, its status naming the term it was scheduled by; a reschedule asked for."""
    made = binding("app", ["cluster2"])
    if triggered is not None:
        made["spec"]["rescheduleTriggeredAt"] = triggered
    made["status"] = {"schedulerObservingAffinityName": observed}
    if last is not None:
        made["status"]["lastScheduledTime"] = last
    return made


# scheduler_test.go TestScheduleResourceBindingWithClusterAffinities: (name, triggered, last, the term scheduled by)
RESTARTS = [
    ("explicit rescheduling restarts from first affinity", "1970-01-01T00:00:02Z", "1970-01-01T00:00:01Z", "affinity1"),
    ("without explicit rescheduling resumes from observed affinity", None, None, "affinity2"),
    # util.RescheduleRequired: a trigger before the last scheduling, or none scheduled yet, is no reschedule
    ("a trigger older than the last scheduling", "1970-01-01T00:00:01Z", "1970-01-01T00:00:02Z", "affinity2"),
    ("a trigger before any scheduling finished", "1970-01-01T00:00:02Z", None, "affinity2"),
]


@pytest.mark.parametrize(("case", "triggered", "last", "term"), RESTARTS, ids=[c[0] for c in RESTARTS])
def test_a_reschedule_starts_again_at_the_first_term(
    tmp_path: Path, case: str, triggered: str | None, last: str | None, term: str
) -> None:
    objects = [CLUSTER1, cluster("cluster2"), workload("app"), _scheduled("affinity2", triggered, last)]
    (tmp_path / "rules.fr").write_text(TERMS)
    result = evaluate(load_rules([tmp_path / "rules.fr"]), load_facts(objects=objects), reschedule_all=True)
    placement = result.placement(key("app"))
    assert placement.affinity_term == term
    assert placement.clusters == ("cluster1",) if term == "affinity1" else ("cluster2",)


def test_a_policy_without_terms_reports_none(tmp_path: Path) -> None:
    """Karmada records no schedulerObservingAffinityName for a placement without clusterAffinities: a binding
    whose status still names a term of an older placement is reported with none."""
    rules = "policy p {\n  select { kind Deployment }\n  clusters { names cluster2 }\n}\n"
    settled = _scheduled("affinity2", None, None)
    settled["metadata"]["annotations"] = {
        "policy.karmada.io/applied-placement": '{"clusterAffinity":{"clusterNames":["cluster2"]}}'
    }
    settled["spec"]["placement"] = {"clusterAffinity": {"clusterNames": ["cluster2"]}}
    objects = [CLUSTER1, cluster("cluster2"), workload("app"), settled]
    for reschedule in (False, True):
        (tmp_path / "rules.fr").write_text(rules)
        result = evaluate(load_rules([tmp_path / "rules.fr"]), load_facts(objects=objects), reschedule_all=reschedule)
        assert result.placement(key("app")).affinity_term is None


def _random_block(rng: random.Random, names: list[str]) -> str:
    """A clusters block of random statements: names, exclude, a label selector and a field selector."""
    parts = []
    if rng.random() < 0.4:
        parts.append("names " + ", ".join(rng.sample(names, rng.randint(1, 3))))
    if rng.random() < 0.3:
        parts.append("exclude " + ", ".join(rng.sample(names, rng.randint(1, 2))))
    if rng.random() < 0.7:
        requirements = []
        for k in rng.sample(["tier", "team", "gpu"], rng.randint(1, 3)):  # one requirement a key: none conflict
            vs = rng.sample(["a", "b", "c"], rng.randint(1, 2))
            requirements.append(
                rng.choice(
                    [
                        f"{k} = {vs[0]}",
                        f"{k} != {vs[0]}",
                        f"{k} in ({', '.join(vs)})",
                        f"{k} notin ({', '.join(vs)})",
                        k,
                        f"!{k}",
                    ]
                )
            )
        parts.append("labels { " + ", ".join(requirements) + " }")
    if rng.random() < 0.5:
        requirements = []
        for field in rng.sample(["zone", "region", "provider"], rng.randint(1, 2)):
            values = rng.sample([f"{field}1", f"{field}2", f"{field}3"], rng.randint(1, 2))
            requirements.append(f"{field} {rng.choice(['in', 'notin'])} ({', '.join(values)})")
        parts.append("fields { " + ", ".join(requirements) + " }")
    rng.shuffle(parts)
    return " ".join(parts)


def _random_cluster(rng: random.Random, name: str) -> dict[str, Any]:
    labels = {k: rng.choice(["a", "b", "c"]) for k in ("tier", "team", "gpu") if rng.random() < 0.6}
    spec: dict[str, Any] = {}
    if rng.random() < 0.7:
        spec["zones"] = rng.sample(["zone1", "zone2", "zone3"], rng.randint(1, 2))
    if rng.random() < 0.7:
        spec["region"] = rng.choice(["region1", "region2", "region3"])
    if rng.random() < 0.7:
        spec["provider"] = rng.choice(["provider1", "provider2", "provider3"])
    return cluster(name, labels, **spec)


@pytest.mark.parametrize("seed", range(30))
def test_python_cluster_matches_says_what_the_rules_say_on_random_blocks(tmp_path: Path, seed: int) -> None:
    """ClusterMatches is written twice, compiled to rules (engine.compile.policies) and in Python
    (engine.inputs.matching: ClusterTaintPolicy targets, static weights, overflow tiers, requeueing): on random
    clusters and random blocks of names, exclusions, label and field selectors, the two find the same clusters."""
    rng = random.Random(seed)
    names = [f"member{i}" for i in range(12)]
    clusters = [_random_cluster(rng, n) for n in names]
    block = _random_block(rng, names)
    result = run(tmp_path, policy(block), [*clusters, workload("app")])
    feasible = set(result.placement(key("app")).feasible)
    (term,) = [s for s in parse(policy(block)).policies[0].statements if isinstance(s, ast.ClusterAffinity)]
    facts = load_facts(objects=clusters)
    assert {c.name for c in facts.clusters if cluster_matches(c, term.statements)} == feasible, block
