"""Cluster failover through taints (pkg/controllers/cluster/taint_manager.go, pkg/util/helper/taint_test.go,
taint_manager_test.go), event-file errors,
and invariants over random event sequences (hypothesis)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Entry, FactError, load_facts, load_rules, simulate
from engine.errors import NO_SPAN
from engine.inputs.events import Event, EventKind, load_events
from tests.gates import ON

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "flink-checkpoint"
BINDING = "streaming/fraud-detector-flinkdeployment"
T0 = dt.datetime(2026, 12, 2, 10, 0, tzinfo=dt.UTC)


HEALTHY = Event(T0, EventKind.HEALTH, {"binding": BINDING, "cluster": "member1", "status": "Healthy"}, NO_SPAN)


def run(mode: str, events: list[Event]) -> list[Entry]:
    rules = load_rules([EXAMPLE / "modes" / f"{mode}.fr"])
    return list(simulate(rules, load_facts([EXAMPLE / "facts"]), T0, events, controllers=ON))


def event(seconds: int, kind: str, **fields: str) -> Event:
    return Event(T0 + dt.timedelta(seconds=seconds), EventKind(kind), fields, NO_SPAN)


def test_an_untolerated_noexecute_taint_evicts_at_once() -> None:
    entries = run("directly", [event(30, "taint", cluster="member1", key="maintenance", effect="NoExecute")])
    evicted = next(e for e in entries if e.kind == "evicted")
    task = evicted.data()["task"]
    assert evicted.time == T0 + dt.timedelta(seconds=30)
    assert (task["reason"], task["producer"], task["purgeMode"]) == ("TaintUntolerated", "TaintManager", "Directly")
    # failover.cluster's state preservation; no grace, no suppression, no clustersBeforeFailover (taint_manager.go)
    assert task["preservedLabelState"] == {
        "karmada.io/failover-flink-checkpoint": "s3://flink-state/fraud-detector/chk-4711"
    }
    assert not {"gracePeriodSeconds", "suppressDeletion", "clustersBeforeFailover"} & set(task)


def test_a_tolerated_taint_evicts_when_its_toleration_runs_out() -> None:
    """`tolerate cluster.karmada.io/not-ready : NoExecute for 5m`: evicted when the 5 minutes are up, at the
    trigger time itself: GetMinTolerationTimeWithCurrentTime is 0 once the trigger time is not after now
    (pkg/util/helper/taint.go; taint_manager_test.go cases 8 and 9)."""
    taint = event(60, "taint", cluster="member1", key="cluster.karmada.io/not-ready", effect="NoExecute")
    entries = run("directly", [HEALTHY, taint])
    evicted = next(e for e in entries if e.kind == "evicted")
    assert evicted.time == T0 + dt.timedelta(seconds=60 + 300)


def test_noschedule_taints_from_readiness_do_not_evict() -> None:
    entries = run("directly", [HEALTHY, event(60, "ready", cluster="member1", status="False")])
    assert not any(e.kind == "evicted" for e in entries)


def test_events_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "events.yaml"
    path.write_text(
        "start: 2026-12-02T10:00:00Z\nevents:\n"
        "- at: soon\n  health: {binding: a, cluster: b}\n- at: 5m\n  explode: {}\n"
        "- at: 5s\n  condition: {cluster: m1, type: Ready, status: maybe}\n"
        "- at: 6s\n  ready: {cluster: m1, status: 'false'}\n"
    )
    with pytest.raises(FactError) as caught:
        load_events(path)
    text = str(caught.value)
    assert "events.yaml:3:7: error: events[0].at: expected a duration" in text
    assert "events.yaml:5:3: error: events[1]: an event is one of health, ready, taint, untaint" in text
    # a condition's status is a metav1.ConditionStatus: anything else is refused where it stands (it was taken)
    assert "events.yaml:8:49: error: events[2].condition.status: expected True, False, Unknown, found 'maybe'" in text
    assert "events[3].ready.status: expected True, False, Unknown, found 'false'" in text


def test_events_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "events.yaml"
    path.write_text(
        yaml.safe_dump({"start": "2026-12-02T10:00:00Z", "events": [{"at": "1m30s", "ready": {"cluster": "m1"}}]})
    )
    start, events = load_events(path)
    assert start == T0 and events[0].at == T0 + dt.timedelta(seconds=90) and events[0].kind == "ready"


_health = st.builds(
    lambda s, c, h: event(s, "health", binding=BINDING, cluster=c, status=h),
    st.integers(0, 1800),
    st.sampled_from(["member1", "member2", "member3"]),
    st.sampled_from(["Healthy", "Unhealthy", "Unknown"]),
)
_taint = st.builds(
    lambda s, c, k: event(s, "taint", cluster=c, key=k, effect="NoExecute"),
    st.integers(0, 1800),
    st.sampled_from(["member1", "member2"]),
    st.sampled_from(["maintenance", "cluster.karmada.io/not-ready"]),
)
_untaint = st.builds(
    lambda s, c: event(s, "untaint", cluster=c, key="maintenance", effect="NoExecute"),
    st.integers(0, 1800),
    st.sampled_from(["member1", "member2"]),
)
sequences = st.lists(st.one_of(_health, _taint, _untaint), max_size=8).map(lambda es: sorted(es, key=lambda e: e.at))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequences)
def test_invariants_over_random_event_sequences(events: list[Event]) -> None:
    for mode in ("directly", "gracefully", "never"):
        entries = [e for e in run(mode, events) if e.binding == BINDING]
        evicted = [e for e in entries if e.kind == "evicted"]
        # no eviction task is duplicated: one task per cluster at a time
        open_tasks: Counter[str] = Counter()
        for e in entries:
            if e.kind == "evicted":
                open_tasks[e.cluster] += 1
                assert open_tasks[e.cluster] == 1, f"{mode}: a second task for {e.cluster}"
            elif e.kind == "task-removed":
                open_tasks[e.cluster] = 0
        for task in evicted:
            purge = task.data()["task"]["purgeMode"]
            later = [e for e in entries if e.cluster == task.cluster and e.time >= task.time]
            deleted = [e.time for e in later if e.kind == "work-deleted"]
            removed = [e.time for e in later if e.kind == "task-removed"]
            if purge == "Never":  # Never deletes nothing it evicted
                assert not deleted, f"{mode}: a Never task's workload was deleted"
            if purge == "Gracefully" and deleted:  # the old workload stays until its task ends
                assert removed and removed[0] <= deleted[0], f"{mode}: deleted before the task ended"
        # what is injected is the newest task's preserved state
        for e in entries:
            if e.kind in ("work-created", "labels") and e.detail.get("injectedLabels"):
                newest = [t for t in evicted if t.time <= e.time][-1]
                assert e.detail["injectedLabels"] == newest.data()["task"].get("preservedLabelState", {})


def test_a_rule_can_evict(tmp_path: Path) -> None:
    """General rules (a fleetrules extension) as custom triggers: `evict` builds a task under the policy's failover."""
    rules = (EXAMPLE / "modes" / "gracefully.fr").read_text() + (
        '\nrule drain-spot {\n  when binding b\n   and cluster c (c.labels.lifecycle == "spot")\n'
        '  then evict b from c reason SpotReclaimed "spot capacity reclaimed in {c.name}"\n}\n'
        '\nrule bad-reason {\n  when binding b\n   and cluster c (c.labels.lifecycle == "spot")\n'
        '  then evict b from c reason "Spot Reclaimed" "x"\n}\n'
    )
    (tmp_path / "rules.fr").write_text(rules)
    facts_dir = tmp_path / "facts"
    facts_dir.mkdir()
    for path in (EXAMPLE / "facts").iterdir():
        text = path.read_text().replace(
            "metadata: {name: member1}", "metadata: {name: member1, labels: {lifecycle: spot}}"
        )
        (facts_dir / path.name).write_text(text)
    with pytest.raises(Exception, match="invalid eviction reason 'Spot Reclaimed'"):
        load_rules([tmp_path / "rules.fr"])
    (tmp_path / "rules.fr").write_text(rules.split("\nrule bad-reason")[0])
    entries = simulate(load_rules([tmp_path / "rules.fr"]), load_facts([facts_dir]), T0, [HEALTHY], controllers=ON)
    evicted = next(e for e in entries if e.kind == "evicted")
    task = evicted.data()["task"]
    assert (evicted.cluster, task["reason"], task["purgeMode"]) == ("member1", "SpotReclaimed", "Gracefully")
    assert task["message"] == "spot capacity reclaimed in member1" and task["producer"] == "fleetrules rule drain-spot"
    line = rules.splitlines().index("rule drain-spot {") + 1
    assert evicted.detail["rule"] == "drain-spot" and str(evicted.detail["source"]).endswith(f"rules.fr:{line}")


