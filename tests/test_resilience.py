"""Resilience sweeps (engine.review.resilience): scenarios from one base state, undone exactly; the same
bytes serially, on a process pool and on a Dask cluster; the command's outputs and exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine import load_facts, load_rules
from engine.backend.planned import PlannedSession
from engine.cli import main
from engine.errors import UsageError
from engine.inputs.facts import Facts, TargetCluster
from engine.inputs.rule_files import RuleSet
from engine.render.resilience import to_json, to_sarif, to_text
from engine.review.impacts import Scenario, scenarios
from engine.review.resilience import Base, sweep
from tests.gates import ON
from tests.test_simulate_loops import TOLERATED

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _flink_ha() -> tuple[RuleSet, Facts]:
    return load_rules([EXAMPLES / "flink-ha" / "policy.fr"]), load_facts([EXAMPLES / "flink-ha" / "facts"])


def _checkpoint() -> tuple[RuleSet, Facts]:
    folder = EXAMPLES / "flink-checkpoint"
    return load_rules([folder / "policy.fr"]), load_facts([folder / "facts"])


@pytest.mark.parametrize("example", [_flink_ha, _checkpoint])
def test_every_scenario_from_the_shared_base_is_the_scenario_on_a_fresh_one(example: object) -> None:
    """What a scenario changes is undone: run one after another on one base, each gives what it gives on
    a base of its own (so the order scenarios run in, and how they are split among workers, is moot)."""
    rules, facts = example()  # type: ignore[operator]
    plan = scenarios(facts.clusters, ["no-execute", "not-ready", "unhealthy"], k=1)
    plan += scenarios(facts.clusters, ["no-execute"], k=2)
    shared = Base(rules, facts, ON)
    try:
        warm = [shared.run(s).data() for s in plan]
    finally:
        shared.close()
    cold = []
    for s in plan:
        base = Base(rules, facts, ON)
        try:
            cold.append(base.run(s).data())
        finally:
            base.close()
    assert warm == cold
    assert any(i["evicted"] for i in warm)


def test_a_cluster_failure_leaves_an_anti_affinity_group_short() -> None:
    rules, facts = _flink_ha()
    impacts = {i.scenario.name: i for i in sweep(rules, facts, scenarios(facts.clusters), controllers=ON)}
    member3 = impacts["member3"]
    # three orders pipelines on the three prod clusters: the evicted one has nowhere to go
    assert member3.unschedulable == ("streaming/orders-c-flinkdeployment",)
    assert member3.spread_lost == ("streaming/karmada.io/group=orders",)
    assert member3.evicted == (("streaming/orders-c-flinkdeployment", "member3", "Gracefully"),)
    assert impacts["member-dev"].rank == (0, 0, 0, 0, 0, 0)


def test_state_preserved_on_failover_is_reported() -> None:
    rules, facts = _checkpoint()
    impacts = sweep(rules, facts, scenarios(facts.clusters, ["no-execute", "unhealthy"]), controllers=ON)
    preserved = {(i.scenario.failure, i.scenario.name): i.state_preserved for i in impacts if i.evicted}
    assert preserved  # the FlinkDeployment is evicted by both failures where it runs
    assert all(bindings == ("streaming/fraud-detector-flinkdeployment",) for bindings in preserved.values())


def test_a_process_pool_gives_the_serial_bytes() -> None:
    rules, facts = _flink_ha()
    plan = scenarios(facts.clusters, ["no-execute", "not-ready"], k=2)
    serial = sweep(rules, facts, plan, workers=1, controllers=ON)
    pooled = sweep(rules, facts, plan, workers=2, controllers=ON)
    assert to_json(pooled) == to_json(serial)
    assert to_text(pooled) == to_text(serial)


def test_a_dask_cluster_gives_the_serial_bytes() -> None:
    distributed = pytest.importorskip("distributed")
    rules, facts = _flink_ha()
    plan = scenarios(facts.clusters, ["no-execute", "unhealthy"], k=2)
    serial = sweep(rules, facts, plan, workers=1, controllers=ON)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        on_dask = sweep(rules, facts, plan, scheduler=cluster.scheduler_address, controllers=ON)
    assert to_json(on_dask) == to_json(serial)


def test_scenarios_by_region_and_sets_of_k() -> None:
    _, facts = _flink_ha()
    by_region = scenarios(facts.clusters, by="region")
    assert all(s.name.startswith("region ") for s in by_region)
    assert sorted(c for s in by_region for c in s.clusters) == sorted(
        c.name for c in facts.clusters if c.region and not c.deleting
    )
    pairs = scenarios(facts.clusters, k=2)
    n = len([c for c in facts.clusters if not c.deleting])
    assert len(pairs) == n * (n - 1) // 2 and all(len(s.clusters) == 2 for s in pairs)
    with pytest.raises(UsageError, match="unknown 'crash'"):
        scenarios(facts.clusters, ["crash"])
    with pytest.raises(UsageError, match="k: expected"):
        scenarios(facts.clusters, k=0)
    with pytest.raises(UsageError, match="workers"):
        sweep(*_flink_ha(), [Scenario("no-execute", ("member1",), "member1")], workers=0, controllers=ON)


def test_sarif_names_each_harmful_scenario_with_the_policy_line() -> None:
    rules, facts = _flink_ha()
    sarif = json.loads(to_sarif(sweep(rules, facts, scenarios(facts.clusters), controllers=ON), "0.1.0"))
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    unschedulable = [r for r in results if r["ruleId"] == "resilience/unschedulable"]
    assert len(unschedulable) == 3
    location = unschedulable[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("flink-ha/policy.fr") and location["region"]["startLine"] == 4
    assert len({r["partialFingerprints"]["fleetrules/v1"] for r in results}) == len(results)


def test_the_command_ranks_fails_on_and_compares(tmp_path: Path) -> None:
    runner = CliRunner()
    folder = EXAMPLES / "flink-ha"
    args = ["resilience", str(folder / "policy.fr"), "--facts", str(folder / "facts"), "--workers", "1"]
    ok = runner.invoke(main, args)
    assert ok.exit_code == 0, ok.output
    assert ok.output.splitlines()[0].startswith("5 scenarios (no-execute), ranked by blast radius")
    failing = runner.invoke(main, [*args, "--fail-on", "unschedulable"])
    assert failing.exit_code == 1
    bad = runner.invoke(main, [*args, "--fail-on", "sadness"])
    assert bad.exit_code == 2 and "unknown sadness; choose from unschedulable, spread-lost, state-lost" in bad.output
    # a looser version: without anti-affinity, no failure leaves a pipeline unschedulable
    loose = tmp_path / "loose.fr"
    text = (folder / "policy.fr").read_text().replace("  workload anti-affinity by karmada.io/group\n", "")
    loose.write_text(text)
    compared = runner.invoke(main, [*args, "--base", str(loose), "--fail-on", "unschedulable"])
    assert compared.exit_code == 1, compared.output
    assert "3 scenarios change, 3 for the worse" in compared.output
    assert "+ 1 more unschedulable: streaming/orders-c-flinkdeployment" in compared.output


@pytest.mark.parametrize("seed", range(4))
def test_random_fleets_restore_exactly(tmp_path: Path, seed: int) -> None:
    import random

    from tests.test_joins import _fleet, _policy

    rng = random.Random(500 + seed)
    path = tmp_path / "rules.fr"
    policy = _policy(rng).replace(
        "select { kind Deployment }", "select { kind Deployment }\n  tolerate x : NoExecute for 1m"
    )
    path.write_text(policy)
    rules, facts = load_rules([path]), load_facts(objects=_fleet(rng))
    plan = scenarios(facts.clusters, ["no-execute", "not-ready"], k=2)
    shared = Base(rules, facts, ON)
    try:
        warm = [shared.run(s).data() for s in plan]
    finally:
        shared.close()
    for s, expected in zip(plan, warm, strict=True):
        base = Base(rules, facts, ON)
        try:
            assert base.run(s).data() == expected
        finally:
            base.close()


def test_base_ref_compares_with_the_committed_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil
    import subprocess

    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES / "flink-ha", repo / "flink-ha")
    policy = repo / "flink-ha" / "policy.fr"
    policy.write_text(policy.read_text().replace("  workload anti-affinity by karmada.io/group\n", ""))
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    shutil.copy(EXAMPLES / "flink-ha" / "policy.fr", policy)  # the change adds the anti-affinity back
    monkeypatch.chdir(repo)
    args = ["resilience", "flink-ha/policy.fr", "--facts", "flink-ha/facts", "--workers", "1", "--base-ref", "HEAD"]
    result = CliRunner().invoke(main, [*args, "-o", "markdown"])
    assert result.exit_code == 0, result.output
    assert "- if **member3** fails (no-execute): 1 more workload unschedulable: streaming/orders-c" in result.output


def test_change_lines_count_in_words() -> None:
    """ "2 more unschedulable", not "2 mores"."""
    from engine.render.resilience import changes_text
    from engine.review.impacts import Impact, resilience_changes

    scenario = Scenario("no-execute", ("m1",), "m1")
    before = Impact(scenario, unschedulable=("ns/a",))
    after = Impact(scenario, unschedulable=("ns/b", "ns/c"))
    text = changes_text(resilience_changes([before], [after]))
    assert "  + 2 more unschedulable: ns/b, ns/c" in text
    assert "  - 1 fewer unschedulable: ns/a" in text


def test_with_the_taint_manager_off_a_no_execute_failure_evicts_nothing_and_says_why() -> None:
    folder = Path(__file__).resolve().parent.parent / "examples" / "flink-ha"
    args = ["resilience", str(folder / "policy.fr"), "--facts", str(folder / "facts"), "--workers", "1"]
    result = CliRunner().invoke(main, [*args, "--controller", "feature-gates=Failover=false", "-o", "json"])
    assert result.exit_code == 0, result.stderr
    assert "the taint manager is off" in result.stderr
    data = json.loads(result.stdout)
    impacts = data["scenarios"] if isinstance(data, dict) else data
    assert impacts and all(not i["evicted"] for i in impacts)


@pytest.mark.parametrize("example", ["flink-checkpoint", "flink-ha"])
def test_what_the_fleet_does_with_nothing_failing_is_said_once(example: str) -> None:
    """flink-checkpoint's fraud-detector is Unhealthy on member1 in the snapshot: its application failover moves it
    within the horizon whichever cluster fails, and in no scenario because of it. The sweep runs one scenario with
    nothing failing beside the others and says what it does (not listed among the scenarios, which still include
    it, told apart: ``anyway``); flink-ha, settled, gets no such word."""
    folder = EXAMPLES / example
    args = ["resilience", str(folder / "policy.fr"), "--facts", str(folder / "facts"), "--workers", "1", "-o", "json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.stderr
    said = [line for line in result.stderr.splitlines() if "with no cluster failing" in line]
    scenarios_run = [s["scenario"] for s in json.loads(result.stdout)["scenarios"]]
    clusters = {c.name for c in load_facts([folder / "facts"]).clusters}
    assert sorted(scenarios_run) == sorted(clusters)  # one per cluster, none of nothing failing
    if example == "flink-ha":
        assert not said
        return
    (line,) = said
    assert line.startswith("resilience: warning: with no cluster failing, the fleet changes anyway")
    assert "streaming/fraud-detector-flinkdeployment member1 -> member2" in line


def test_each_scenario_says_where_each_binding_goes_and_what_state_travels_with_it() -> None:
    """A healthy snapshot: if member1 fails, the fraud detector goes to member2 carrying its checkpoint."""
    rules, facts = _checkpoint()
    from dataclasses import replace

    healthy = tuple(replace(s, health="Healthy") for s in facts.bindings[0].aggregated_status)
    facts = replace(facts, bindings=(replace(facts.bindings[0], aggregated_status=healthy),))
    impacts = {i.scenario.name: i for i in sweep(rules, facts, scenarios(facts.clusters), controllers=ON)}
    assert impacts["member2"].moves == () and impacts["member2"].evicted == ()
    (move,) = impacts["member1"].moves
    assert (move.binding, move.left, move.took, move.stays) == (
        "streaming/fraud-detector-flinkdeployment",
        ("member1",),
        ("member2",),
        0,
    )
    assert dict(move.state)["karmada.io/failover-flink-checkpoint"] == "s3://flink-state/fraud-detector/chk-4711"
    line = (
        "  streaming/fraud-detector-flinkdeployment: member1 -> member2, carrying "
        "karmada.io/failover-flink-checkpoint=s3://flink-state/fraud-detector/chk-4711"
    )
    assert line in to_text(list(impacts.values())).splitlines()
    (data,) = json.loads(to_json([impacts["member1"]]))["scenarios"][0]["moves"]
    assert data["left"] == ["member1"] and data["took"] == ["member2"] and data["stays"] == 0
    assert data["preservedState"] == dict(move.state)


def test_a_move_names_the_clusters_left_and_taken_not_those_kept() -> None:
    """Sized by what changed: a Duplicated binding that leaves one of its clusters names that one, and how many it
    keeps; one left unschedulable names all it left."""
    from engine.render.resilience import move_line
    from engine.review.impacts import Move

    kept = Move.of("ns/a", ("m1", "m2", "m3"), ("m2", "m3"), ())
    assert (kept.left, kept.took, kept.stays, kept.unschedulable) == (("m1",), (), 2, False)
    assert move_line(kept) == "ns/a: m1 -> no other cluster (stays on 2 other clusters)"
    gone = Move.of("ns/b", ("m1", "m2"), (), ())
    assert gone.unschedulable and move_line(gone) == "ns/b: m1, m2 -> nowhere: UNSCHEDULABLE"
    assert Move.of("ns/c", ("m1",), ("m2", "m1"), ()).data() == {
        "binding": "ns/c",
        "left": [],
        "took": ["m2"],
        "stays": 1,
    }


@pytest.mark.parametrize("shape", ["regional", "unschedulable", "spread"])
def test_unschedulable_bindings_kept_so_give_the_sweep_it_gives_deciding_each_again(shape: str) -> None:
    """Sweeps do not decide again a binding left unschedulable while its own facts, its groups' placements
    and its feasible clusters give it no more room: every scenario's impact is the one of deciding each
    binding at every step (on fleets where most bindings are unschedulable, in groups and regions)."""
    rules, facts = _fleet_of_shape(shape)
    plan = (
        scenarios(facts.clusters, ["no-execute", "not-ready", "unhealthy"]) + scenarios(facts.clusters, by="region")[:3]
    )
    impacts = []
    for keep in (True, False):
        base = Base(rules, facts, ON)
        base.scheduler.keep_unschedulable = keep
        try:
            impacts.append([base.run(s).data() for s in plan])
        finally:
            base.close()
    assert impacts[0] == impacts[1]
    assert any(i["unschedulable"] or i["moves"] for i in impacts[0])


def _fleet_of_shape(shape: str) -> tuple[RuleSet, Facts]:
    import sys

    sys.path.insert(0, str(EXAMPLES.parent / "benchmarks"))
    import fleets

    return RuleSet((), {}), load_facts(objects=fleets.SHAPES[shape](40, 400))


@pytest.mark.parametrize(
    ("example", "settled"),
    [(_checkpoint, True), (lambda: _fleet_of_shape("regional"), True), (_flink_ha, False)],
)
def test_a_scenario_on_a_settled_base_skips_the_step_that_would_change_nothing(example: Any, settled: bool) -> None:
    """A base a step leaves as it is (simulate.fleet_state, no entry) is settled: each scenario, on the base put
    back, skips its first step, taken before the failure, and gives what taking it gives, scenario for scenario. A
    base a step would change (flink-ha: orders-d, unschedulable, is decided again at each step) takes it."""
    rules, facts = example()
    plan = scenarios(facts.clusters, ["no-execute", "not-ready", "unhealthy"]) + scenarios(facts.clusters, k=2)[:6]
    impacts = []
    for skip in (True, False):
        base = Base(rules, facts, ON)
        assert base.settled is settled
        base.settled = base.settled and skip
        try:
            impacts.append([base.run(s).data() for s in plan])
        finally:
            base.close()
    assert impacts[0] == impacts[1]
    assert any(i["evicted"] for i in impacts[0])


def _orders_d_waiting(tmp_path: Path) -> tuple[Any, Any, Any]:
    """flink-ha without its preferred term (a rule of the rule set reading placements keeps nothing), scheduled
    with keep_unschedulable: orders-d left unschedulable, its three peers on the three clusters. The scheduler,
    orders-d and orders-c (on member3)."""
    from dataclasses import replace

    from engine.pipeline import scheduler_for

    text = (EXAMPLES / "flink-ha" / "policy.fr").read_text()
    (tmp_path / "policy.fr").write_text(text.replace("prefer workload anti-affinity", "# prefer"))
    rules, facts = load_rules([tmp_path / "policy.fr"]), _flink_ha()[1]
    scheduler = scheduler_for(rules, facts, controllers=ON)
    scheduler.keep_unschedulable = True
    placed = {p.binding: p for p in scheduler.schedule_all()}
    bindings = {b.key: b for b in facts.bindings}
    d, c = bindings["streaming/orders-d-flinkdeployment"], bindings["streaming/orders-c-flinkdeployment"]
    assert placed[d.key].unschedulable and placed[c.key].clusters == ("member3",)
    for key in (c.key, "streaming/orders-a-flinkdeployment", "streaming/orders-b-flinkdeployment"):
        scheduler.store.restore(replace(bindings[key], clusters=(TargetCluster(placed[key].clusters[0], 1),)))
    return scheduler, d, c


def test_a_kept_unschedulable_binding_is_decided_again_when_a_peer_makes_room(tmp_path: Path) -> None:
    """The memory of an unschedulable binding lasts only while nothing gives it room: a peer of its
    anti-affinity group leaving a feasible cluster does."""
    from dataclasses import replace

    scheduler, d, c = _orders_d_waiting(tmp_path)
    try:
        kept = scheduler.decide_unless_kept(d)
        assert kept.unschedulable and scheduler.decide_unless_kept(d) is kept  # kept: nothing changed for it
        scheduler.store.restore(replace(c, clusters=()))  # orders-c leaves member3
        assert scheduler.decide_unless_kept(d).clusters == ("member3",)
    finally:
        scheduler.close()


def test_a_peer_leaving_an_infeasible_cluster_keeps_the_binding_until_that_cluster_turns_feasible(
    tmp_path: Path,
) -> None:
    """An anti-affinity peer leaving a cluster gives room only if the cluster is feasible: left while the cluster
    is tainted, the unschedulable binding is kept (not decided again); the taint gone, it is decided, and placed
    there (the kept binding no longer counts on that cluster being taken)."""
    from dataclasses import replace

    from engine.inputs.facts import Taint

    scheduler, d, c = _orders_d_waiting(tmp_path)
    try:
        kept = scheduler.decide_unless_kept(d)
        assert kept.unschedulable and scheduler.decide_unless_kept(d) is kept
        member3 = scheduler.store.clusters["member3"]
        scheduler.store.update_cluster(replace(member3, taints=(Taint("maintenance", "", "NoSchedule"),)))
        scheduler.store.restore(replace(c, clusters=()))  # orders-c leaves member3, which takes nothing new now
        assert scheduler.decide_unless_kept(d) is kept
        scheduler.store.update_cluster(member3)
        assert scheduler.decide_unless_kept(d).clusters == ("member3",)
    finally:
        scheduler.close()


@pytest.mark.parametrize("seed", range(3))
def test_a_shared_result_updated_from_what_changed_is_the_one_made_anew(seed: int) -> None:
    """A policy's shared result after taints come and go (updated from the decisions that changed, engine
    .schedule.scheduler._changed_clusters) is the one made from all its decisions afresh."""
    import random
    import sys
    from dataclasses import replace

    from engine.inputs.facts import Taint
    from engine.pipeline import scheduler_for

    sys.path.insert(0, str(EXAMPLES.parent / "benchmarks"))
    import fleets

    facts = load_facts(objects=fleets.SHAPES["regional"](40, 80))
    scheduler = scheduler_for(RuleSet((), {}), facts, controllers=ON)
    rng = random.Random(seed)
    try:
        names = sorted(scheduler.policies)
        for _ in range(25):
            cluster = scheduler.store.clusters[rng.choice(scheduler.candidates)]
            effect = rng.choice(["NoSchedule", "NoExecute", None])
            scheduler.store.update_cluster(replace(cluster, taints=(Taint("k", "", effect),) if effect else ()))
            for name in rng.sample(names, 3):
                updated = scheduler.feasibility.shared(name, None)  # from the one cached before the change
                del scheduler.feasibility._shared_cache[(name, None, False)]
                fresh = scheduler.feasibility.shared(name, None)
                scheduler.feasibility._shared_cache[(name, None, False)] = updated  # the next change updates this one
                assert updated.rejected.table == fresh.rejected.table and list(updated.rejected) == list(fresh.rejected)
                assert tuple(updated.feasible) == tuple(fresh.feasible) and updated.by_cluster == fresh.by_cluster
                assert updated.decisions == fresh.decisions and updated.exemptable == fresh.exemptable
    finally:
        scheduler.close()


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found += [int(c) for c in task.read_text().split()]
    return found


def _running(pid: int) -> bool:
    """Whether the process is alive (a zombie has ended: only its parent's wait is missing)."""
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
@pytest.mark.parametrize(("how", "code"), [("SIGINT", 130), ("SIGTERM", 143), ("SIGKILL", -9)])
def test_a_stopped_sweep_stops_at_once_and_ends_its_workers(tmp_path: Path, how: str, code: int) -> None:
    """Ctrl-C exited 130 only after the whole sweep (291 s later) and SIGTERM orphaned the workers (issue 28):
    the terminal's Ctrl-C (to the whole group), a SIGTERM and even a SIGKILL of the parent end them at once."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import yaml

    sys.path.insert(0, str(EXAMPLES.parent / "benchmarks"))
    import fleets

    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump_all(fleets.SHAPES["regional"](200, 2000)))
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: the sweep runs without workers (--workers is bounded by the cores)")
    command = [sys.executable, "-m", "engine", "resilience", str(fleet), "--workers", "2"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while len(workers) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
        workers = _children(process.pid)
    assert len(workers) >= 2, "the sweep ended before its workers could be seen"
    time.sleep(0.5)  # at work
    sent = time.monotonic()
    if how == "SIGINT":
        os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the parent and its workers
    else:
        os.kill(process.pid, getattr(signal, how))
    assert process.wait(timeout=30) == code
    assert time.monotonic() - sent < 3  # the sweep had seconds of work left
    time.sleep(0.5)
    alive = [
        w for w in workers if Path(f"/proc/{w}").exists() and "State:\tZ" not in Path(f"/proc/{w}/status").read_text()
    ]
    assert not alive
    assert b"Traceback" not in (process.stderr.read() if process.stderr else b"")


def test_kept_keys_of_watched_bindings_follow_what_changed() -> None:
    """Waiting.kept_keys asked about bindings it can watch (the simulator's) reads only what was set or kept since
    it was last asked, and answers as a full pass over the kept bindings does, step after step."""
    from dataclasses import replace
    from typing import cast

    from engine.karmada.controllers.world import Bindings
    from engine.results import Placement
    from engine.schedule.waiting import Waiting

    facts = _flink_ha()[1]
    waiting = Waiting(lambda policy, workload: ())
    bindings = Bindings({b.key: b for b in facts.bindings})
    a, b, c = sorted(bindings)[:3]
    placed = cast(Placement, object())

    def check() -> set[str]:
        answer = waiting.kept_keys(bindings)
        assert answer == waiting.kept_keys(dict(bindings))  # a plain mapping: the full pass
        return answer

    for key in (a, b):
        waiting.keep(bindings[key], "p", True, placed, f"b/{key}", ())
    assert check() == {a, b}
    assert not any(bindings.watchers)  # what was set is taken out as it is read
    bindings[a] = replace(bindings[a], clusters=())  # another object: no longer the binding kept
    assert check() == {b}
    waiting.keep(bindings[a], "p", True, placed, f"b/{a}", ())
    waiting.forget(b)
    waiting.keep(bindings[c], "p", True, placed, f"b/{c}", ())
    assert check() == {a, c}
    bindings[c] = replace(bindings[c], clusters=())
    waiting.changed(("owner", f"b/{a}"))
    assert check() == set()


# tests/test_simulate_loops.py's fleet, its toleration of the not-ready taint a sweep's no-execute failure adds, and
# a second cluster: web may run on m1 only and tolerates that NoExecute taint for 30 s, so once m1 has it the taint
# manager evicts web at each 10 s sweep and the scheduler places it back on m1 (the toleration passes the filter)
NEVER_SETTLES = TOLERATED.replace("key: k2,", "key: cluster.karmada.io/not-ready,") + (
    "---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m2}\n"
)


def test_a_scenario_whose_fleet_never_settles_says_so(tmp_path: Path) -> None:
    """m1 failing: web is evicted and placed back every 10 s for as long as the taint stands (24 h in a sweep). The
    scenario says so (its ``repeats``: the loop as the timeline finds it, once the times that started it are past
    every span the controllers compare: the 10 min eviction timeout), in JSON and text, and the sweep warns once; m2
    failing settles and says nothing."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(NEVER_SETTLES)
    args = ["resilience", str(fleet), "--facts", str(fleet), "--workers", "1"]
    result = CliRunner().invoke(main, [*args, "-o", "json"])
    assert result.exit_code == 0, result.stderr
    by = {s["scenario"]: s for s in json.loads(result.stdout)["scenarios"]}
    assert by["m2"]["repeats"] == []
    rule = "taint-manager-toleration-seconds (<builtin>/taint_manager.fr:24)"  # the taint's 60 s run out, each time
    assert by["m1"]["repeats"] == [
        {"after": "610s", "every": "10s", "bindings": ["shop/web-deployment"], "rules": [rule]}
    ]
    assert by["m1"]["evicted"]  # measured where the loop is found: evicted, placed back on m1
    said = [line for line in result.stderr.splitlines() if "never settle" in line]
    assert said == [
        "resilience: warning: 1 scenario never settles: m1 (shop/web-deployment: what happens after 610s happens "
        "again every 10s); Karmada's controllers and scheduler would keep it up: each is measured where its loop "
        "is found"
    ]
    text = CliRunner().invoke(main, args).stdout
    said_text = (
        f"  never settles: what happens after 610s happens again every 10s: shop/web-deployment (evictions by {rule})"
    )
    assert said_text + "\n" in text
    settled = CliRunner().invoke(main, ["resilience", str(EXAMPLES / "flink-ha" / "policy.fr"), "--facts",
                                        str(EXAMPLES / "flink-ha" / "facts"), "--workers", "1"])  # fmt: skip
    assert settled.exit_code == 0 and "never settle" not in settled.stderr + settled.stdout


def test_a_scenario_undone_leaves_the_base_as_it_was_the_same_objects() -> None:
    """After a scenario, the base's placement batches and each policy's shared result are the very objects they
    were (a batch placed as it was is that batch again; a shared result whose decisions are again those it was made
    of stands): the next scenario finds what the base made, nothing made again."""
    rules, facts = _flink_ha()
    base = Base(rules, facts, ON)
    feasibility, session = base.scheduler.feasibility, base.scheduler.session
    assert isinstance(session, PlannedSession)
    policies = [(name, w) for name in sorted(feasibility.policies) for w in (True, False)]
    before = {p: feasibility.feasible_now(*p) for p in policies}
    batches = dict(session._batches)
    evicting = 0
    for scenario in scenarios(facts.clusters):
        evicting += bool(base.run(scenario).evicted)  # the scenario changed the fleet
        assert all(session._batches.get(k) is b for k, b in batches.items()), scenario.name
        for p in policies:
            assert all(a is b for a, b in zip(feasibility.feasible_now(*p), before[p], strict=True)), (scenario, p)
    assert evicting >= 2 and batches
    base.close()


def test_a_move_the_fleet_makes_with_nothing_failing_is_told_apart_from_the_failures_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """flink-checkpoint's fraud-detector moves member1 -> member2 with nothing failing (its application failover):
    the scenarios whose move is that very one mark it (``anyway``; text: "as with no cluster failing"); member2
    failing sends it to member3, the failure's own move, unmarked (StatefulFailoverInjection off: no state rides
    with it, and the taint on member2 keeps it off member2)."""
    monkeypatch.setenv("FLEETRULES_CONTROLLER", "enable-no-execute-taint-eviction=true feature-gates=Failover=true")
    folder = EXAMPLES / "flink-checkpoint"
    args = ["resilience", str(folder / "policy.fr"), "--facts", str(folder / "facts"), "--workers", "1"]
    result = CliRunner().invoke(main, [*args, "-o", "json"])
    assert result.exit_code == 0, result.stderr
    moves = {s["scenario"]: s["moves"] for s in json.loads(result.stdout)["scenarios"]}
    fraud = "streaming/fraud-detector-flinkdeployment"
    assert moves["member2"] == [{"binding": fraud, "left": ["member1"], "took": ["member3"], "stays": 0}]
    for scenario in ("member1", "member3", "member4"):
        (move,) = moves[scenario]
        assert move["took"] == ["member2"] and move["anyway"] is True, scenario
    text = CliRunner().invoke(main, args).stdout
    assert f"  {fraud}: member1 -> member3\n" in text
    assert text.count("(as with no cluster failing)") == 3


@pytest.mark.parametrize("seed", range(4))
def test_an_anti_affinity_groups_clusters_follow_its_members_moves(seed: int) -> None:
    """Waiting.occupy: a group's clusters, counted, are its members' clusters as they are after any moves, clusters
    a member's spec.clusters names twice counted as named (a user's binding may), none left at zero."""
    import random
    from collections import Counter

    from engine.schedule.waiting import Waiting

    rng = random.Random(seed)
    waiting = Waiting(lambda policy, workload: ())
    members: dict[str, list[str]] = {m: [] for m in ("a", "b", "c")}
    for _ in range(200):
        member = rng.choice(list(members))
        after = rng.sample(["m1", "m2", "m3", "m4", "m5"], rng.randint(0, 3))
        if after and rng.random() < 0.2:
            after.append(after[0])  # named twice
        waiting.occupy("ns/g", members[member], after)
        members[member] = after
        expected = Counter(c for clusters in members.values() for c in clusters)
        assert dict(waiting._held_by("ns/g")) == dict(expected)


def test_a_cluster_a_group_left_while_not_feasible_gives_room_when_it_turns_feasible() -> None:
    """A kept binding's group leaves m1 while m1 is not feasible (its cluster tainted), and Waiting looks at the
    group then, asked about a binding of another policy: no room. m1 turns feasible again (its feasible clusters as
    when last checked): the binding has room on m1 and is let go. (Before, the policy's feasible clusters were
    compared with those it was checked against before the group moved: no growth seen, the binding kept.)"""
    from dataclasses import replace
    from typing import cast

    from engine.results import Placement
    from engine.schedule.store import ANTI
    from engine.schedule.waiting import Waiting

    feasible = {"p1": (frozenset({"m1", "m2"}),), "p2": (frozenset({"m1"}),)}
    waiting = Waiting(lambda policy, workload: feasible[policy])
    template = _flink_ha()[1].bindings[0]
    k, j = (replace(template, name=name) for name in ("k", "j"))
    placed = cast(Placement, object())
    waiting.occupy("ns/g", [], ["m1"])
    waiting.keep(k, "p1", True, placed, "b/k", ((ANTI, "ns/g"),))  # m1 its group's, m2 its own decisions rejected
    waiting.keep(j, "p2", True, placed, "b/j", ())
    bindings = {k.key: k, j.key: j}
    assert waiting.kept_keys(bindings) == {k.key, j.key}
    waiting.occupy("ns/g", ["m1"], [])  # the group leaves m1 ...
    feasible["p1"] = (frozenset({"m2"}),)  # ... which is not feasible now
    assert waiting.kept(j) is placed  # the group looked at: no room on m1, not feasible
    feasible["p1"] = (frozenset({"m1", "m2"}),)  # m1 feasible again
    assert waiting.kept_keys(bindings) == {j.key}
    assert waiting.kept(k) is None


@pytest.mark.parametrize("asked", ["every step", "now and then"])
@pytest.mark.parametrize("seed", range(8))
def test_kept_bindings_are_those_without_room_whatever_changes(seed: int, asked: str) -> None:
    """Waiting against a model, through random runs of a policy's feasible clusters changing (grown, shrunk, or
    alike but new objects), anti-affinity groups' members moving, and bindings kept: asked about them all at every
    step (kept_keys), the bindings kept are exactly those still without room (a feasible cluster of some term of its
    policy its group does not hold and it was not blocked on when kept); asked now and then, about all or about one
    binding (kept), none kept has room. Waiting looks only where room can come from (a policy's feasible clusters
    grown, the clusters a group left); a binding kept with room, or one let go without, fails here."""
    import random
    from dataclasses import replace
    from typing import cast

    from engine.results import Placement
    from engine.schedule.store import ANTI
    from engine.schedule.waiting import Waiting

    rng = random.Random(seed)
    clusters = [f"m{i}" for i in range(4)]

    def some() -> frozenset[str]:
        return frozenset(rng.sample(clusters, rng.randint(0, len(clusters))))

    feasible = {"p1": (some(),), "p2": (some(), some())}
    waiting = Waiting(lambda policy, workload: feasible[policy])
    template = _flink_ha()[1].bindings[0]
    bindings = {b.key: b for b in (replace(template, name=f"w{i}") for i in range(10))}
    policy_of = {key: rng.choice(["p1", "p2"]) for key in bindings}
    group_of = {key: rng.choice(["ns/g1", "ns/g2", None]) for key in bindings}
    members: dict[str, dict[str, list[str]]] = {"ns/g1": {"x": [], "y": []}, "ns/g2": {"x": [], "y": []}}
    blocked: dict[str, tuple[frozenset[str], ...]] = {}  # the model's kept bindings and what they were blocked on
    placed = cast(Placement, object())

    def held(group: str | None) -> set[str]:
        return {c for m in members[group].values() for c in m} if group is not None else set()

    def has_room(key: str) -> bool:
        taken = held(group_of[key])
        return any(not (t - taken) <= b for t, b in zip(feasible[policy_of[key]], blocked[key], strict=True))

    def keep() -> None:
        key = rng.choice(sorted(k for k in bindings if k not in blocked) or sorted(bindings))
        group = group_of[key]
        waiting.forget(key)  # a binding decided again (Scheduler.decide) and left unschedulable
        waiting.keep(bindings[key], policy_of[key], True, placed, f"b/{key}", ((ANTI, group),) if group else ())
        blocked[key] = tuple(t - held(group) for t in feasible[policy_of[key]])

    def change(policy: str) -> None:
        how = rng.choice(["grown", "shrunk", "alike", "any"])
        feasible[policy] = tuple(
            frozenset(t | {rng.choice(clusters)})
            if how == "grown"
            else frozenset(t - {rng.choice(clusters)})
            if how == "shrunk"
            else frozenset(set(t))
            if how == "alike"
            else some()
            for t in feasible[policy]
        )

    for _ in range(400):
        op, exact = rng.random(), True
        if op < 0.3:
            policy = rng.choice(list(feasible))
            change(policy)
            if rng.random() < 0.5:  # a binding decided on them before the kept ones are asked about
                keep()
                if rng.random() < 0.5:  # and they change again: a binding kept then had room only if it has now
                    change(policy)  # (the bindings kept may have been let go with room they no longer have)
                    exact = False
        elif op < 0.6:
            group, member = rng.choice(list(members)), rng.choice(["x", "y"])
            before = members[group][member]
            after = rng.sample(clusters, rng.randint(0, 3))
            if rng.random() < 0.4:  # taking more clusters only
                after = [*before, *(c for c in after if c not in before)]
            waiting.occupy(group, before, after)
            members[group][member] = after
        else:
            keep()
        if asked == "now and then":
            how = rng.random()
            if how < 0.5 and blocked:  # about one binding, as the simulator asks before deciding it
                key = rng.choice(sorted(blocked))
                if waiting.kept(bindings[key]) is None:
                    del blocked[key]
                else:
                    assert not has_room(key), op
                continue
            if how < 0.9:
                continue
            exact = False  # a binding let go in between may have lost the room it had
        kept = waiting.kept_keys(bindings)
        without_room = {key for key in blocked if not has_room(key)}
        assert kept == without_room if exact else kept <= without_room, op
        blocked = {key: b for key, b in blocked.items() if key in kept}


@pytest.mark.parametrize("seed", range(4))
def test_the_exemptions_a_binding_meets_looked_up_by_value_are_those_each_decision_tested_gives(seed: int) -> None:
    """Shared.exempted: unless a binding's list values far outnumber the policy's exemptable decisions it looks the
    decisions up by value (a Duplicated binding on 50 of 1,000 clusters), else it tests each (a binding on 600
    clusters); the ids are those testing each decision with ``applies`` gives, whichever way is taken."""
    import random

    from engine.backend.protocol import Decision
    from engine.schedule.feasibility import Shared, applies

    rng = random.Random(seed)
    clusters = [f"m{i}" for i in range(30)]
    exemptable = [
        Decision(0, frozenset(), "s", c, exempt=tuple(("clusters", x) for x in rng.sample(clusters, rng.randint(1, 2))))
        for c in clusters
    ]
    from dataclasses import fields

    given: dict[str, Any] = {f.name: None for f in fields(Shared)} | {"exemptable": exemptable, "prefers": False}
    shared = Shared(**given)  # only what ``exempted`` reads
    others = [f"x{i}" for i in range(600)]  # clusters no decision is exempt on: a binding on many clusters
    for size, more in ((0, 0), (1, 0), (3, 0), (29, 0), (30, 0), (30, 200), (12, 600)):
        named = rng.sample(clusters, size) + rng.sample(others, more)
        lists = {"clusters": frozenset(named), "name": frozenset({"w"})}
        expected = {id(d) for d in exemptable if not applies(d, lists)}
        assert shared.exempted(lists) == expected, size
