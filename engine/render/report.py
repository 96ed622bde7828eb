"""`fleetrules report`: one self-contained, offline HTML page (Jinja2 template, inline CSS and SVG, nothing
loaded at view time): the placement matrix (bindings by clusters: selected, feasible, rejected coloured by
rule, the reasons on hover), the failover timeline (each binding's clusters over time, evictions, Work
deletions and tasks ending marked) and the diff of two policy versions."""

from __future__ import annotations

import colorsys
import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from engine.inputs.facts import parse_time, rfc3339
from engine.render.diff import clusters_text
from engine.render.resilience import COLUMNS, headline, row
from engine.results import Entry, EntryKind, Placement, Reason, Result, Summarized, summarize
from engine.review.diff import Diff
from engine.review.impacts import Impact, ranked

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


# the matrix shown when the page opens (and all of it without script): this many bindings by this many clusters;
# past them, the page's script shows the rest, filtered and paged, from the data in the page
SHOWN_ROWS = 100
SHOWN_COLUMNS = 60
WORST = 20  # the bindings the summary names first: unschedulable ones


def _cell(p: Placement, cluster: str, rules: dict[str, int]) -> dict[str, Any]:
    reasons = p.rejected.get(cluster, ())
    if cluster in p.clusters:
        replicas = p.replicas.get(cluster, 0)
        return {"css": "selected", "mark": str(replicas) if replicas else "✓", "title": "selected"}
    if reasons:
        return {"css": f"rule-{rules[reasons[0].rule]}", "mark": "×", "title": _rejected(reasons)}
    if cluster in p.feasible:
        return {"css": "feasible", "mark": "", "title": f"feasible, score {p.scores.get(cluster)}"}
    return {"css": "unknown", "mark": "", "title": "not evaluated (settled)" if p.settled else ""}


def _rejected(reasons: tuple[Reason, ...]) -> str:
    return "rejected: " + "; ".join(f"{r.message} [{r.rule} at {r.source}]" for r in reasons)


def _parts(p: Placement) -> tuple[Mapping[str, tuple[Reason, ...]], Mapping[str, tuple[Reason, ...] | None]]:
    """A placement's rejections as the shared part its policy's bindings have in common and its own changes to it
    (engine.schedule.views); a plain mapping is all its own."""
    return p.rejected.parts() if isinstance(p.rejected, Summarized) else ({}, dict(p.rejected))


def _matrix(result: Result, rules: dict[str, int], groups: Mapping[str, str]) -> dict[str, Any]:
    """The placement matrix: its first ``SHOWN_ROWS`` bindings by ``SHOWN_COLUMNS`` clusters as HTML (the whole
    matrix of a small fleet), and every binding and cluster as compact data for the page's script (``_data``)."""
    placements = sorted(result.placements, key=lambda p: p.binding)
    names: set[str] = set(groups)
    shared: dict[int, Mapping[str, tuple[Reason, ...]]] = {}
    for p in placements:
        base, changes = _parts(p)
        shared.setdefault(id(base), base)
        names.update(p.clusters, p.feasible, changes)
    for base in shared.values():  # each policy's shared rejections walked once, not once per binding
        names.update(base)
    clusters = sorted(names)
    shown = clusters[:SHOWN_COLUMNS]
    rows = []
    for p in placements[:SHOWN_ROWS]:
        cells = [{**_cell(p, c, rules), "cluster": c} for c in shown]
        rows.append(
            {"binding": p.binding, "policy": p.policy or "", "unschedulable": p.unschedulable,
             "message": p.message, "cells": cells}
        )  # fmt: skip
    whole = len(placements) <= SHOWN_ROWS and len(clusters) <= SHOWN_COLUMNS
    return {
        "clusters": shown,
        "rows": rows,
        "whole": whole,
        "total": {"bindings": len(placements), "clusters": len(clusters)},
        "page_rows": SHOWN_ROWS,
        "page_columns": SHOWN_COLUMNS,
        "data": None if whole else json.dumps(_data(placements, clusters, rules, groups), separators=(",", ":")),
    }


