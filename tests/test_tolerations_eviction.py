"""Taints and tolerations (plugin TaintToleration, taint_toleration_test.go) and the ClusterEviction filter
(plugins/clustereviction; pkg/util/helper/taint.go for toleration semantics)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import load_rules
from engine.compile.encoding import tolerations as policy_tolerations
from engine.inputs.facts import Taint
from engine.karmada.controllers.taint_manager import tolerates
from tests.helpers import binding, cluster, key, run, workload

TAINT = {"key": "key1", "value": "value1", "effect": "NoSchedule"}


def policy(*tolerations: str) -> str:
    lines = "".join(f"  {t}\n" for t in tolerations)
    return f"policy p {{\n  select {{ kind Deployment }}\n{lines}}}\n"


@pytest.mark.parametrize(
    ("taints", "tolerations", "feasible"),
    [
        ([], [], True),  # no taints
        ([TAINT], ["tolerate key1 = value1 : NoSchedule"], True),
        ([TAINT], [], False),
        ([TAINT], ["tolerate key1 : NoSchedule"], True),  # Exists
        ([TAINT], ["tolerate key1 = other : NoSchedule"], False),  # value differs
        ([TAINT], ["tolerate key1 = value1 : NoExecute"], False),  # effect differs
        ([TAINT], ["tolerate key1 = value1"], True),  # empty effect tolerates every effect
        ([TAINT], ["tolerate *"], True),  # empty key with Exists tolerates everything
        ([TAINT], ["tolerate other"], False),
        ([{"key": "k", "effect": "PreferNoSchedule"}], [], True),  # PreferNoSchedule is ignored
        ([{"key": "k", "effect": "NoExecute"}], [], False),
        ([TAINT, {"key": "k2", "effect": "NoExecute"}], ["tolerate key1 : NoSchedule"], False),
        ([TAINT, {"key": "k2", "effect": "NoExecute"}], ["tolerate key1 : NoSchedule", "tolerate k2"], True),
    ],
)
def test_taint_toleration(tmp_path: Path, taints: list[dict[str, str]], tolerations: list[str], feasible: bool) -> None:
    result = run(tmp_path, policy(*tolerations), [cluster("cluster1", taints=taints), workload("app")])
    placement = result.placement(key("app"))
    assert ("cluster1" in placement.feasible) is feasible
    if not feasible:
        assert placement.rejected["cluster1"][0].rule == "taint-toleration"
    # the taint manager tests a toleration against a taint with the filter's own rule: the same verdict (Karmada's
    # filter, pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go, and its taint manager,
    # pkg/util/helper/taint.go GetMatchingTolerations and GetMinTolerationTime, both call ToleratesTaint)
    (parsed,) = load_rules([tmp_path / "rules.fr"]).policies
    facts = policy_tolerations(parsed, seconds=True)
    filtered = [Taint(t["key"], t.get("value", ""), t["effect"]) for t in taints if t["effect"] != "PreferNoSchedule"]
    assert all(any(tolerates(f, t) for f in facts) for t in filtered) is feasible


def test_untolerated_taint_message(tmp_path: Path) -> None:
    result = run(tmp_path, policy(), [cluster("cluster1", taints=[TAINT]), workload("app")])
    (reason,) = result.placement(key("app")).rejected["cluster1"]
    assert reason.message == "cluster(s) had untolerated taint {key1=value1:NoSchedule}"
    assert reason.source == "<builtin>/taint_toleration.fr:5"


def test_a_cluster_already_targeted_keeps_passing(tmp_path: Path) -> None:
    """taint_toleration_test.go: spec.clusters=[cluster1] → Success; the taint manager evicts instead."""
    facts = [cluster("cluster1", taints=[TAINT]), workload("app"), binding("app", ["cluster1"])]
    assert run(tmp_path, policy(), facts).placement(key("app")).clusters == ("cluster1",)


@pytest.mark.parametrize(("task_cluster", "feasible"), [("cluster1", False), ("cluster2", True)])
def test_cluster_eviction(tmp_path: Path, task_cluster: str, feasible: bool) -> None:
    """cluster_eviction_test.go: a cluster in an eviction task is skipped, even one already targeted."""
    task = {
        "fromCluster": task_cluster,
        "purgeMode": "Gracefully",
        "reason": "TaintUntolerated",
        "producer": "TaintManager",
    }
    facts = [
        cluster("cluster1"),
        cluster("cluster2"),
        workload("app"),
        binding("app", ["cluster1"], gracefulEvictionTasks=[task]),
    ]
    placement = run(tmp_path, policy(), facts).placement(key("app"))
    assert ("cluster1" in placement.feasible) is feasible
    if not feasible:
        assert [r.message for r in placement.rejected["cluster1"]] == ["cluster(s) is in the process of eviction"]


def test_the_filter_and_the_taint_manager_tolerate_by_one_test() -> None:
    """Karmada's TaintToleration filter and its taint manager both call ToleratesTaint: the taint-toleration rule
    (rules/taint_toleration.fr) and the taint manager's rules (rules/taint_manager.fr: the untolerated taint's `not
    cluster_toleration`, and the toleration whose seconds ran out against the taint's age) use the library's one
    condition `tolerates` (rules/tolerations.fr), no rule restates it, and
    engine.karmada.controllers.taint_manager.tolerates (which tolerations the taint manager uses) evaluates that
    condition, compiled as the rules have it."""
    from engine.checker.rule_set import builtin_files, builtin_rules
    from engine.compile import ir
    from engine.compile.encoding import Symbols
    from engine.compile.rules import compile_rules
    from engine.karmada.controllers import taint_manager as controllers
    from engine.syntax.conditions import calls

    names = ("taint-toleration", "taint-manager", "taint-manager-toleration-seconds")
    written = [r for f in builtin_files() for r in f.rules if r.name.value in names]
    assert [[c.name.value for p in r.patterns for c in calls(p.condition)] for r in written] == [["tolerates"]] * 3
    restated = [r.name.value for f in builtin_files() for r in f.rules if '"Exists"' in repr(r)]
    assert restated == [], "a rule of the library restates ToleratesTaint instead of using `tolerates`"
    compiled, problems = compile_rules([r for r in builtin_rules() if r.name.value in names], Symbols(), builtin=True)
    assert not problems and len(compiled) == 3
    python_test, python_taint = controllers._toleration_test()
    tests = [repr(python_test).replace(repr(python_taint), "'t'").replace("'x'", "'x'")]
    for rule in compiled:
        (test,) = [p for p in rule.patterns if p.fact_type in ("cluster_toleration", "toleration_used")]
        taint = next(p.alias for p in rule.patterns if p.fact_type in ("taint", "taint_age"))
        assert isinstance(test.cond, ir.AllOf)
        # the effect, key and value clauses (each an `or`), the taint's alias named alike in each rule
        clauses = [item for item in test.cond.items if isinstance(item, ir.AnyOf)]
        tests.append(repr(ir.AllOf(tuple(clauses))).replace(repr(taint), "'t'").replace(repr(test.alias), "'x'"))
    assert len(tests[0]) > 100 and len(set(tests)) == 1, tests


LONG_MAINTENANCE = """policy p {
  select { kind Deployment }
  tolerate maintenance : NoExecute
}
rule long-maintenance {
  when taint_age a (a.key == "maintenance" and a.seconds >= 120)
   and cluster c (c.name == a.cluster)
   and placement p (p.cluster == c.name)
   and binding b (b.namespace == p.namespace and b.name == p.binding)
  then evict b from c reason LongMaintenance "{c.name} in maintenance for {a.seconds}s"
}
"""


@pytest.mark.parametrize("reference", [False, True], ids=["indexed", "reference"])
def test_a_users_rule_on_a_taints_age_evicts_when_it_is_old_enough(tmp_path: Path, reference: bool) -> None:
    """The taint manager's clock facts are there for users' rules: the policy tolerates the maintenance taint
    forever, a rule gives up after two minutes of it. In a simulation its 120 is a moment to look again: the
    eviction comes at the taint's time plus 120 s, by that rule."""
    from engine import load_facts, simulate
    from engine.inputs.events import load_events
    from tests.gates import ON

    (tmp_path / "p.fr").write_text(LONG_MAINTENANCE)
    (tmp_path / "events.yaml").write_text(
        "start: 2026-12-02T10:00:00Z\nevents:\n- at: 10s\n  taint: {cluster: m1, key: maintenance, effect: NoExecute}\n"
    )
    objects = [cluster("m1"), cluster("m2"), workload("app"), binding("app", ["m1"])]
    start, events = load_events(tmp_path / "events.yaml")
    rules, facts = load_rules([tmp_path / "p.fr"]), load_facts(objects=objects)
    entries = simulate(rules, facts, start, events, controllers=ON, reference=reference)
    (evicted,) = [e for e in entries if e.kind == "evicted"]
    assert (evicted.time - start).total_seconds() == 130 and evicted.detail["rule"] == "long-maintenance"
    assert evicted.detail["because"] == "rule long-maintenance: LongMaintenance"
