"""Rule tests: ``*_test.yaml`` files next to the rules, run by ``fleetrules test``.

    rules: [policy.fr]           # relative to the test file
    facts: [facts]               # files or directories; `objects:` adds inline Karmada objects
    now: 2026-12-02T10:02:01Z    # optional: evaluate failover at this time
    cases:
    - name: pipelines of a group never share a cluster
      expect:
        placements:
          streaming/orders-a-flinkdeployment: {clusters: [member1]}
          streaming/orders-d-flinkdeployment: {unschedulable: true}
        rejected:                # the rules that reject each cluster, exactly
          streaming/orders-b-flinkdeployment: {member1: [workload-anti-affinity]}
        evictions:               # in order; each item's fields must match
        - {binding: streaming/x-deployment, cluster: member1, reason: ApplicationFailure}

A case may override ``rules``, ``facts``, ``objects`` and ``now``.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import yaml

from engine.errors import FleetrulesError
from engine.evaluate import evaluate
from engine.facts import load_facts, parse_time
from engine.load import display_path, expand, load_rules
from engine.program import program
from engine.results import Result

TEST_SUFFIX = "_test.yaml"
_CASE_KEYS = {"name", "rules", "facts", "objects", "now", "expect"}
_EXPECT_KEYS = {"placements", "rejected", "evictions"}


@dataclass(frozen=True)
class Outcome:
    file: str
    name: str
    passed: bool
    diff: str = ""
    error: str = ""


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)
    rules: set[str] = field(default_factory=set)  # every rule of the rule sets tested
    fired: set[str] = field(default_factory=set)  # the rules some case made fire

    @property
    def failed(self) -> int:
        return sum(not o.passed for o in self.outcomes)


def find_tests(paths: Sequence[str | Path]) -> list[Path]:
    return expand(paths, (TEST_SUFFIX,))


def _actual(result: Result, expect: dict[str, Any]) -> dict[str, Any]:
    """The actual values of exactly what the case expects, in the same shape."""
    out: dict[str, Any] = {}
    placements = {p.binding: p for p in result.placements}
    if "placements" in expect:
        out["placements"] = {}
        for key, wanted in (expect["placements"] or {}).items():
            p = placements.get(key)
            if p is None:
                out["placements"][key] = "no such placement"
                continue
            values = {"clusters": list(p.clusters), "feasible": list(p.feasible), "unschedulable": p.unschedulable}
            values["scores"] = {c: p.scores.get(c) for c in (wanted or {}).get("scores", {})}
            out["placements"][key] = {k: values.get(k, "unknown field") for k in (wanted or {})}
    if "rejected" in expect:
        out["rejected"] = {}
        for key, clusters in (expect["rejected"] or {}).items():
            p = placements.get(key)
            out["rejected"][key] = {
                c: sorted({r.rule for r in (p.rejected.get(c, ()) if p else ())}) for c in (clusters or {})
            }
    if "evictions" in expect:
        wanted_list = expect["evictions"] or []
        actual = []
        for index, e in enumerate(result.evictions):
            flat = {"binding": e.get("binding"), "cluster": e.get("cluster"), "event": e.get("event")}
            flat |= e.get("task", {}) | ({"error": e["error"]} if "error" in e else {})
            wanted = wanted_list[index] if index < len(wanted_list) and isinstance(wanted_list[index], dict) else {}
            actual.append({k: flat.get(k) for k in wanted} or flat)
        out["evictions"] = actual
    return out


def _normalise(expect: dict[str, Any]) -> dict[str, Any]:
    rejected = expect.get("rejected")
    if isinstance(rejected, dict):
        expect = dict(expect)
        expect["rejected"] = {b: {c: sorted(rs or []) for c, rs in (cs or {}).items()} for b, cs in rejected.items()}
    return expect


def _dump(data: Any) -> list[str]:
    return yaml.safe_dump(data, sort_keys=True, default_flow_style=False).splitlines(keepends=True)


def _case(test_file: Path, shown: str, defaults: dict[str, Any], case: Any, index: int, report: Report) -> Outcome:
    if not isinstance(case, dict):
        return Outcome(shown, f"case {index + 1}", False, error="a case is a mapping with name and expect")
    name = str(case.get("name", f"case {index + 1}"))
    unknown = set(case) - _CASE_KEYS
    if unknown:
        return Outcome(shown, name, False, error=f"unknown field(s) {', '.join(sorted(unknown))}")
    merged = defaults | case
    expect = case.get("expect")
    if not isinstance(expect, dict) or not expect or set(expect) - _EXPECT_KEYS:
        return Outcome(shown, name, False, error=f"expect: a mapping of {', '.join(sorted(_EXPECT_KEYS))}")
    base = test_file.parent
    try:
        rules = load_rules([base / str(r) for r in merged.get("rules") or []])
        facts = load_facts([base / str(f) for f in merged.get("facts") or []], merged.get("objects") or [])
        now = parse_time(str(merged["now"])) if merged.get("now") else None
        result = evaluate(rules, facts, now)
    except (FleetrulesError, ValueError) as exc:
        message = exc.render() if isinstance(exc, FleetrulesError) else str(exc)
        return Outcome(shown, name, False, error=message)
    policies = tuple(rules.policies)
    report.rules |= {r.name for r in program(policies, tuple(rules.rules)).rules}
    for p in result.placements:
        report.fired |= {r.rule for rs in p.rejected.values() for r in rs}
        report.fired |= {e.rule for es in p.explanations.values() for e in es}
    report.fired |= {str(e.get("rule")) for e in result.evictions if e.get("rule")}
    expected = _normalise(expect)
    actual = _actual(result, expected)
    if actual == expected:
        return Outcome(shown, name, True)
    diff = "".join(difflib.unified_diff(_dump(expected), _dump(actual), "expected", "actual"))
    return Outcome(shown, name, False, diff=diff)


def run_tests(paths: Sequence[str | Path]) -> Report:
    report = Report()
    for test_file in find_tests(paths):
        shown = display_path(test_file)
        try:
            data = yaml.safe_load(test_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            report.outcomes.append(Outcome(shown, "(file)", False, error=f"cannot read: {exc}"))
            continue
        if not isinstance(data, dict) or not isinstance(data.get("cases"), list) or not data["cases"]:
            report.outcomes.append(Outcome(shown, "(file)", False, error="expected a mapping with a list 'cases'"))
            continue
        defaults = {k: data[k] for k in ("rules", "facts", "objects", "now") if k in data}
        for index, case in enumerate(data["cases"]):
            report.outcomes.append(_case(test_file, shown, defaults, case, index, report))
    return report


def text(report: Report) -> str:
    lines, current = [], None
    for o in report.outcomes:
        if o.file != current:
            lines.append(o.file)
            current = o.file
        lines.append(f"  {'PASS' if o.passed else 'FAIL'} {o.name}")
        detail = o.error or o.diff
        lines += [f"      {line}" for line in detail.rstrip("\n").splitlines()] if detail else []
    never = sorted(report.rules - report.fired)
    if never:
        lines.append(f"rules no test case made fire ({len(never)} of {len(report.rules)}): {', '.join(never)}")
    lines.append(f"{len(report.outcomes) - report.failed} passed, {report.failed} failed")
    return "\n".join(lines) + "\n"


def junit(report: Report) -> str:
    cases = []
    for o in report.outcomes:
        body = ""
        if not o.passed:
            message = quoteattr(o.error or "expectation not met")
            body = f"<failure message={message}>{escape(o.error or o.diff)}</failure>"
        cases.append(f"  <testcase classname={quoteattr(o.file)} name={quoteattr(o.name)}>{body}</testcase>")
    head = f'<testsuite name="fleetrules" tests="{len(report.outcomes)}" failures="{report.failed}">'
    return "\n".join(['<?xml version="1.0" encoding="UTF-8"?>', head, *cases, "</testsuite>"]) + "\n"
