"""Rule test reports (engine.review.testing) as text and as JUnit XML."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from engine.review.testing import Report


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
