"""The application failover controller's decision is the built-in rule rules/application_failover.fr; its timers
(workloadUnhealthyMap) are engine.karmada.controllers.application_failover.application_timers. Karmada's own unit
tests of that controller, as table tests run through an evaluation at a moment (the rule on the session's facts, by
the indexed engine and by durable-rules), and the clock's boundary the rule's rounded-up seconds must hold exactly."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import evaluate, load_facts, load_rules
from engine.cli import main
from tests.gates import ON

NOW = dt.datetime(2026, 12, 2, 10, 10, tzinfo=dt.UTC)

POLICY = """policy app {{
  select {{
    kind Deployment
  }}
  failover application {{
    toleration {toleration}s
    purge Directly
  }}
}}
"""

CLUSTERS = "".join(
    f"---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {{name: {name}}}\n"
    for name in ("member1", "member2", "member3")
)


def _status(cluster: str, health: str, since: dt.datetime | None) -> str:
    at = f", healthSince: '{since.isoformat().replace('+00:00', 'Z')}'" if since is not None else ""
    return f"  - {{clusterName: {cluster}, health: {health}{at}}}\n"


def _write(
    tmp_path: Path,
    toleration: int,
    statuses: Sequence[tuple[str, str, dt.datetime | None]],
    targets: tuple[str, ...] = ("member1", "member2"),
    tasks: tuple[str, ...] = (),
) -> None:
    """policy.fr (the application failover's toleration) and facts.yaml (the clusters, the binding on ``targets``
    with its ``tasks`` and ``statuses``) in ``tmp_path``."""
    (tmp_path / "policy.fr").write_text(POLICY.format(toleration=toleration))
    binding = (
        "---\napiVersion: work.karmada.io/v1alpha2\nkind: ResourceBinding\nmetadata: {name: web-deployment, "
        "namespace: default}\nspec:\n  resource: {apiVersion: apps/v1, kind: Deployment, name: web, "
        "namespace: default}\n  clusters: [" + ", ".join(f"{{name: {c}}}" for c in targets) + "]\n"
    )
    if tasks:
        binding += "  gracefulEvictionTasks:\n" + "".join(
            f"  - {{fromCluster: {c}, reason: ApplicationFailure, producer: p, purgeMode: Gracefully, "
            f"creationTimestamp: '2026-12-02T10:09:00Z'}}\n"
            for c in tasks
        )
    binding += "status:\n  aggregatedStatus:\n" + "".join(_status(*s) for s in statuses)
    (tmp_path / "facts.yaml").write_text(CLUSTERS + binding)


def _evicted(
    tmp_path: Path,
    toleration: int,
    statuses: Sequence[tuple[str, str, dt.datetime | None]],
    targets: tuple[str, ...] = ("member1", "member2"),
    tasks: tuple[str, ...] = (),
    reference: bool = False,
) -> list[str]:
    """The clusters the application failover controller evicts the binding from at NOW."""
    _write(tmp_path, toleration, statuses, targets, tasks)
    facts = load_facts([tmp_path / "facts.yaml"])
    result = evaluate(load_rules([tmp_path / "policy.fr"]), facts, NOW, controllers=ON, reference=reference)
    assert all(e.rule == "application-failover" for e in result.evictions if e.task is not None)
    return [e.cluster for e in result.evictions if e.task is not None]


AGO = NOW - dt.timedelta(seconds=2)

# pkg/controllers/applicationfailover/rb_application_failover_controller_test.go
# TestRBApplicationFailoverController_detectFailure: (toleration, statuses, evicted)
Statuses = list[tuple[str, str, dt.datetime | None]]
DETECT_FAILURE: dict[str, tuple[int, Statuses, list[str]]] = {
    # no timer yet: both set now, none evicted
    "hasWorkloadBeenUnhealthy return false": (1, [("member1", "Unhealthy", None), ("member2", "Unhealthy", None)], []),
    # member1's timer set 2 s ago, tolerationSeconds 1: evicted; member2's timer is set now
    "more than the tolerance time": (1, [("member1", "Unhealthy", AGO), ("member2", "Unhealthy", None)], ["member1"]),
    "less than the tolerance time": (100, [("member1", "Unhealthy", AGO), ("member2", "Unhealthy", None)], []),
    "final duration is 0": (100, [], []),
}


@pytest.mark.parametrize("reference", [False, True], ids=["indexed", "reference"])
@pytest.mark.parametrize("case", DETECT_FAILURE)
def test_detect_failure(tmp_path: Path, case: str, reference: bool) -> None:
    toleration, statuses, evicted = DETECT_FAILURE[case]
    assert _evicted(tmp_path, toleration, statuses, reference=reference) == evicted


# pkg/controllers/applicationfailover/common_test.go TestDistinguishUnhealthyClustersWithOthers: only a workload
# Unhealthy on a cluster not in a graceful eviction task is a candidate; here each has been so for 10 minutes,
# past a toleration of 60 s: (statuses, tasks, evicted)
LONG_AGO = NOW - dt.timedelta(minutes=10)
DISTINGUISH = {
    "all applications are healthy": ([("member1", "Healthy", LONG_AGO), ("member2", "Healthy", LONG_AGO)], (), []),
    "all applications are unknown": ([("member1", "Unknown", LONG_AGO), ("member2", "Unknown", LONG_AGO)], (), []),
    "one application is unhealthy and not in gracefulEvictionTasks": (
        [("member1", "Healthy", LONG_AGO), ("member2", "Unhealthy", LONG_AGO)],
        (),
        ["member2"],
    ),
    "one application is unhealthy and in gracefulEvictionTasks": (
        [("member1", "Healthy", LONG_AGO), ("member2", "Unhealthy", LONG_AGO)],
        ("member2",),
        [],
    ),
}


@pytest.mark.parametrize("case", DISTINGUISH)
def test_distinguish_unhealthy_clusters_with_others(tmp_path: Path, case: str) -> None:
    statuses, tasks, evicted = DISTINGUISH[case]
    # member2 stays a target in Karmada's case too: the task alone keeps it from being evicted
    assert _evicted(tmp_path, 60, statuses, tasks=tasks) == evicted


def test_a_workload_unhealthy_on_a_cluster_it_does_not_target_is_not_evicted(tmp_path: Path) -> None:
    """TestRBApplicationFailoverController_syncBinding: member2 reports Unhealthy but is no target; its timer is
    set and dropped in the same pass (deleteIrrelevantClusters), so nothing is evicted however long ago."""
    statuses = [("member1", "Healthy", LONG_AGO), ("member2", "Unhealthy", LONG_AGO)]
    assert _evicted(tmp_path, 5, statuses, targets=("member1",)) == []


@pytest.mark.parametrize("reference", [False, True], ids=["indexed", "reference"])
@pytest.mark.parametrize(
    ("elapsed", "evicted"),
    [(dt.timedelta(seconds=120), False), (dt.timedelta(seconds=120, microseconds=1), True), (dt.timedelta(0), False)],
)
def test_the_clock_must_be_past_the_toleration(
    tmp_path: Path, elapsed: dt.timedelta, evicted: bool, reference: bool
) -> None:
    """detectFailure evicts when timeNow.After(unHealthyTimeStamp + tolerationSeconds): strictly after, to the
    microsecond. The rule compares the seconds since, rounded up, with tolerationSeconds, which is the same test."""
    statuses = [("member1", "Unhealthy", NOW - elapsed), ("member2", "Healthy", None)]
    assert _evicted(tmp_path, 120, statuses, reference=reference) == (["member1"] if evicted else [])


@pytest.mark.parametrize("reference", [False, True], ids=["indexed", "reference"])
@pytest.mark.parametrize("in_task", [True, False])
def test_a_timer_that_ran_out_on_a_cluster_in_a_task_evicts_nothing(
    tmp_path: Path, in_task: bool, reference: bool
) -> None:
    """distinguishUnhealthyClustersWithOthers leaves out a cluster in a graceful eviction task, however old its
    timer: one started before the task is kept (neither set nor dropped), and the rule's `not eviction_task` holds
    the eviction back. Without the task, the same timer evicts."""
    from engine.failover.simulate import Simulator
    from engine.pipeline import scheduler_for

    _write(tmp_path, 60, [("member1", "Healthy", None), ("member2", "Unhealthy", None)])
    facts = load_facts([tmp_path / "facts.yaml"])
    key = "default/web-deployment"
    scheduler = scheduler_for(load_rules([tmp_path / "policy.fr"]), facts, reference, ON, explanations=False)
    try:
        simulator = Simulator(scheduler, NOW, ON)
        world = simulator.world
        world.unhealthy_since[(key, "member2")] = LONG_AGO  # the timer started before the task
        if in_task:  # a task from member2 while member2 stays a target (suppressDeletion: never ends by itself)
            from engine.inputs.facts import EvictionTask, evolve

            task = EvictionTask(from_cluster="member2", purge_mode="Never", reason="Other", producer="p")
            world.bindings[key] = evolve(world.bindings[key], eviction_tasks=(task,))
            simulator.store.update_binding(world.bindings[key])
        simulator.step()
        evicted = [e.cluster for e in simulator.evictions() if e.task is not None]
        assert evicted == ([] if in_task else ["member2"])
        assert ((key, "member2") in world.unhealthy_since) is in_task  # kept; evicted, it is no target: dropped
    finally:
        scheduler.close()


SPOT_RULE = """include "policy.fr"
rule spot-gives-up-sooner {
  when unhealthy_workload u (u.seconds > 60)
   and binding b (b.namespace == u.namespace and b.name == u.binding)
   and cluster c (c.name == u.cluster and c.labels.spot == "true")
  then evict b from c reason SpotUnhealthy "unhealthy on spot cluster {c.name} for {u.seconds}s"
}
"""


@pytest.mark.parametrize(("spot", "at"), [("true", "2026-12-02T10:01:01Z"), ("false", "2026-12-02T10:02:01Z")])
def test_a_users_rule_on_the_timer_evicts_when_its_own_seconds_run_out(tmp_path: Path, spot: str, at: str) -> None:
    """The unhealthy_workload facts are there for users' rules too: one that gives up on a spot cluster after 60 s
    evicts there at 10:01:01 in a simulation (its 60 is a moment to look again, as the toleration's 120 is), before
    the application-failover rule would at 10:02:01; elsewhere the policy's toleration stands."""
    example = Path(__file__).parent.parent / "examples" / "flink-checkpoint"
    (tmp_path / "policy.fr").write_text((example / "policy.fr").read_text())
    (tmp_path / "spot.fr").write_text(SPOT_RULE)
    clusters = (example / "facts" / "clusters.yaml").read_text()
    labelled = clusters.replace("metadata: {name: member1}", f'metadata: {{name: member1, labels: {{spot: "{spot}"}}}}')
    assert labelled != clusters
    (tmp_path / "clusters.yaml").write_text(labelled)
    args = ["simulate", str(tmp_path / "spot.fr"), "--facts", str(tmp_path / "clusters.yaml")]
    args += ["--facts", str(example / "facts" / "fraud-detector.yaml"), "-o", "json"]
    args += ["--events", str(example / "events" / "job-fails.yaml")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    (evicted,) = [e for e in json.loads(result.stdout)["timeline"] if e["event"] == "evicted"]
    assert evicted["time"] == at
    assert evicted["rule"] == ("spot-gives-up-sooner" if spot == "true" else "application-failover")
