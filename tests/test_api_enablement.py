"""The APIEnablement filter (rules/api_enablement.fr), from Karmada's
pkg/scheduler/framework/plugins/apienablement/api_enablement_test.go TestAPIEnablement_Filter and
pkg/apis/cluster/v1alpha1/cluster_helper.go APIEnablement."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import evaluate, load_facts, load_rules
from engine.inputs.facts import Cluster

POLICY = "policy p {\n  select { kind Deployment }\n}\n"


def _cluster(name: str, apis: list[tuple[str, str]] | None, complete: bool = True) -> dict[str, object]:
    status: dict[str, object] = {}
    if apis is not None:
        status["apiEnablements"] = [{"groupVersion": gv, "resources": [{"name": "x", "kind": k}]} for gv, k in apis]
    if complete:
        status["conditions"] = [
            {"type": "Ready", "status": "True"},  # without it the cluster controller taints the cluster NotReady
            {"type": "CompleteAPIEnablements", "status": "True"},
        ]
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "status": status,
    }


def _binding(clusters: list[str]) -> dict[str, object]:
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "web-deployment", "namespace": "default"},
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "default"},
            "clusters": [{"name": c} for c in clusters],
        },
    }


@pytest.mark.parametrize(
    ("apis", "targets", "placed"),
    [
        ([("apps/v1", "Deployment")], [], True),  # "API is enabled in cluster"
        ([("v1", "Pod")], [], False),  # "API is not enabled in cluster"
        ([("v1", "Pod")], ["member1"], True),  # "cluster in target list with API not enabled"
        ([("apps/v1beta1", "Deployment")], [], False),  # another version of the group is another API
    ],
)
def test_karmada_filter_cases(tmp_path: Path, apis: list[tuple[str, str]], targets: list[str], placed: bool) -> None:
    (tmp_path / "p.fr").write_text(POLICY)
    facts = load_facts(objects=[_cluster("member1", apis), _binding(targets)])
    (placement,) = evaluate(load_rules(tmp_path / "p.fr"), facts, reschedule_all=True).placements
    assert (placement.clusters == ("member1",)) is placed
    if not placed:
        (reason,) = placement.rejected["member1"]
        assert (reason.rule, reason.message) == ("api-enablement", "cluster(s) did not have the API resource")


@pytest.mark.parametrize(
    ("listed", "complete", "status"),
    [(True, False, "APIEnabled"), (False, True, "APIDisabled"), (False, False, "APIUnknown")],
)
def test_api_enablement_status(listed: bool, complete: bool, status: str) -> None:
    """Cluster.APIEnablement: the CompleteAPIEnablements condition turns 'not listed' into APIDisabled;
    APIUnknown fails the filter all the same."""
    apis = frozenset({("apps/v1", "Deployment")} if listed else set())
    cluster = Cluster("m1", api_enablements=apis, complete_api_enablements=complete)
    assert cluster.api_enablement("apps/v1", "Deployment") == status
