"""ClusterTaintPolicy (issue 27): its controller (pkg/controllers/taint/clustertaintpolicy_controller.go) adds a
policy's taints to the target clusters whose conditions match addOnConditions and removes them when they match
removeOnConditions, at once and whenever a cluster's conditions change. Tables from
clustertaintpolicy_controller_test.go; the webhook's from pkg/webhook/clustertaintpolicy/validating.go."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import Diagnostic, FactError, Facts, load_facts
from engine.cli import main
from engine.inputs.facts import Cluster, Condition, MatchCondition, Taint, TaintPolicy
from engine.inputs.matching import conditions_match, taint_by_policies
from engine.karmada.gates import DEFAULT_CONTROLLERS, Controllers
from engine.syntax import ast
from tests.gates import ON

T0 = dt.datetime(2026, 12, 2, 10, 0, tzinfo=dt.UTC)
AGO = T0 - dt.timedelta(minutes=1)


def _conditions(*pairs: str) -> tuple[Condition, ...]:
    return tuple(Condition(kind, status) for kind, status in (pair.split("=") for pair in pairs))


def _match(kind: str, op: str, *values: str) -> MatchCondition:
    return MatchCondition(kind, op, values)


@pytest.mark.parametrize(
    ("conditions", "wanted", "expected"),
    [  # TestConditionMatches
        (["Ready=True"], [], False),  # empty match conditions
        (["Ready=True"], [_match("Ready", "In", "True")], True),  # match: operator is In
        (["Ready=False"], [_match("Ready", "In", "True")], False),  # don't match: operator is In
        (["Ready=False"], [_match("Ready", "NotIn", "True", "Unknown")], True),  # match: operator is NotIn
        (["Ready=False"], [_match("Ready", "NotIn", "False")], False),  # don't match: operator is NotIn
        (  # match: multiple conditions
            ["Ready=Unknown", "NetworkReady=False", "StorageReady=True"],
            [_match("Ready", "In", "False", "Unknown"), _match("NetworkReady", "NotIn", "True")],
            True,
        ),
        (  # don't match: multiple conditions
            ["Ready=True", "NetworkReady=False", "StorageReady=True"],
            [_match("Ready", "In", "False", "Unknown"), _match("NetworkReady", "NotIn", "True")],
            False,
        ),
        # read from conditionMatches: a type the cluster does not report matches neither In nor NotIn, and an
        # operator other than In and NotIn makes the whole match False
        (["Ready=True"], [_match("NetworkReady", "NotIn", "True")], False),
        (["Ready=True"], [_match("Ready", "Exists", "True")], False),
    ],
)
def test_condition_matches(conditions: list[str], wanted: list[MatchCondition], expected: bool) -> None:
    assert conditions_match(_conditions(*conditions), wanted) is expected


def _policy(
    *taints: Taint, add: bool = True, name: str = "p", targets: tuple[ast.ClusterStmt, ...] | None = None
) -> TaintPolicy:
    on = (_match("Ready", "In", "True"),)
    return TaintPolicy(name, None, targets, on if add else (), () if add else on, taints)


READY = _conditions("Ready=True")


@pytest.mark.parametrize(
    ("existing", "added", "expected"),
    [  # TestAddTaintsOnCluster
        ([], [Taint("key1", "value1", "NoSchedule")], [Taint("key1", "value1", "NoSchedule", T0)]),  # add new taint
        (  # add the existing taint, don't update TimeAdded
            [Taint("key1", "value1", "NoSchedule", AGO)],
            [Taint("key1", "value1", "NoSchedule")],
            [Taint("key1", "value1", "NoSchedule", AGO)],
        ),
        (  # add multi taints
            [Taint("key2", "value2", "PreferNoSchedule", AGO)],
            [Taint("key1", "value1", "NoSchedule"), Taint("key3", "value3", "NoExecute")],
            [
                Taint("key2", "value2", "PreferNoSchedule", AGO),
                Taint("key1", "value1", "NoSchedule", T0),
                Taint("key3", "value3", "NoExecute", T0),
            ],
        ),
    ],
)
def test_add_taints_on_cluster(existing: list[Taint], added: list[Taint], expected: list[Taint]) -> None:
    cluster = Cluster("m1", taints=tuple(existing), conditions=READY)
    assert list(taint_by_policies(cluster, [_policy(*added)], T0).taints) == expected


@pytest.mark.parametrize(
    ("existing", "removed", "expected"),
    [  # TestRemoveTaintsOnCluster
        ([Taint("key1", "", "NoSchedule", AGO)], [Taint("key1", "", "NoSchedule")], []),  # remove a taint
        (  # remove multiple matched taints
            [Taint("key1", "", "NoSchedule", AGO), Taint("key2", "", "NoExecute", T0)],
            [Taint("key1", "", "NoSchedule"), Taint("key2", "", "NoExecute")],
            [],
        ),
        (  # no matched taints
            [Taint("key1", "", "NoSchedule", AGO)],
            [Taint("key2", "", "NoSchedule")],
            [Taint("key1", "", "NoSchedule", AGO)],
        ),
    ],
)
def test_remove_taints_on_cluster(existing: list[Taint], removed: list[Taint], expected: list[Taint]) -> None:
    cluster = Cluster("m1", taints=tuple(existing), conditions=READY)
    assert list(taint_by_policies(cluster, [_policy(*removed, add=False)], T0).taints) == expected


def test_policies_apply_in_order_each_reading_what_the_last_left() -> None:
    """Reconcile: each policy (sorted by creationTimestamp) reads the taints the one before left."""
    taint = Taint("k", "", "NoExecute")
    cluster = Cluster("m1", conditions=READY)
    assert taint_by_policies(cluster, [_policy(taint), _policy(taint, add=False)], T0).taints == ()
    assert taint_by_policies(cluster, [_policy(taint, add=False), _policy(taint)], T0).taints == (
        Taint("k", "", "NoExecute", T0),
    )


def test_only_target_clusters_are_tainted() -> None:
    targets = (ast.ClusterList(ast.ClusterField.NAMES, (ast.Word("m2"),)),)
    policy = _policy(Taint("k", "", "NoSchedule"), targets=targets)
    assert taint_by_policies(Cluster("m1", conditions=READY), [policy], T0).taints == ()
    assert taint_by_policies(Cluster("m2", conditions=READY), [policy], T0).taints == (
        Taint("k", "", "NoSchedule", T0),
    )


def test_a_taint_no_cluster_can_carry_leaves_the_cluster_as_it_was() -> None:
    """The cluster webhook (lifted.ValidateClusterTaints) refuses PreferNoSchedule: the controller's patch fails,
    with the other policies' taints of the same reconcile."""
    policies = [_policy(Taint("ok", "", "NoSchedule")), _policy(Taint("soft", "", "PreferNoSchedule"))]
    cluster = Cluster("m1", conditions=READY)
    assert taint_by_policies(cluster, policies, T0) is cluster


