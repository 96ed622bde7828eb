"""The backend protocol keeps its engines inside (issue 47 item 3): what the scheduler answers does not depend on
how an engine keeps its decisions, nor on its taking the hint ``asking``.

The planner hands back the very objects while nothing a rule reads changes (a part of ``decision_parts``, a
decision made again alike: engine.backend.planned._reuse), and the filter stage (engine.schedule.feasibility)
updates each policy's shared result from the parts that are new objects alone. That is a saving, never a
condition of the answer: behind a session that copies every part and every decision at each question (so every
shared result is made whole) and ignores ``asking`` (so the scheduler drops what a binding's name exempts
itself), the same placements, rejections, timelines and sweep impacts come out, byte for byte. A shared result
updated wrongly from the parts that changed fails here (a cluster left rejected after its taint went).
"""

from __future__ import annotations

import copy
import datetime as dt
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from engine import evaluate, load_facts, load_rules, simulate, to_json
from engine.backend import Decision, Program, Session
from engine.compile.program import CompiledProgram
from engine.errors import NO_SPAN
from engine.inputs.events import Event, EventKind
from tests.gates import ON

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import fleets

ROOT = Path(__file__).resolve().parent.parent


def _copies(decisions: Sequence[Decision]) -> tuple[Decision, ...]:
    return tuple(copy.copy(d) for d in decisions)


class CopyingSession:
    """A session that answers as ``inner`` does, with new objects at every question, taking no hint."""

    def __init__(self, inner: Session) -> None:
        self.inner = inner

    def assert_fact(self, fact_type: str, props: Mapping[str, Any]) -> str:
        return self.inner.assert_fact(fact_type, props)

    def place(
        self, batch_id: str | None, fact_type: str, common: Mapping[str, Any], parts: Sequence[Mapping[str, Any]]
    ) -> str:
        return self.inner.place(batch_id, fact_type, common, parts)

    def retract(self, fact_id: str) -> None:
        self.inner.retract(fact_id)

    def decisions(self, owner: str, asking: str | None = None) -> Sequence[Decision]:
        return list(_copies(self.inner.decisions(owner)))  # every decision, whatever the binding asking

    def decision_parts(self, owner: str) -> tuple[Sequence[Decision], ...]:
        return tuple(_copies(part) for part in self.inner.decision_parts(owner))

    def revision(self, owner: str) -> int:
        return self.inner.revision(owner)

    def release(self, owner: str) -> None:
        self.inner.release(owner)

    def evictions(self) -> Sequence[Decision]:
        return _copies(self.inner.evictions())

    def fact(self, fact_id: str) -> Mapping[str, Any] | None:
        return self.inner.fact(fact_id)

    def derivation(self, fact_id: str) -> Decision | None:
        return self.inner.derivation(fact_id)

    def close(self) -> None:
        self.inner.close()


class CopyingProgram:
    def __init__(self, inner: Program) -> None:
        self.inner = inner
        self.compiled: CompiledProgram = inner.compiled

    def session(self, explained: bool = True) -> Session:
        return CopyingSession(self.inner.session(explained))


def _copying(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every program the pipeline registers (evaluations and sweeps alike) behind a copying session."""
    from engine import pipeline
    from engine.schedule.registry import program

    monkeypatch.setattr(pipeline, "program", lambda *args: CopyingProgram(program(*args)))


def _fleet(tmp_path: Path, shape: str, clusters: int = 30, workloads: int = 300) -> Path:
    path = tmp_path / f"{shape}.yaml"
    with path.open("w") as handle:
        fleets.write(fleets.SHAPES[shape](clusters, workloads), handle)
    return path


@pytest.mark.parametrize("shape", ["interleaved", "preferred", "spread", "unschedulable", "namespaces"])
def test_placements_do_not_depend_on_the_engine_keeping_objects(
    shape: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = load_facts([_fleet(tmp_path, shape)])
    rules = load_rules([])
    kept = to_json(evaluate(rules, facts, controllers=ON, now="2026-12-07T10:00:00Z"))
    _copying(monkeypatch)
    copied = to_json(evaluate(rules, facts, controllers=ON, now="2026-12-07T10:00:00Z"))
    assert copied == kept
    assert '"rejected"' in kept  # the fleet's filters rejected clusters: the shared results were read


@pytest.mark.parametrize("example", ["flink-ha", "training-colocation", "flink-checkpoint"])
def test_the_examples_do_not_depend_on_the_engine_keeping_objects(
    example: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = ROOT / "examples" / example
    facts = load_facts([folder / "facts"])
    rules = load_rules(sorted(folder.glob("*.fr")))
    kept = to_json(evaluate(rules, facts, controllers=ON, now="2026-12-07T10:00:00Z"))
    _copying(monkeypatch)
    assert to_json(evaluate(rules, facts, controllers=ON, now="2026-12-07T10:00:00Z")) == kept


def test_a_sweep_does_not_depend_on_the_engine_keeping_objects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A resilience sweep reads each policy's shared result again at every step, updated from the parts that
    changed: with every part new, every step reads it whole, to the same impacts."""
    from engine.review.impacts import scenarios
    from engine.review.resilience import sweep

    facts = load_facts([_fleet(tmp_path, "interleaved", 12, 60)])
    rules = load_rules([])
    plan = scenarios(facts.clusters)
    kept = [repr(i) for i in sweep(rules, facts, plan, controllers=ON)]
    _copying(monkeypatch)
    assert [repr(i) for i in sweep(rules, facts, plan, controllers=ON)] == kept


def test_a_timeline_does_not_depend_on_the_engine_keeping_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Taints and a cluster's Ready condition coming and going: each change makes the policies' shared results
    anew from the parts that changed; with every part new, they are made whole, to the same timeline."""
    facts = load_facts([_fleet(tmp_path, "interleaved", 12, 60)])
    rules = load_rules([])
    start = dt.datetime(2026, 12, 7, 10, tzinfo=dt.UTC)
    names = sorted(c.name for c in facts.clusters)

    def at(minutes: int, kind: EventKind, **fields: str) -> Event:
        return Event(start + dt.timedelta(minutes=minutes), kind, fields, NO_SPAN)

    events = [
        at(1, EventKind.TAINT, cluster=names[0], key="maintenance", effect="NoSchedule"),
        at(2, EventKind.TAINT, cluster=names[1], key="maintenance", effect="NoExecute"),
        at(3, EventKind.READY, cluster=names[2], status="False"),
        at(5, EventKind.UNTAINT, cluster=names[0], key="maintenance", effect="NoSchedule"),
        at(6, EventKind.UNTAINT, cluster=names[1], key="maintenance", effect="NoExecute"),
        at(8, EventKind.READY, cluster=names[2], status="True"),
    ]
    kept = [repr(e) for e in simulate(rules, facts, start, events, controllers=ON)]
    _copying(monkeypatch)
    assert [repr(e) for e in simulate(rules, facts, start, events, controllers=ON)] == kept
    assert any("evict" in e.lower() for e in kept)  # the NoExecute taint evicted: placements moved
