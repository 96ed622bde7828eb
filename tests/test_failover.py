"""Failover triggers and eviction tasks, state preservation and injection (propagation_types.go
FailoverBehavior; binding_types_helper_test.go, evictiontask_test.go, applicationfailover, taint_manager_test.go),
through `fleetrules simulate` and `eval --now`."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine import evaluate, load_facts, load_rules
from engine.cli import main
from engine.inputs.facts import Binding, ClusterStatus, EvictionTask, TargetCluster
from engine.karmada.controllers.binding import injected_labels
from engine.karmada.controllers.graceful_eviction import graceful_eviction
from engine.karmada.controllers.world import (
    APP_PRODUCER,
    APPLICATION_FAILOVER,
    Bindings,
    Clusters,
    RuleEviction,
    World,
    task_problems,
)
from engine.render import explain_text
from tests.gates import ON
from tests.golden import assert_golden

EXAMPLE = Path("examples/flink-checkpoint")
EVENTS = EXAMPLE / "events" / "job-fails.yaml"
T0 = dt.datetime(2026, 12, 2, 10, 0, tzinfo=dt.UTC)

# fraud-detector's binding, Unhealthy on member1 since 10:00 (a fleetrules healthSince)
UNHEALTHY = (
    "apiVersion: work.karmada.io/v1alpha2\nkind: ResourceBinding\n"
    "metadata: {{name: fraud-detector-flinkdeployment, namespace: streaming}}\nspec:\n"
    "  resource: {{apiVersion: flink.apache.org/v1beta1, kind: FlinkDeployment, name: fraud-detector, "
    "namespace: streaming}}\n  clusters: [{{name: member1, replicas: 1}}]\nstatus:\n  aggregatedStatus:\n"
    "  - {{clusterName: member1, health: Unhealthy, healthSince: '2026-12-02T10:00:00Z', "
    "status: {{jobStatus: {{jobId: j1, checkpointInfo: {{lastCheckpoint: {checkpoint}}}}}}}}}\n"
)


def simulate(rules: Path, *extra: str) -> str:
    result = CliRunner().invoke(
        main, ["simulate", str(rules), "--facts", str(EXAMPLE / "facts"), "--events", str(EVENTS), *extra]
    )
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("mode", ["directly", "gracefully", "never"])
def test_purge_mode_timelines(mode: str, in_root: Path) -> None:
    assert_golden(simulate(EXAMPLE / "modes" / f"{mode}.fr"), EXAMPLE / "modes" / f"{mode}.timeline")


def _timeline(mode: str) -> list[dict[str, Any]]:
    data = json.loads(simulate(EXAMPLE / "modes" / f"{mode}.fr", "-o", "json"))
    return [e for e in data["timeline"] if e.get("binding") == "streaming/fraud-detector-flinkdeployment"]


def test_directly_deletes_first_and_injects_the_checkpoint(in_root: Path) -> None:
    events = _timeline("directly")
    evicted = next(e for e in events if e["event"] == "evicted")
    task = evicted["task"]
    assert task["purgeMode"] == "Directly" and task["reason"] == "ApplicationFailure"
    assert (
        task["preservedLabelState"]["karmada.io/failover-flink-checkpoint"]
        == "s3://flink-state/fraud-detector/chk-4711"
    )
    assert task["clustersBeforeFailover"] == ["member1"] and task["creationTimestamp"] == "2026-12-02T10:02:01Z"
    assert "gracePeriodSeconds" not in task and "suppressDeletion" not in task
    order = [(e["event"], e.get("cluster")) for e in events]
    assert order.index(("work-deleted", "member1")) < order.index(("work-created", "member2"))
    created = next(e for e in events if e["event"] == "work-created")
    assert created["injectedLabels"] == task["preservedLabelState"]


def test_gracefully_keeps_the_old_workload_until_the_new_one_is_healthy(in_root: Path) -> None:
    events = _timeline("gracefully")
    task = next(e for e in events if e["event"] == "evicted")["task"]
    assert task["gracePeriodSeconds"] == 600 and "suppressDeletion" not in task
    healthy = next(e["time"] for e in events if e["event"] == "health" and e.get("health") == "Healthy")
    deleted = next(e["time"] for e in events if e["event"] == "work-deleted" and e["cluster"] == "member1")
    assert deleted == healthy == "2026-12-02T10:06:00Z"
    assert not any("injectedLabels" in e for e in events if e["event"] == "work-created")  # never injected


def test_never_suppresses_deletion(in_root: Path) -> None:
    events = _timeline("never")
    task = next(e for e in events if e["event"] == "evicted")["task"]
    assert task["suppressDeletion"] is True and "gracePeriodSeconds" not in task
    assert not any(e["event"] == "work-deleted" and e["cluster"] == "member1" for e in events)


def test_eval_now_reports_the_eviction_and_the_injection(in_root: Path) -> None:
    facts = load_facts([EXAMPLE / "facts"])
    statuses = [ClusterStatus("member1", "Unhealthy", facts.bindings[0].aggregated_status[0].status, T0)]
    from dataclasses import replace

    facts = replace(facts, bindings=(replace(facts.bindings[0], aggregated_status=tuple(statuses)),))
    rules = load_rules([EXAMPLE / "policy.fr"])
    assert (
        evaluate(rules, facts, T0 + dt.timedelta(seconds=120), controllers=ON).evictions == ()
    )  # strictly more than 2m
    result = evaluate(rules, facts, T0 + dt.timedelta(seconds=121), controllers=ON)
    (eviction,) = result.evictions
    assert not eviction.failed and eviction.clusters == ("member2",)
    assert eviction.injected_labels["member2"]["karmada.io/failover-jobid"] == "5f1c2a9e"
    # the placement is the state at --now: the evicted cluster gone, the binding where the scheduler put it
    (placement,) = result.placements
    assert placement.clusters == ("member2",) and placement.previous == ("member1",)
    assert placement.trigger == "evicted by failover at the evaluation time"
    assert [r.rule for r in placement.rejected["member1"]] == ["cluster-eviction"]


def test_a_missing_jsonpath_key_is_an_error_in_the_output(tmp_path: Path, in_root: Path) -> None:
    """StatePreservation: a missing key means no task is built, and the output names the rule, path and binding."""
    text = (EXAMPLE / "facts" / "fraud-detector.yaml").read_text().replace("lastCheckpoint:", "previousCheckpoint:")
    (tmp_path / "fraud-detector.yaml").write_text(text)
    (tmp_path / "clusters.yaml").write_text((EXAMPLE / "facts" / "clusters.yaml").read_text())
    result = CliRunner().invoke(
        main, ["simulate", str(EXAMPLE / "policy.fr"), "--facts", str(tmp_path), "--events", str(EVENTS)]
    )
    assert result.exit_code == 0, result.stderr
    (failed,) = [line for line in result.stdout.splitlines() if "eviction-failed" in line][:1]
    assert "streaming/fraud-detector-flinkdeployment @ member1" in failed
    # Karmada's words (helper/failover.go parseJSONValue), the alias label in front
    assert (
        "karmada.io/failover-flink-checkpoint: failed to execute jsonpath "
        '"{.jobStatus.checkpointInfo.lastCheckpoint}": lastCheckpoint is not found' in failed
    )
    assert "source=examples/flink-checkpoint/policy.fr:" in failed
    assert "  evicted " not in result.stdout  # no task was built


def _binding(tasks: tuple[EvictionTask, ...], clusters: tuple[str, ...] = ("m2",), health: str = "Unknown") -> Binding:
    return Binding(
        "ns", "b", "Deployment",
        clusters=tuple(TargetCluster(c) for c in clusters),
        eviction_tasks=tasks,
        aggregated_status=tuple(ClusterStatus(c, health) for c in clusters),
    )  # fmt: skip


def _world(now: dt.datetime) -> World:
    return World(now=now, clusters=Clusters({}), bindings=Bindings({}), failover={})


@pytest.mark.parametrize(
    ("age", "grace", "suppress", "health", "kept"),
    [
        (60, None, None, "Unknown", True),  # evictiontask_test.go Test_assessSingleTask 1: young, not healthy
        (601, None, None, "Unknown", False),  # timed out (default 10m)
        (60, None, None, "Healthy", False),  # Test_assessSingleTask 3: new clusters healthy
        (60, None, None, "Unhealthy", True),  # Test_assessSingleTask 4
        (60, None, True, "Healthy", True),  # Test_assessSingleTask 6: suppressDeletion keeps it
        (60, None, False, "Unknown", False),  # Test_assessSingleTask 7
        (15, 10, None, "Unknown", False),  # Test_assessEvictionTasks 9: the grace period applies per task
        (0, None, None, "Healthy", True),  # stamped this pass: never assessed in the same pass
    ],
)
def test_graceful_eviction_controller(
    age: int, grace: int | None, suppress: bool | None, health: str, kept: bool
) -> None:
    now = T0 + dt.timedelta(minutes=30)
    task = EvictionTask(
        "m1", creation_timestamp=now - dt.timedelta(seconds=age), grace_period_seconds=grace, suppress_deletion=suppress
    )
    binding, dropped = graceful_eviction(_world(now), _binding((task,), health=health))
    assert (len(binding.eviction_tasks) == 1) is kept and (len(dropped) == 1) is not kept


def test_injection_conditions() -> None:
    """injectReservedLabelState (pkg/controllers/binding/common.go): one target, newest task Directly, target not in
    clustersBeforeFailover."""
    state = {"k": "v"}
    directly = EvictionTask("m1", "Directly", preserved_label_state=state, clusters_before_failover=("m1",))
    assert injected_labels(_binding((directly,)), "m2") == state
    assert injected_labels(_binding((directly,), ("m2", "m3")), "m2") == {}  # several targets
    assert injected_labels(_binding((directly,), ("m1",)), "m1") == {}  # not a new cluster
    gracefully = EvictionTask("m9", "Gracefully", preserved_label_state={"k": "old"})
    assert injected_labels(_binding((gracefully,)), "m2") == {}
    chained = EvictionTask("m2", "Directly", preserved_label_state={"k": "newest"}, clusters_before_failover=("m2",))
    assert injected_labels(_binding((directly, chained), ("m3",)), "m3") == {"k": "newest"}  # A→B→C: newest


def test_task_validation() -> None:
    assert task_problems(EvictionTask("m1", reason="ApplicationFailure", producer="x")) == []
    assert task_problems(EvictionTask("m1", reason="bad reason", producer="x"))
    assert task_problems(EvictionTask("m1", reason="R", producer="x", grace_period_seconds=1, suppress_deletion=True))


def test_eval_now_runs_failover_on_the_scheduler_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """One engine session per evaluation, failover included (the facts are loaded once)."""
    from engine.backend.planned import PlannedProgram

    opened: list[object] = []
    original = PlannedProgram.session

    def counting(self: PlannedProgram, explained: bool = True) -> Any:
        opened.append(self)
        return original(self, explained)

    monkeypatch.setattr(PlannedProgram, "session", counting)
    rules = load_rules([EXAMPLE / "policy.fr"])
    result = evaluate(rules, load_facts([EXAMPLE / "facts"]), T0 + dt.timedelta(hours=1), controllers=ON)
    assert result.placements and len(opened) == 1


def test_evaluate_takes_an_rfc3339_string_and_refuses_other_times() -> None:
    from engine import FleetrulesError

    rules, facts = load_rules([EXAMPLE / "policy.fr"]), load_facts([EXAMPLE / "facts"])
    assert evaluate(rules, facts, "2026-12-02T10:00:00Z", controllers=ON).now == T0
    for bad in ("yesterday", dt.datetime(2026, 12, 2), 5):
        with pytest.raises(FleetrulesError, match="now: "):
            evaluate(rules, facts, bad, controllers=ON)  # type: ignore[arg-type]


def test_eval_text_shows_the_evictions(tmp_path: Path, in_root: Path) -> None:
    (tmp_path / "unhealthy.yaml").write_text(UNHEALTHY.format(checkpoint="s3://c"))
    args = ["eval", str(EXAMPLE / "policy.fr"), "--facts", str(EXAMPLE / "facts" / "clusters.yaml")]
    result = CliRunner().invoke(
        main, [*args, "--facts", str(tmp_path / "unhealthy.yaml"), "--now", "2026-12-02T10:02:01Z"]
    )
    assert result.exit_code == 0, result.stderr
    assert "evictions at 2026-12-02T10:02:01Z:" in result.stdout
    assert "@ member1: evicted (ApplicationFailure, purge Directly); now on member2" in result.stdout


def test_preserved_state_that_is_not_a_label_value_is_injected_and_flagged(in_root: Path) -> None:
    """Karmada merges the preserved state into the new workload's labels unchecked (binding/common.go
    injectReservedLabelState): a value with a newline is injected as Karmada would, and flagged, since the
    member cluster's API server refuses such a label."""
    facts = load_facts([EXAMPLE / "facts"])
    status = {"jobStatus": {"jobId": "5f1c2a9e", "checkpointInfo": {"lastCheckpoint": "line one\nline two"}}}
    from dataclasses import replace

    binding = replace(facts.bindings[0], aggregated_status=(ClusterStatus("member1", "Unhealthy", status, T0),))
    facts = replace(facts, bindings=(binding,))
    (eviction,) = evaluate(
        load_rules([EXAMPLE / "policy.fr"]), facts, T0 + dt.timedelta(seconds=121), controllers=ON
    ).evictions
    assert not eviction.failed and eviction.injected_labels["member2"]["karmada.io/failover-flink-checkpoint"]
    (problem,) = eviction.label_problems
    assert "karmada.io/failover-flink-checkpoint='line one\\nline two' is not a valid label value" in problem


