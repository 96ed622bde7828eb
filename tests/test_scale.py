"""Evaluation at policy scope (engine.compile.lift) and the shared result views (engine.views): the
changes that made evaluation grow with bindings + policies x clusters instead of bindings x clusters
(docs/performance.md). Each case checks the lifted path gives what matching per binding gives."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.checker.rule_set import builtin_rules
from engine.compile.lift import lift
from engine.compile.program import compile_rule_set
from engine.schedule.views import Constant, Overlay, Subset
from engine.syntax.schema import POLICY_SCOPE
from tests.helpers import binding, cluster, key, run, workload

POLICY = """policy p {
  select { kind Deployment }
  clusters { labels { env = prod } }
  workload anti-affinity by group
}
"""
TAINT = {"key": "k", "value": "v", "effect": "NoSchedule"}


def lifted(rules: str, tmp_path: Path) -> dict[str, bool]:
    from engine import load_rules

    path = tmp_path / "r.fr"
    path.write_text(rules)
    rule_set = load_rules([path])
    compilation = compile_rule_set(builtin_rules(), rule_set.policies, rule_set.rules)
    assert not compilation.problems
    return {r.name: lift(r).scoped for r in compilation.rules}


def test_which_rules_are_lifted(tmp_path: Path) -> None:
    rules = POLICY + (
        'rule by-label { when binding b (b.policy == "p") and cluster c (c.labels.tier == "x")'
        ' then reject c for b "x" }\n'
        'rule by-name { when binding b (b.name == "w") and cluster c then reject c for b "named" }\n'
        'rule says-name { when binding b and cluster c (c.region == "eu") then reject c for b "{b.name}" }\n'
        "rule derives { when binding b and cluster c then derive pair(b = b.name) }\n"
    )
    scoped = lifted(rules, tmp_path)
    assert scoped["p/clusters.labels"] and scoped["taint-toleration"] and scoped["by-label"]
    assert scoped["workload-anti-affinity"]  # to the group's scope: namespace and group, its own placements exempt
    assert not scoped["cluster-eviction"]
    assert not scoped["by-name"] and not scoped["says-name"] and not scoped["derives"]


def test_taint_exemption_is_kept_per_binding(tmp_path: Path) -> None:
    """taint_toleration_test.go: a cluster the binding already targets passes the taint filter;
    the lifted rule fires once for the policy and the exemption is applied per binding."""
    facts = [
        cluster("a", {"env": "prod"}, taints=[TAINT]),
        cluster("b", {"env": "prod"}),
        workload("old"),
        binding("old", ["a"]),
        workload("new"),
    ]
    result = run(tmp_path, "policy p { select { kind Deployment } }\n", facts)
    assert result.placement(key("old")).feasible == ("a", "b")
    new = result.placement(key("new"))
    assert new.feasible == ("b",) and [r.rule for r in new.rejected["a"]] == ["taint-toleration"]


def test_anti_affinity_overlays_the_shared_result(tmp_path: Path) -> None:
    facts = [cluster(n, {"env": "prod" if n != "d" else "dev"}) for n in "abcd"]
    facts += [workload(f"w{i}", {"group": "g"}) for i in range(3)]
    result = run(tmp_path, POLICY.replace("by group\n", "by group\n  spread by cluster max 1\n"), facts)
    chosen = [result.placement(key(f"w{i}")).clusters for i in range(3)]
    assert chosen == [("a",), ("b",), ("c",)]
    last = result.placement(key("w2"))
    assert last.feasible == ("c",)
    assert list(last.rejected) == ["a", "b", "d"]  # sorted, shared and own rejections merged
    assert last.scores == {"c": 0}
    assert {r.rule for r in last.rejected["a"]} == {"workload-anti-affinity"}


def test_a_lifted_explanation_names_the_binding(tmp_path: Path) -> None:
    facts = [cluster("a", {"env": "dev"}), cluster("b", {"env": "prod"}), workload("w")]
    placement = run(tmp_path, POLICY, facts).placement(key("w"))
    (explanation,) = placement.explanations["a"]
    assert [f.fact_type for f in explanation.facts] == ["binding", "cluster"]
    assert POLICY_SCOPE not in str(explanation)


def test_policy_scope_cannot_be_derived(tmp_path: Path) -> None:
    from engine import RuleError, load_rules

    path = tmp_path / "r.fr"
    path.write_text("rule r { when cluster c then derive policy_scope(x = c.name) }\n")
    try:
        load_rules([path])
    except RuleError as exc:
        assert "'policy_scope' facts come from the input or the engine" in str(exc)
    else:
        raise AssertionError("deriving policy_scope must be an error")


NAMES = st.sets(st.text("abcdefgh", min_size=1, max_size=2), max_size=12)


@given(NAMES, NAMES, NAMES)
def test_subset_is_the_sorted_set_difference(base: set[str], removed: set[str], added: set[str]) -> None:
    ordered = tuple(sorted(base))
    view = Subset(ordered, frozenset(ordered), removed, added)
    expected = tuple(sorted((base - removed) | (added - base)))
    assert view == expected and tuple(view) == expected and len(view) == len(expected)
    assert all(c in view for c in expected) and not any(c in view for c in removed - added - base)
    assert repr(view) == repr(expected)
    assert dict(Constant(view, 0)) == dict.fromkeys(expected, 0)


@given(
    st.dictionaries(st.text("abcdef", min_size=1, max_size=2), st.integers()),
    st.dictionaries(st.text("abcdef", min_size=1, max_size=2), st.none() | st.integers()),
)
def test_overlay_is_the_dict_with_changes(base: dict[str, int], changes: dict[str, int | None]) -> None:
    ordered = dict(sorted(base.items()))
    expected = {k: v for k, v in ({**ordered, **changes}).items() if v is not None}
    view = Overlay(ordered, changes)
    assert view == expected and list(view) == sorted(expected) and len(view) == len(expected)


def test_own_preferences_count_when_exemptions_outnumber_them(tmp_path: Path) -> None:
    """A binding already on two tainted clusters (two shared decisions exempted) with one preference
    of its own: the preference is scored (preferred terms, a fleetrules extension; the TaintToleration exemption)."""
    rules = (
        "policy p {\n  select { kind Deployment }\n  prefer workload affinity by app weight 10\n"
        "  spread by cluster max 1\n}\n"
    )
    facts = [
        cluster("a", taints=[TAINT]),
        cluster("b", taints=[TAINT]),
        cluster("c"),
        cluster("d"),
        workload("peer", {"app": "x"}),
        binding("peer", ["d"]),
        workload("w", {"app": "x"}),
        binding("w", ["a", "b"]),
    ]
    result = run(tmp_path, rules, facts)
    assert result.placement(key("peer")).clusters == ("d",)  # kept: locality
    placement = result.placement(key("w"))
    assert placement.scores == {"a": 100, "b": 100, "c": 0, "d": 100}


def test_rule_files_see_placements_of_bindings_without_groups(tmp_path: Path) -> None:
    """Placement facts are skipped only where no rule can match them: a rule file matching placements
    sees those of bindings in no workload affinity group (engine.program, `ungrouped`)."""
    rules = (
        "policy p {\n  select { kind Deployment }\n  spread by cluster max 1\n}\n"
        "rule one-per-namespace {\n  when binding b\n"
        "   and placement q (q.namespace == b.namespace and q.binding != b.name)\n"
        "   and cluster c (c.name == q.cluster)\n"
        '  then reject c for b "namespace already placed here"\n}\n'
    )
    result = run(tmp_path, rules, [cluster("a"), cluster("b"), workload("v"), workload("w")])
    assert [result.placement(key(n)).clusters for n in ("v", "w")] == [("a",), ("b",)]


@pytest.mark.parametrize("seed", range(30))
def test_lifting_changes_no_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The random fleets of tests/test_joins.py (workload affinity and anti-affinity terms, peers' placements, user
    rules over them) give byte for byte the same placements and explanations whether the rules are lifted to their
    policy's or group's scope (the default) or every rule is matched per binding inside durable-rules."""
    from engine import evaluate, load_facts, load_rules
    from engine.schedule import registry
    from tests.test_joins import _fleet, _outputs, _rule_text

    rng = random.Random(1000 + seed)
    rules_path = tmp_path / "rules.fr"
    rules_path.write_text(_rule_text(rng))
    rules, facts = load_rules([rules_path]), load_facts(objects=_fleet(rng))
    lifted = evaluate(rules, facts, reschedule_all=seed % 2 == 0)
    registry._program.cache_clear()
    monkeypatch.setattr("engine.compile.program.lift", lambda rule: rule)
    try:
        per_binding = evaluate(rules, facts, reschedule_all=seed % 2 == 0, reference=True)
    finally:
        registry._program.cache_clear()
    expected, actual = _outputs(per_binding, lifted)
    assert actual == expected