CTP = """apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata: {{name: not-ready, creationTimestamp: "2026-11-01T00:00:00Z"}}
spec:
{spec}
"""
NOT_READY_NO_EXECUTE = """  addOnConditions: [{conditionType: Ready, operator: NotIn, statusValues: ["True"]}]
  removeOnConditions: [{conditionType: Ready, operator: In, statusValues: ["True"]}]
  taints: [{key: cluster.karmada.io/not-ready, effect: NoExecute}]"""


def _snapshot(tmp_path: Path, spec: str, cluster_taints: str = "") -> Path:
    path = tmp_path / "snap.yaml"
    path.write_text(
        CTP.format(spec=spec)
        + "---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m1}\n"
        + (f"spec: {{taints: {cluster_taints}}}\n" if cluster_taints else "")
        + "status:\n  conditions: [{type: Ready, status: 'False', lastTransitionTime: '2026-12-02T09:00:00Z'}]\n"
    )
    return path


def test_a_snapshot_cluster_gets_the_policys_taint_when_its_dump_does_not_show_it_yet(tmp_path: Path) -> None:
    facts = load_facts([_snapshot(tmp_path, NOT_READY_NO_EXECUTE)])
    (cluster,) = facts.clusters
    added = T0.replace(hour=9)  # the Ready condition's transition: the change that made the controller act
    assert Taint("cluster.karmada.io/not-ready", "", "NoExecute", added) in cluster.taints
    assert any("--allow-no-execute-taint-policy" in w.message for w in facts.warnings)
    assert not any("no policy selects" in w.message for w in facts.warnings)
    (said,) = [w.message for w in _warnings(facts, ON) if "ClusterTaintPolicies change the taints" in w.message]
    assert "m1 (+cluster.karmada.io/not-ready:NoExecute)" in said
    # at Karmada's defaults the controller does not run (the Failover gate): said so instead
    (said,) = [w.message for w in _warnings(facts, DEFAULT_CONTROLLERS) if "ClusterTaintPolic" in w.message]
    assert said.startswith("ClusterTaintPolicy not-ready: taints nothing") and "feature-gates=Failover=true" in said


def _warnings(facts: Facts, controllers: Controllers) -> tuple[Diagnostic, ...]:
    from engine.inputs.rule_files import RuleSet
    from engine.pipeline import scheduler_for

    scheduler = scheduler_for(RuleSet((), {}), facts, controllers=controllers)
    try:
        return scheduler.warnings()
    finally:
        scheduler.close()


