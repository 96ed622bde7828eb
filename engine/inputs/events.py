"""The events file of `fleetrules simulate`: what happens to the fleet, and when.

start: 2026-12-02T10:00:00Z
events:
- at: 30s
  health: {binding: streaming/fraud-detector-flinkdeployment, cluster: member1, status: Unhealthy}
- at: 5m
  taint: {cluster: member2, key: cluster.karmada.io/not-ready, effect: NoExecute}
- at: 6m
  untaint: {cluster: member2, key: cluster.karmada.io/not-ready, effect: NoExecute}
- at: 7m
  ready: {cluster: member2, status: "False"}   # the cluster controller's NoSchedule taints
- at: 8m
  condition: {cluster: member3, type: NetworkUnavailable, status: "True"}   # read by ClusterTaintPolicies
"""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass
from pathlib import Path

from engine.codes import Code
from engine.errors import Diagnostic, FactError, Span, error
from engine.inputs.facts import LAST_YEAR, TimeOutOfRange, parse_time
from engine.inputs.files import display_path
from engine.inputs.marks import Document
from engine.inputs.yaml import load_file
from engine.syntax.parse import MAX_DIGITS, parse_duration


class EventKind(enum.StrEnum):
    HEALTH = "health"  # a workload's health in one cluster: {binding, cluster, status}
    READY = "ready"  # a cluster's Ready condition: {cluster, status}
    TAINT = "taint"  # {cluster, key, value, effect}
    UNTAINT = "untaint"  # {cluster, key, effect}
    CONDITION = "condition"  # any of a cluster's status.conditions: {cluster, type, status}


EVENT_KINDS = tuple(k.value for k in EventKind)
# each kind's fields: (required, optional; engine.failover.simulate's defaults: status Unknown for health,
# True for ready, effect NoSchedule)
FIELDS: dict[EventKind, tuple[tuple[str, ...], tuple[str, ...]]] = {
    EventKind.HEALTH: (("binding", "cluster"), ("status",)),
    EventKind.READY: (("cluster",), ("status",)),
    EventKind.TAINT: (("cluster", "key"), ("value", "effect")),
    EventKind.UNTAINT: (("cluster", "key"), ("value", "effect")),
    EventKind.CONDITION: (("cluster", "type", "status"), ()),
}


# a condition's status (metav1.ConditionStatus), a workload's health (ResourceHealth); the first is the default
_STATUSES: dict[EventKind, tuple[str, ...]] = {
    EventKind.READY: ("True", "False", "Unknown"),
    EventKind.CONDITION: ("True", "False", "Unknown"),
    EventKind.HEALTH: ("Unknown", "Healthy", "Unhealthy"),
}


def _field_problems(index: int, kind: EventKind, raw: dict[object, object], document: Document) -> list[Diagnostic]:
    """The event's fields against its kind's: each unknown one, each required one missing."""
    required, optional = FIELDS[kind]
    known = (*required, *optional)
    body = raw[kind.value]
    assert isinstance(body, dict)
    out = []
    for key in body:
        if str(key) not in known:
            message = f"events[{index}].{kind}: unknown field {str(key)!r}; the fields of {kind} are {', '.join(known)}"
            out.append(error(message, document.span(body, key, of_key=True), code=Code.EVENTS))
    for name in required:
        if name not in body:
            out.append(
                error(f"events[{index}].{kind}.{name}: required", document.span(raw, kind.value), code=Code.EVENTS)
            )
    for key, value in body.items():
        if str(key) not in known:
            continue
        where = document.span(body, key)
        if not isinstance(value, str):  # `status: true` is YAML's boolean, not the condition's "True"
            hint = f' (quote it: "{value}")' if isinstance(value, (bool, int, float)) else ""
            out.append(
                error(
                    f"events[{index}].{kind}.{key}: expected a string{hint}, found {_kind(value)}",
                    where,
                    code=Code.EVENTS,
                )
            )
        elif not value and key != "value":  # a taint's value may be empty; no name, type or status is
            out.append(error(f"events[{index}].{kind}.{key}: expected a non-empty string", where, code=Code.EVENTS))
    for key in raw:
        if key not in ("at", kind.value):
            message = (
                f"events[{index}]: unknown key {str(key)!r}; an event has 'at' and one of {', '.join(EVENT_KINDS)}"
            )
            out.append(error(message, document.span(raw, key, of_key=True), code=Code.EVENTS))
    return out