def test_a_preservation_failure_on_one_cluster_stops_the_bindings_whole_pass() -> None:
    """applicationfailover evictBinding builds every cluster's task before it updates the binding and
    returns at the first error: with member1 and member2 Unhealthy and member2's status missing, neither
    is evicted in that pass (it used to evict member1)."""
    from engine.karmada.controllers.failover import fail_over
    from engine.karmada.controllers.world import Failover, Preservation

    status = {"jobStatus": {"jobId": "j"}}
    statuses = (ClusterStatus("member1", "Unhealthy", status, T0), ClusterStatus("member2", "Unhealthy", None, T0))
    targets = (TargetCluster("member1"), TargetCluster("member2"))
    binding = Binding("ns", "b", "FlinkDeployment", clusters=targets, aggregated_status=statuses)
    state = Preservation((("example.com/job", "{.jobStatus.jobId}"),), "p.fr:3")
    failover = Failover(app=True, toleration_seconds=60, app_purge="Directly", grace_seconds=None, app_state=state)
    world = World(
        now=T0 + dt.timedelta(seconds=61),
        clusters=Clusters({}),
        bindings=Bindings({binding.key: binding}),
        failover={binding.key: failover},
    )
    world.health_since.update({(binding.key, "member1"): T0, (binding.key, "member2"): T0})
    entries, evicted = fail_over(world, _by_the_rule(world))
    assert not evicted and world.bindings[binding.key] == binding
    (failed,) = entries
    assert (
        failed.cluster == "member2" and "no cluster of this binding is evicted in this pass" in failed.detail["error"]
    )


