"""SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format) for check, test, diff and resilience: what
GitHub code scanning and other CI tools read. One run per log, the rules named in the driver, results with
a level, a message, locations and a fingerprint that stays the same while the finding does."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from engine.codes import Code
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


ROOT_ID = "%SRCROOT%"  # the base the artifacts' relative URIs are resolved against: the working directory


def artifact(path: str, root: Path) -> dict[str, str] | None:
    """Where a file is, as SARIF names it: a relative reference (RFC 3986, percent-encoded) against ``ROOT_ID``
    for a file under ``root`` (the working directory: the repository's root where CI runs); an absolute
    ``file:`` URI for a file elsewhere (never ``../``); None for what is no file (``<builtin>/…``)."""
    if not path or path.startswith("<"):
        return None
    absolute = Path(os.path.normpath(root / path))  # root / an absolute path is that path
    if absolute.is_relative_to(root):
        return {"uri": quote(absolute.relative_to(root).as_posix(), safe="/"), "uriBaseId": ROOT_ID}
    return {"uri": absolute.as_uri()}


def _location(where: str | Span, root: Path) -> dict[str, Any]:
    if isinstance(where, Span):
        path, region = where.file, {}
        if where.line > 0:
            region = {"startLine": where.line, "startColumn": max(where.column, 1)}
            if where.end_line >= where.line and where.end_column > 0:
                region |= {"endLine": where.end_line, "endColumn": max(where.end_column, 1)}
    else:
        path, line = file_line(where)
        region = {"startLine": line} if line > 0 else {}
        path = path if region else where
    found = artifact(path, root)
    if found is None:  # a built-in rule: no file of the repository, named as fleetrules names it
        name = f"{path}:{region['startLine']}" if region else path
        return {"logicalLocations": [{"fullyQualifiedName": name, "kind": "module"}]}
    physical: dict[str, Any] = {"artifactLocation": found}
    if region:
        physical["region"] = region
    return {"physicalLocation": physical}


def log(rules: Mapping[str, str], findings: Sequence[Finding], version: str) -> str:
    """The SARIF log of ``findings``; ``rules``: rule id → its short description."""
    root = Path.cwd()
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
            result["locations"] = [_location(w, root) for w in f.locations]
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
            {
                "$schema": SCHEMA,
                "version": "2.1.0",
                "runs": [
                    {
                        "tool": {"driver": driver},
                        "originalUriBaseIds": {ROOT_ID: {"uri": root.as_uri().rstrip("/") + "/"}},
                        "results": results,
                    }
                ],
            },
            indent=2,
        )
        + "\n"
    )


# ---------------------------------------------------------------- check


def check_sarif(diagnostics: Sequence[Diagnostic], version: str) -> str:
    """Each diagnostic a result whose ruleId is its code (engine.codes); the rules are the codes found."""
    findings = [
        Finding(
            d.code.id,
            "error" if d.is_error else "warning",
            d.message,
            (d.span,) if d.span is not None else (),
            (d.span.file if d.span else "", d.message),
        )
        for d in diagnostics
    ]
    used = {d.code for d in diagnostics}
    return log({c.id: f"{c.slug}: {c.summary}" for c in Code if c in used}, findings, version)


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
        # the new rules' places: a removed rejection's rule is in the old rules, which the checkout may not hold
        sources = sorted({r.source for rs in c.rejections_added.values() for r in rs})
        removed = sorted({r.source for rs in c.rejections_removed.values() for r in rs})
        findings.append(
            Finding(
                "diff/gated" if gated else "diff/changed",
                "error" if gated else "note",
                f"{c.binding}: {before} -> {after} ({', '.join(sorted(categories))})",
                tuple(sources),
                (c.binding, before, after),
                {"binding": c.binding, "categories": sorted(categories)}
                | ({"removedRejectionSources": removed} if removed else {}),
            )
        )
    return log(DIFF_RULES, findings, version)
