"""Which bindings the scheduler runs (pkg/scheduler/scheduler.go doScheduleBinding): the cases of karmada
pkg/scheduler/helper_test.go Test_needConsideredPlacementChanged, the other triggers of
pkg/scheduler/scheduler.go doScheduleBinding, and settled bindings end to end."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine import evaluate, load_facts, load_rules, simulate
from engine.errors import NO_SPAN
from engine.inputs.facts import Binding, Claim, Cluster, TargetCluster
from engine.schedule.reschedule import (
    HELD_PLACEMENT,
    HELD_SCHEDULED,
    UNPROPAGATED,
    Trigger,
    held_by_lazy_activation,
    placement_changed,
    replicas_changed,
    trigger,
    waits_for_the_workload,
)
from engine.syntax import ast
from engine.syntax.parse import parse
from tests.gates import ON


def policy(body: str) -> ast.Policy:
    (found,) = parse(f"policy p {{\n  select {{ kind Deployment }}\n{body}\n}}\n").policies
    return found


M1 = {"clusterNames": ["m1"]}
M2 = {"clusterNames": ["m2"]}
M1M2 = {"clusterNames": ["m1", "m2"]}

# (name in helper_test.go, the policy's placement, the applied placement (None: no annotation), observed term, want)
PLACEMENT_CASES: list[tuple[str, str, dict[str, Any] | None, str, bool]] = [
    ("nil appliedPlacement", "clusters { names m1 }", None, "", True),
    ("same placement and appliedPlacement", "clusters { names m1 }", {"clusterAffinity": M1}, "", False),
    ("different ClusterAffinity field", "clusters { names m1 }", {"clusterAffinity": M1M2}, "", True),
    (
        "different ClusterTolerations field",
        "clusters { names m1 }\ntolerate k = v : NoSchedule",
        {"clusterAffinity": M1},
        "",
        True,
    ),
    (
        "different SpreadConstraints field",
        "clusters { names m1 }\nspread by cluster max 1",
        {"clusterAffinity": M1},
        "",
        True,
    ),
    (
        "different ClusterAffinities field with empty schedulerObservingAffinityName",
        "clusters group1 { names m1 }",
        {},
        "",
        True,
    ),
    (
        "update the target ClusterAffinityTerm",
        "clusters group1 { names m1, m2 }",
        {"clusterAffinities": [{"affinityName": "group1", **M1}]},
        "group1",
        True,
    ),
    (
        "delete the target ClusterAffinityTerm",
        "clusters group2 { names m2 }",
        {"clusterAffinities": [{"affinityName": "group1", **M1}, {"affinityName": "group2", **M2}]},
        "group1",
        True,
    ),
    (
        "delete the whole ClusterAffinities",
        "",
        {"clusterAffinities": [{"affinityName": "group1", **M1}]},
        "group1",
        True,
    ),
    (
        "add a new ClusterAffinityTerm and don't update the target ClusterAffinityTerm",
        "clusters group1 { names m1 }\nclusters group2 { names m1, m2 }",
        {"clusterAffinities": [{"affinityName": "group1", **M1}]},
        "group1",
        False,
    ),
    (
        "update a ClusterAffinityTerm and don't update the target ClusterAffinityTerm",
        "clusters group1 { names m1 }\nclusters group2 { names m1, m2 }",
        {"clusterAffinities": [{"affinityName": "group1", **M1}, {"affinityName": "group2", **M2}]},
        "group1",
        False,
    ),
    (
        "delete a ClusterAffinityTerm and don't update the target ClusterAffinityTerm",
        "clusters group1 { names m1 }",
        {"clusterAffinities": [{"affinityName": "group1", **M1}, {"affinityName": "group2", **M2}]},
        "group1",
        False,
    ),
    # helper.go: an annotation that is not JSON is logged, and nothing is rescheduled
    ("applied placement that is not JSON", "clusters { names m1 }", "{not json", "", False),  # type: ignore[list-item]
    # the first DeepEqual includes workloadAffinity, the second check does not; with no observed term the
    # third check reports a change
    ("only the workload affinity changed", "workload anti-affinity by app", {}, "", True),
    # helper.go placementChanged: replicaScheduling is compared
    (
        "replica scheduling unchanged",
        "clusters { names m1 }\nreplicas divided by available",
        {
            "clusterAffinity": M1,
            "replicaScheduling": {
                "replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Weighted",
                "weightPreference": {"dynamicWeight": "AvailableReplicas"},
            },
        },
        "",
        False,
    ),
    (
        "replica scheduling changed from Duplicated to Aggregated",
        "clusters { names m1 }\nreplicas aggregated",
        {"clusterAffinity": M1, "replicaScheduling": {"replicaSchedulingType": "Duplicated"}},
        "",
        True,
    ),
]


@pytest.mark.parametrize(
    ("body", "applied", "observed", "want"), [c[1:] for c in PLACEMENT_CASES], ids=[c[0] for c in PLACEMENT_CASES]
)
def test_placement_changed(body: str, applied: dict[str, Any] | str | None, observed: str, want: bool) -> None:
    text = applied if isinstance(applied, str) else json.dumps(applied) if applied is not None else ""
    assert placement_changed(policy(body), text, observed) is want


def binding(**fields: Any) -> Binding:
    base: dict[str, Any] = {"namespace": "n", "name": "b", "kind": "Deployment", "replicas": 2}
    return Binding(**(base | fields))


T0 = dt.datetime(2026, 12, 2, tzinfo=dt.UTC)
APPLIED = json.dumps({"clusterAffinity": M1M2})
PLACED = (TargetCluster("m1", 2), TargetCluster("m2", 2))
CLUSTERS = {"m1": Cluster("m1"), "m2": Cluster("m2")}


@pytest.mark.parametrize(
    ("fields", "clusters", "want"),
    [
        ({}, CLUSTERS, Trigger.PENDING),  # no clusters yet
        ({"clusters": PLACED}, CLUSTERS, Trigger.PLACEMENT),  # no applied-placement annotation
        ({"clusters": PLACED, "applied_placement": APPLIED}, CLUSTERS, None),  # settled
        # IsBindingReplicasChanged: Duplicated compares each cluster's replicas with spec.replicas
        (
            {"clusters": PLACED, "applied_placement": APPLIED, "replicas": 3, "replica_scheduling": "Duplicated"},
            CLUSTERS,
            Trigger.REPLICAS,
        ),
        # ... Divided compares their sum; a nil strategy never counts
        (
            {"clusters": PLACED, "applied_placement": APPLIED, "replica_scheduling": "Divided"},
            CLUSTERS,
            Trigger.REPLICAS,
        ),
        ({"clusters": PLACED, "applied_placement": APPLIED, "replicas": 9}, CLUSTERS, None),
        # RescheduleRequired: rescheduleTriggeredAt after lastScheduledTime (both set)
        (
            {
                "clusters": PLACED,
                "applied_placement": APPLIED,
                "reschedule_triggered_at": T0,
                "last_scheduled_time": T0,
            },
            CLUSTERS,
            None,
        ),
        (
            {
                "clusters": PLACED,
                "applied_placement": APPLIED,
                "reschedule_triggered_at": T0 + dt.timedelta(seconds=1),
                "last_scheduled_time": T0,
            },
            CLUSTERS,
            Trigger.RESCHEDULE,
        ),
        # HasTerminatingTargetClusters
        (
            {"clusters": PLACED, "applied_placement": APPLIED},
            CLUSTERS | {"m2": Cluster("m2", deleting=True)},
            Trigger.DELETING,
        ),
    ],
)
def test_trigger(fields: dict[str, Any], clusters: dict[str, Cluster], want: Trigger | None) -> None:
    assert trigger(binding(**fields), policy("clusters { names m1, m2 }"), clusters) == want


def test_replicas_changed_needs_a_strategy() -> None:
    assert not replicas_changed(binding(clusters=PLACED, replicas=7))


GROUPED = """policy n/p {
  select { kind Deployment }
  workload anti-affinity by app.example.com/group
}
"""


def cluster_obj(name: str) -> dict[str, Any]:
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name}}


def rb(name: str, clusters: list[str], applied: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"{name}-deployment", "namespace": "n"}
    if applied:
        meta["annotations"] = {"policy.karmada.io/applied-placement": json.dumps({"workloadAffinity": {}})}
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": meta,
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "n", "name": name},
            "clusters": [{"name": c} for c in clusters],
            "workloadAffinityGroups": {"antiAffinityGroup": "app.example.com/group=g"},
        },
    }


def workload(name: str) -> dict[str, Any]:
    meta = {"name": name, "namespace": "n", "labels": {"app.example.com/group": "g"}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta}


def test_a_settled_binding_keeps_its_cluster_and_counts_as_a_peer(tmp_path: Path) -> None:
    """Binding a runs on m2 and is settled: its applied placement is the policy's. The pending b of the
    same anti-affinity group is placed around it, on m1; before, a was placed anew (on m1, first by
    name) and b pushed to m2."""
    (tmp_path / "p.fr").write_text(GROUPED)
    applied = json.dumps({"workloadAffinity": {"antiAffinity": {"groupByLabelKey": "app.example.com/group"}}})
    settled = rb("a", ["m2"], applied=False)
    settled["metadata"]["annotations"] = {"policy.karmada.io/applied-placement": applied}
    objects = [cluster_obj("m1"), cluster_obj("m2"), settled, workload("a"), workload("b")]
    result = evaluate(load_rules([tmp_path / "p.fr"]), load_facts(objects=objects), controllers=ON)
    a, b = result.placement("n/a-deployment"), result.placement("n/b-deployment")
    assert a.settled and a.clusters == ("m2",) and not a.trigger
    assert b.clusters == ("m1",) and b.trigger == Trigger.PENDING
    everything = evaluate(
        load_rules([tmp_path / "p.fr"]), load_facts(objects=objects), reschedule_all=True, controllers=ON
    )
    assert not everything.placement("n/a-deployment").settled


def test_a_rule_that_decides_about_a_settled_binding_schedules_it(tmp_path: Path) -> None:
    (tmp_path / "p.fr").write_text(
        GROUPED + 'rule no-m2 { when cluster c (c.name == "m2") and binding b then reject c for b "not m2" }\n'
    )
    applied = json.dumps({"workloadAffinity": {"antiAffinity": {"groupByLabelKey": "app.example.com/group"}}})
    settled = rb("a", ["m2"], applied=False)
    settled["metadata"]["annotations"] = {"policy.karmada.io/applied-placement": applied}
    result = evaluate(
        load_rules([tmp_path / "p.fr"]),
        load_facts(objects=[cluster_obj("m1"), cluster_obj("m2"), settled, workload("a")]),
        controllers=ON,
    )
    a = result.placement("n/a-deployment")
    assert a.trigger == Trigger.RULES and a.clusters == ("m1",)


def test_a_peer_made_by_a_policy_not_evaluated_still_counts(tmp_path: Path) -> None:
    """The scheduler's indexer holds every ResourceBinding with spec.workloadAffinityGroups, whatever
    policy made it (workload_affinity.go): another team's binding on m1 keeps b off m1."""
    (tmp_path / "p.fr").write_text(GROUPED.replace("select { kind Deployment }", "select { kind Deployment name b }"))
    other = rb("other", ["m1"], applied=True)
    result = evaluate(
        load_rules([tmp_path / "p.fr"]),
        load_facts(objects=[cluster_obj("m1"), cluster_obj("m2"), other, workload("b")]),
        controllers=ON,
    )
    assert result.unmatched == ("n/other-deployment",)
    b = result.placement("n/b-deployment")
    assert b.clusters == ("m2",) and [r.rule for r in b.rejected["m1"]] == ["workload-anti-affinity"]


