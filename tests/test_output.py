"""eval's output sized by workloads (docs/output.md): rejections summarised by reason from the policy's
shared result, every cluster one option away, JSON and JSON Lines written one binding at a time."""

from __future__ import annotations

import datetime as dt
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import evaluate, load_facts, load_rules
from engine.cli import main
from engine.render.results import SCHEMA_VERSION, placement_data, result_data, to_json, to_text, to_yaml
from engine.results import Reason, rejections_of, summarize
from engine.schedule.feasibility import fit_error
from engine.schedule.views import Rejections, RejectionsOverlay

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import fleets

from tests.gates import ON

AFFINITY = Reason("p/clusters.labels", "p.fr:3", "did not match (labelSelector)", "did not match")
TAINT = Reason("taint-toleration", "<builtin>/t.fr:4", "untolerated taint", "had untolerated taint")
ANTI = Reason("workload-anti-affinity", "<builtin>/w.fr:4", "same group g=1", "same group")
REASONS = [AFFINITY, TAINT, ANTI]


def _walked(rejected: dict[str, tuple[Reason, ...]]) -> tuple[object, ...]:
    return rejections_of(sorted(rejected.items()), 3)


reasons = st.lists(st.sampled_from(REASONS), min_size=1, max_size=3, unique=True).map(
    lambda rs: tuple(sorted(rs, key=lambda r: r.rule))
)
names = st.sampled_from([f"m{i:02d}" for i in range(30)])


@settings(max_examples=300, deadline=None)
@given(
    base=st.dictionaries(names, reasons, max_size=25),
    changes=st.dictionaries(names, st.none() | reasons, max_size=10),
)
def test_an_overlays_summary_is_the_summary_of_its_clusters(
    base: dict[str, tuple[Reason, ...]], changes: dict[str, tuple[Reason, ...] | None]
) -> None:
    """The summary and FitError histogram of a binding's rejections, computed from the shared summary and
    the binding's changes alone, are those of walking every rejected cluster."""
    shared = Rejections(dict(sorted(base.items())))
    overlay = RejectionsOverlay(shared, changes)
    plain = dict(overlay.items())
    assert summarize(overlay) == _walked(plain)
    assert summarize(shared) == _walked(base)
    assert fit_error(40, overlay) == fit_error(40, plain)
    assert fit_error(40, shared) == fit_error(40, dict(base))