def _by_the_rule(world: World) -> list[RuleEviction]:
    """The application-failover rule's evictions (rules/application_failover.fr) as the tests below give them to
    fail_over, which builds the tasks: member2's, then member1's (fail_over orders them by the aggregated status)."""
    (key,) = world.bindings
    return [
        RuleEviction(key, c, APPLICATION_FAILOVER, "application_failover.fr:11", "ApplicationFailure", f"on {c}", e)
        for c, e in (("member2", APPLICATION_FAILOVER), ("member1", APPLICATION_FAILOVER))
    ]


def _two_unhealthy(status_member2: Any) -> tuple[Binding, World]:
    from engine.karmada.controllers.world import Failover, Preservation

    status = {"jobStatus": {"jobId": "j"}}
    statuses = (
        ClusterStatus("member1", "Unhealthy", status, T0),
        ClusterStatus("member2", "Unhealthy", status_member2, T0),
    )
    targets = (TargetCluster("member1"), TargetCluster("member2"))
    binding = Binding("ns", "b", "FlinkDeployment", clusters=targets, aggregated_status=statuses)
    state = Preservation((("example.com/job", "{.jobStatus.jobId}"),), "p.fr:3")
    failover = Failover(app=True, toleration_seconds=60, app_purge="Directly", grace_seconds=None, app_state=state)
    world = World(
        T0 + dt.timedelta(seconds=61), Clusters({}), Bindings({binding.key: binding}), {binding.key: failover}
    )
    world.health_since.update({(binding.key, "member1"): T0, (binding.key, "member2"): T0})
    return binding, world


def test_clusters_before_failover_is_taken_once_per_pass() -> None:
    """evictBinding reads clustersBeforeFailover before its loop: the second cluster's task still lists the
    first, though GracefulEvictCluster removed it from spec.clusters already."""
    from engine.karmada.controllers.failover import fail_over

    binding, world = _two_unhealthy({"jobStatus": {"jobId": "j"}})
    entries, evicted = fail_over(world, _by_the_rule(world))
    assert evicted == {binding.key}
    tasks = world.bindings[binding.key].eviction_tasks
    assert [t.from_cluster for t in tasks] == ["member1", "member2"]
    assert [t.clusters_before_failover for t in tasks] == [("member1", "member2")] * 2
    assert all(t.message == "" for t in tasks)  # neither controller writes a message
    assert all(t.reason == "ApplicationFailure" and t.producer == APP_PRODUCER for t in tasks)
    assert [e.detail["because"] for e in entries] == ["on member1", "on member2"]


