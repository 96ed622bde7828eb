"""Workload affinity and anti-affinity (plugins/workloadaffinity/workload_affinity.go, the cases of
test/e2e/suites/base/workloadaffinity_test.go) and fleetrules' preferred terms and topology domains."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gates import ON
from tests.helpers import binding, cluster, key, run, workload

CLUSTERS = [cluster("m1", {"region": "eu"}), cluster("m2", {"region": "us"}), cluster("m3", {"region": "eu"})]


def policy(*terms: str, clusters: str = "", namespaces: str = "") -> str:
    select = f"kind Deployment {namespaces}"
    body = "".join(f"  {t}\n" for t in terms)
    block = f"  clusters {{ {clusters} }}\n" if clusters else ""
    return f"policy p {{\n  select {{ {select} }}\n{block}  spread by cluster max 1\n{body}}}\n"


def test_anti_affinity_spreads_a_group(tmp_path: Path) -> None:
    """workloadaffinity_test.go (e2e): two workloads of one group with maxGroups 1 land on different clusters."""
    apps = [workload(n, {"group": "g"}) for n in ("a", "b", "c", "d")]
    result = run(tmp_path, policy("workload anti-affinity by group"), [*CLUSTERS, *apps])
    assert [result.placement(key(n)).clusters for n in "abc"] == [("m1",), ("m2",), ("m3",)]
    fourth = result.placement(key("d"))
    assert fourth.unschedulable and fourth.clusters == ()
    assert {r.rule for rs in fourth.rejected.values() for r in rs} == {"workload-anti-affinity"}
    # FitError counts the plugin's reason; the group value stays in the per-cluster reasons
    assert (
        fourth.message
        == "0/3 clusters are available: 3 cluster already has workload with the same anti-affinity group."
    )
    assert all("group=g" in rs[0].message for rs in fourth.rejected.values())


def test_affinity_co_locates_a_group(tmp_path: Path) -> None:
    """workloadaffinity_test.go (e2e): two workloads of one group with maxGroups 1 land on the same cluster; the
    first is free."""
    apps = [workload("b", {"group": "g"}), workload("a", {"group": "g"})]
    facts = [*CLUSTERS, *apps, binding("b", ["m2"])]
    result = run(tmp_path, policy("workload affinity by group"), facts)
    # a is placed first (name order) and may go anywhere: it sees b's current placement on m2
    assert result.placement(key("a")).clusters == ("m2",)
    assert result.placement(key("b")).clusters == ("m2",)


def test_first_workload_of_a_group_is_not_blocked(tmp_path: Path) -> None:
    result = run(tmp_path, policy("workload affinity by group"), [*CLUSTERS, workload("a", {"group": "g"})])
    assert result.placement(key("a")).feasible == ("m1", "m2", "m3")


def test_groups_are_namespace_scoped(tmp_path: Path) -> None:
    """workloadaffinity_test.go (e2e): the same label in two namespaces, both anti-affine, both pinned to X: both
    schedule on X."""
    apps = [workload("a", {"group": "g"}, namespace="n1"), workload("a", {"group": "g"}, namespace="n2")]
    result = run(tmp_path, policy("workload anti-affinity by group", clusters="names m1"), [*CLUSTERS, *apps])
    assert result.placement(key("a", "n1")).clusters == ("m1",)
    assert result.placement(key("a", "n2")).clusters == ("m1",)


def test_mixed_terms_on_one_cluster(tmp_path: Path) -> None:
    """workloadaffinity_test.go (e2e): dep1 affinity on A; dep2 anti on B; dep3 both; all pinned to X → dep1 and one
    of dep2/dep3."""
    rules = (
        "policy aff { select { kind Deployment labels { role = one } } clusters { names m1 }"
        " spread by cluster max 1 workload affinity by A }\n"
        "policy anti { select { kind Deployment labels { role = two } } clusters { names m1 }"
        " spread by cluster max 1 workload anti-affinity by B }\n"
        "policy both { select { kind Deployment labels { role = three } } clusters { names m1 }"
        " spread by cluster max 1 workload affinity by A workload anti-affinity by B }\n"
    )
    apps = [
        workload("dep1", {"role": "one", "A": "x"}),
        workload("dep2", {"role": "two", "B": "y"}),
        workload("dep3", {"role": "three", "A": "x", "B": "y"}),
    ]
    result = run(tmp_path, rules, [*CLUSTERS, *apps])
    assert result.placement(key("dep1")).clusters == ("m1",)
    scheduled = [n for n in ("dep2", "dep3") if result.placement(key(n)).clusters == ("m1",)]
    assert len(scheduled) == 1


def test_a_workload_without_the_label_is_unconstrained(tmp_path: Path) -> None:
    apps = [workload("a", {"group": "g"}), workload("b")]
    result = run(tmp_path, policy("workload anti-affinity by group", clusters="names m1"), [*CLUSTERS, *apps])
    assert result.placement(key("b")).clusters == ("m1",)


def test_a_cluster_already_targeted_passes(tmp_path: Path) -> None:
    """workload_affinity.go: C ∈ spec.clusters → Success, even when a peer is there too: the scheduler never takes
    away, through these plugins, what it placed."""
    apps = [workload("a", {"group": "g"}), workload("b", {"group": "g"})]
    facts = [*CLUSTERS, *apps, binding("a", ["m1"]), binding("b", ["m1"])]
    result = run(tmp_path, policy("workload anti-affinity by group"), facts)
    assert result.placement(key("a")).clusters == ("m1",)
    assert result.placement(key("b")).clusters == ("m1",)
    assert "m1" in result.placement(key("b")).feasible


def test_peers_eviction_tasks_do_not_count(tmp_path: Path) -> None:
    """workload_affinity.go: only spec.clusters counts; a peer's old copy in an eviction task does not block."""
    task = {"fromCluster": "m1", "purgeMode": "Gracefully", "reason": "ApplicationFailure", "producer": "x"}
    apps = [workload("a", {"group": "g"}), workload("b", {"group": "g"})]
    facts = [*CLUSTERS, *apps, binding("a", ["m2"], gracefulEvictionTasks=[task])]
    result = run(tmp_path, policy("workload anti-affinity by group", clusters="names m1, m2"), facts)
    assert result.placement(key("b")).clusters == ("m1",)


