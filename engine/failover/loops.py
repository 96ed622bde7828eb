"""A timeline that repeats: the state of the fleet at a moment (``fleet_state``), with times the controllers no
longer compare told only by their order and phase (``Clock``), so that a simulation finds the moment it came back
to a state it had been in, and says the loop once instead of running it to its horizon.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Mapping
from dataclasses import fields, is_dataclass, replace
from typing import Any, Protocol

from engine.inputs.facts import (
    rfc3339,
)
from engine.karmada.controllers.world import (
    TAINT_EVICTION_RETRY,
    World,
    comparison_horizon,
)
from engine.results import Entry, EntryKind

State = tuple[Any, ...]  # what a fleet is at a moment, as fleet_state makes it


class Timeline(Protocol):
    """What finding a loop reads of a simulation (engine.failover.simulate.Simulator)."""

    entries: list[Entry]
    world: World
    due_now: bool


class Loops:
    """Finds where a timeline comes back to a state it was in with no event between (``Simulator.run``): from then
    on it is the same stretch again, every period, until an event changes it. A step's entries (their kinds,
    bindings, clusters and details) come back first; only then is the whole fleet compared, its times as of the
    clock (``Clock``): a fleet of 10,000 bindings is not fingerprinted at every step, and each state is kept as a
    128-bit digest of it, not whole (a loop that takes ten minutes to be found in a large fleet passes through
    hundreds of them)."""

    def __init__(self) -> None:
        self.looping: Entry | None = None  # the entry that said the loop going on now
        self.period = dt.timedelta(0)  # of the loop last found
        self._since = dt.datetime.min  # when the stretch that repeats began
        self._steps: dict[tuple[Any, ...], dict[bytes | None, dt.datetime]] = {}  # a step's entries → states, when

    def event(self) -> Entry | None:
        """An event comes: what was seen before it cannot come back without it. Returns the entry of the loop that
        was going on, if one was."""
        looping, self.looping, self._steps = self.looping, None, {}
        return looping

    def seen(self, simulator: Timeline, mark: int) -> bool:
        """Whether the step whose entries begin at ``mark`` brought the fleet back to a state it was in after an
        earlier step of the same entries (then ``said`` says so)."""
        entries = simulator.entries[mark:]
        if not entries:
            return False  # a step that did nothing: the fleet as it was
        signature = tuple((e.kind, e.binding, e.cluster, repr(sorted(e.detail.items()))) for e in entries)
        states = self._steps.setdefault(signature, {})
        now = simulator.world.now
        if not states:
            states[None] = now  # first seen: compared with the next time it comes back
            return False
        try:
            state = hashlib.blake2b(repr(fleet_state(simulator)).encode(), digest_size=16).digest()
        except TypeError:  # a value that cannot be compared so: no loop found (never a wrong one)
            return False
        earlier = states.get(state)
        if earlier is None:
            states[state] = now
            return False
        self._since, self.period = earlier, now - earlier
        return True

    def said(self, simulator: Timeline) -> Entry:
        """The ``repeats`` entry of the loop just found: from now, the stretch since the earlier state again."""
        world, since = simulator.world, self._since
        stretch = [e for e in simulator.entries if since < e.time <= world.now]
        bindings = sorted({e.binding for e in stretch if e.binding})
        rules = sorted({f"{e.detail['rule']} ({e.detail['source']})" for e in stretch if "rule" in e.detail})
        detail: dict[str, Any] = {
            "after": rfc3339(since),
            "every": f"{int(self.period.total_seconds())}s",
            "bindings": bindings,
        }
        if rules:
            detail["rules"] = rules
        self.looping = Entry(world.now, EntryKind.REPEATS, "", "", detail)
        return self.looping


def fleet_state(simulator: Timeline) -> State:
    """Everything the controllers and the scheduler read, as of the clock (``Clock``): equal for two moments means
    that what follows each is the same, one later than the other (the rules read no clock)."""
    world = simulator.world
    clock = Clock(world.now, comparison_horizon(world))
    return (
        simulator.due_now,
        clock.relative(world.clusters),
        clock.relative(world.bindings),  # a dict of its own: its items, sorted, as any mapping's
        clock.relative(world.works),
        clock.relative(world.unhealthy_since),
        clock.relative(world.health_since),
        frozenset(world.failing),
    )


class Clock:
    """Times as the controllers see them at ``now``: a recent one by its distance from the clock; one further back
    than every span they compare a time with the clock by (``horizon``: controllers.comparison_horizon) as itself,
    with its phase in the taint manager's resync period (past every test, it counts only through its order among
    times and that phase). No horizon: every time by its distance."""

    def __init__(self, now: dt.datetime, horizon: float | None) -> None:
        self.now, self.horizon = now, horizon

    def recent(self, t: dt.datetime) -> bool:
        return self.horizon is None or (self.now - t).total_seconds() <= self.horizon

    def relative(self, value: Any) -> Any:
        """``value`` as hashable data, its times as of the clock."""
        if isinstance(value, dt.datetime):
            return value - self.now if self.recent(value) else (value, (self.now - value) % TAINT_EVICTION_RETRY)
        if is_dataclass(value) and not isinstance(value, type):
            return (type(value).__name__, *(self.relative(getattr(value, f.name)) for f in fields(value)))
        if isinstance(value, Mapping):
            items = [(k, self.relative(v)) for k, v in value.items()]
            try:
                return tuple(sorted(items, key=lambda kv: kv[0]))
            except TypeError:
                return tuple(items)
        if isinstance(value, (list, tuple)):
            return tuple(self.relative(v) for v in value)
        if isinstance(value, (set, frozenset)):
            return frozenset(self.relative(v) for v in value)
        hash(value)  # TypeError for a value that cannot be compared as data
        return value


def shifted(value: Any, delta: dt.timedelta, clock: Clock) -> Any:
    """``value`` with each recent time in it (``clock``) ``delta`` later (the object itself where none is);
    TypeError for a value it cannot rebuild (a tuple of a type of its own)."""
    if isinstance(value, dt.datetime):
        return value + delta if clock.recent(value) else value
    if is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in fields(value):
            old = getattr(value, f.name)
            new = shifted(old, delta, clock)
            if new is not old:
                if not f.init:
                    raise TypeError(f"{type(value).__name__}.{f.name} is not set by its constructor")
                changes[f.name] = new
        return replace(value, **changes) if changes else value
    if isinstance(value, (tuple, list)):
        items = [shifted(v, delta, clock) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        if type(value) not in (tuple, list):
            raise TypeError(f"a {type(value).__name__} cannot be rebuilt")
        return type(value)(items)
    if isinstance(value, Mapping):
        moved = {k: shifted(v, delta, clock) for k, v in value.items()}
        if all(moved[k] is v for k, v in value.items()):
            return value
        if type(value) is not dict:
            raise TypeError(f"a {type(value).__name__} cannot be rebuilt")
        return moved
    return value