def test_a_missing_status_is_reported_in_karmadas_words() -> None:
    from engine.karmada.controllers.failover import fail_over

    _, world = _two_unhealthy(None)
    (failed,) = fail_over(world, _by_the_rule(world))[0]
    assert "the application status has not yet been collected from Cluster(member2)" in failed.detail["error"]


def test_preserved_values_are_not_trimmed() -> None:
    """parseJSONValue returns the buffer as it is: only Karmada's test trims it (strings.Trim(got, " ")),
    so a range template's trailing space stays, and makes the label value invalid."""
    from engine.karmada.controllers.world import Preservation, preserved_state

    status = ClusterStatus("m1", "Unhealthy", {"items": [{"n": "a"}, {"n": "b"}]})
    state = Preservation((("k", "{range .items[*]}{.n} {end}"),), "p.fr:1")
    assert preserved_state(state, status, "m1") == {"k": "a b "}


def test_explain_now_explains_the_eviction(tmp_path: Path, in_root: Path) -> None:
    (tmp_path / "unhealthy.yaml").write_text(UNHEALTHY.format(checkpoint="chk-1"))
    args = ["explain", str(EXAMPLE / "policy.fr"), "--facts", str(EXAMPLE / "facts" / "clusters.yaml")]
    args += ["--facts", str(tmp_path / "unhealthy.yaml"), "--now", "2026-12-02T10:02:01Z"]
    args += ["--binding", "streaming/fraud-detector-flinkdeployment", "--cluster", "member1"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "streaming/fraud-detector-flinkdeployment on member1: evicted at 2026-12-02T10:02:01Z"
    assert lines[1] == (
        "  by application failover: Unhealthy on member1 since 2026-12-02T10:00:00Z, "
        "longer than its tolerationSeconds 120  [application-failover at <builtin>/application_failover.fr:11]"
    )
    # the facts the application-failover rule matched: the controller's timer and the policy's failover
    assert "    f: application_failover policy=flink-stateful purge_mode=Directly toleration_seconds=120" in lines
    assert "    u: unhealthy_workload binding=fraud-detector-flinkdeployment cluster=member1 namespace=streaming" in (
        result.stdout
    )
    assert "seconds=121 since=2026-12-02T10:00:00Z" in result.stdout
    (task,) = [line for line in lines if line.startswith("  task: ")]
    assert "reason ApplicationFailure, producer resource-binding-application-failover-controller" in task
    assert "  now on: member2" in lines
    assert (
        "  labels injected on member2: karmada.io/failover-flink-checkpoint=chk-1, karmada.io/failover-jobid=j1"
        in lines
    )
    # the scheduler's side, with every fact of the rule that rejected it (the eviction task included)
    assert "then, in the scheduler:" in lines and "    e: eviction_task " in result.stdout
    assert "?" not in result.stdout


@pytest.mark.parametrize("reference", [False, True])
def test_explanations_read_after_failover_name_the_facts_as_they_were(in_root: Path, reference: bool) -> None:
    """Placement.explanations are built when read, after the failover controllers ran at ``now`` on the same
    session (every binding's placements put back on its spec.clusters, the unplaced ones placed again): a decision
    made before names the placements it matched as they were when it was made (the session keeps retracted facts
    for explanations, Session.fact). Before, each peer placement showed as ``p: ?``. flink-ha, member1 tainted
    NoExecute: every placement the scheduler decided is explained as an evaluation without ``now`` explains it,
    whether the placements are batches (indexed joins) or facts asserted one by one (the reference)."""
    import yaml

    flink = Path("examples/flink-ha")
    objects = [o for o in yaml.safe_load_all((flink / "facts" / "clusters.yaml").read_text()) if o]
    for o in objects:
        if o["metadata"]["name"] == "member1":
            o["spec"]["taints"] = [{"key": "down", "effect": "NoExecute", "timeAdded": "2026-12-01T00:00:00Z"}]
    objects += [o for o in yaml.safe_load_all((flink / "facts" / "flinkdeployments.yaml").read_text()) if o]
    rules, facts = load_rules([flink / "policy.fr"]), load_facts(objects=objects)
    before = evaluate(rules, facts, controllers=ON, reference=reference)
    after = evaluate(rules, facts, now="2026-12-02T00:00:00Z", controllers=ON, reference=reference)
    peers = 0
    for p in before.placements:
        for cluster in sorted({*p.rejected, *p.feasible}):
            text = explain_text(after.placement(p.binding), cluster)
            assert text == explain_text(p, cluster) and "?" not in text
            peers += "placement anti_affinity_group=" in text
    assert peers >= 10


@pytest.mark.parametrize("output", ["text", "json", "yaml"])
def test_eval_now_reports_open_tasks_and_works_in_every_format(output: str, in_root: Path) -> None:
    """At 10:06 the earlier task from member3 (Gracefully, grace 600s, created 09:55) has timed out: the
    graceful eviction controller removes it and the binding controller deletes member3's Work."""
    args = ["eval", str(EXAMPLE / "policy.fr"), "--facts", str(EXAMPLE / "facts"), "--now", "2026-12-02T10:06:00Z"]
    result = CliRunner().invoke(main, [*args, "-o", output])
    assert result.exit_code == 0, result.stderr  # YAML output once failed on the trigger's enum
    if output == "text":
        assert "  tasks ended now: member3\n  works: member1\n  works deleted now: member3\n" in result.stdout
        return
    import yaml

    data = json.loads(result.stdout) if output == "json" else yaml.safe_load(result.stdout)
    (placement,) = data["placements"]
    assert placement["atNow"] == {
        "tasks": [],
        "works": {"member1": {}},
        "tasksEnded": ["member3"],
        "worksDeleted": ["member3"],
    }


def test_eval_now_yaml_output_of_an_evicted_binding(in_root: Path) -> None:
    facts = load_facts([EXAMPLE / "facts"])
    statuses = [ClusterStatus("member1", "Unhealthy", facts.bindings[0].aggregated_status[0].status, T0)]
    from dataclasses import replace

    from engine.render.results import to_yaml

    facts = replace(facts, bindings=(replace(facts.bindings[0], aggregated_status=tuple(statuses)),))
    result = evaluate(load_rules([EXAMPLE / "policy.fr"]), facts, T0 + dt.timedelta(seconds=121), controllers=ON)
    import yaml

    (placement,) = yaml.safe_load(to_yaml(result))["placements"]
    assert placement["scheduledBecause"] == "evicted by failover at the evaluation time"
    assert [t["fromCluster"] for t in placement["atNow"]["tasks"]] == ["member3", "member1"]
    # Directly: member1's Work deleted at once; member3's kept while its Gracefully task is open
    assert placement["atNow"]["worksDeleted"] == ["member1"]
    assert list(placement["atNow"]["works"]) == ["member2", "member3"]


def _custom_kind_snapshot(tmp_path: Path, extra: str = "") -> list[str]:
    """A binding of a CRD Karmada has no health interpreter for, Unhealthy for 10 minutes."""
    (tmp_path / "snap.yaml").write_text(
        "apiVersion: work.karmada.io/v1alpha2\nkind: ResourceBinding\n"
        "metadata: {name: app-myapp, namespace: streaming}\nspec:\n"
        "  resource: {apiVersion: example.com/v1, kind: MyApp, name: app, namespace: streaming}\n"
        "  clusters: [{name: member1}]\nstatus:\n  aggregatedStatus:\n"
        "  - {clusterName: member1, health: Unhealthy, healthSince: '2026-12-02T10:00:00Z', status: {jobId: j}}\n"
        + extra
    )
    (tmp_path / "p.fr").write_text(
        "policy p {\n  select { kind MyApp }\n  clusters { names member1, member2 }\n"
        "  failover application {\n    toleration 1m\n    purge Directly\n  }\n}\n"
    )
    clusters = str(EXAMPLE / "facts" / "clusters.yaml")
    return ["eval", str(tmp_path / "p.fr"), "--facts", clusters, "--facts", str(tmp_path / "snap.yaml")]


def test_application_failover_needs_a_health_interpreter(tmp_path: Path, in_root: Path) -> None:
    """applicationfailover bindingFilter: a kind without the InterpretHealth hook is never evicted."""
    args = _custom_kind_snapshot(tmp_path)
    result = CliRunner().invoke(main, [*args, "--now", "2026-12-02T10:10:00Z", "-o", "json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["evictions"] == []
    assert "application failover never fires for it: Karmada cannot interpret the health of example.com/v1 MyApp" in (
        result.stderr
    )


def test_a_resource_interpreter_customization_adds_the_health_hook(tmp_path: Path, in_root: Path) -> None:
    customization = (
        "---\napiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\n"
        "metadata: {name: myapp}\nspec:\n  target: {apiVersion: example.com/v1, kind: MyApp}\n"
        "  customizations:\n    healthInterpretation: {luaScript: 'function InterpretHealth(o) return true end'}\n"
    )
    args = _custom_kind_snapshot(tmp_path, customization)
    result = CliRunner().invoke(main, [*args, "--now", "2026-12-02T10:10:00Z", "-o", "json"])
    assert result.exit_code == 0 and "never fires" not in result.stderr
    (eviction,) = json.loads(result.stdout)["evictions"]
    assert eviction["cluster"] == "member1" and eviction["task"]["reason"] == "ApplicationFailure"


@pytest.mark.parametrize(
    ("api_version", "kind", "enabled"),
    [
        ("apps/v1", "Deployment", True),
        ("flink.apache.org/v1beta1", "FlinkDeployment", True),  # a third-party customization shipped
        ("v1", "ConfigMap", False),
        ("batch/v1", "Job", False),  # no native health interpreter for Jobs
        ("example.com/v1", "MyApp", False),
    ],
)
def test_built_in_health_interpreters(api_version: str, kind: str, enabled: bool) -> None:
    from engine.kube.interpreter import HookRule, health_hook

    assert health_hook(api_version, kind) is enabled
    webhook = HookRule(("example.com",), ("*",), ("MyApp",))
    assert health_hook(api_version, kind, [webhook]) is (enabled or kind == "MyApp")


@pytest.mark.parametrize(("health", "kept"), [("Healthy", False), ("Unknown", False), ("", True)])
def test_unhealthy_timers_follow_workload_unhealthy_map(health: str, kept: bool) -> None:
    """deleteIrrelevantClusters drops a timer on Healthy or Unknown only (distinguishUnhealthyClustersWithOthers);
    a health that is neither keeps it."""
    from engine.karmada.controllers.application_failover import application_timers, unhealthy_workloads

    _, world = _two_unhealthy({"jobStatus": {"jobId": "j"}})
    key = next(iter(world.bindings))
    world.now = T0
    application_timers(world)  # first sight: timers set at T0, run out after none of their seconds
    assert unhealthy_workloads(world) == {
        key: [("member1", "2026-12-02T10:00:00Z", 0), ("member2", "2026-12-02T10:00:00Z", 0)]
    }
    binding = world.bindings[key]
    statuses = (ClusterStatus("member1", health), binding.aggregated_status[1])
    world.bindings[key] = replace(binding, aggregated_status=statuses)
    world.now = T0 + dt.timedelta(seconds=30)
    application_timers(world)
    assert ((key, "member1") in world.unhealthy_since) is kept
    # a timer of a workload that is not Unhealthy now (kept, or not) is no unhealthy_workload fact
    assert unhealthy_workloads(world) == {key: [("member2", "2026-12-02T10:00:00Z", 30)]}


def _tainted(tmp_path: Path) -> list[str]:
    """member1 has held an untolerated NoExecute taint since 10:00; a Deployment runs there."""
    (tmp_path / "snap.yaml").write_text(
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: member1}\nspec:\n"
        "  taints: [{key: maintenance, effect: NoExecute, timeAdded: '2026-12-02T10:00:00Z'}]\n---\n"
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: member2}\n---\n"
        "apiVersion: work.karmada.io/v1alpha2\nkind: ResourceBinding\n"
        "metadata: {name: web-deployment, namespace: default}\n"
        "spec:\n  resource: {apiVersion: apps/v1, kind: Deployment, name: web, namespace: default}\n"
        "  clusters: [{name: member1, replicas: 1}]\n"
    )
    (tmp_path / "p.fr").write_text(
        "policy p {\n  select { kind Deployment }\n  clusters { names member1, member2 }\n}\n"
    )
    return ["eval", str(tmp_path / "p.fr"), "--facts", str(tmp_path / "snap.yaml"), "--now", "2026-12-02T10:00:05Z"]


@pytest.mark.parametrize(
    ("flags", "evicted", "purge"),
    [
        ([], True, "Gracefully"),  # the tests' control plane runs the taint manager (tests/gates.py)
        (["--controller", "no-execute-taint-eviction-purge-mode=Directly"], True, "Directly"),
        (["--controller", "enable-no-execute-taint-eviction=false"], False, None),  # Karmada's default
        # the taint manager starts only with the Failover gate too (controllermanager.go startClusterController)
        (["--controller", "feature-gates=Failover=false"], False, None),
    ],
)
def test_controller_manager_flags(tmp_path: Path, flags: list[str], evicted: bool, purge: str | None) -> None:
    """needEvictionWithCurrentTime returns (false, -1) unless --enable-no-execute-taint-eviction; getPurgeMode
    takes --no-execute-taint-eviction-purge-mode for a policy without failover.cluster."""
    result = CliRunner().invoke(main, [*_tainted(tmp_path), *flags, "-o", "json"])
    assert result.exit_code == 0, result.stderr
    evictions = json.loads(result.stdout)["evictions"]
    assert bool(evictions) is evicted
    if evicted:
        assert evictions[0]["task"]["purgeMode"] == purge and evictions[0]["task"]["reason"] == "TaintUntolerated"
        # the taint-manager rule decided it: its words, its name and where it is written (rules/taint_manager.fr)
        because = "taint manager: member1 has the NoExecute taint {maintenance:NoExecute}, not tolerated"
        assert evictions[0]["because"] == because
        assert evictions[0]["rule"] == "taint-manager" and evictions[0]["source"].endswith("taint_manager.fr:9")


def test_karmadas_defaults_run_no_taint_manager_and_say_how_to_turn_it_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A control plane at Karmada's defaults (no FLEETRULES_CONTROLLER): --enable-no-execute-taint-eviction and
    the Failover gate are off, so the NoExecute taint evicts nothing; said once, with the settings that turn
    the taint manager on. FLEETRULES_CONTROLLER and --controller add up."""
    monkeypatch.delenv("FLEETRULES_CONTROLLER")
    result = CliRunner().invoke(main, _tainted(tmp_path))
    assert result.exit_code == 0, result.output
    assert "evicted" not in result.stdout
    (said,) = [line for line in result.stderr.splitlines() if "NoExecute taint evicts nothing" in line]
    assert said.endswith(
        "evaluate with --controller enable-no-execute-taint-eviction=true --controller feature-gates=Failover=true"
    )
    monkeypatch.setenv("FLEETRULES_CONTROLLER", "enable-no-execute-taint-eviction=true")
    result = CliRunner().invoke(main, [*_tainted(tmp_path), "--controller", "feature-gates=Failover=true"])
    assert result.exit_code == 0 and "evicted" in result.stdout and "evicts nothing" not in result.stderr


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            "graceful-eviction-timeout=2d",
            'invalid argument "2d" for "--graceful-eviction-timeout" flag: time: unknown unit "d"',
        ),
        ("graceful-eviction-timeout=10", 'time: missing unit in duration "10"'),
        ("graceful-eviction-timeout=1.5s", "fleetrules counts time in whole seconds"),
        ("enable-no-execute-taint-eviction=tRuE", "expected true or false"),
        ("no-execute-taint-eviction-purge-mode=Never", "Invalid mode"),
        ("enable-no-execute-taint-eviction=yes", "expected true or false"),
        ("resource-eviction-rates=1", "unknown flag: --resource-eviction-rates"),
        ("resource-eviction-rate", "flag needs an argument: --resource-eviction-rate"),
    ],
)
def test_controller_flags_are_checked(setting: str, message: str) -> None:
    from engine.karmada.gates import Controllers

    with pytest.raises(ValueError, match=message):
        Controllers.parse([setting])


def test_graceful_eviction_timeout_flag() -> None:
    from engine.karmada.gates import Controllers

    assert Controllers.parse(["--graceful-eviction-timeout=1h30m"]).graceful_eviction_timeout == 5400
    # time.ParseDuration, as the controller manager reads the flag: fractions of units, zero, negatives
    assert Controllers.parse(["--graceful-eviction-timeout=1.5h"]).graceful_eviction_timeout == 5400
    assert Controllers.parse(["--graceful-eviction-timeout=90000ms"]).graceful_eviction_timeout == 90
    assert Controllers.parse(["--graceful-eviction-timeout=0"]).graceful_eviction_timeout == 0
    assert Controllers.parse(["--graceful-eviction-timeout=-1m"]).graceful_eviction_timeout == -60
    assert Controllers.parse(["enable-no-execute-taint-eviction=T"]).no_execute_taint_eviction


def test_a_divided_binding_evicted_by_a_taint_is_placed_with_its_replicas() -> None:
    """shop/api (12 replicas, Divided by available, spread over 2 regions and 2 clusters) runs on member1 (3)
    and member3 (9); member3 gets an untolerated NoExecute taint. The task keeps member3's 9 replicas, the
    binding keeps member1's 3, and the scheduler scales up by 9 over member1 and member4 (us, the one
    region cluster left): available 12 and 4, so 7 and 2 (Webster) — member1 10, member4 2."""
    from dataclasses import replace as with_

    from engine.inputs.facts import Taint

    snapshot = Path("examples/divided-replicas/snapshot.yaml")
    facts = load_facts([snapshot])
    binding = next(b for b in facts.bindings if b.key == "shop/api-deployment")
    binding = with_(binding, clusters=(TargetCluster("member1", 3), TargetCluster("member3", 9)))
    taint = (Taint("maintenance", "", "NoExecute", T0),)
    clusters = tuple(with_(c, taints=taint) if c.name == "member3" else c for c in facts.clusters)
    bindings = tuple(binding if b.key == binding.key else b for b in facts.bindings)
    facts = with_(facts, clusters=clusters, bindings=bindings)
    result = evaluate(load_rules([snapshot]), facts, T0 + dt.timedelta(seconds=1), controllers=ON)
    (eviction,) = result.evictions
    assert eviction.task is not None and eviction.task.replicas == 9
    placement = result.placement("shop/api-deployment")
    assert dict(placement.replicas) == {"member1": 10, "member4": 2}
    assert placement.at_now is not None and sorted(placement.at_now.works) == ["member1", "member3", "member4"]


def test_without_the_stateful_failover_injection_gate_no_state_is_kept_or_injected() -> None:
    """buildTaskOptions (applicationfailover/common.go) and the binding controller's injectReservedLabelState
    (binding/common.go) act only with the StatefulFailoverInjection gate (alpha, off in Karmada; fleetrules
    takes it to be on where a policy preserves state)."""
    folder = Path(__file__).resolve().parent.parent / "examples" / "flink-checkpoint"
    args = ["simulate", str(folder / "policy.fr"), "--facts", str(folder / "facts")]
    args += ["--events", str(folder / "events" / "job-fails.yaml"), "-o", "json"]
    on = json.loads(CliRunner().invoke(main, args).stdout)["timeline"]
    off = CliRunner().invoke(main, [*args, "--controller", "feature-gates=StatefulFailoverInjection=false"])
    assert off.exit_code == 0, off.stderr
    timeline = json.loads(off.stdout)["timeline"]
    assert any("preservedLabelState" in (e.get("task") or {}) for e in on)
    assert not any("preservedLabelState" in (e.get("task") or {}) for e in timeline)
    assert not any(e.get("injectedLabels") for e in timeline)
    assert not any("clustersBeforeFailover" in (e.get("task") or {}) for e in timeline)  # only with state
    assert [e["event"] for e in timeline] == [e["event"] for e in on if e["event"] != "labels"]


def test_a_template_client_go_refuses_fails_each_eviction_in_its_words() -> None:
    """parseJSONValue returns client-go's parse error as it is, and an evaluation's wrapped ("failed to
    execute jsonpath %q: …"); Karmada admits a policy with such a template (its webhook does not parse it)."""
    from engine.karmada.controllers.world import Preservation, PreservationError, preserved_state

    status = ClusterStatus("m1", "Unhealthy", {"phase": "Running", "replicas": 2})
    refused = Preservation((("k", "{ %phase }"),), "p.fr:1")
    with pytest.raises(PreservationError, match=r"^k: unrecognized character in action: U\+0025 '%'$"):
        preserved_state(refused, status, "m1")
    failing = Preservation((("k", "{.items[?(@.replicas==2)]}"),), "p.fr:1")
    with pytest.raises(PreservationError, match=r'^k: failed to execute jsonpath "\{\.items'):
        preserved_state(failing, status, "m1")


@pytest.mark.parametrize(("after", "evicted"), [(30, False), (61, True)])
def test_a_toleration_without_an_effect_keeps_its_seconds(tmp_path: Path, after: int, evicted: bool) -> None:
    """Issue 27: Karmada admits a cluster toleration with tolerationSeconds and no effect (validateClusterTolerations,
    pkg/util/validation/validation.go, checks only the operator); the toleration matches every effect and its
    seconds bound the NoExecute taint (the taint manager's GetMinTolerationTimeWithCurrentTime)."""
    from dataclasses import replace as with_

    from engine.inputs.facts import Taint

    text = Path("examples/divided-replicas/snapshot.yaml").read_text(encoding="utf-8")
    tolerated = "      spreadConstraints:\n      - {spreadByField: region, minGroups: 2, maxGroups: 2}\n"
    assert tolerated in text
    text = text.replace(
        tolerated,
        "      clusterTolerations: [{key: maintenance, operator: Exists, tolerationSeconds: 60}]\n" + tolerated,
    )
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(text, encoding="utf-8")
    facts = load_facts([snapshot])
    binding = next(b for b in facts.bindings if b.key == "shop/api-deployment")
    binding = with_(binding, clusters=(TargetCluster("member1", 3), TargetCluster("member3", 9)))
    taint = (Taint("maintenance", "", "NoExecute", T0),)
    clusters = tuple(with_(c, taints=taint) if c.name == "member3" else c for c in facts.clusters)
    facts = with_(
        facts, clusters=clusters, bindings=tuple(binding if b.key == binding.key else b for b in facts.bindings)
    )
    result = evaluate(load_rules([snapshot]), facts, T0 + dt.timedelta(seconds=after), controllers=ON)
    assert bool(result.evictions) is evicted


def test_the_taint_manager_evicts_a_late_placement_at_its_next_sweep(tmp_path: Path) -> None:
    """Issue 27, simulate's clock: shop/web is placed on m2 at 10:00:00, when its toleration of m2's NoExecute
    taint (since 09:58:25, for 30 s) has run out; the taint manager (NoExecuteTaintManager.syncCluster, RequeueAfter
    ClusterTaintEvictionRetryFrequency = 10 s) sweeps m2 every 10 s from the taint's arrival, so it evicts at
    10:00:05, not at some later unrelated moment (before: never, the timeline having no other event)."""
    (tmp_path / "snap.yaml").write_text(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: web, namespace: shop}\n"
        "spec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]\n  placement:\n"
        "    clusterAffinity: {clusterNames: [m1, m2]}\n"
        "    clusterTolerations: [{key: k2, operator: Exists, effect: NoExecute, tolerationSeconds: 30}]\n"
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {replicas: 1}\n"
        "---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m1}\n"
        "---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m2}\n"
        "spec: {taints: [{key: k2, effect: NoExecute, timeAdded: '2026-12-02T09:58:25Z'}]}\n"
    )
    (tmp_path / "events.yaml").write_text("start: 2026-12-02T10:00:00Z\nevents: []\n")
    snap = str(tmp_path / "snap.yaml")
    result = CliRunner().invoke(main, ["simulate", snap, "--facts", snap, "--events", str(tmp_path / "events.yaml")])
    assert result.exit_code == 0, result.output
    evicted = [line for line in result.stdout.splitlines() if " evicted " in line]
    assert evicted and evicted[0].startswith("2026-12-02T10:00:05Z (+5s)  evicted shop/web-deployment @ m2")