def test_a_labelled_workload_without_the_term_is_invisible(tmp_path: Path) -> None:
    """workload_affinity.go: a binding whose policy declares no term is not indexed, even with the label."""
    rules = (
        "policy with { select { kind Deployment labels { t = yes } } spread by cluster max 1"
        " workload anti-affinity by group }\n"
        "policy without { select { kind Deployment labels { t = no } } clusters { names m1 } }\n"
    )
    apps = [workload("a", {"group": "g", "t": "no"}), workload("b", {"group": "g", "t": "yes"})]
    result = run(tmp_path, rules, [*CLUSTERS, *apps])
    assert result.placement(key("a")).clusters == ("m1",)
    assert result.placement(key("b")).clusters == ("m1",)


def test_deadlock_of_karmada_issue_7479(tmp_path: Path) -> None:
    """Karmada issue #7479: A evicted from cluster1 by application failover, B (same affinity group) still
    there: cluster1 fails ClusterEviction, every other cluster fails WorkloadAffinity. Karmada behaves
    so; fleetrules reproduces it and says why."""
    task = {"fromCluster": "m1", "purgeMode": "Gracefully", "reason": "ApplicationFailure", "producer": "x"}
    apps = [workload("a", {"group": "g"}), workload("b", {"group": "g"})]
    facts = [*CLUSTERS, *apps, binding("a", [], gracefulEvictionTasks=[task]), binding("b", ["m1"])]
    result = run(tmp_path, policy("workload affinity by group"), facts)
    a = result.placement(key("a"))
    assert a.unschedulable
    assert [r.rule for r in a.rejected["m1"]] == ["cluster-eviction"]
    assert [r.rule for r in a.rejected["m2"]] == ["workload-affinity"]


def test_anti_affinity_within_a_topology(tmp_path: Path) -> None:
    """fleetrules extension: `within region` binds a group to a region, not a cluster."""
    apps = [workload(n, {"group": "g"}) for n in "abc"]
    result = run(tmp_path, policy("workload anti-affinity by group within region"), [*CLUSTERS, *apps])
    assert result.placement(key("a")).clusters == ("m1",)
    assert result.placement(key("b")).clusters == ("m2",)  # m3 is in a's region
    assert result.placement(key("c")).unschedulable


def test_affinity_within_a_topology(tmp_path: Path) -> None:
    apps = [workload("a", {"group": "g"}), workload("b", {"group": "g"})]
    facts = [*CLUSTERS, *apps, binding("a", ["m3"])]
    result = run(tmp_path, policy("workload affinity by group within region"), facts)
    assert result.placement(key("b")).feasible == ("m1", "m3")  # the eu clusters