def test_the_summary_counts_each_reason_and_names_the_first_clusters() -> None:
    rejected = {f"m{i:03d}": (AFFINITY,) for i in range(950)} | {"m999": (AFFINITY, ANTI)}
    first, second = summarize(Rejections(dict(sorted(rejected.items()))))
    assert (first.reason, first.count, first.clusters) == (AFFINITY, 951, ("m000", "m001", "m002"))
    assert (second.reason, second.count, second.clusters) == (ANTI, 1, ("m999",))


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The regional shape at 200 clusters: 95 % of them rejected for every binding."""
    path = tmp_path_factory.mktemp("fleet") / "fleet.yaml"
    with path.open("w") as out:
        fleets.write(fleets.regional(200, 400, "unschedulable"), out)
    return path


def _eval(*args: str) -> str:
    result = CliRunner().invoke(main, ["eval", *args])
    assert result.exit_code == 0, result.output + result.stderr
    return result.stdout


def test_the_default_answer_is_sized_by_workloads(fleet: Path) -> None:
    """About 1 KB per binding whatever the clusters; every rejected cluster with --rejections all."""
    out = _eval(str(fleet), "-o", "json")
    data = json.loads(out)
    assert data["schemaVersion"] == SCHEMA_VERSION
    placements = data["placements"]
    assert len(out) / len(placements) < 1500
    fresh = [p for p in placements if "scheduledBecause" in p]
    assert all(p["rejected"]["count"] >= 190 for p in fresh)
    assert all(len(r["clusters"]) <= 3 for p in placements for r in p["rejected"]["reasons"])
    assert any(p["unschedulable"] and p["message"].startswith("0/200 clusters are available") for p in placements)
    every = json.loads(_eval(str(fleet), "-o", "json", "--rejections", "all"))["placements"]
    for summary, full in zip(placements, every, strict=True):
        assert len(full["rejected"]["clusters"]) == summary["rejected"]["count"]
        assert len(full["feasible"]["scores"]) == summary["feasible"]["count"]
        assert full["clusters"] == summary["clusters"]
    text = _eval(str(fleet))
    assert "rejected: 190 of 200 clusters" in text and " and 187 more  [team-" in text
    assert len(_eval(str(fleet), "--rejections", "all")) > 10 * len(text)


def test_peers_left_without_room_share_one_record_of_their_rejections(fleet: Path) -> None:
    """Bindings alike in their rejections hold one object, and a feasible set of nothing holds nothing of what it
    lost: the three unschedulable peers of each anti-affinity group, each rejected from its region's clusters
    for the same reason (the memory of a 5,000-cluster fleet, docs/performance.md)."""
    result = evaluate(load_rules([fleet]), load_facts([fleet]), controllers=ON)
    group = [p for p in result.placements if p.binding.startswith("team-01/pipeline-0000")]  # p0001: pipelines 4-7
    group = group[4:8]
    peers = [p for p in group if not p.clusters]
    assert len(peers) == 3 and all(p.unschedulable for p in peers) and len(group[0].clusters) == 10
    assert peers[0].rejected is peers[1].rejected is peers[2].rejected
    assert len(peers[0].rejected) == 200 and not peers[0].feasible
    assert not any(getattr(p.feasible, "_removed", ()) for p in peers)
    alone = [p for p in result.placements if p.clusters and p.rejected is peers[0].rejected]
    assert not alone, "a placed binding shares an unschedulable one's rejections"


def test_json_lines_and_yaml_say_what_json_says(fleet: Path) -> None:
    data = json.loads(_eval(str(fleet), "-o", "json"))
    lines = [json.loads(line) for line in _eval(str(fleet), "-o", "jsonl").splitlines()]
    assert lines[0] == {"schemaVersion": SCHEMA_VERSION}
    assert [x["placement"] for x in lines[1:] if "placement" in x] == data["placements"]
    assert yaml.safe_load(_eval(str(fleet), "-o", "yaml")) == data


def test_streamed_json_and_yaml_are_the_documents_of_result_data(in_root: Path) -> None:
    facts = load_facts(["examples/flink-checkpoint/facts"])
    (binding,) = facts.bindings
    unhealthy = (
        replace(binding.aggregated_status[0], health="Unhealthy", since=dt.datetime(2026, 12, 2, tzinfo=dt.UTC)),
    )
    facts = replace(facts, bindings=(replace(binding, aggregated_status=unhealthy),))
    result = evaluate(
        load_rules(["examples/flink-checkpoint/policy.fr"]), facts, now="2026-12-02T00:05:00Z", controllers=ON
    )
    assert result.evictions and result.placements[0].at_now is not None
    for every in (False, True):
        assert json.loads(to_json(result, every)) == result_data(result, every)
        assert yaml.safe_load(to_yaml(result, every)) == result_data(result, every)
    assert to_text(result).count("\n\n") == len(result.placements) - 1 + bool(result.evictions)


def test_a_placement_keeps_every_rejected_cluster_for_the_api(in_root: Path) -> None:
    rules, facts = load_rules(["examples/flink-ha/policy.fr"]), load_facts(["examples/flink-ha/facts"])
    p = evaluate(rules, facts, controllers=ON).placement("streaming/orders-d-flinkdeployment")
    assert sorted(p.rejected) == ["member-dev", "member-legacy", "member1", "member2", "member3"]
    data = placement_data(p, every_cluster=True)
    assert data["rejected"]["clusters"]["member1"][0]["rule"] == "workload-anti-affinity"
    assert sum(r["count"] for r in data["rejected"]["reasons"]) == 5


def test_a_large_snapshot_is_read_once_as_rules_and_facts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot past the 4 MiB of a rule file is a snapshot (the fact files' limit), read once."""
    from engine.inputs import marks
    from engine.inputs import yaml as loader

    path = tmp_path / "fleet.yaml"
    with path.open("w") as out:
        fleets.write(fleets.regional(100, 6000), out)
    assert path.stat().st_size > 4 * 1024 * 1024
    reads = []
    original = loader.load_text

    def counted(text: str, file: str) -> tuple[list[marks.Document], list[object]]:
        reads.append(file)
        return original(text, file)  # type: ignore[return-value]

    monkeypatch.setattr(loader, "load_text", counted)
    monkeypatch.setattr("engine.inputs.objects.load_text", counted)
    monkeypatch.setattr("engine.inputs.policies.load_text", counted)
    monkeypatch.chdir(tmp_path)
    answer = _eval("fleet.yaml", "-o", "jsonl")
    assert reads == ["fleet.yaml"]
    assert answer.count('{"placement"') == 6000
    assert len(load_rules([path]).policies) == fleets.NAMESPACES


def test_a_snapshot_read_once_still_shows_the_line_of_a_policys_error(tmp_path: Path) -> None:
    (tmp_path / "snap.yaml").write_text(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p, namespace: default}\n"
        "spec:\n  resourceSelectors:\n  - {apiVersion: apps/v1, kind: Deployment}\n  placement:\n"
        "    spreadConstraints:\n    - {spreadByField: cluster, maxGroups: 1, minGroups: 3}\n---\n"
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m1}\n"
    )
    result = CliRunner().invoke(main, ["eval", str(tmp_path / "snap.yaml")])
    assert result.exit_code == 2
    assert (  # ValidateSpreadConstraint's words, the value as the API server prints it
        "snap.yaml:9:7: error: spec.placement.spreadConstraints[0]: Invalid value: "
        '{"spreadByField":"cluster","maxGroups":1,"minGroups":3}: maxGroups lower than minGroups is not allowed'
    ) in result.stderr
    assert "   9 |     - {spreadByField: cluster, maxGroups: 1, minGroups: 3}" in result.stderr


def test_eval_builds_no_report_unless_asked(monkeypatch: pytest.MonkeyPatch, in_root: Path) -> None:
    """The HTML report (bindings by clusters) is made only with --report: it cost as much as the evaluation."""
    import engine.cli.evaluating

    def refused(*_: object, **__: object) -> str:
        raise AssertionError("the report was built")

    monkeypatch.setattr(engine.cli.evaluating, "html_page", refused)
    assert _eval("examples/flink-ha/policy.fr", "--facts", "examples/flink-ha/facts").startswith("analytics/")


def test_placements_without_explanations_are_the_same_placements(in_root: Path) -> None:
    rules, facts = load_rules(["examples/flink-ha/policy.fr"]), load_facts(["examples/flink-ha/facts"])
    kept, lean = evaluate(rules, facts, controllers=ON), evaluate(rules, facts, explanations=False, controllers=ON)
    assert kept == lean and to_json(kept, True) == to_json(lean, True)
    assert any(p.explanations for p in kept.placements) and not any(p.explanations for p in lean.placements)