GRACEFUL_SNAPSHOT = """apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [m1, m2]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec: {replicas: 1}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: m1}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: m2}
"""


@pytest.mark.parametrize("noise", ["", "- at: 5m\n  ready: {cluster: m1, status: 'True'}\n"])
def test_a_graceful_task_whose_new_clusters_are_healthy_goes_at_the_next_reconcile(tmp_path: Path, noise: str) -> None:
    """Issue 27, simulate's clock: shop/web runs Healthy on m1 and on m2; m2 gains an untolerated NoExecute taint
    at +20s. The Gracefully task is stamped then, and stamping updates the binding, which
    RBGracefulEvictionController reconciles again at once (pkg/controllers/gracefuleviction): its one new
    cluster m1 is Healthy, so the task goes (+21s on this clock; it waited for its 600 s timeout unless some
    other event came first). An unrelated no-op event later (m1 Ready again) changes nothing."""
    (tmp_path / "snap.yaml").write_text(GRACEFUL_SNAPSHOT)
    (tmp_path / "events.yaml").write_text(
        "start: 2026-12-02T10:00:00Z\nevents:\n- at: 10s\n  health: {binding: shop/web-deployment, cluster: m1, "
        "status: Healthy}\n- at: 20s\n  taint: {cluster: m2, key: gone, effect: NoExecute}\n" + noise
    )
    snap = str(tmp_path / "snap.yaml")
    result = CliRunner().invoke(main, ["simulate", snap, "--facts", snap, "--events", str(tmp_path / "events.yaml")])
    assert result.exit_code == 0, result.output
    removed = [line for line in result.stdout.splitlines() if "task-removed" in line]
    assert removed == ["2026-12-02T10:00:21Z (+21s)  task-removed shop/web-deployment @ m2"]


