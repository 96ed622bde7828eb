"""A failover timeline as text, one line per entry, a task's fields indented under it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
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
    lines = []
    for e in entries:
        offset = int((e.time - start).total_seconds())
        stamp = f"{rfc3339(e.time)} (+{offset}s)"
        what = str(e.kind) + (f" {e.binding}" if e.binding else "") + (f" @ {e.cluster}" if e.cluster else "")
        details = ", ".join(f"{k}={show(v)}" for k, v in e.detail.items() if k != "task")
        lines.append(f"{stamp}  {what}" + (f"  {details}" if details else ""))
        if e.task is not None:
            lines += [f"    {k}: {show(v)}" for k, v in task_data(e.task).items()]
    return "\n".join(lines) + "\n"
