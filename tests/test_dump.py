"""A real control plane's dump (tests/data/dump/generate.py: 2,000 objects and more, kube-system and karmada-system
workloads, RBAC with colons, CRDs, Services, ConfigMaps and Secrets, managedFields and status noise, a List of mixed
versions, a typed DeploymentList, separate documents), evaluated as `kubectl get -A -o yaml` and `-o json` print
it. The expected placements are Karmada's own scheduler's (tests/data/dump/expected.json, recorded by
tests/data/oracle/fleets.go on the bindings the detector makes of the dump), never fleetrules' output."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from engine import Controllers, Result, RuleSet, evaluate, load_facts

HERE = Path(__file__).resolve().parent / "data" / "dump"
GATES = Controllers.parse(["feature-gates=WorkloadAffinity=true"])


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("dump_generate", HERE / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _generator()


def _evaluate(name: str, text: str) -> Result:
    """As `fleetrules eval DUMP` evaluates it: its own policies, nothing else."""
    return evaluate(RuleSet((), {}), load_facts(texts=[(name, text)]), controllers=GATES)


@pytest.fixture(scope="module", params=["yaml", "json"])
def evaluated(request: pytest.FixtureRequest) -> Result:
    if request.param == "yaml":
        return _evaluate("dump.yaml", generate.dump())
    listed, typed, documents = generate.objects()
    items = [*listed, *typed, *documents]
    return _evaluate("dump.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=4))


def test_the_dump_is_a_control_planes() -> None:
    listed, typed, documents = generate.objects()
    assert len(listed) + len(typed) + len(documents) >= 2000
    kinds = {o["kind"] for o in [*listed, *typed, *documents]}
    assert {"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "Service", "Secret"} <= kinds


def test_every_placement_is_karmadas(evaluated: Result) -> None:
    (expected,) = json.loads((HERE / "expected.json").read_text())
    placed = {p.binding: p for p in evaluated.placements}
    assert len(expected) > 100
    for theirs in expected:
        key = theirs["binding"].removeprefix("/")  # the oracle's key of a cluster-scoped binding
        ours = placed[key]
        mine = sorted((c, ours.replicas.get(c, 0)) for c in ours.clusters)
        karmadas = sorted((c["name"], c.get("replicas", 0)) for c in theirs.get("clusters") or [])
        assert mine == karmadas, key
        assert (ours.message if ours.unschedulable else "") == theirs.get("error", ""), key
    assert len(placed) == len(expected)  # nothing else is placed


def test_what_the_detector_never_binds(evaluated: Result) -> None:
    reasons: dict[str, int] = {}
    for n in evaluated.not_propagated:
        reasons[n.reason] = reasons.get(n.reason, 0) + 1
    # kube-system's ConfigMaps, Secrets and ServiceAccounts, its API server's ConfigMap (skipped with the namespace:
    # EventFilter tests the namespaces first) and 3 Deployments; karmada-system's 3 Deployments
    assert reasons == {"SkippedNamespace": 3 * generate.KUBE_SYSTEM + 1 + 3, "ReservedNamespace": 3}


def test_dependencies_follow_their_workloads(evaluated: Result) -> None:
    placed = {p.binding: p for p in evaluated.placements}
    assert evaluated.attached
    for attached in evaluated.attached:
        union = {c for key in attached.required_by for c in placed[key].clusters}
        assert set(attached.clusters) == union
    # the templates bound as dependencies are not "selected by no policy"
    assert not {a.binding for a in evaluated.attached} & set(evaluated.unmatched)


def test_the_cluster_controller_changes_are_said(evaluated: Result) -> None:
    (note,) = [w for w in evaluated.warnings if "cluster controller changes the taints" in w.message]
    assert "member-8 (-cluster.karmada.io/not-ready:NoSchedule)" in note.message