@pytest.mark.parametrize(
    ("seconds", "added", "want"),
    [  # pkg/controllers/cluster/taint_manager_test.go needEvictionWithCurrentTime, now T
        (0, -1, True),  # case 8: tolerationSeconds 0, taint added at T-1s: evict
        (60, -1, 59),  # case 9: 60s: look again in 59s
        (None, -1, False),  # case 10: no seconds: tolerated forever
        (1, -2, True),  # case 12: 1s on a taint added at T-2s: evict
        (60, -60, True),  # the trigger time is now: GetMinTolerationTimeWithCurrentTime is 0, evict
    ],
)
def test_taint_manager_decision(seconds: int | None, added: int, want: bool | int) -> None:
    toleration: dict[str, object] = {"key": "test-key", "operator": "Exists", "effect": "NoExecute"}
    if seconds is not None:
        toleration["tolerationSeconds"] = seconds
    taint = {"key": "test-key", "effect": "NoExecute", "timeAdded": _at(T0 + dt.timedelta(seconds=added))}
    due = _taint_manager([toleration], [taint], T0)
    assert due == (T0 + dt.timedelta(seconds=want) if not isinstance(want, bool) else want)


def _at(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _taint_manager(
    tolerations: Sequence[Mapping[str, object]], taints: Sequence[Mapping[str, object]], now: dt.datetime
) -> object:
    """The taint manager's decision on a binding placed on a cluster with ``taints`` under a policy with
    ``tolerations``, from ``now`` on, by its rules (rules/taint_manager.fr) as time runs, as the oracle asks it
    (tests/data/oracle/compare.py): True (evict now), False (not within a day), or when."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("oracle_compare", Path(__file__).parent / "data/oracle/compare.py")
    assert spec is not None and spec.loader is not None
    compare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare)
    answer = compare.taint_answer_of({"tolerations": tolerations, "taints": taints, "now": _at(now)})
    if answer["decision"] == "after":
        return now + dt.timedelta(seconds=answer["seconds"])
    return answer["decision"] == "now"


NO_EXECUTE = "NoExecute"


@pytest.mark.parametrize("reference", [False, True])
@pytest.mark.parametrize(
    ("case", "taints", "tolerations", "evicted"),
    [  # pkg/controllers/cluster/taint_manager_test.go TestNoExecuteTaintManager_needEvictionWithCurrentTime, at T
        ("cluster has no NoExecute taints", [("test-key", "NoSchedule", -1)], [], None),
        ("taint not tolerated - immediate eviction", [("test-key", NO_EXECUTE, -1)], [], "rule"),
        ("taint tolerated with zero toleration seconds", [("test-key", NO_EXECUTE, -1)], ["test-key for 0s"], "timer"),
        ("taint tolerated with positive toleration seconds", [("test-key", NO_EXECUTE, -1)], ["test-key for 1m"], None),
        ("taint tolerated forever - no eviction", [("test-key", NO_EXECUTE, -1)], ["test-key"], None),
        (
            "multiple taints with mixed tolerations",
            [("tolerated-key", NO_EXECUTE, -1), ("not-tolerated-key", NO_EXECUTE, -1)],
            ["tolerated-key for 30s"],
            "rule",
        ),
        ("toleration time expired - immediate eviction", [("test-key", NO_EXECUTE, -2)], ["test-key for 1s"], "timer"),
    ],
)
def test_the_taint_managers_decision_end_to_end(
    tmp_path: Path,
    case: str,
    taints: list[tuple[str, str, int]],
    tolerations: list[str],
    evicted: str | None,
    reference: bool,
) -> None:
    """Karmada's table, each case a binding on a tainted cluster evaluated at T (`eval --now`): a NoExecute taint
    no toleration tolerates is evicted by the taint-manager rule (rules/taint_manager.fr, named with its line in
    the eviction), one whose toleration seconds ran out by the taint-manager-toleration-seconds rule; by both
    engines."""
    from engine import evaluate, load_facts, load_rules
    from tests.helpers import binding, cluster, workload

    parts = (t.partition(" for") for t in tolerations)
    lines = "".join(f"  tolerate {k} : NoExecute{' for' if f else ''}{f}\n" for k, _, f in parts)
    (tmp_path / "p.fr").write_text(f"policy p {{\n  select {{ kind Deployment }}\n{lines}}}\n")
    spec_taints = [
        {"key": k, "effect": e, "timeAdded": (T0 + dt.timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%SZ")}
        for k, e, s in taints
    ]
    objects = [cluster("test-cluster", taints=spec_taints), workload("app"), binding("app", ["test-cluster"])]
    result = evaluate(
        load_rules([tmp_path / "p.fr"]), load_facts(objects=objects), now=T0, controllers=ON, reference=reference
    )
    found = [(e.binding, e.cluster, e.task.reason if e.task else "", e.rule) for e in result.evictions]
    if evicted is None:
        assert found == [], case
        return
    rule = "taint-manager" if evicted == "rule" else "taint-manager-toleration-seconds"
    assert found == [("default/app-deployment", "test-cluster", "TaintUntolerated", rule)], case
    (eviction,) = result.evictions
    if evicted == "rule":  # the taint no toleration tolerates, in the rule's words
        untolerated = taints[-1][0]
        assert eviction.source.endswith("taint_manager.fr:9")
        words = f"taint manager: test-cluster has the NoExecute taint {{{untolerated}:NoExecute}}, not tolerated"
        assert eviction.because == words
        # explained as a rejection is: the binding, the cluster, its placement there and the taint the rule matched
        assert eviction.explanation is not None and eviction.explanation.rule == "taint-manager"
        facts = {f.alias: (f.fact_type, f.description) for f in eviction.explanation.facts}
        assert [(a, t) for a, (t, _) in sorted(facts.items())] == [
            ("b", "binding"),
            ("c", "cluster"),
            ("p", "placement"),
            ("t", "taint"),
        ]
        assert f"display={{{untolerated}:NoExecute}}" in facts["t"][1]
        from engine.render.results import eviction_lines

        assert f"    t: taint {facts['t'][1]}" in eviction_lines(eviction)  # `explain --now` shows them
    else:  # a toleration's seconds ran out: the second rule, with the taint's age and the toleration it used
        assert eviction.source.endswith("taint_manager.fr:24")
        assert eviction.because.startswith(
            "taint manager: test-cluster has had the NoExecute taint {test-key:NoExecute}"
        )
        assert eviction.explanation is not None and eviction.explanation.rule == "taint-manager-toleration-seconds"
        facts = {f.alias: (f.fact_type, f.description) for f in eviction.explanation.facts}
        assert {a: t for a, (t, _) in facts.items()} == {
            "a": "taint_age",
            "b": "binding",
            "c": "cluster",
            "p": "placement",
            "x": "toleration_used",
        }


def test_the_earliest_trigger_pairs_each_used_toleration_with_every_taint_it_tolerates() -> None:
    """GetMinTolerationTimeWithCurrentTime (helper/taint.go): taint A (added T) is first tolerated by a 300s
    toleration, taint B (added T+100s) by a 60s one that tolerates A as well: the trigger is A + 60s, not
    min(A + 300s, B + 60s)."""
    only_a = {"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
    any_taint = {"key": "", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}
    taints = [
        {"key": "a", "effect": "NoExecute", "timeAdded": _at(T0)},
        {"key": "b", "effect": "NoExecute", "timeAdded": _at(T0 + dt.timedelta(seconds=100))},
    ]
    assert _taint_manager([only_a, any_taint], taints, T0) == T0 + dt.timedelta(seconds=60)
    # a toleration no taint is first tolerated by is not used: forever tolerated by the first, never evicted
    forever_a = {"key": "a", "operator": "Exists", "effect": "NoExecute"}
    assert _taint_manager([forever_a, any_taint], taints[:1], T0) is False


@pytest.mark.parametrize(
    ("seconds", "want"),
    [
        (9_223_372_036, dt.datetime(2319, 3, 14, 9, 47, 16, tzinfo=dt.UTC)),  # the largest: 292 years on
        (10_000_000_000, True),  # 10^19 ns wraps to minus 267 years: Karmada evicts at once
        (2**62, True),  # wraps to exactly 0 ns: the trigger is the taint's own time
    ],
)
def test_taint_toleration_seconds_overflow_as_go_computes_them(seconds: int, want: object) -> None:
    """timeAdded.Add(time.Duration(seconds) * time.Second): the product wraps around int64 nanoseconds. The trigger
    292 years on is past a simulation's day: asked at it, and a second before."""
    toleration = {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}
    taint = {"key": "k", "effect": "NoExecute", "timeAdded": _at(T0)}
    if want is True:
        assert _taint_manager([toleration], [taint], T0) is True
        return
    assert isinstance(want, dt.datetime)
    assert _taint_manager([toleration], [taint], want - dt.timedelta(seconds=1)) == want
    assert _taint_manager([toleration], [taint], want) is True


def _without_noise(entries: list[Entry], noise: Event) -> list[dict[str, object]]:
    return [e.data() for e in entries if not (e.time == noise.at and e.kind == "ready" and e.cluster == "member4")]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequences, st.integers(0, 2400), st.sampled_from(["directly", "gracefully", "never"]))
