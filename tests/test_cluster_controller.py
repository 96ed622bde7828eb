"""The cluster controller's NoSchedule taints on a snapshot's clusters (issue 27): taintClusterByCondition in
pkg/controllers/cluster/cluster_controller.go taints a cluster at once by its Ready condition, so a cluster
that is not Ready receives no new placement, while what already runs there stays."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from engine import evaluate, load_facts, load_rules
from engine.inputs.facts import NOT_READY, UNREACHABLE, Taint, scheduling_taints

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