def test_preferred_terms_score_and_normalise(tmp_path: Path) -> None:
    """fleetrules extension: weights summed per cluster, normalised to 0-100 (InterPodAffinity), anti-affinity
    subtracts."""
    apps = [workload("a", {"group": "g"}), workload("b", {"group": "g"})]
    facts = [*CLUSTERS, *apps, binding("a", ["m1"])]
    attract = run(tmp_path, policy("prefer workload affinity by group weight 40"), facts)
    assert attract.placement(key("b")).scores == {"m1": 100, "m2": 0, "m3": 0}
    assert attract.placement(key("b")).clusters == ("m1",)
    repel = run(tmp_path, policy("prefer workload anti-affinity by group weight 40 within region"), facts)
    assert repel.placement(key("b")).scores == {"m1": 0, "m2": 100, "m3": 0}
    assert repel.placement(key("b")).clusters == ("m2",)


def test_locality_keeps_the_current_cluster(tmp_path: Path) -> None:
    """plugins/clusterlocality: 100 for a cluster already in spec.clusters, so placements are stable."""
    result = run(tmp_path, policy(), [*CLUSTERS, workload("a"), binding("a", ["m3"])])
    placement = result.placement(key("a"))
    assert placement.scores == {"m1": 0, "m2": 0, "m3": 100} and placement.clusters == ("m3",)


def test_without_spread_every_feasible_cluster_is_selected(tmp_path: Path) -> None:
    """helper/policy.go SetDefaultSpreadConstraints and the CRD default: no replicaScheduling means Duplicated;
    without spread constraints all feasible clusters."""
    rules = "policy p { select { kind Deployment } clusters { labels { region = eu } } }\n"
    assert run(tmp_path, rules, [*CLUSTERS, workload("a")]).placement(key("a")).clusters == ("m1", "m3")


def test_too_few_feasible_clusters_for_min_groups(tmp_path: Path) -> None:
    rules = "policy p { select { kind Deployment } clusters { names m1 } spread by cluster min 2 max 3 }\n"
    placement = run(tmp_path, rules, [*CLUSTERS, workload("a")]).placement(key("a"))
    assert placement.unschedulable
    assert placement.message == (
        "failed to select clusters: the number of feasible clusters is less than spreadConstraint.MinGroups"
    )


def test_with_the_workload_affinity_gate_off_workload_terms_do_nothing() -> None:
    """pkg/detector/detector.go and pkg/scheduler/indexer.go act on groups only with the WorkloadAffinity gate
    (alpha, off as Karmada ships it, and so by default here): off, the flink-ha pipelines share clusters, and
    the policy's line says once which gate and how to turn it on."""
    from engine import evaluate, load_facts, load_rules
    from engine.karmada.gates import DEFAULT_CONTROLLERS

    folder = Path(__file__).resolve().parent.parent / "examples" / "flink-ha"
    rules, facts = load_rules([folder / "policy.fr"]), load_facts([folder / "facts"])
    on = evaluate(rules, facts, controllers=ON)
    off = evaluate(rules, facts, controllers=DEFAULT_CONTROLLERS)
    assert any(p.unschedulable for p in on.placements) and not any(p.unschedulable for p in off.placements)
    assert not any(r.rule.startswith("workload-") for p in off.placements for rs in p.rejected.values() for r in rs)
    (said,) = [w for w in off.warnings if "WorkloadAffinity" in w.message]
    assert said.message.startswith("policy flink-ha: workload affinity and anti-affinity do nothing")
    assert said.message.endswith("evaluate with --controller feature-gates=WorkloadAffinity=true")
    assert said.span is not None and said.span.line == 21
    assert not any("WorkloadAffinity" in w.message for w in on.warnings)


@pytest.mark.parametrize(
    ("terms", "said"),
    [
        ("prefer workload affinity by group weight 10", False),  # fleetrules' own preferred term: no gate of Karmada's
        ("workload affinity by group within region", True),  # fleetrules' topology term reads the same groups
        ("prefer workload affinity by group weight 10\n  workload anti-affinity by group", True),  # Karmada's, second
    ],
)
def test_the_gate_is_named_for_the_terms_it_turns_off(tmp_path: Path, terms: str, said: bool) -> None:
    from engine import evaluate, load_facts, load_rules
    from engine.karmada.gates import DEFAULT_CONTROLLERS

    (tmp_path / "p.fr").write_text(policy(terms))
    facts = load_facts(objects=[*CLUSTERS, workload("a", {"group": "g"})])
    result = evaluate(load_rules([tmp_path / "p.fr"]), facts, controllers=DEFAULT_CONTROLLERS)
    assert any("WorkloadAffinity feature gate" in w.message for w in result.warnings) is said