def _kind(value: object) -> str:
    kinds = {dict: "a mapping", list: "a list", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class Event:
    at: dt.datetime
    kind: EventKind
    fields: dict[str, str]
    span: Span  # where the event stands in its file

    def error(self, message: str) -> FactError:
        return FactError([error(message, self.span, code=Code.EVENTS)])


def _offset(start: dt.datetime, seconds: int) -> dt.datetime | None:
    """``start`` plus ``seconds``, or None past the last year fleetrules computes with."""
    try:
        when = start + dt.timedelta(seconds=seconds)
    except OverflowError:
        return None
    return when if when.year <= LAST_YEAR else None


def load_events(path: Path) -> tuple[dt.datetime, list[Event]]:
    """The start time and the events in time order; FactError at the file, line and column of any problem."""
    shown = display_path(path)
    documents, problems = load_file(path, shown, "events files")
    if problems:
        raise FactError(problems)
    if len(documents) != 1:
        raise FactError([error("expected one YAML document", Span(shown, 1, 1, 1, 2), code=Code.EVENTS)])
    document = documents[0]
    data = document.value
    if not isinstance(data, dict) or not isinstance(data.get("events"), list):
        raise FactError(
            [error("expected a mapping with 'start' and a list 'events'", document.span(), code=Code.EVENTS)]
        )
    try:
        start = parse_time(str(data.get("start", "")))
    except ValueError as exc:
        found = data.get("start")
        why = str(exc) if isinstance(exc, TimeOutOfRange) else f"expected an RFC 3339 time, found {found!r}"
        raise FactError([error(f"start: {why}", document.span(data, "start"), code=Code.EVENTS)]) from None
    events: list[Event] = []
    out: list[Diagnostic] = []
    for index, raw in enumerate(data["events"]):
        where = document.span(data["events"], index)
        kinds = sorted(set(raw) & set(EVENT_KINDS)) if isinstance(raw, dict) else []
        at = str(raw.get("at", "")) if isinstance(raw, dict) else ""
        if len(kinds) != 1 or not isinstance(raw[kinds[0]], dict):
            out.append(
                error(
                    f"events[{index}]: an event is one of {', '.join(EVENT_KINDS)} with its fields",
                    where,
                    code=Code.EVENTS,
                )
            )
            continue
        # bare seconds, or 90s, 5m, 1h30m (no longer than a rule file's numbers: past Python's digits of an int)
        seconds = None if len(at) > MAX_DIGITS else int(at) if at.isdigit() else parse_duration(at)
        if seconds is None:
            message = f"events[{index}].at: expected a duration after start such as 90s or 5m, found {at!r}"
            out.append(error(message, document.span(raw, "at") if "at" in raw else where, code=Code.EVENTS))
            continue
        when = _offset(start, seconds)
        if when is None:
            message = f"events[{index}].at: {at} after start is past the year {LAST_YEAR}"
            out.append(error(message, document.span(raw, "at"), code=Code.EVENTS))
            continue
        kind = EventKind(kinds[0])
        problems = _field_problems(index, kind, raw, document)
        if problems:
            out += problems
            continue
        fields = {str(k): str(v) for k, v in raw[kinds[0]].items()}
        allowed = _STATUSES.get(kind, ())
        if allowed and fields.get("status", allowed[0]) not in allowed:
            body = raw[kinds[0]]
            message = f"events[{index}].{kind}.status: expected {', '.join(allowed)}, found {fields['status']!r}"
            out.append(
                error(message, document.span(body, next(k for k in body if str(k) == "status")), code=Code.EVENTS)
            )
            continue
        events.append(Event(when, kind, fields, where))
    if out:
        raise FactError(out)
    return start, sorted(events, key=lambda e: e.at)
