"""The scheduler's queue (karmada pkg/scheduler/internal/queue: types.go Less, active_queue_test.go
TestPriorityQueue) and the detector's spec.schedulePriority (pkg/detector detector.go BuildResourceBinding, the
PriorityBasedScheduling gate): the higher priority first, then the order the bindings were added."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine import Result, RuleError, evaluate, load_facts, load_rules, to_json
from engine.cli import main
from engine.inputs.facts import Binding
from engine.karmada.gates import Controllers
from engine.schedule.queue import queue_order

GATES = "feature-gates=WorkloadAffinity=true"
CLUSTERS = [
    {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": c}} for c in ("m1", "m2")
]


def _binding(name: str, priority: int = 0) -> Binding:
    return Binding(namespace="default", name=name, kind="Deployment", resource_name=name, schedule_priority=priority)


@pytest.mark.parametrize(
    ("case", "bindings", "first"),
    [
        ("Add b1, b2 and Get the binding with highest priority", [_binding("foo1", 2), _binding("foo2", 3)], "foo2"),
        ("Add b1, b2 and Get the binding which was enqueued first", [_binding("foo1"), _binding("foo2")], "foo1"),
    ],
)
def test_priority_queue(case: str, bindings: list[Binding], first: str) -> None:
    """active_queue_test.go TestPriorityQueue."""
    assert queue_order(bindings, lambda b: b.schedule_priority or 0)[0].name == first


def _app(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop", "labels": {"app.example.com/group": "g"}},
        "spec": {"replicas": 1},
    }


def _priority_class(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


# two policies over one anti-affinity group of two clusters and three workloads: the one left without a cluster is
# the last the scheduler takes
RULES = """
policy shop/low {
  select { kind Deployment name a, b }
  workload anti-affinity by app.example.com/group
  spread by cluster max 1
}
policy shop/high {
  select { kind Deployment name c }
  priority class urgent
  workload anti-affinity by app.example.com/group
  spread by cluster max 1
}
"""


def _run(tmp_path: Path, objects: list[dict[str, Any]], *flags: str) -> Result:
    (tmp_path / "rules.fr").write_text(RULES)
    facts = load_facts(objects=[*CLUSTERS, *objects])
    return evaluate(load_rules([tmp_path / "rules.fr"]), facts, controllers=Controllers.parse([GATES, *flags]))


def test_a_higher_priority_binding_is_scheduled_first(tmp_path: Path) -> None:
    result = _run(tmp_path, [_app("a"), _app("b"), _app("c"), _priority_class("urgent", 1000)])
    by_key = {p.binding: p for p in result.placements}
    assert by_key["shop/c-deployment"].clusters == ("m1",)  # first in the queue, then a, then b
    assert by_key["shop/a-deployment"].clusters == ("m2",)
    assert by_key["shop/b-deployment"].unschedulable
    (note,) = [w for w in result.warnings if "left without a cluster depends on the order" in w.message]
    assert "app.example.com/group=g in shop" in note.message and "(1 group(s))" in note.message


def test_without_the_gate_the_queue_is_the_order_they_were_added(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        [_app("a"), _app("b"), _app("c"), _priority_class("urgent", 1000)],
        "feature-gates=PriorityBasedScheduling=false",
    )
    by_key = {p.binding: p for p in result.placements}
    assert (by_key["shop/a-deployment"].clusters, by_key["shop/b-deployment"].clusters) == (("m1",), ("m2",))
    assert by_key["shop/c-deployment"].unschedulable
    assert [w for w in result.warnings if "left without a cluster depends on the order" in w.message]


def test_a_priority_class_the_snapshot_lacks_builds_no_binding(tmp_path: Path) -> None:
    result = _run(tmp_path, [_app("a"), _app("c")])
    assert [p.binding for p in result.placements] == ["shop/a-deployment"]
    (missing,) = result.not_propagated
    assert (missing.binding, missing.reason) == ("shop/c-deployment", "PriorityClassNotFound")
    assert "Failed to get Kube PriorityClass" in missing.message
    assert '"reason": "PriorityClassNotFound"' in to_json(result)


def test_yaml_schedule_priority_both_ways(tmp_path: Path) -> None:
    policy = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "high", "namespace": "shop"},
        "spec": {
            "schedulePriority": {"priorityClassSource": "KubePriorityClass", "priorityClassName": "urgent"},
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "c"}],
        },
    }
    path = tmp_path / "pp.json"
    path.write_text(json.dumps(policy))
    converted = CliRunner().invoke(main, ["convert", str(path)])
    assert converted.exit_code == 0 and "  priority class urgent\n" in converted.stdout
    (tmp_path / "high.fr").write_text(converted.stdout)
    back = CliRunner().invoke(main, ["convert", str(tmp_path / "high.fr"), "--to", "yaml"])
    assert "priorityClassSource: KubePriorityClass" in back.stdout and "priorityClassName: urgent" in back.stdout
    bad = json.loads(json.dumps(policy))
    bad["spec"]["schedulePriority"] = {"priorityClassSource": "PodPriorityClass"}
    path.write_text(json.dumps(bad))
    with pytest.raises(RuleError, match='Unsupported value: "PodPriorityClass"'):
        load_rules([path])


def test_the_first_of_an_affinity_group_is_said_when_the_order_decides(tmp_path: Path) -> None:
    rules = (
        "policy shop/together {\n  select { kind Deployment }\n  workload affinity by app.example.com/group\n"
        "  spread by cluster max 1\n}\n"
    )
    (tmp_path / "rules.fr").write_text(rules)
    facts = load_facts(objects=[*CLUSTERS, _app("a"), _app("b")])
    result = evaluate(load_rules([tmp_path / "rules.fr"]), facts, controllers=Controllers.parse([GATES]))
    assert {p.clusters for p in result.placements} == {("m1",)}
    (note,) = [w for w in result.warnings if "chooses where the group goes" in w.message]
    assert "app.example.com/group=g in shop" in note.message
