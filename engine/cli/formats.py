"""Every verb's output formats, in one registry: the names a user chooses from, and what writes each.

A verb makes its answer (a result, a diff, a sweep's impacts, a test report) and asks its ``Formats`` to write it
in the format chosen; the choices its option offers are the registry's, so a format is added in one place (and
docs/cli.md, which a test holds to the registry). The renderers themselves live in engine.render.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import click

from engine.cli.app import stream
from engine.errors import Diagnostic, render
from engine.render.results import json_chunks, jsonl_chunks, text_chunks, yaml_chunks
from engine.render.timeline import TimelineWriter
from engine.results import Entry, Result

if TYPE_CHECKING:  # the renderers of the other verbs' answers are imported where one is written
    from engine.review.diff import Diff
    from engine.review.impacts import Change, Impact
    from engine.review.testing import Report

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
Written = str | Iterable[str]  # the whole text, or its chunks as they are made (a fleet's answer: megabytes)


@dataclass(frozen=True)
class Formats(Generic[T]):
    """One verb's output formats: the option that chooses one (``flags``, its value passed as ``dest``) and what
    writes the verb's answer (``T``) in each; the first is the default."""

    verb: str
    writers: Mapping[str, Callable[[T], Written]]
    flags: tuple[str, ...] = ("-o", "--output")
    dest: str = "output"

    def option(self) -> Callable[[F], F]:
        """The verb's click option choosing among the formats."""
        choice = click.Choice(list(self.writers))
        return click.option(*self.flags, self.dest, type=choice, default=next(iter(self.writers)), show_default=True)

    def chunks(self, name: str, answer: T) -> Iterator[str]:
        written = self.writers[name](answer)
        return iter((written,)) if isinstance(written, str) else iter(written)

    def text(self, name: str, answer: T) -> str:
        return "".join(self.chunks(name, answer))

    def write(self, name: str, answer: T) -> None:
        """The answer to stdout in the format ``name``, written as it is made."""
        stream(self.chunks(name, answer))


REGISTRY: dict[str, Formats[Any]] = {}


def _register(formats: Formats[T]) -> Formats[T]:
    REGISTRY[formats.verb] = formats
    return formats


# ---------------------------------------------------------------- check
@dataclass(frozen=True)
class Checked:
    diagnostics: Sequence[Diagnostic]
    sources: Mapping[str, str]
    version: str  # fleetrules' own, for SARIF