@pytest.mark.parametrize("reads", [False, True])
def test_member_facts_only_where_a_rule_matches_them(tmp_path: Path, reads: bool) -> None:
    """Lifted rules read a binding's clusters as exemptions: no rule of the built-in set matches a member fact, and
    none is asserted (a binding on 50 clusters was 50 facts, made again at each of its moves); a user rule that
    tests a cluster against a binding's list brings them back, and decides on them."""
    from engine import load_facts, load_rules
    from engine.pipeline import scheduler_for

    rule = 'rule elsewhere { when binding b and cluster c (c.name in b.clusters) then reject c for b "taken" }\n'
    path = tmp_path / "r.fr"
    path.write_text(POLICY + (rule if reads else ""))
    facts = load_facts(
        objects=[cluster("a", {"env": "prod"}), cluster("b", {"env": "prod"}), workload("w"), binding("w", ["a"])]
    )
    scheduler = scheduler_for(load_rules([path]), facts)
    try:
        members = [f for f in scheduler.session._facts.values() if f["t"] == "member"]  # type: ignore[attr-defined]
        assert [(m["field"], m["value"]) for m in members] == ([("clusters", "a")] if reads else [])
        placement = scheduler.decide(facts.bindings[0])
        assert ("a" in placement.rejected) == reads
    finally:
        scheduler.close()


