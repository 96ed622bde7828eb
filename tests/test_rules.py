"""General rules (a fleetrules extension): joins through variables, derived facts (forward chaining), negation,
explanations."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import RuleError
from tests.helpers import cluster, key, run, workload

CLUSTERS = [
    cluster("a", {"lifecycle": "spot"}, region="eu"),
    cluster("b", {"lifecycle": "on-demand"}, region="eu"),
    cluster("gold", {"lifecycle": "on-demand"}, region="us"),
]
POLICY = "policy p { select { kind Deployment } }\n"


def test_derived_facts_chain_into_rejections(tmp_path: Path) -> None:
    rules = POLICY + (
        'rule spot { when cluster c (c.labels.lifecycle == "spot") then derive spot(cluster = c.name) }\n'
        "rule critical-off-spot {\n"
        "  when spot s\n   and cluster c (c.name == s.cluster)\n"
        '   and binding b (b.labels.critical == "true")\n'
        '  then reject c for b "critical workloads stay off spot clusters ({c.name})"\n}\n'
    )
    result = run(tmp_path, rules, [*CLUSTERS, workload("x", {"critical": "true"}), workload("y")])
    x = result.placement(key("x"))
    assert x.feasible == ("b", "gold")
    (reason,) = x.rejected["a"]
    assert reason.rule == "critical-off-spot" and reason.message == "critical workloads stay off spot clusters (a)"
    assert reason.source.endswith("rules.fr:3")
    chain = x.explanations["a"][0]
    spot = next(f for f in chain.facts if f.fact_type == "spot")
    assert [d.rule for d in spot.derived_by] == ["spot"]
    assert result.placement(key("y")).feasible == ("a", "b", "gold")


def test_prefer_adds_to_the_score(tmp_path: Path) -> None:
    rules = POLICY + 'rule home { when binding b and cluster c (c.region == "us") then prefer c for b weight 30 }\n'
    placement = run(tmp_path, rules, [*CLUSTERS, workload("x")]).placement(key("x"))
    assert placement.scores == {"a": 0, "b": 0, "gold": 100}


def test_joins_between_binding_and_cluster_fields(tmp_path: Path) -> None:
    rules = POLICY + (
        'rule same-region { when binding b and cluster c (c.region != b.labels.home) then reject c for b "far" }\n'
    )
    placement = run(tmp_path, rules, [*CLUSTERS, workload("x", {"home": "us"})]).placement(key("x"))
    assert placement.feasible == ("gold",)


def test_negation_holds_only_when_no_other_fact_matches(tmp_path: Path) -> None:
    """The patterns of one rule match distinct facts (as durable-rules does): `not cluster g` cannot
    be satisfied by the fact bound to `c`."""
    rules = POLICY + (
        "rule no-gold {\n  when binding b\n   and cluster c\n"
        '   and not cluster g (g.name == "gold")\n  then reject c for b "no (other) gold cluster exists"\n}\n'
    )
    with_gold = run(tmp_path, rules, [*CLUSTERS, workload("x")]).placement(key("x"))
    assert set(with_gold.rejected) == {"gold"}
    without = run(tmp_path, rules, [*CLUSTERS[:2], workload("x")]).placement(key("x"))
    assert set(without.rejected) == {"a", "b"}


def test_a_later_fact_withdraws_what_its_absence_allowed(tmp_path: Path) -> None:
    """Cluster `a` arrives before `gold`: the engine derives lonely(a), then gold arrives and the
    session withdraws it, with the rejection that depended on it (durable-rules never would)."""
    rules = POLICY + (
        'rule s { when cluster c (c.name == "a") and not cluster g (g.name == "gold")'
        " then derive lonely(name = c.name) }\n"
        'rule t { when lonely l and binding b and cluster c (c.name == l.name) then reject c for b "lonely" }\n'
    )
    assert run(tmp_path, rules, [*CLUSTERS, workload("x")]).placement(key("x")).rejected == {}
    alone = run(tmp_path, rules, [CLUSTERS[0], workload("x")]).placement(key("x"))
    assert [r.message for r in alone.rejected["a"]] == ["lonely"]


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("rule r { when cluster c (c.name == c.region) then derive x(a = c.name) }", "not with its own"),
        ('rule r { when cluster c and binding b (c.name == "x") then reject c for b "m" }', "must test a field of 'b'"),
        (
            'rule r { when cluster c and binding b (c.name in b.clusters or b.name == "x") then reject c for b "m" }',
            "must stand on its own",
        ),
        (
            "rule r { when binding b and not placement p (p.binding == b.name) then derive x(a = b.name) }",
            "'not placement' is not available",
        ),
        (
            "rule d { when cluster c then derive spot(n = c.name) }\n"
            "rule r { when cluster c and not spot s then derive x(a = c.name) }",
            "'not spot' is not available",
        ),
        (  # the backend's limit, found by check (it used to pass check and fail in eval)
            'rule r { when cluster c and binding b and not taint t (t.cluster != c.name) then reject c for b "x" }',
            r"a 'not' pattern can compare with another fact only by '=='",
        ),
    ],
)
def test_conditions_the_engine_cannot_run_are_check_errors(tmp_path: Path, rule: str, message: str) -> None:
    with pytest.raises(RuleError, match=message):
        run(tmp_path, POLICY + rule + "\n", CLUSTERS)