def _github_escape(text: str, property_value: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def _github_annotation(d: Diagnostic) -> str:
    level = "error" if d.is_error else "warning"
    title = f"title={_github_escape(f'{d.code.id} {d.code.slug}', True)}"
    if d.span is None or d.span.line == 0:
        where = f"file={_github_escape(d.span.file, True)}," if d.span else ""
        return f"::{level} {where}{title}::{_github_escape(d.message)}"
    s = d.span
    props = f"file={_github_escape(s.file, True)},line={s.line},col={s.column}"
    if s.end_line == s.line:
        props += f",endColumn={s.end_column}"
    return f"::{level} {props},{title}::{_github_escape(d.message)}"


def _diagnostic_json(d: Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {"severity": d.severity.value, "code": d.code.id, "message": d.message}
    if d.span is not None:
        out |= {"file": d.span.file, "line": d.span.line, "column": d.span.column}
        out |= {"end_line": d.span.end_line, "end_column": d.span.end_column}
    return out


def _check_json(c: Checked) -> str:
    errors = sum(d.is_error for d in c.diagnostics)
    report = {"diagnostics": [_diagnostic_json(d) for d in c.diagnostics]}
    return json.dumps(report | {"errors": errors, "warnings": len(c.diagnostics) - errors}, indent=2) + "\n"


def _check_text(c: Checked) -> Iterator[str]:
    return (render(d, c.sources) + "\n" for d in c.diagnostics)


def _check_sarif(c: Checked) -> str:
    from engine.render.sarif import check_sarif

    return check_sarif(c.diagnostics, c.version)


CHECK = _register(
    Formats[Checked](
        "check",
        {
            "text": _check_text,
            "json": _check_json,
            "github": lambda c: (_github_annotation(d) + "\n" for d in c.diagnostics),
            "sarif": _check_sarif,
        },
        flags=("-o", "--output", "--format"),  # --format: its first name, kept
        dest="output_format",
    )
)


# ---------------------------------------------------------------- eval
@dataclass(frozen=True)
class Evaluated:
    result: Result
    every_rejection: bool  # --rejections all


EVAL = _register(
    Formats[Evaluated](
        "eval",
        {
            "text": lambda e: text_chunks(e.result, e.every_rejection),
            "json": lambda e: json_chunks(e.result, e.every_rejection),
            "jsonl": lambda e: jsonl_chunks(e.result, e.every_rejection),
            "yaml": lambda e: yaml_chunks(e.result, e.every_rejection),
        },
    )
)


# ---------------------------------------------------------------- simulate
@dataclass(frozen=True)
class Simulated:
    entries: Sequence[Entry]
    start: dt.datetime


SIMULATE = _register(
    Formats[Simulated](
        "simulate",
        {
            "text": lambda s: TimelineWriter("text", s.start).whole(s.entries),
            "json": lambda s: TimelineWriter("json", s.start).whole(s.entries),
        },
    )
)


# ---------------------------------------------------------------- diff
@dataclass(frozen=True)
class Compared:
    result: Diff
    gates: set[str]  # --fail-on, which SARIF marks as errors
    version: str
    every_cluster: bool = False  # --rejections all


def _diff(c: Compared, name: str) -> str:
    from engine.render import diff as diff_render
    from engine.render.sarif import diff_sarif

    if name == "text":
        return diff_render.to_text(c.result, c.every_cluster)
    if name == "json":
        return diff_render.to_json(c.result, c.every_cluster)
    if name == "markdown":
        return diff_render.to_markdown(c.result)
    return diff_sarif(c.result, c.gates, c.version)


DIFF = _register(
    Formats[Compared](
        "diff",
        {
            "text": lambda c: _diff(c, "text"),
            "json": lambda c: _diff(c, "json"),
            "markdown": lambda c: _diff(c, "markdown"),
            "sarif": lambda c: _diff(c, "sarif"),
        },
    )
)


# ---------------------------------------------------------------- resilience
@dataclass(frozen=True)
class Swept:
    impacts: list[Impact]
    version: str
    top: int | None = None  # --top: the worst scenarios only (text, Markdown)
    changes: list[Change] | None = None  # with --base: what changed from the old rules' sweep, which is shown


def _resilience_text(s: Swept) -> str:
    from engine.render import resilience as resilience_render

    if s.changes is not None:
        return resilience_render.changes_text(s.changes)
    return resilience_render.to_text(s.impacts, s.top)


def _resilience_json(s: Swept) -> str:
    from engine.render import resilience as resilience_render

    if s.changes is not None:
        return resilience_render.changes_json(s.changes)
    return resilience_render.to_json(s.impacts)


def _resilience_markdown(s: Swept) -> str:
    from engine.render import resilience as resilience_render

    if s.changes is not None:
        return resilience_render.changes_markdown(s.changes)
    return resilience_render.to_markdown(s.impacts, s.top)


def _resilience_sarif(s: Swept) -> str:
    """The scenarios as SARIF results; with --base, the changed ones as the new rules have them."""
    from engine.render import resilience as resilience_render

    impacts = s.impacts if s.changes is None else [c.new for c in s.changes]
    return resilience_render.to_sarif(impacts, s.version)


RESILIENCE = _register(
    Formats[Swept](
        "resilience",
        {
            "text": _resilience_text,
            "json": _resilience_json,
            "markdown": _resilience_markdown,
            "sarif": _resilience_sarif,
        },
    )
)


# ---------------------------------------------------------------- test
@dataclass(frozen=True)
class Tested:
    report: Report
    version: str


def _test(t: Tested, name: str) -> str:
    from engine.render import tests as tests_render
    from engine.render.sarif import test_sarif

    if name == "text":
        return tests_render.text(t.report)
    if name == "junit":
        return tests_render.junit(t.report)
    return test_sarif(t.report, t.version)


TEST = _register(
    Formats[Tested](
        "test",
        {
            "text": lambda t: _test(t, "text"),
            "junit": lambda t: _test(t, "junit"),
            "sarif": lambda t: _test(t, "sarif"),
        },
        flags=("-o", "--output", "--format"),  # --format: its first name, kept
        dest="output_format",
    )
)


# ---------------------------------------------------------------- config
@dataclass(frozen=True)
class Configured:
    data: Mapping[str, Any]  # engine.cli.configuring.settings


def _config_text(data: Mapping[str, Any]) -> Iterator[str]:
    yield f"config file: {data['configFile'] or 'none (.fleetrules.yaml in the working directory or above it)'}\n"
    version = data["karmadaVersion"]
    yield f"karmada version: {version['value']}  ({version['from']})\n"
    yield "controller flags, in the order applied (a later setting wins):\n"
    for flag in data["flags"] or [{"flag": "none", "from": "Karmada's defaults"}]:
        yield f"  {flag['flag']}  ({flag['from']})\n"
    yield "in force:\n"
    for name, value in data["inForce"].items():
        yield f"  {name} = {value['value']}  ({value['from']})\n"
    yield "feature gates:\n"
    for name, gate in data["featureGates"].items():
        modelled = "" if gate["modelled"] else ", not modelled"
        yield f"  {name} = {str(gate['value']).lower()}  ({gate['from']}; {gate['stage']}{modelled})\n"


CONFIG = _register(
    Formats[Configured](
        "config",
        {"text": lambda c: _config_text(c.data), "json": lambda c: json.dumps(c.data, indent=2) + "\n"},
    )
)