def test_a_control_planes_dump_already_has_the_taints(tmp_path: Path) -> None:
    taints = "[{key: cluster.karmada.io/not-ready, effect: NoExecute, timeAdded: '2026-12-02T09:00:05Z'}]"
    facts = load_facts([_snapshot(tmp_path, NOT_READY_NO_EXECUTE, taints)])
    (cluster,) = facts.clusters
    assert [t for t in cluster.taints if t.effect == "NoExecute"] == [
        Taint("cluster.karmada.io/not-ready", "", "NoExecute", T0.replace(hour=9, second=5))
    ]
    assert not any("change the taints" in w.message for w in _warnings(facts, ON))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("  addOnConditions: []", "spec.taints: Required value"),
        ("  taints: []", "spec.taints: Invalid value: 0: spec.taints in body should have at least 1 items"),
        ("  taints: [{effect: NoSchedule}]", "spec.taints[0].key: Required value"),
        (  # validatePolicyTaints: field.Duplicate at the first of the pair
            "  taints: [{key: a, effect: NoSchedule}, {key: a, value: x, effect: NoSchedule}]",
            'spec.taints[0]: Duplicate value: "Duplicate taint with the same key(a) and effect(NoSchedule) is not '
            'allowed"',
        ),
    ],
)
def test_what_the_crd_and_webhook_refuse(tmp_path: Path, spec: str, message: str) -> None:
    with pytest.raises(FactError) as caught:
        load_facts([_snapshot(tmp_path, spec)])
    assert message in str(caught.value)


def test_what_they_admit_but_cannot_work_is_said(tmp_path: Path) -> None:
    spec = (
        "  addOnConditions: [{conditionType: Ready, operator: Exists, statusValues: []}]\n"
        "  taints: [{key: soft, effect: PreferNoSchedule}]"
    )
    facts = load_facts([_snapshot(tmp_path, spec)])
    messages = " | ".join(w.message for w in facts.warnings)
    assert "'Exists' is neither In nor NotIn" in messages
    assert 'a Cluster refuses this taint (effect: Unsupported value: "PreferNoSchedule"' in messages
    assert facts.clusters[0].taints == (Taint("cluster.karmada.io/not-ready", "", "NoSchedule", T0.replace(hour=9)),)


SIMULATED = """---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [m1, m2]}
    spreadConstraints: [{spreadByField: cluster, maxGroups: 1, minGroups: 1}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec: {replicas: 1}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: m1}
status: {conditions: [{type: Ready, status: "True"}]}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: m2}
status: {conditions: [{type: Ready, status: "True"}]}
"""


def test_simulate_applies_the_policies_when_a_clusters_conditions_change(tmp_path: Path) -> None:
    """m1 goes NotReady at +10s: the policy's NoExecute taint comes at once and the taint manager evicts
    shop/web to m2 (it was never evicted: only the NoSchedule taint came). Ready again at +60s (as a
    `condition` event): the taint goes."""
    snap = tmp_path / "snap.yaml"
    snap.write_text(CTP.format(spec=NOT_READY_NO_EXECUTE) + SIMULATED)
    (tmp_path / "events.yaml").write_text(
        "start: 2026-12-02T10:00:00Z\nevents:\n- at: 10s\n  ready: {cluster: m1, status: 'False'}\n"
        "- at: 60s\n  condition: {cluster: m1, type: Ready, status: 'True'}\n"
    )
    result = CliRunner().invoke(main, ["simulate", str(snap), "--events", str(tmp_path / "events.yaml")])
    assert result.exit_code == 0, result.output
    lines = [line.split("  ", 1)[1] for line in result.stdout.splitlines() if line.startswith("2026")]
    assert "taint @ m1  key=cluster.karmada.io/not-ready, effect=NoExecute, by=ClusterTaintPolicy" in lines
    assert any(line.startswith("evicted shop/web-deployment @ m1") for line in lines)
    assert "scheduled shop/web-deployment  clusters=[m2]" in lines
    untaint = "untaint @ m1  key=cluster.karmada.io/not-ready, effect=NoExecute, by=ClusterTaintPolicy"
    assert [line for line in result.stdout.splitlines() if line.endswith(untaint)] == [
        f"2026-12-02T10:01:00Z (+60s)  {untaint}"
    ]


def test_without_the_failover_gate_the_taints_are_as_the_snapshot_shows(tmp_path: Path) -> None:
    """startClusterTaintPolicyController (cmd/controller-manager/app/controllermanager.go) starts the controller
    only with the Failover feature gate on."""
    from engine.inputs.rule_files import RuleSet
    from engine.karmada.gates import Controllers
    from engine.pipeline import scheduler_for

    facts = load_facts([_snapshot(tmp_path, NOT_READY_NO_EXECUTE)])
    for gate, effects in ((True, ["NoSchedule", "NoExecute"]), (False, ["NoSchedule"])):
        scheduler = scheduler_for(RuleSet((), {}), facts, controllers=Controllers(failover=gate))
        try:
            assert [t.effect for t in scheduler.store.clusters["m1"].taints] == effects
        finally:
            scheduler.close()


def test_a_conditions_bad_time_is_said_once(tmp_path: Path) -> None:
    """The conditions are read once, for the cluster controller's taints and for the policies alike."""
    path = tmp_path / "c.yaml"
    path.write_text(
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m1}\n"
        "status:\n  conditions: [{type: Ready, status: 'True', lastTransitionTime: yesterday}]\n"
    )
    with pytest.raises(FactError) as caught:
        load_facts([path])
    assert [d.message for d in caught.value.diagnostics] == [
        "Cluster m1: status.conditions[0].lastTransitionTime: expected an RFC 3339 time, found 'yesterday'"
    ]
