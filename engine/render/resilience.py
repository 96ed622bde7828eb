"""A resilience sweep (engine.review.resilience) as text, JSON, Markdown and SARIF 2.1.0."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from engine.errors import listed
from engine.render.diff import plural
from engine.render.sarif import Finding, log
from engine.review.impacts import FAILURES, Change, Impact, Move, ranked

COLUMNS = ("scenario", "failure", "unschedulable", "spread lost", "state lost", "replicas lost", "evicted", "moved")


def row(i: Impact) -> tuple[str, ...]:
    return (
        i.scenario.name,
        i.scenario.failure,
        str(len(i.unschedulable)),
        str(len(i.spread_lost)),
        str(len(i.state_lost)),
        str(i.replicas_lost),
        str(len(i.evicted)),
        str(len(i.moved)),
    )


def _list(items: Sequence[str]) -> str:
    return listed(items, 5)


def headline(impacts: Sequence[Impact]) -> str:
    failures = sorted({i.scenario.failure for i in impacts})
    harmful = [i for i in impacts if i.unschedulable]
    head = f"{plural(len(impacts), 'scenario')} ({', '.join(failures)}), ranked by blast radius; "
    if not harmful:
        return head + "no single scenario leaves a binding unschedulable"
    return head + f"{plural(len(harmful), 'scenario')} leave bindings unschedulable"


def to_text(impacts: Sequence[Impact], top: int | None = None) -> str:
    order = ranked(impacts)[:top] if top else ranked(impacts)
    rows = [COLUMNS, *(row(i) for i in order)]
    widths = [max(len(r[c]) for r in rows) for c in range(len(COLUMNS))]
    lines = [headline(impacts), ""]
    for r in rows:
        lines.append(
            "  ".join(
                v.ljust(w) if c < 2 else v.rjust(w) for c, (v, w) in enumerate(zip(r, widths, strict=True))
            ).rstrip()
        )
    details = [i for i in order if i.moves or i.spread_lost or i.state_lost or i.repeats]
    for i in details:
        lines.append("")
        lines.append(f"if {i.scenario.name} {FAILURES[i.scenario.failure]}:")
        lines += [f"  {move_line(m)}" for m in i.moves]
        if i.spread_lost:
            lines.append(f"  anti-affinity groups on fewer clusters: {_list(i.spread_lost)}")
        if i.dependencies_moved:
            lines.append(f"  dependencies following them: {_list(i.dependencies_moved)}")
        for binding, why in i.state_lost:
            lines.append(f"  state lost: {binding}: {why}")
        for loop in i.repeats:
            rules = f" (evictions by {', '.join(loop.rules)})" if loop.rules else ""
            lines.append(f"  never settles: {loop.said}: {_list(loop.bindings)}{rules}")
    return "\n".join(lines) + "\n"


def move_line(m: Move) -> str:
    """One binding a scenario moved: the clusters it left and took, how many it keeps, the state it carries."""
    to = ", ".join(m.took) if m.took else "nowhere: UNSCHEDULABLE" if m.unschedulable else "no other cluster"
    line = f"{m.binding}: {', '.join(m.left) or '(none)'} -> {to}"
    if m.stays:
        line += f" (stays on {plural(m.stays, 'other cluster')})" if m.left else f" (and stays on {m.stays})"
    if m.state:
        line += ", carrying " + ", ".join(f"{k}={v}" for k, v in m.state)
    if m.anyway:
        line += " (as with no cluster failing)"
    return line


# 2: a move names the clusters it left and took, and how many it keeps ("left", "took", "stays"; it listed all of
# them before and after as "from" and "to")
SCHEMA_VERSION = 2


def to_data(impacts: Sequence[Impact]) -> dict[str, Any]:
    return {"schemaVersion": SCHEMA_VERSION, "scenarios": [i.data() for i in ranked(impacts)]}


def to_json(impacts: Sequence[Impact]) -> str:
    return json.dumps(to_data(impacts), indent=2, ensure_ascii=False) + "\n"


def to_markdown(impacts: Sequence[Impact], top: int | None = None) -> str:
    order = ranked(impacts)[:top] if top else ranked(impacts)
    lines = [f"**Resilience**: {headline(impacts)}", ""]
    lines.append("| " + " | ".join(COLUMNS) + " |")
    lines.append("| " + " | ".join("---" if c < 2 else "---:" for c in range(len(COLUMNS))) + " |")
    for i in order:
        cells = [v.replace("|", "\\|") for v in row(i)]
        lines.append("| " + " | ".join(cells) + " |")
    harmful = [i for i in order if i.unschedulable]
    if harmful:
        lines.append("")
    for i in harmful:
        lines.append(f"- **{i.scenario.name}** ({i.scenario.failure}): unschedulable {_list(i.unschedulable)}")
    return "\n".join(lines) + "\n"


_RULES = {
    "resilience/unschedulable": "A single failure scenario leaves workloads unschedulable",
    "resilience/spread-lost": "A failure scenario leaves a workload anti-affinity group on fewer clusters",
    "resilience/state-lost": "A failure scenario evicts a workload whose state cannot be preserved",
}


def to_sarif(impacts: Sequence[Impact], version: str) -> str:
    findings = []
    for i in ranked(impacts):
        what = f"if {i.scenario.name} {FAILURES[i.scenario.failure]}"
        scenario = {"scenario": i.scenario.name, "failure": i.scenario.failure}
        for rule, level, subjects, text in (
            ("resilience/unschedulable", "error", i.unschedulable,
             f"{plural(len(i.unschedulable), 'workload')} left unschedulable"),
            ("resilience/spread-lost", "warning", i.spread_lost, "anti-affinity groups run on fewer clusters"),
            ("resilience/state-lost", "warning", tuple(b for b, _ in i.state_lost), "state preservation fails for"),
        ):  # fmt: skip
            if subjects:
                findings.append(
                    Finding(
                        rule,
                        level,
                        f"{what}, {text}: {_list(list(subjects))}",
                        i.sources,
                        (i.scenario.failure, i.scenario.name, *subjects),
                        {**scenario, "bindings": list(subjects)},
                    )
                )
    return log(_RULES, findings, version)


_WORDS = {
    "unschedulable": "unschedulable",
    "spread-lost": "anti-affinity groups losing spread",
    "state-lost": "state lost",
}


def _change_lines(c: Change) -> list[str]:
    lines = [f"{c.new.scenario.name} ({c.new.scenario.failure}):"]
    for gate, items in c.added.items():
        lines.append(f"  + {len(items)} more {_WORDS[gate]}: {_list(list(items))}")
    for gate, items in c.removed.items():
        lines.append(f"  - {len(items)} fewer {_WORDS[gate]}: {_list(list(items))}")
    return lines


def _changes_headline(changes: Sequence[Change]) -> str:
    worse = [c for c in changes if c.added]
    if not changes:
        return "the change leaves every failure scenario as harmful as before"
    return f"{plural(len(changes), 'scenario')} change, {len(worse)} for the worse"


def changes_text(changes: Sequence[Change]) -> str:
    lines = [_changes_headline(changes)]
    for c in changes:
        lines.append("")
        lines += _change_lines(c)
    return "\n".join(lines) + "\n"


def changes_json(changes: Sequence[Change]) -> str:
    return json.dumps({"changes": [c.data() for c in changes]}, indent=2, ensure_ascii=False) + "\n"


def changes_markdown(changes: Sequence[Change]) -> str:
    lines = [f"**Resilience**: {_changes_headline(changes)}"]
    for c in changes:
        for gate, items in c.added.items():
            lines.append(
                f"- if **{c.new.scenario.name}** fails ({c.new.scenario.failure}): "
                f"{plural(len(items), 'more workload' if gate != 'spread-lost' else 'more group')} "
                f"{_WORDS[gate]}: {_list(list(items))}"
            )
        for gate, items in c.removed.items():
            lines.append(
                f"- if **{c.new.scenario.name}** fails ({c.new.scenario.failure}): {len(items)} fewer "
                f"{_WORDS[gate]}: {_list(list(items))}"
            )
    return "\n".join(lines) + "\n"
