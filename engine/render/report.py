"""`fleetrules report`: one self-contained, offline HTML page (Jinja2 template, inline CSS and SVG, nothing
loaded at view time): the placement matrix (bindings by clusters: selected, feasible, rejected coloured by
rule, the reasons on hover), the failover timeline (each binding's clusters over time, evictions, Work
deletions and tasks ending marked) and the diff of two policy versions."""

from __future__ import annotations

import colorsys
import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from engine.inputs.facts import parse_time, rfc3339
from engine.render.diff import clusters_text
from engine.render.resilience import COLUMNS, headline, row
from engine.results import Entry, EntryKind, Result
from engine.review.diff import Diff
from engine.review.resilience import Impact, ranked

WIDTH = 720  # pixels of the timeline's time axis
_LANE = 18
_ENV = Environment(loader=PackageLoader("engine.render", "templates"), autoescape=select_autoescape(["j2", "html"]))


def _colour(index: int, count: int) -> str:
    """Distinct light colours, one per rule, in a fixed order (the same rules give the same colours)."""
    r, g, b = colorsys.hls_to_rgb((index / max(count, 1) * 0.85 + 0.02) % 1.0, 0.82, 0.65)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


@dataclass(frozen=True)
class _Rule:
    name: str
    colour: str


def _matrix(result: Result, rules: dict[str, int]) -> dict[str, Any]:
    clusters = sorted({c for p in result.placements for c in (*p.clusters, *p.feasible, *p.rejected)})
    rows = []
    for p in sorted(result.placements, key=lambda p: p.binding):
        cells = []
        selected, feasible = set(p.clusters), set(p.feasible)
        for cluster in clusters:
            reasons = p.rejected.get(cluster, ())
            if cluster in selected:
                replicas = p.replicas.get(cluster, 0)
                cells.append({"css": "selected", "mark": str(replicas) if replicas else "✓", "title": "selected"})
            elif reasons:
                title = "; ".join(f"{r.message} [{r.rule} at {r.source}]" for r in reasons)
                cells.append({"css": f"rule-{rules[reasons[0].rule]}", "mark": "", "title": title})
            elif cluster in feasible:
                score = p.scores.get(cluster)
                cells.append({"css": "feasible", "mark": "", "title": f"feasible, score {score}"})
            else:  # a settled binding: the scheduler did not run it
                cells.append({"css": "unknown", "mark": "", "title": "not evaluated (settled)" if p.settled else ""})
            cells[-1]["cluster"] = cluster
        rows.append(
            {
                "binding": p.binding,
                "policy": p.policy or "",
                "unschedulable": p.unschedulable,
                "message": p.message,
                "cells": cells,
            }
        )
    return {"clusters": clusters, "rows": rows}