def test_an_unrelated_no_op_event_changes_nothing(events: list[Event], at: int, mode: str) -> None:
    """Issue 27, simulate's clock: a controller acts at its own moments (a toleration or grace running out, the
    taint manager's sweep, the graceful eviction controller's reconcile, a retry), never because some unrelated
    event moved the clock. member4 (nothing targets it, already without readiness taints) reported Ready at a
    random moment must leave every other entry of the timeline as it was."""
    noise = event(at, "ready", cluster="member4", status="True")
    quiet = [e.data() for e in run(mode, events)]
    noisy = _without_noise(run(mode, sorted([*events, noise], key=lambda e: e.at)), noise)
    assert noisy == quiet


def test_a_failed_eviction_is_said_once_and_a_new_targets_timer_starts_at_the_reschedule() -> None:
    """member2 reports Unhealthy before the binding moves there (at 10:02:01, member1's toleration of 120 s
    run out). The application failover controller reconciles the rescheduled binding at once, so member2's
    timer starts at 10:02:01 and runs out at 10:04:02 (it started at the next unrelated moment, 10:05:01).
    There the eviction fails (member2's status was never collected): said once, though the graceful eviction
    deadlines at 10:05:01 and 10:12:02 retry it (Karmada retries with backoff until the status changes)."""
    entries = run("directly", [event(0, "health", binding=BINDING, cluster="member2", status="Unhealthy")])
    failed = [e for e in entries if e.kind == "eviction-failed"]
    assert [(e.time, e.cluster) for e in failed] == [(T0 + dt.timedelta(seconds=242), "member2")]
    assert "has not yet been collected from Cluster(member2)" in str(failed[0].detail["error"])
