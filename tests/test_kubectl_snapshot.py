"""A snapshot exactly as kubectl prints it (tests/data/kubectl/snapshot.yaml): every field Karmada and
Kubernetes write is accepted without a warning, and a binding whose applied placement matches its
policy is settled, as Karmada's scheduler leaves it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from engine.cli import main

SNAPSHOT = Path(__file__).parent / "data" / "kubectl" / "snapshot.yaml"


def test_a_kubectl_snapshot_evaluates_quietly() -> None:
    result = CliRunner().invoke(main, ["eval", str(SNAPSHOT)])
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.splitlines()[:3] == [
        "default/web-deployment  (policy default/web)",
        "  settled: kept on its clusters: placement as applied (policy.karmada.io/applied-placement), replicas "
        "as assigned, no reschedule triggered, no target cluster being deleted",
        "  clusters: member1 (2 replicas)",
    ]


def test_the_same_snapshot_as_json_gives_the_same_answer(tmp_path: Path) -> None:
    (tmp_path / "snapshot.json").write_text(json.dumps(yaml.safe_load(SNAPSHOT.read_text())))
    as_yaml = CliRunner().invoke(main, ["eval", str(SNAPSHOT), "-o", "json"])
    as_json = CliRunner().invoke(main, ["eval", str(tmp_path / "snapshot.json"), "-o", "json"])
    assert as_json.exit_code == 0 and as_json.stdout == as_yaml.stdout


def test_at_now_a_healthy_workload_stays() -> None:
    result = CliRunner().invoke(main, ["eval", str(SNAPSHOT), "--now", "2026-12-03T00:00:00Z", "-o", "json"])
    data = json.loads(result.stdout)
    assert result.exit_code == 0 and data["evictions"] == []
    assert data["placements"][0]["atNow"] == {"tasks": [], "works": {"member1": {}}}


def test_cluster_scoped_templates_get_cluster_resource_bindings() -> None:
    """A ClusterRole or Namespace is bound by a ClusterResourceBinding named NAME-KIND, without a namespace
    (it was reported as default/reader-clusterrole); a template's own fields (a ClusterRole's rules) are its
    content, not unknown fields."""
    snapshot = SNAPSHOT.parent / "cluster-scoped.yaml"
    result = CliRunner().invoke(main, ["eval", str(snapshot), "-o", "json"])
    assert result.exit_code == 0 and "unknown field" not in result.stderr
    placements = {p["binding"]: p["clusters"] for p in json.loads(result.stdout)["placements"]}
    assert placements == {
        "reader-clusterrole": ["member1"],
        "shop-namespace": ["member1"],
        "shop/cfg-configmap": ["member1", "member2"],
    }


def test_a_cluster_resource_binding_meets_its_template() -> None:
    from engine import load_facts

    crb = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ClusterResourceBinding",
        "metadata": {"name": "reader-clusterrole"},
        "spec": {
            "resource": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "reader"},
            "clusters": [{"name": "member1"}],
        },
    }
    facts = load_facts(SNAPSHOT.parent / "cluster-scoped.yaml", [crb])
    binding = next(b for b in facts.bindings if b.kind == "ClusterRole")
    assert binding.key == "reader-clusterrole" and binding.cluster_scoped and binding.cluster_names == ("member1",)
    assert sum(b.kind == "ClusterRole" for b in facts.bindings) == 1


def test_facts_from_standard_input() -> None:
    """`kubectl get … -o yaml | fleetrules eval RULES --facts -`: problems are named <stdin>."""
    piped = CliRunner().invoke(main, ["eval", str(SNAPSHOT), "--facts", "-"], input=SNAPSHOT.read_text())
    direct = CliRunner().invoke(main, ["eval", str(SNAPSHOT)])
    assert piped.exit_code == 0 and piped.stdout == direct.stdout
    bad = CliRunner().invoke(main, ["eval", str(SNAPSHOT), "--facts", "-"], input="kind: Cluster\n")
    assert bad.exit_code == 2 and bad.stderr.startswith("<stdin>:1:1: error: Cluster ?: metadata.name: required")