def test_the_command_line_reports_settled_bindings_and_reschedules_all(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from engine.cli import main

    (tmp_path / "p.fr").write_text(GROUPED)
    applied = json.dumps({"workloadAffinity": {"antiAffinity": {"groupByLabelKey": "app.example.com/group"}}})
    settled = rb("a", ["m2"], applied=False)
    settled["metadata"]["annotations"] = {"policy.karmada.io/applied-placement": applied}
    (tmp_path / "facts.json").write_text(
        json.dumps({"kind": "List", "items": [cluster_obj("m1"), cluster_obj("m2"), settled, workload("a")]})
    )
    args = ["eval", str(tmp_path / "p.fr"), "--facts", str(tmp_path / "facts.json")]
    needed = CliRunner().invoke(main, args)
    assert needed.exit_code == 0 and "  settled: kept on its clusters" in needed.stdout
    everything = CliRunner().invoke(main, [*args, "--reschedule", "all", "-o", "json"])
    assert everything.exit_code == 0 and '"scheduledBecause": "every binding is rescheduled' in everything.stdout
    explained = CliRunner().invoke(main, ["explain", *args[1:], "--binding", "n/a-deployment", "--cluster", "m2"])
    assert explained.exit_code == 0 and "the scheduler would not run it" in explained.stdout


def test_a_lazy_policy_leaves_a_scheduled_binding_on_the_placement_it_was_scheduled_with() -> None:
    """pkg/detector/detector.go ApplyPolicy: for a change that Karmada made (a policy change), a policy with
    activationPreference Lazy does not refresh the binding, so its spec.placement stays as applied and
    doScheduleBinding finds no placement change. A binding not scheduled yet is scheduled as usual."""
    changed = binding(clusters=PLACED, applied_placement=json.dumps({"clusterAffinity": M1}))
    eager, lazy = policy("clusters { names m1, m2 }"), policy("clusters { names m1, m2 }\nactivation lazy")
    assert trigger(changed, eager, CLUSTERS) == Trigger.PLACEMENT
    assert trigger(changed, lazy, CLUSTERS) is None and held_by_lazy_activation(changed, lazy)
    assert trigger(binding(), lazy, CLUSTERS) == Trigger.PENDING
    # the other triggers read the binding itself, Lazy or not
    more = replace(changed, replicas=3, replica_scheduling="Duplicated")
    assert trigger(more, lazy, CLUSTERS) == Trigger.REPLICAS
    unchanged = binding(clusters=PLACED, applied_placement=APPLIED)
    assert not held_by_lazy_activation(unchanged, lazy)
    # no applied-placement annotation: the scheduler's own comparison (spec.placement against it) runs it
    assert trigger(binding(clusters=PLACED), lazy, CLUSTERS) == Trigger.PLACEMENT


def test_a_lazy_policy_change_is_reported_as_waiting_for_the_workload(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from engine.cli import main

    (tmp_path / "p.fr").write_text(
        GROUPED.replace("by app.example.com/group", "by app.example.com/group\n  activation lazy")
    )
    settled = rb("a", ["m2"], applied=False)
    settled["metadata"]["annotations"] = {"policy.karmada.io/applied-placement": json.dumps({"clusterAffinity": M1})}
    objects = [cluster_obj("m1"), cluster_obj("m2"), settled, workload("a")]
    result = evaluate(load_rules([tmp_path / "p.fr"]), load_facts(objects=objects), controllers=ON)
    a = result.placement("n/a-deployment")
    assert a.settled and a.clusters == ("m2",) and "activationPreference is Lazy" in a.settled_why
    (tmp_path / "facts.json").write_text(json.dumps({"kind": "List", "items": objects}))
    args = ["eval", str(tmp_path / "p.fr"), "--facts", str(tmp_path / "facts.json")]
    out = CliRunner().invoke(main, args).stdout
    assert "settled: kept on its clusters: its policy's activationPreference is Lazy" in out
    everything = evaluate(
        load_rules([tmp_path / "p.fr"]), load_facts(objects=objects), reschedule_all=True, controllers=ON
    )
    assert everything.placement("n/a-deployment").trigger == Trigger.ALL


def test_a_workload_a_lazy_policy_claimed_without_a_binding_waits_for_its_own_change() -> None:
    """pkg/detector/detector.go ApplyPolicy: a policy applied for a change Karmada made (its creation, after
    the workload's) claims the workload and, Lazy, makes no binding; the workload propagates at its next
    change (test/e2e/suites/base/lazy_activation_policy_test.go, "Simple Case 2 (Policy created after
    resource)"). A workload not claimed yet is new to the detector, a change of the user's: its binding
    is made and scheduled, Lazy or not; a ResourceBinding without clusters is scheduled as ever."""
    lazy, eager = policy("activation lazy"), policy("")
    claimed = binding(from_workload=True, claim=Claim("p", cluster_scoped=False))
    assert waits_for_the_workload(claimed, lazy) and trigger(claimed, lazy, CLUSTERS) is None
    assert trigger(claimed, eager, CLUSTERS) == Trigger.PENDING
    assert trigger(replace(claimed, claim=None), lazy, CLUSTERS) == Trigger.PENDING  # not claimed yet
    other = replace(claimed, claim=Claim("q", cluster_scoped=False))  # claimed by a policy since deleted
    assert trigger(other, lazy, CLUSTERS) == Trigger.PENDING
    assert trigger(replace(claimed, from_workload=False), lazy, CLUSTERS) == Trigger.PENDING  # a binding exists


def test_a_workload_a_lazy_policy_claimed_is_reported_unpropagated(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from engine.cli import main

    (tmp_path / "p.fr").write_text(
        GROUPED.replace("by app.example.com/group", "by app.example.com/group\n  activation lazy")
    )
    claimed, fresh = workload("a"), workload("b")
    claimed["metadata"]["labels"]["propagationpolicy.karmada.io/permanent-id"] = "0b1c"
    claimed["metadata"]["annotations"] = {
        "propagationpolicy.karmada.io/namespace": "n",
        "propagationpolicy.karmada.io/name": "p",
    }
    objects = [cluster_obj("m1"), cluster_obj("m2"), claimed, fresh]
    rules = load_rules([tmp_path / "p.fr"])
    result = evaluate(rules, load_facts(objects=objects), controllers=ON)
    a, b = result.placement("n/a-deployment"), result.placement("n/b-deployment")
    assert a.settled and a.clusters == () and a.settled_why == UNPROPAGATED
    assert not b.settled and b.clusters == ("m1", "m2")  # the same group: a is not a peer anywhere
    (tmp_path / "facts.json").write_text(json.dumps({"kind": "List", "items": objects}))
    args = ["eval", str(tmp_path / "p.fr"), "--facts", str(tmp_path / "facts.json")]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0 and "  settled: not propagated: its policy's activationPreference is Lazy" in out.stdout
    everything = evaluate(rules, load_facts(objects=objects), reschedule_all=True, controllers=ON).placement(
        "n/a-deployment"
    )
    assert everything.trigger == Trigger.ALL and everything.clusters
    # a simulation has no binding for it: nothing schedules it, and no event can name it
    timeline = simulate(rules, load_facts(objects=objects), T0, [], controllers=ON)
    assert {e.binding for e in timeline if e.binding} == {"n/b-deployment"}


def test_a_binding_held_by_lazy_activation_is_scheduled_by_the_placement_it_holds(tmp_path: Path) -> None:
    """Karmada's scheduler reads the binding's own spec.placement, which a Lazy policy's change did not
    refresh (pkg/detector/detector.go ApplyPolicy): a held binding that is scheduled (here a manual
    reschedule) is placed by the placement it was scheduled with, its applied-placement annotation (m1
    only), not by the policy as it is now (any cluster); `--reschedule all` shows the latter. The result
    names the policy, and says which placement placed it."""
    (tmp_path / "p.fr").write_text(
        GROUPED.replace("by app.example.com/group", "by app.example.com/group\n  activation lazy")
    )
    held = rb("a", ["m2"], applied=False)
    held["metadata"]["annotations"] = {"policy.karmada.io/applied-placement": json.dumps({"clusterAffinity": M1})}
    objects = [cluster_obj("m1"), cluster_obj("m2"), held, workload("a")]
    rules = load_rules([tmp_path / "p.fr"])

    def said(result: Any) -> list[str]:
        return [w.message for w in result.warnings if "activationPreference is Lazy" in w.message]

    settled = evaluate(rules, load_facts(objects=objects), controllers=ON)
    a = settled.placement("n/a-deployment")
    assert a.settled and a.clusters == ("m2",) and a.policy == "n/p" and "Lazy" in a.settled_why
    assert said(settled) == []
    held["spec"]["rescheduleTriggeredAt"] = "2026-12-02T00:00:00Z"
    held["status"] = {"lastScheduledTime": "2026-12-01T00:00:00Z"}
    scheduled = evaluate(rules, load_facts(objects=objects), controllers=ON)
    a = scheduled.placement("n/a-deployment")
    assert a.trigger == Trigger.RESCHEDULE and a.clusters == ("m1",) and a.policy == "n/p"
    (reason,) = a.rejected["m2"]  # the rule of the held placement, cited at the binding
    assert reason.rule.startswith("n/p#held-1/") and reason.source == "object 3:0"
    assert reason.summary == "cluster(s) did not match the placement cluster affinity constraint"
    assert said(scheduled) == [f"binding n/a-deployment: {HELD_SCHEDULED}"]
    everything = evaluate(rules, load_facts(objects=objects), reschedule_all=True, controllers=ON)
    assert everything.placement("n/a-deployment").clusters == ("m1", "m2") and said(everything) == []
    # an annotation that is no placement fleetrules can read: the policy as it is now, and a warning
    held["metadata"]["annotations"]["policy.karmada.io/applied-placement"] = json.dumps({"clusterAffinity": []})
    unread = evaluate(rules, load_facts(objects=objects), controllers=ON)
    assert unread.placement("n/a-deployment").clusters == ("m1", "m2")
    assert said(unread) == [f"binding n/a-deployment: {HELD_PLACEMENT}"]


def test_a_simulation_warns_of_what_an_evaluation_warns_of(tmp_path: Path) -> None:
    """simulate(controllers=ON) reports the scheduler's warnings too, after the run (before, only evaluate did): here a
    binding no policy selects."""
    (tmp_path / "p.fr").write_text(GROUPED)
    other = rb("o", ["m1"], applied=False)
    other["spec"]["resource"]["kind"] = "StatefulSet"
    objects = [cluster_obj("m1"), cluster_obj("m2"), workload("a"), other]
    heard: list[str] = []
    start = dt.datetime(2026, 12, 3, tzinfo=dt.UTC)
    simulate(
        load_rules([tmp_path / "p.fr"]),
        load_facts(objects=objects),
        start,
        [],
        lambda d: heard.append(d.message),
        controllers=ON,
    )
    assert "no policy selects binding n/o-deployment" in heard


def test_a_simulation_starts_by_scheduling_what_the_scheduler_would_run_now(tmp_path: Path) -> None:
    """A binding whose policy's placement changed is scheduled anew by Karmada as soon as it sees it: the
    simulation's timeline begins with that, as an evaluation places it (before, it kept the snapshot's
    clusters until something evicted it)."""
    (tmp_path / "p.fr").write_text("policy n/p {\n  select { kind Deployment }\n  clusters { names m2 }\n}\n")
    moved = rb("a", ["m1"], applied=False)
    moved["metadata"]["annotations"] = {"policy.karmada.io/applied-placement": json.dumps({"clusterAffinity": M1})}
    objects = [cluster_obj("m1"), cluster_obj("m2"), moved, workload("a")]
    rules, facts = load_rules([tmp_path / "p.fr"]), load_facts(objects=objects)
    assert evaluate(rules, facts, controllers=ON).placement("n/a-deployment").clusters == ("m2",)
    start = dt.datetime(2026, 12, 3, tzinfo=dt.UTC)
    timeline = [e.data() for e in simulate(rules, facts, start, [], controllers=ON)]
    assert timeline == [  # and the binding controller moves its Work
        {"time": "2026-12-03T00:00:00Z", "event": "scheduled", "binding": "n/a-deployment", "clusters": ["m2"]},
        {"time": "2026-12-03T00:00:00Z", "event": "work-deleted", "binding": "n/a-deployment", "cluster": "m1"},
        {"time": "2026-12-03T00:00:00Z", "event": "work-created", "binding": "n/a-deployment", "cluster": "m2"},
    ]


def test_the_taint_manager_tolerates_by_the_placement_a_lazy_binding_holds(tmp_path: Path) -> None:
    """The taint manager reads a binding's tolerations from its applied placement
    (pkg/controllers/cluster/taint_manager.go enqueueBinding, needEviction: helper.GetAppliedPlacement):
    a binding that holds an older placement than its Lazy policy's is tolerated as that placement says.
    Here the held placement tolerates the NoExecute taint k and the policy as it is now does not: no
    eviction; with the policy eager, the binding is placed anew at the start and then evicted."""
    from engine.inputs.events import Event, EventKind

    tolerant = {"clusterAffinity": M1M2, "clusterTolerations": [{"key": "k", "operator": "Exists"}]}
    held = rb("a", ["m1", "m2"], applied=False)
    held["metadata"]["annotations"] = {"policy.karmada.io/applied-placement": json.dumps(tolerant)}
    objects = [cluster_obj("m1"), cluster_obj("m2"), held, workload("a")]
    start = dt.datetime(2026, 12, 3, tzinfo=dt.UTC)
    taint = Event(
        start + dt.timedelta(minutes=1), EventKind.TAINT, {"cluster": "m1", "key": "k", "effect": "NoExecute"}, NO_SPAN
    )

    def evicted(lazy: bool) -> list[str]:
        body = "  clusters { names m1, m2 }" + ("\n  activation lazy" if lazy else "")
        (tmp_path / "p.fr").write_text(f"policy n/p {{\n  select {{ kind Deployment }}\n{body}\n}}\n")
        timeline = simulate(
            load_rules([tmp_path / "p.fr"]), load_facts(objects=objects), start, [taint], controllers=ON
        )
        return [e.cluster for e in timeline if e.kind.value == "evicted"]

    assert evicted(lazy=True) == []
    assert evicted(lazy=False) == ["m1"]


def test_a_held_binding_fails_over_as_its_own_spec_failover_says(tmp_path: Path) -> None:
    """The failover controllers read the binding's spec.failover (taint_manager.go getPurgeMode), which the
    detector copies from the policy and, Lazy, did not refresh either: a held binding is evicted with the
    purge mode it records (Gracefully), not its policy's as it is now (Directly); one that records none
    has the taint manager's default (Gracefully); an unreadable one, the policy's."""
    from engine.inputs.events import Event, EventKind

    (tmp_path / "p.fr").write_text(
        "policy n/p {\n  select { kind Deployment }\n  clusters { names m1 }\n"
        "  failover cluster {\n    purge Directly\n  }\n  activation lazy\n}\n"
    )
    held = rb("a", ["m1", "m2"], applied=False)
    held["metadata"]["annotations"] = {"policy.karmada.io/applied-placement": json.dumps({"clusterAffinity": M1M2})}
    start = dt.datetime(2026, 12, 3, tzinfo=dt.UTC)
    fields = {"cluster": "m1", "key": "k", "effect": "NoExecute"}
    taint = Event(start + dt.timedelta(minutes=1), EventKind.TAINT, fields, NO_SPAN)

    def purge(failover: Any) -> list[Any]:
        if failover is not None:
            held["spec"]["failover"] = failover
        objects = [cluster_obj("m1"), cluster_obj("m2"), held, workload("a")]
        timeline = simulate(
            load_rules([tmp_path / "p.fr"]), load_facts(objects=objects), start, [taint], controllers=ON
        )
        return [e.task.purge_mode for e in timeline if e.task is not None]

    assert purge(None) == ["Gracefully"]
    assert purge({"cluster": {"purgeMode": "Gracefully"}}) == ["Gracefully"]
    assert purge({"cluster": "Gracefully"}) == ["Directly"]  # unreadable: the policy's