@pytest.mark.parametrize("explained", [False, True])
def test_a_shared_attempt_holds_its_decisions_only_for_explanations(explained: bool) -> None:
    """Bindings alike share one attempt (Scheduler._attempt); it keeps the decisions it applied (one per cluster an
    anti-affinity group holds) only where placements are explained. benchmarks/fleets.py's regional shape: groups
    of four, the first placed on its region, the other three sharing one unschedulable attempt."""
    import sys

    from engine import load_facts
    from engine.inputs.rule_files import RuleSet
    from engine.pipeline import scheduler_for
    from tests.gates import ON

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import fleets

    facts = load_facts(objects=fleets.SHAPES["regional"](40, 80))
    scheduler = scheduler_for(RuleSet((), {}), facts, controllers=ON, explanations=explained)
    # the attempts as they stand while the bindings are scheduled: schedule_all lets go of each policy's shared
    # results (and with them its attempts) after the policy's last binding
    scheduler.feasibility.release = lambda policy: None  # type: ignore[method-assign]
    try:
        placements = scheduler.schedule_all()
        attempts = [a for chosen in scheduler._chosen.values() for a in chosen.attempts.values()]
        assert attempts and any(p.unschedulable for p in placements)
        assert any(a.applied for a in attempts) == explained
    finally:
        scheduler.close()


def test_placements_only_rules_that_evict_read_are_made_when_failover_asks(tmp_path: Path) -> None:
    """The taint-manager rule (rules/taint_manager.fr) reads every binding's placements; the scheduler's rules read
    only those of bindings with workload affinity groups. An evaluation without failover makes no placement of a
    binding without groups (10,000 of them were a third of such a fleet's evaluation); the evictions asked for
    make them, each binding's on its clusters as they stand then."""
    from engine import load_facts, load_rules
    from engine.pipeline import scheduler_for

    (tmp_path / "p.fr").write_text("policy p {\n  select { kind Deployment }\n}\n")
    objects = [cluster("a"), cluster("b"), workload("w"), workload("v"), binding("w", ["a", "b"]), binding("v", ["b"])]
    scheduler = scheduler_for(load_rules([tmp_path / "p.fr"]), load_facts(objects=objects))
    try:
        scheduler.schedule_all()
        index = scheduler.session.index  # type: ignore[attr-defined]
        assert not index.batches.get("placement")
        assert scheduler.store.evictions() == ()  # no NoExecute taint: nothing to evict
        batches = index.batches["placement"].values()
        made = {b.common["binding"]: sorted(f["cluster"] for f in b.members()) for b in batches}
        assert made == {"w-deployment": ["a", "b"], "v-deployment": ["a", "b"]}  # v placed anew, Duplicated
    finally:
        scheduler.close()
