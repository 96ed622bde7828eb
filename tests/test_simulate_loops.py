"""Loops in a timeline (engine.failover.simulate ``Simulator.run``): where the fleet comes back to a state it was in
with no event between, the rest of the way to the next event is that stretch again, listed once (a ``repeats``
entry) and passed at once; the timeline after the next event is the one stepping through every moment gives."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pytest

from engine import load_facts, load_rules, simulate
from engine.errors import Diagnostic
from engine.failover import loops
from engine.failover import simulate as simulation
from engine.inputs.events import load_events
from engine.karmada.gates import Controllers
from engine.results import Entry, EntryKind
from tests.gates import ON, ON_FLAGS

# shop/web may run on m1 only, and tolerates the NoExecute taint k2 for 30 s: once m1 has it, the taint manager
# evicts it at each 10 s sweep and the scheduler places it back there (the toleration passes the filter), for as
# long as the taint stands (Karmada does the same: pkg/controllers/cluster/taint_manager.go needEvictionWithCurrentTime
# evicts once tolerationSeconds ran out and syncCluster requeues every 10 s, while the TaintToleration filter,
# pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go, passes a NoExecute taint any toleration
# matches, whatever its seconds)
TOLERATED = """apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [m1]}
    clusterTolerations: [{key: k2, operator: Exists, effect: NoExecute, tolerationSeconds: 30}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec: {replicas: 1}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: m1}
status: {apiEnablements: [{groupVersion: apps/v1, resources: [{kind: Deployment, name: deployments}]}]}
"""

# a user's drain rule: a binding on a cluster with the taint k2 is evicted from it (no filter keeps the scheduler from
# placing it back there: the policy tolerates k2)
DRAIN = """rule drain {
  when taint t (t.key == "k2") and cluster c (c.name == t.cluster)
   and placement p (p.cluster == c.name) and binding b (b.namespace == p.namespace and b.name == p.binding)
  then evict b from c reason Drain "drain {c.name}"
}
"""


def _run(
    tmp_path: Path, events: str, controllers: Controllers = ON, rule: str = ""
) -> tuple[tuple[Entry, ...], list[Diagnostic]]:
    """simulate() on TOLERATED (its policy, and ``rule`` beside it) through ``events``: the timeline, the warnings."""
    (tmp_path / "fleet.yaml").write_text(TOLERATED)
    (tmp_path / "rule.fr").write_text(rule)
    (tmp_path / "events.yaml").write_text(events)
    start, planned = load_events(tmp_path / "events.yaml")
    said: list[Diagnostic] = []
    rule_set, fleet = load_rules([tmp_path / "fleet.yaml", tmp_path / "rule.fr"]), load_facts([tmp_path / "fleet.yaml"])
    return simulate(rule_set, fleet, start, planned, said.append, controllers), said


def _untaint_at(seconds: int) -> str:
    return (
        "start: 2026-12-02T10:00:00Z\nevents:\n- at: 10s\n  taint: {cluster: m1, key: k2, effect: NoExecute}\n"
        f"- at: {seconds}s\n  untaint: {{cluster: m1, key: k2, effect: NoExecute}}\n"
        f"- at: {seconds + 20}s\n  health: {{binding: shop/web-deployment, cluster: m1, status: Healthy}}\n"
    )


@pytest.mark.parametrize("untaint", [3 * 3600, 3 * 3600 + 3, 3 * 3600 + 5, 3 * 3600 + 7, 2000, 4 * 3600 + 1])
@pytest.mark.parametrize("timeout", ["", "graceful-eviction-timeout=30m"])
def test_a_loop_is_listed_once_and_the_timeline_after_it_is_the_one_stepped_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, untaint: int, timeout: str
) -> None:
    """The taint manager evicts shop/web from m1 every 10 s while the taint it tolerates for 30 s stands: once
    every time in the fleet is either recent or further back than every span the controllers compare (the task
    timeout, 10 m or 30 m; controllers.comparison_horizon), the state comes back every 10 s. The timeline then says
    `repeats` (after, every, bindings, until the untaint) and lists nothing until the untaint; what follows the
    untaint, wherever in the 10 s the untaint falls, is what stepping through every moment of the hours between
    gives."""
    controllers = Controllers.parse((*ON_FLAGS, timeout) if timeout else ON_FLAGS)
    events = _untaint_at(untaint)
    listed, said = _run(tmp_path, events, controllers)
    monkeypatch.setattr(loops.Loops, "seen", lambda *_: False)
    every, _ = _run(tmp_path, events, controllers)
    (repeats,) = [e for e in listed if e.kind is EntryKind.REPEATS]
    assert repeats.detail["every"] == "10s" and repeats.detail["bindings"] == ["shop/web-deployment"]
    horizon = 1801 if timeout else 601
    assert repeats.time - dt.datetime(2026, 12, 2, 10, 0, 10, tzinfo=dt.UTC) > dt.timedelta(seconds=horizon)
    until = dt.datetime(2026, 12, 2, 10, tzinfo=dt.UTC) + dt.timedelta(seconds=untaint)
    assert repeats.detail["until"] == until.strftime("%Y-%m-%dT%H:%M:%SZ")
    before = [e for e in listed if e.time <= repeats.time and e is not repeats]
    after = [e for e in listed if e.time >= until]
    assert listed == (*before, repeats, *after)
    assert before == [e for e in every if e.time <= repeats.time]
    assert after == [e for e in every if e.time >= until] and after[0].kind is EntryKind.UNTAINT
    assert len(listed) < len(every)
    (loop,) = [d for d in said if "repeats" in d.message]
    assert loop.message.startswith("shop/web-deployment: the timeline repeats from ")
    assert "every 10s, until the event at " in loop.message


def test_a_loop_with_no_event_to_end_it_ends_the_timeline(tmp_path: Path) -> None:
    """The taint stands to the end: the timeline ends where the loop is found, saying so (it used to step to the
    24 h horizon: a loop of a second, as an `evict` rule without its filter makes, was 86,400 steps, minutes and
    gigabytes). A user's drain rule evicts first; the taint manager then keeps the loop up."""
    events = "start: 2026-12-02T10:00:00Z\nevents:\n- at: 10s\n  taint: {cluster: m1, key: k2, effect: NoExecute}\n"
    entries, said = _run(tmp_path, events, rule=DRAIN)
    assert entries[-1].kind is EntryKind.REPEATS and "until" not in entries[-1].detail
    assert entries[-1].time < dt.datetime(2026, 12, 2, 11, tzinfo=dt.UTC)
    seconds = "taint-manager-toleration-seconds"  # the taint manager's rule: the taint's toleration ran out
    assert [e.detail.get("rule") for e in entries if e.kind is EntryKind.EVICTED][:2] == ["drain", seconds]
    (loop,) = [d for d in said if "repeats" in d.message]
    assert "every 10s, with no event to change it (Karmada's controllers" in loop.message


