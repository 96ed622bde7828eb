"""The cluster controller's NoSchedule taints on a snapshot's clusters (issue 27): taintClusterByCondition in
pkg/controllers/cluster/cluster_controller.go taints a cluster at once by its Ready condition, so a cluster
that is not Ready receives no new placement, while what already runs there stays; and the scheduler's requeue of
the bindings a changed cluster's affinity matches (pkg/scheduler/event_handler.go updateCluster,
enqueueAffectedBindings; scheduler.go doScheduleBinding schedules a Duplicated binding whenever it takes it)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from engine import evaluate, load_facts, load_rules, simulate
from engine.inputs.events import load_events
from engine.inputs.facts import NOT_READY, UNREACHABLE, Taint, scheduling_taints
from engine.results import EntryKind

T0 = dt.datetime(2026, 12, 2, 10, 0, tzinfo=dt.UTC)

POLICY = """apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [m1, m2]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec: {replicas: 1}
"""


def _cluster(name: str, conditions: str | None) -> str:
    status = "" if conditions is None else f"status: {{conditions: {conditions}}}\n"
    return f"---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {{name: {name}}}\n{status}"


READY = "[{type: Ready, status: 'True'}]"


@pytest.mark.parametrize(
    ("conditions", "taint"),
    [
        ("[{type: Ready, status: 'False', lastTransitionTime: '2026-12-02T10:00:00Z'}]", NOT_READY),
        ("[{type: Ready, status: Unknown}]", UNREACHABLE),
        ("[{type: CompleteAPIEnablements, status: 'True'}]", NOT_READY),  # no Ready condition: a new cluster
        ("[]", NOT_READY),
    ],
)
def test_a_cluster_not_ready_gets_no_new_placement(tmp_path: Path, conditions: str, taint: str) -> None:
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(POLICY + _cluster("m1", conditions) + _cluster("m2", READY))
    facts = load_facts([snapshot])
    m1 = next(c for c in facts.clusters if c.name == "m1")
    assert [(t.key, t.effect) for t in m1.taints] == [(taint, "NoSchedule")]
    placement = evaluate(load_rules([snapshot]), facts).placement("shop/web-deployment")
    assert placement.clusters == ("m2",)
    assert any(taint in str(reason) for reason in placement.rejected["m1"]), placement.rejected["m1"]


def test_a_ready_cluster_loses_the_controllers_taints_and_a_hand_written_one_is_taken_as_given(
    tmp_path: Path,
) -> None:
    tainted = "  taints: [{key: cluster.karmada.io/not-ready, effect: NoSchedule}, {key: x, effect: NoSchedule}]\n"
    snapshot = tmp_path / "snapshot.yaml"
    ready = _cluster("m1", READY).replace("metadata: {name: m1}\n", "metadata: {name: m1}\nspec:\n" + tainted)
    bare = _cluster("m2", None).replace("metadata: {name: m2}\n", "metadata: {name: m2}\nspec:\n" + tainted)
    snapshot.write_text(POLICY + ready + bare)
    clusters = {c.name: c for c in load_facts([snapshot]).clusters}
    assert [t.key for t in clusters["m1"].taints] == ["x"]  # Ready: the controller removes its own taints
    assert [t.key for t in clusters["m2"].taints] == [NOT_READY, "x"]  # no status: not a control plane's dump


def test_scheduling_taints_swap_and_keep_the_others() -> None:
    """updateClusterTaints: Unknown swaps not-ready for unreachable; NoExecute taints are the taint
    manager's, never touched here."""
    no_execute = Taint(NOT_READY, "", "NoExecute", T0)
    taints = (Taint(NOT_READY, "", "NoSchedule", T0), no_execute)
    assert scheduling_taints(taints, "Unknown", T0) == (no_execute, Taint(UNREACHABLE, "", "NoSchedule", T0))
    assert scheduling_taints(taints, "False", T0) == taints
    assert scheduling_taints(taints, "True", T0) == (no_execute,)


def test_karmadas_own_objects_namespaces_and_events_are_not_templates(tmp_path: Path) -> None:
    """The detector skips Karmada's API groups, events and leases (pkg/util/apigroup.go
    NewSkippedResourceConfig); the namespace sync controller propagates every Namespace, so none is "selected
    by no policy"; a ClusterTaintPolicy is no template either (tests/test_cluster_taint_policy.py)."""
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(
        POLICY
        + _cluster("m1", READY)
        + "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n"
        + "---\napiVersion: policy.karmada.io/v1alpha1\nkind: ClusterTaintPolicy\nmetadata: {name: nr}\n"
        "spec: {taints: [{key: k, effect: NoExecute}]}\n"
        + "---\napiVersion: work.karmada.io/v1alpha1\nkind: Work\nmetadata: {name: w, namespace: karmada-es-m1}\n"
        + "---\napiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: l, namespace: shop}\n"
        + "---\napiVersion: events.k8s.io/v1\nkind: Event\nmetadata: {name: e, namespace: shop}\n"
    )
    facts = load_facts([snapshot])
    assert sorted(b.kind for b in facts.bindings) == ["Deployment", "Namespace"]
    result = evaluate(load_rules([snapshot]), facts)
    assert result.unmatched == ()
    said = [w.message for w in facts.warnings if "ClusterTaintPolicy" in w.message]  # no conditions: no change
    assert len(said) == 1 and "--allow-no-execute-taint-policy" in said[0]