def _data(
    placements: Sequence[Placement], clusters: Sequence[str], rules: dict[str, int], groups: Mapping[str, str]
) -> dict[str, Any]:
    """Every binding by every cluster, sized for a fleet: clusters by index; per binding its selected clusters
    (with replicas), its feasible ones (with scores), and its rejected ones as its policy's shared rejections
    (stored once, by reason: a policy's cluster affinity rejects the same 950 clusters for each of its thousands
    of bindings) with the binding's own changes: clusters no longer rejected, and clusters with their reason."""
    at = {c: i for i, c in enumerate(clusters)}
    reasons: dict[tuple[Reason, ...], int] = {}  # a cluster's reasons: the cell's colour (the first's rule), title
    known: dict[int, int] = {}  # the same by the tuple's identity: most clusters share one (Feasibility.alone)
    bases: dict[int, int] = {}
    shared: list[list[list[int]]] = []  # per shared part: [reasons, cluster, cluster, …] groups

    def reason(rs: tuple[Reason, ...]) -> int:
        found = known.get(id(rs))
        if found is None:
            found = known[id(rs)] = reasons.setdefault(rs, len(reasons))
        return found

    rows = []
    for p in placements:
        base, changes = _parts(p)
        ref = -1
        if base:
            ref = bases.get(id(base), -1)
            if ref < 0:
                ref = bases[id(base)] = len(shared)
                by_reason: dict[int, list[int]] = {}
                for cluster, rs in base.items():
                    if rs:
                        by_reason.setdefault(reason(rs), []).append(at[cluster])
                shared.append([[r, *members] for r, members in by_reason.items()])
        removed = [at[c] for c, rs in changes.items() if not rs]
        added = [[at[c], reason(rs)] for c, rs in changes.items() if rs]
        rows.append(
            [
                p.binding,
                p.policy or "",
                [[at[c], p.replicas.get(c, 0)] for c in p.clusters],
                [[at[c], p.scores.get(c, 0)] for c in p.feasible if c not in p.clusters],
                ref,
                removed,
                added,
                p.message if p.unschedulable else "",
                1 if p.settled else 0,
            ]
        )
    return {
        "clusters": list(clusters),
        "groups": [groups.get(c, "") for c in clusters],
        "reasons": [[rules[rs[0].rule], _rejected(rs)] for rs in reasons],
        "shared": shared,
        "rows": rows,
    }


def _summary(result: Result, groups: Mapping[str, str]) -> dict[str, Any]:
    """What the page opens on: per policy its bindings, placed and unschedulable; per cluster group (region, or
    cluster where there are none) the clusters and the bindings placed there; the worst bindings first."""
    policies: dict[str, dict[str, int]] = {}
    placed: dict[str, int] = {}
    members: dict[str, set[str]] = {}
    for c, g in groups.items():
        members.setdefault(g, set()).add(c)
    for p in result.placements:
        counts = policies.setdefault(p.policy or "(none)", {"bindings": 0, "placed": 0, "unschedulable": 0})
        counts["bindings"] += 1
        counts["placed"] += bool(p.clusters)
        counts["unschedulable"] += p.unschedulable
        for g in {groups.get(c, c) for c in p.clusters}:
            placed[g] = placed.get(g, 0) + 1
    worst = sorted((p for p in result.placements if p.unschedulable), key=lambda p: p.binding)
    by_group = [
        {"group": g, "clusters": len(members.get(g, ())) or 1, "bindings": n} for g, n in sorted(placed.items())
    ]
    return {
        "bindings": len(result.placements),
        "unschedulable": sum(p.unschedulable for p in result.placements),
        "policies": [{"policy": k, **v} for k, v in sorted(policies.items())],
        "groups": by_group,
        "grouped_by": "region" if any(groups.values()) else "cluster",
        "worst": [{"binding": p.binding, "message": p.message} for p in worst[:WORST]],
        "more_worst": max(0, len(worst) - WORST),
    }


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
    ticks = [{"x": x(start + (end - start) * i / TICKS), "label": _offset(((end - start) * i / TICKS).total_seconds())}
             for i in range(TICKS + 1)]  # fmt: skip
    return {"start": rfc3339(start), "end": rfc3339(end), "width": WIDTH, "lanes": lanes, "ticks": ticks}


TICKS = 6  # labelled marks on the timeline's time axis


def _offset(seconds: float) -> str:
    """A time after the start as the axis labels it: +90s, +5m, +1h30m."""
    whole = int(seconds)
    if whole < 120:
        return f"+{whole}s"
    hours, minutes = divmod(whole // 60, 60)
    return f"+{hours}h{minutes:02d}m" if hours else f"+{minutes}m"


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
    groups: Mapping[str, str] | None = None,
) -> str:
    """The page; each part is left out when its input is None. ``groups``: each cluster's group (its region), by
    which the summary counts and the matrix filters."""
    groups = {c: g for c, g in (groups or {}).items() if g}
    names = sorted({r.reason.rule for p in (result.placements if result else ()) for r in summarize(p.rejected)})
    index = {name: i for i, name in enumerate(names)}
    return _ENV.get_template("report.html.j2").render(
        title=title,
        version=version,
        now=rfc3339(result.now) if result and result.now else "",
        rules=[_Rule(n, _colour(i, len(names))) for i, n in enumerate(names)],
        matrix=_matrix(result, index, groups) if result is not None else None,
        summary=_summary(result, groups) if result is not None else None,
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
