"""SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format) for check, test, diff and resilience: what
GitHub code scanning and other CI tools read. One run per log, the rules named in the driver, results with
a level, a message, locations and a fingerprint that stays the same while the finding does."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.errors import Diagnostic, Span, file_line
from engine.render.diff import clusters_text
from engine.review.diff import Diff
from engine.review.testing import Report

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = ("error", "warning", "note", "none")


@dataclass(frozen=True)
class Finding:
    rule: str  # a key of the log's rules
    level: str  # one of LEVELS
    message: str
    locations: tuple[str | Span, ...] = ()  # "FILE:LINE" or a span
    identity: tuple[str, ...] = ()  # what makes the finding the same finding (its fingerprint)
    properties: Mapping[str, Any] = field(default_factory=dict)


def _location(where: str | Span) -> dict[str, Any]:
    if isinstance(where, Span):
        region: dict[str, int] = {}
        if where.line > 0:
            region = {"startLine": where.line, "startColumn": max(where.column, 1)}
            if where.end_line >= where.line and where.end_column > 0:
                region |= {"endLine": where.end_line, "endColumn": max(where.end_column, 1)}
        physical: dict[str, Any] = {"artifactLocation": {"uri": where.file}}
    else:
        path, line = file_line(where)
        region = {"startLine": line} if line > 0 else {}
        physical = {"artifactLocation": {"uri": path if region else where}}
    if region:
        physical["region"] = region
    return {"physicalLocation": physical}


def log(rules: Mapping[str, str], findings: Sequence[Finding], version: str) -> str:
    """The SARIF log of ``findings``; ``rules``: rule id → its short description."""
    results = []
    for f in findings:
        identity = "\0".join((f.rule, *(f.identity or (f.message,))))
        result: dict[str, Any] = {
            "ruleId": f.rule,
            "ruleIndex": list(rules).index(f.rule),
            "level": f.level,
            "message": {"text": f.message},
            "partialFingerprints": {"fleetrules/v1": hashlib.sha256(identity.encode()).hexdigest()},
        }
        if f.locations:
            result["locations"] = [_location(w) for w in f.locations]
        if f.properties:
            result["properties"] = dict(f.properties)
        results.append(result)
    driver = {
        "name": "fleetrules",
        "version": version,
        "rules": [{"id": k, "shortDescription": {"text": v}} for k, v in rules.items()],
    }
    return (
        json.dumps(
            {"$schema": SCHEMA, "version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]},
            indent=2,
        )
        + "\n"
    )


# ---------------------------------------------------------------- check

CHECK_RULES = {
    "check/error": "The rule files have an error: fleetrules (and Karmada, for policies) would refuse them",
    "check/warning": "The rule files have something that works, but probably not as meant",
}


def check_sarif(diagnostics: Sequence[Diagnostic], version: str) -> str:
    findings = [
        Finding(
            "check/error" if d.is_error else "check/warning",
            "error" if d.is_error else "warning",
            d.message,
            (d.span,) if d.span is not None else (),
            (d.span.file if d.span else "", d.message),
        )
        for d in diagnostics
    ]
    return log(CHECK_RULES, findings, version)


# ---------------------------------------------------------------- test

TEST_RULES = {"test/failed": "A rule test case does not get what it expects"}


def test_sarif(report: Report, version: str) -> str:
    findings = [
        Finding(
            "test/failed",
            "error",
            f"{o.name}: {o.error or 'expectation not met'}" + (f"\n{o.diff}" if o.diff and not o.error else ""),
            (o.file,),
            (o.file, o.name),
        )
        for o in report.outcomes
        if not o.passed
    ]
    return log(TEST_RULES, findings, version)


# ---------------------------------------------------------------- diff

DIFF_RULES = {
    "diff/gated": "A change of the rules changes placements in a way the review gates on (--fail-on)",
    "diff/changed": "A change of the rules changes where a workload is placed, its replicas, scores or evictions",
}


def diff_sarif(d: Diff, gates: set[str], version: str) -> str:
    findings = []
    for c in d.changes:
        categories = set(c.categories())
        gated = bool(categories & gates)
        before, after = clusters_text(c.before, c.was_unschedulable), clusters_text(c.after, c.is_unschedulable)
        sources = sorted(
            {r.source for rs in (*c.rejections_added.values(), *c.rejections_removed.values()) for r in rs}
        )
        findings.append(
            Finding(
                "diff/gated" if gated else "diff/changed",
                "error" if gated else "note",
                f"{c.binding}: {before} -> {after} ({', '.join(sorted(categories))})",
                tuple(sources),
                (c.binding, before, after),
                {"binding": c.binding, "categories": sorted(categories)},
            )
        )
    return log(DIFF_RULES, findings, version)