def test_state_preservation_at_karmadas_defaults_is_said_once() -> None:
    """StatefulFailoverInjection (alpha) is off as Karmada ships it: the eviction happens (application failover
    needs no gate), keeps no state, and the policy is named once with the setting that turns the gate on."""
    from engine.karmada.gates import DEFAULT_CONTROLLERS

    facts = load_facts([EXAMPLE / "facts"])
    status = {"jobStatus": {"jobId": "5f1c2a9e", "checkpointInfo": {"lastCheckpoint": "chk-1"}}}
    binding = replace(facts.bindings[0], aggregated_status=(ClusterStatus("member1", "Unhealthy", status, T0),))
    facts = replace(facts, bindings=(binding,))
    rules = load_rules([EXAMPLE / "policy.fr"])
    result = evaluate(rules, facts, T0 + dt.timedelta(seconds=121), controllers=DEFAULT_CONTROLLERS)
    (eviction,) = result.evictions
    assert eviction.task is not None and not eviction.task.preserved_label_state
    (said,) = [w.message for w in result.warnings if "StatefulFailoverInjection" in w.message]
    assert said.startswith("policy ") and "statePreservation keeps nothing" in said


def test_a_reconcile_starts_the_timers_of_every_binding_it_walks() -> None:
    """Two rescheduled bindings, each Unhealthy on its target: the first already past its toleration (due), the
    second just seen. The reconcile reports the due one and still starts the second's timer (stopping at the
    first due binding left it unstarted until some later moment)."""
    from engine.karmada.controllers.application_failover import application_timers, unhealthy_workloads
    from engine.karmada.controllers.world import Failover

    bindings = {}
    for name in ("a", "b"):
        statuses = (ClusterStatus("member1", "Unhealthy", {"jobStatus": {}}, T0),)
        binding = Binding(
            "ns", name, "FlinkDeployment", clusters=(TargetCluster("member1"),), aggregated_status=statuses
        )
        bindings[binding.key] = binding
    failover = Failover(app=True, toleration_seconds=60)
    world = World(T0 + dt.timedelta(seconds=61), Clusters({}), Bindings(bindings), dict.fromkeys(bindings, failover))
    first, second = sorted(bindings)
    world.health_since[(first, "member1")] = T0  # Unhealthy since T0: due
    application_timers(world, bindings)
    assert world.unhealthy_since == {(first, "member1"): T0, (second, "member1"): world.now}
    # the first for 61 seconds (past its 60: the rule evicts it), the second for none
    assert unhealthy_workloads(world) == {
        first: [("member1", "2026-12-02T10:00:00Z", 61)],
        second: [("member1", "2026-12-02T10:01:01Z", 0)],
    }


def test_a_bad_control_plane_variable_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FLEETRULES_CONTROLLER is read as --controller is, and a bad item in it is named with the variable."""
    monkeypatch.setenv("FLEETRULES_CONTROLLER", "feature-gates=Bogus=true")
    result = CliRunner().invoke(main, _tainted(tmp_path))
    assert result.exit_code == 2 and (result.exception is None or isinstance(result.exception, SystemExit))
    said = 'FLEETRULES_CONTROLLER: invalid argument "Bogus=true" for "--feature-gates" flag: unrecognized feature gate'
    assert said in result.stderr