def test_a_loops_warning_names_its_bindings_and_the_rules_that_evict_in_it() -> None:
    """The words of a loop: its first bindings (and how many more), the rules whose evictions are in its stretch."""
    detail = {"after": "2026-12-02T10:00:00Z", "every": "1s", "bindings": ["a/x", "a/y", "b/z", "c/w"]}
    detail["rules"] = ["off-dev (rules.fr:6)"]
    simulator = object.__new__(simulation.Simulator)
    simulator.repeats = [Entry(dt.datetime(2026, 12, 2, 10, 0, 1, tzinfo=dt.UTC), EntryKind.REPEATS, "", "", detail)]
    (said,) = simulator.loop_warnings()
    assert said.message == (
        "a/x, a/y, b/z and 1 more: the timeline repeats from 2026-12-02T10:00:01Z: what happened after "
        "2026-12-02T10:00:00Z happens again every 1s, with no event to change it (Karmada's controllers and "
        "scheduler would keep it up; the timeline lists it once); evictions by off-dev (rules.fr:6)"
    )


def test_a_timeline_without_a_loop_says_nothing_of_one(tmp_path: Path) -> None:
    """The taint is tolerated for 30 s and goes after 20 s: nothing is evicted, nothing repeats."""
    entries, said = _run(tmp_path, _untaint_at(30))
    assert not any(e.kind in (EntryKind.REPEATS, EntryKind.EVICTED) for e in entries)
    assert not any("repeats" in d.message for d in said)


def test_an_evict_rule_without_its_filter_loops_every_second_and_the_timeline_ends(tmp_path: Path) -> None:
    """The differential failover timeline of seed 104 (tests/test_joins.py), its `off-dev` rule without the `reject`
    a user writes with it: bindings of team b are evicted from dev clusters and placed back every second between
    the events, and after the last one all day. The loop is found ten minutes after the last event (a taint's time
    is then past every span the controllers compare) and the timeline ends there, naming the rule."""
    from tests import test_joins

    rng = random.Random(1000 + 104)
    text = test_joins._failover_policy(rng)
    filter_at = text.index("rule dev-filter")
    assert "rule off-dev" in text
    (tmp_path / "rules.fr").write_text(text[:filter_at] + text[text.index("}", filter_at) + 1 :])
    rules, facts = load_rules([tmp_path / "rules.fr"]), load_facts(objects=test_joins._fleet(rng, (3, 9), (4, 16)))
    start = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    entries = simulate(rules, facts, start, test_joins._timeline(rng, facts, start), controllers=ON)
    last = entries[-1]
    assert last.kind is EntryKind.REPEATS and "until" not in last.detail
    assert last.time < start + dt.timedelta(hours=1)  # not the 24 h horizon, 86,400 steps away
    assert any(rule.startswith("off-dev (") for rule in last.detail["rules"])