def _timeline(
    entries: Sequence[Entry], start: dt.datetime, initial: Mapping[str, tuple[str, ...]] | None = None
) -> dict[str, Any]:
    """``initial``: each binding's clusters at the start (spec.clusters), before any entry moves it."""
    times = [e.time for e in entries] or [start]
    end = max(max(times), start + dt.timedelta(minutes=1))
    span = (end - start).total_seconds()

    def x(t: dt.datetime) -> float:
        return round(150 + WIDTH * (t - start).total_seconds() / span, 1)

    placed: dict[str, list[tuple[dt.datetime, tuple[str, ...]]]] = {}
    marks: dict[str, list[dict[str, Any]]] = {}
    loops: dict[str, list[dict[str, Any]]] = {}  # a loop listed once (``repeats``): a band over its bindings' lanes
    for e in entries:
        if e.kind is EntryKind.REPEATS:
            until = e.detail.get("until")
            to = x(parse_time(str(until))) if until else x(end) + 12  # no event ends it: past the last moment
            title = f"repeats from {rfc3339(e.time)}: the stretch after {e.detail.get('after')}, every "
            title += f"{e.detail.get('every')}, " + (f"until {until}" if until else "with no event to end it")
            band = {"x": x(e.time), "width": round(max(to - x(e.time), 2), 1), "title": title}
            for binding in e.detail.get("bindings", ()):
                loops.setdefault(str(binding), []).append(band)
    touched = {e.binding for e in entries if e.binding} | set(loops)
    for binding, clusters in sorted((initial or {}).items()):
        if binding in touched and clusters:  # the bindings the timeline is about, where they ran at first
            placed[binding] = [(start, clusters)]
    for e in entries:
        if not e.binding:
            continue
        if e.kind in (EntryKind.SCHEDULED, EntryKind.UNSCHEDULABLE):
            placed.setdefault(e.binding, []).append((e.time, tuple(e.detail.get("clusters", ()))))
        glyph = {EntryKind.EVICTED: "▼", EntryKind.WORK_DELETED: "✕", EntryKind.TASK_REMOVED: "○"}.get(e.kind)
        if glyph is not None:
            title = f"{rfc3339(e.time)} {e.kind} {e.cluster}"
            marks.setdefault(e.binding, []).append(
                {"time": e.time, "glyph": glyph, "kind": str(e.kind), "title": title}
            )
    lanes = []
    for binding in sorted(set(placed) | set(marks)):
        changes = placed.get(binding, [])
        names = sorted({c for _, cs in changes for c in cs})
        row = {c: i for i, c in enumerate(names)}
        bars = []
        for i, (at, chosen) in enumerate(changes):
            until = changes[i + 1][0] if i + 1 < len(changes) else end
            for c in chosen:
                bars.append(
                    {
                        "x": x(at),
                        "y": 4 + row[c] * _LANE,
                        "width": max(round(x(until) - x(at), 1), 2),
                        "colour": _colour(row[c], len(names)),
                        "cluster": c,
                        "title": f"{c} from {rfc3339(at)}",
                    }
                )
        lane_marks = [{**m, "x": x(m["time"]) - 4, "y": 14 + len(names) * _LANE} for m in marks.get(binding, [])]
        height, bands = 24 + len(names) * _LANE, loops.get(binding, [])
        lanes.append({"binding": binding, "bars": bars, "marks": lane_marks, "height": height, "loops": bands})
    return {"start": rfc3339(start), "end": rfc3339(end), "width": WIDTH, "lanes": lanes}


def _diff(d: Diff) -> dict[str, Any]:
    changes = [
        {
            "binding": c.binding,
            "before": clusters_text(c.before, c.was_unschedulable),
            "after": clusters_text(c.after, c.is_unschedulable),
            "unschedulable": c.is_unschedulable,
            "categories": ", ".join(sorted(c.categories())),
            "rules": ", ".join(c.rules),
        }
        for c in d.changes
    ]
    moved = sum(1 for c in d.changes if c.moved)
    summary = f"{len(d.changes)} binding{'s' if len(d.changes) != 1 else ''} changed, {moved} moved"
    return {"changes": changes, "summary": summary}


def report_html(
    version: str,
    result: Result | None = None,
    timeline: tuple[Sequence[Entry], dt.datetime, Mapping[str, tuple[str, ...]]] | None = None,
    diff: Diff | None = None,
    title: str = "fleetrules report",
    resilience: Sequence[Impact] | None = None,
) -> str:
    """The page; each part is left out when its input is None."""
    names = sorted({r.rule for p in (result.placements if result else ()) for rs in p.rejected.values() for r in rs})
    index = {name: i for i, name in enumerate(names)}
    return _ENV.get_template("report.html.j2").render(
        title=title,
        version=version,
        now=rfc3339(result.now) if result and result.now else "",
        rules=[_Rule(n, _colour(i, len(names))) for i, n in enumerate(names)],
        matrix=_matrix(result, index) if result is not None else None,
        timeline=_timeline(*timeline) if timeline is not None else None,
        diff=_diff(diff) if diff is not None else None,
        resilience=_resilience(resilience) if resilience is not None else None,
    )


def _resilience(impacts: Sequence[Impact]) -> dict[str, Any]:
    rows = [
        {"cells": row(i), "harm": bool(i.unschedulable), "unschedulable": ", ".join(i.unschedulable)}
        for i in ranked(impacts)
    ]
    return {"headline": headline(impacts), "columns": COLUMNS, "rows": rows}