SCHEDULED = """---
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: web-deployment
  namespace: shop
  annotations: {policy.karmada.io/applied-placement: '{"clusterAffinity":{"clusterNames":["m1","m2"]}%s}'}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, name: web, namespace: shop}
  replicas: 1
  placement: {clusterAffinity: {clusterNames: [m1, m2]}%s}
  clusters: [{name: m1, replicas: 1}]
"""
STALE = "spec:\n  taints: [{key: cluster.karmada.io/not-ready, effect: NoSchedule}]\n"


@pytest.mark.parametrize(
    ("scheduling", "rescheduled"),
    [
        ("", True),  # no replicaScheduling: Duplicated (Placement.ReplicaSchedulingType)
        ("Duplicated", True),
        ("Divided", False),  # a workload Divided: doScheduleBinding finds nothing to do
    ],
)
def test_a_cluster_about_to_change_requeues_the_bindings_its_affinity_matches(
    tmp_path: Path, scheduling: str, rescheduled: bool
) -> None:
    """m2 is Ready and still carries the not-ready taint: the cluster controller removes it at once, a change of
    m2's spec (its generation), so the scheduler requeues every binding whose affinity matches m2
    (event_handler.go updateCluster, enqueueAffectedBindings) and schedules a Duplicated one again
    (scheduler.go doScheduleBinding): it gains m2. A Divided workload is left as it is."""
    extra = f',"replicaScheduling":{{"replicaSchedulingType":"{scheduling}"}}' if scheduling else ""
    yaml_extra = f", replicaScheduling: {{replicaSchedulingType: {scheduling}}}" if scheduling else ""
    policy = POLICY.replace(
        "clusterAffinity: {clusterNames: [m1, m2]}",
        "clusterAffinity: {clusterNames: [m1, m2]}"
        + (f"\n    replicaScheduling: {{replicaSchedulingType: {scheduling}}}" if scheduling else ""),
    )
    m2 = _cluster("m2", READY).replace("metadata: {name: m2}\n", "metadata: {name: m2}\n" + STALE)
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(policy + _cluster("m1", READY) + m2 + SCHEDULED % (extra, yaml_extra))
    facts = load_facts([snapshot])
    result = evaluate(load_rules([snapshot]), facts)
    placement = result.placement("shop/web-deployment")
    assert placement.settled is not rescheduled
    assert placement.clusters == (("m1", "m2") if rescheduled else ("m1",))
    (note,) = [w for w in result.warnings if "cluster controller changes the taints" in w.message]
    assert f"m2 (-{NOT_READY}:NoSchedule)" in note.message


def test_no_change_no_requeue(tmp_path: Path) -> None:
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(POLICY + _cluster("m1", READY) + _cluster("m2", READY) + SCHEDULED % ("", ""))
    placement = evaluate(load_rules([snapshot]), load_facts([snapshot])).placement("shop/web-deployment")
    assert placement.settled and placement.clusters == ("m1",)


def test_a_cluster_ready_again_in_a_timeline_is_added_to_duplicated_bindings(tmp_path: Path) -> None:
    """In a timeline every cluster event that changes a cluster's taints requeues the bindings its affinity
    matches: m2 turning Ready (the controller removes its not-ready taint) gives the Duplicated binding m2, at once."""
    snapshot = tmp_path / "snapshot.yaml"
    not_ready = "[{type: Ready, status: 'False', lastTransitionTime: '2026-12-02T09:00:00Z'}]"
    snapshot.write_text(POLICY + _cluster("m1", READY) + _cluster("m2", not_ready) + SCHEDULED % ("", ""))
    events = tmp_path / "events.yaml"
    events.write_text("start: 2026-12-02T10:00:00Z\nevents:\n- at: 1m\n  ready: {cluster: m2, status: 'True'}\n")
    start, timeline = load_events(events)
    entries = simulate(load_rules([snapshot]), load_facts([snapshot]), start, timeline)
    scheduled = [e for e in entries if e.kind is EntryKind.SCHEDULED and e.binding == "shop/web-deployment"]
    assert [(e.time - start, e.detail["clusters"]) for e in scheduled] == [(dt.timedelta(minutes=1), ["m1", "m2"])]
