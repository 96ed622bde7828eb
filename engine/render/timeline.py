"""A failover timeline as text, one line per entry, a task's fields indented under it."""

from __future__ import annotations

import datetime as dt
import json
import textwrap
from collections.abc import Iterator, Sequence
from typing import Any

from engine.inputs.facts import rfc3339, task_data
from engine.results import Entry


def show(value: Any) -> str:
    """A task's or entry's field value in text: true/false, {k=v, …}, [a, b]."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={v}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def timeline_text(entries: Sequence[Entry], start: dt.datetime) -> str:
    return "".join(TimelineWriter("text", start).whole(entries))


class TimelineWriter:
    """A timeline in ``text`` or ``json``, written in pieces as a simulation makes it (``piece`` for each, then
    ``end``): the same bytes as the whole written at once (``whole``), without the whole in memory."""

    def __init__(self, form: str, start: dt.datetime) -> None:
        self.form, self.start, self.written = form, start, 0

    def whole(self, entries: Sequence[Entry]) -> Iterator[str]:
        yield self.piece(entries)
        yield self.end()

    def piece(self, entries: Sequence[Entry]) -> str:
        if not entries:
            return ""
        head = ""
        if self.form == "json":
            if not self.written:
                head = '{\n  "start": ' + json.dumps(rfc3339(self.start)) + ',\n  "timeline": ['
            items = (textwrap.indent(json.dumps(e.data(), indent=2), "    ") for e in entries)
            text = head + ("," if self.written else "") + "\n" + ",\n".join(items)
        else:
            text = "\n".join(_lines(entries, self.start)) + "\n"
        self.written += len(entries)
        return text

    def end(self) -> str:
        if self.form == "json":
            if not self.written:
                return json.dumps({"start": rfc3339(self.start), "timeline": []}, indent=2) + "\n"
            return "\n  ]\n}\n"
        return "" if self.written else "\n"


def _lines(entries: Sequence[Entry], start: dt.datetime) -> list[str]:
    lines = []
    for e in entries:
        offset = int((e.time - start).total_seconds())
        stamp = f"{rfc3339(e.time)} (+{offset}s)"
        what = str(e.kind) + (f" {e.binding}" if e.binding else "") + (f" @ {e.cluster}" if e.cluster else "")
        details = ", ".join(f"{k}={show(v)}" for k, v in e.detail.items() if k != "task")
        lines.append(f"{stamp}  {what}" + (f"  {details}" if details else ""))
        if e.task is not None:
            lines += [f"    {k}: {show(v)}" for k, v in task_data(e.task).items()]
    return lines
