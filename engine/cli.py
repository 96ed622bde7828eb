"""The ``fleetrules`` command line. Exit codes: 0 clean; 1 problems found (``check``, ``fmt --check``,
failed tests, ``diff --fail-on``); 2 usage errors and input that cannot be used (unreadable files,
invalid rules or facts given to a command that evaluates them).

Every command turns FleetrulesError into rendered diagnostics; a traceback means a bug.
"""

from __future__ import annotations

import codecs
import contextlib
import datetime as dt
import difflib
import functools
import gc
import importlib.metadata
import io
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from engine.check.rules import load_rule_set
from engine.collector import THRESHOLDS
from engine.errors import (
    Diagnostic,
    FleetrulesError,
    RuleError,
    Span,
    UsageError,
    did_you_mean,
    printable,
    render,
    warning,
)
from engine.evaluate import evaluate, evaluation_time
from engine.evaluate import simulate as run_simulation
from engine.failover.controllers import DEFAULT_CONTROLLERS, Controllers
from engine.inputs.events import Event, load_events
from engine.inputs.facts import Facts, rfc3339
from engine.inputs.files import MAX_FILE_BYTES, RULE_SUFFIX, display_path, expand, read_source
from engine.inputs.objects import load_facts
from engine.inputs.rules import POLICY_SUFFIXES, RuleSet
from engine.inputs.yaml import MAX_BYTES
from engine.render.diff import to_json as diff_json
from engine.render.diff import to_markdown as diff_markdown
from engine.render.diff import to_text as diff_text
from engine.render.karmada import policies_yaml
from engine.render.report import report_html
from engine.render.resilience import changes_json, changes_markdown, changes_text
from engine.render.resilience import to_json as resilience_json
from engine.render.resilience import to_markdown as resilience_markdown
from engine.render.resilience import to_sarif as resilience_sarif
from engine.render.resilience import to_text as resilience_text
from engine.render.results import explain_text, json_chunks, jsonl_chunks, text_chunks, yaml_chunks
from engine.render.sarif import check_sarif, diff_sarif, test_sarif
from engine.render.tests import junit
from engine.render.tests import text as test_text
from engine.render.timeline import timeline_text
from engine.results import Result
from engine.review.diff import CATEGORIES, compare
from engine.review.resilience import (
    FAILURES,
    GROUPINGS,
    MAX_K,
    MAX_WORKERS,
    RESILIENCE_GATES,
    Impact,
    resilience_changes,
    scenarios,
    sweep,
)
from engine.review.testing import TEST_SUFFIX, run_tests
from engine.syntax.ast import File
from engine.syntax.fmt import format_file
from engine.syntax.parse import parse_partial
from engine.syntax.schema import KARMADA_VERSION, KARMADA_VERSIONS, karmada_version

EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM
EXIT_PIPE = 141  # 128 + SIGPIPE

F = TypeVar("F", bound=Callable[..., Any])


def _say(text: str, err: bool = False, nl: bool = True) -> None:
    """Print ``text`` with control characters and lone surrogates escaped (a rule file's "\\u0000"
    prints as that, not as a NUL)."""
    click.echo(printable(text), err=err, nl=nl)


def _warn(d: Diagnostic, sources: Mapping[str, str] | None = None) -> None:
    """A warning to stderr, once per command: a snapshot read both as rules and as facts converts its
    policies twice, and says so once."""
    seen = click.get_current_context().meta.setdefault("fleetrules.warned", set())
    key = (d.severity, d.message, d.span, d.subject)
    if key not in seen:
        seen.add(key)
        _say(render(d, sources), err=True)


def _guarded(command: F) -> F:
    """Run a command body; FleetrulesError becomes rendered messages and an exit code; output that
    cannot be written and an interrupt end it with a message instead of a traceback."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            value = command(*args, **kwargs)
            sys.stdout.flush()  # a full device or a closed pipe shows here, not at exit
            return value
        except UsageError as exc:
            _say(f"fleetrules: {exc.render()}", err=True)
            sys.exit(EXIT_USAGE)
        except FleetrulesError as exc:  # rules or facts that cannot be used: an input error
            _say(exc.render(), err=True)
            sys.exit(EXIT_USAGE)
        except OSError as exc:
            _unwritable(exc)
        except KeyboardInterrupt:
            _say("fleetrules: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except _Terminated:
            _say("fleetrules: terminated", err=True)
            sys.exit(EXIT_TERMINATED)

    return run  # type: ignore[return-value]


class _Terminated(BaseException):
    """SIGTERM, raised where the command is, so that what it started ends too (resilience's workers, temporary
    files): the default action killed the process at once and orphaned its workers."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


def _unwritable(exc: OSError) -> NoReturn:
    """End on output that cannot be written: quietly when the reader went away (`| head`), as a shell would;
    else with a message."""
    _silence_stdout()
    if isinstance(exc, BrokenPipeError):
        sys.exit(EXIT_PIPE)
    _say(f"fleetrules: error: cannot write the output: {exc.strerror or exc}", err=True)
    sys.exit(EXIT_USAGE)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # not a real file (tests): nothing is flushed at exit


def _kept(key: str, parse: Callable[[Any], Any]) -> Callable[[click.Context, click.Parameter, Any], None]:
    """A click callback that parses an option's value and keeps it for whatever the verb loads later
    (the rules' Karmada version, the controllers' flags); a ValueError is the option's usage error."""

    def keep(ctx: click.Context, _: click.Parameter, value: Any) -> None:
        try:
            ctx.meta[key] = parse(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None

    return keep


_VERSION_KEY = "fleetrules.karmada_version"
_KARMADA_VERSION = click.option(
    "--karmada-version",
    callback=_kept(_VERSION_KEY, lambda v: KARMADA_VERSION if v is None else karmada_version(v)),
    expose_value=False,
    is_eager=True,
    help=f"The Karmada version whose behaviour to model where versions differ ({', '.join(KARMADA_VERSIONS)}; "
    f"default {KARMADA_VERSION}).",
)
_ROOT_KEY = "fleetrules.roots"
_ROOT = click.option(
    "--root",
    multiple=True,
    type=click.Path(exists=True, file_okay=False),
    callback=_kept(_ROOT_KEY, tuple),
    expose_value=False,
    help="A directory the paths that rule and test files name (includes, a test's rules and facts) may reach "
    "besides the paths given (repeatable); nothing outside them is read.",
)


def _roots() -> tuple[str, ...]:
    return tuple(click.get_current_context().meta.get(_ROOT_KEY, ()))


_CONTROLLERS_KEY = "fleetrules.controllers"
CONTROLLER_ENV = "FLEETRULES_CONTROLLER"


def _controllers(given: Sequence[str]) -> Controllers:
    """The flags of FLEETRULES_CONTROLLER (a user's control plane, set once), then those given with --controller
    (a later setting of the same flag wins)."""
    from_env = os.environ.get(CONTROLLER_ENV, "").split()
    try:
        Controllers.parse(from_env)
    except ValueError as exc:
        raise click.UsageError(f"{CONTROLLER_ENV}: {exc}") from None
    return Controllers.parse([*from_env, *given])


_CONTROLLER = click.option(
    "--controller",
    multiple=True,
    callback=_kept(_CONTROLLERS_KEY, _controllers),
    expose_value=False,
    metavar="FLAG=VALUE",
    help="A flag of the Karmada control plane that changes failover, policy choice or scheduling (repeatable; "
    "the defaults are Karmada's): enable-no-execute-taint-eviction=true|false (default false), "
    "no-execute-taint-eviction-purge-mode=Gracefully|Directly, graceful-eviction-timeout=10m, "
    "feature-gates=NAME=BOOL,… for Failover, MultiplePodTemplatesScheduling, PolicyPreemption, "
    "StatefulFailoverInjection and WorkloadAffinity (each off by default, as Karmada ships them). Your control "
    f"plane's flags can be set once in {CONTROLLER_ENV} (space-separated); --controller adds to them.",
)


_REFERENCE_KEY = "fleetrules.reference"
_REFERENCE = click.option(
    "--reference",
    is_flag=True,
    callback=_kept(_REFERENCE_KEY, bool),
    expose_value=False,
    help="Evaluate every rule inside durable-rules, without the indexed joins: slow, and the same answer "
    "(what the indexed joins are tested against; for checking a suspected difference).",
)


def _reference() -> bool:
    return click.get_current_context().meta.get(_REFERENCE_KEY) is True


def _controller_flags() -> Controllers:
    found = click.get_current_context().meta.get(_CONTROLLERS_KEY)
    return found if isinstance(found, Controllers) else DEFAULT_CONTROLLERS


def _version() -> str:
    return str(click.get_current_context().meta.get(_VERSION_KEY, KARMADA_VERSION))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="fleetrules")
def main() -> None:
    """Write, check, evaluate and review Karmada placement and failover policy as code."""
    gc.set_threshold(*THRESHOLDS)  # the process is ours: rendering and reviews collect less too (engine.collector)


def _github_escape(text: str, property_value: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def _github_annotation(d: Diagnostic) -> str:
    level = "error" if d.is_error else "warning"
    if d.span is None or d.span.line == 0:
        where = f" file={_github_escape(d.span.file, True)}" if d.span else ""
        return f"::{level}{where}::{_github_escape(d.message)}"
    s = d.span
    props = f"file={_github_escape(s.file, True)},line={s.line},col={s.column}"
    if s.end_line == s.line:
        props += f",endColumn={s.end_column}"
    return f"::{level} {props}::{_github_escape(d.message)}"


def _diagnostic_json(d: Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {"severity": d.severity.value, "message": d.message}
    if d.span is not None:
        out |= {"file": d.span.file, "line": d.span.line, "column": d.span.column}
        out |= {"end_line": d.span.end_line, "end_column": d.span.end_column}
    return out


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "github", "sarif"]),
    default="text",
    show_default=True,
)
@_KARMADA_VERSION
@_ROOT
@click.option(
    "--strict-karmada",
    is_flag=True,
    help="Report each fleetrules extension (rules, preferred terms, within) as an error.",
)
@_guarded
def check(paths: Sequence[str], output_format: str, strict_karmada: bool) -> None:
    """Parse and check rule files and directories (of *.fr files); report every problem."""
    rule_set, diagnostics = load_rule_set(paths, version=_version(), strict=strict_karmada, roots=_roots())
    errors = sum(d.is_error for d in diagnostics)
    if output_format == "json":
        report = {"diagnostics": [_diagnostic_json(d) for d in diagnostics]}
        _say(json.dumps(report | {"errors": errors, "warnings": len(diagnostics) - errors}, indent=2))
    elif output_format == "github":
        for d in diagnostics:
            _say(_github_annotation(d))
    elif output_format == "sarif":
        _say(check_sarif(diagnostics, _package_version()), nl=False)
    else:
        for d in diagnostics:
            _say(render(d, rule_set.sources))
        files = len(rule_set.files)
        summary = f"{errors} error{'s' * (errors != 1)}, {len(diagnostics) - errors} warning"
        summary += f"{'s' * (len(diagnostics) - errors != 1)} in {files} file{'s' * (files != 1)}"
        _say(summary, err=True)
    if any(d.unreadable for d in diagnostics):
        sys.exit(EXIT_USAGE)
    if errors:
        sys.exit(EXIT_PROBLEMS)


def _rewrite(path: Path, text: str) -> None:
    """Replace the file's text, keeping what the file is: a symlink is written through to its target,
    the mode (and owner, where allowed) stays, a leading BOM stays. The new text is written to a
    temporary file and renamed over the old one, so a failure leaves the old file whole; a file with
    several hard links is written in place instead (a rename would split it from its other names)."""
    target = Path(os.path.realpath(path))
    info = target.stat()
    data = (codecs.BOM_UTF8 if target.read_bytes().startswith(codecs.BOM_UTF8) else b"") + text.encode("utf-8")
    if info.st_nlink > 1:
        with open(target, "r+b") as handle:
            handle.write(data)
            handle.truncate()
        return
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        try:  # the owner and group first: changing them clears the setuid and setgid bits the mode then sets
            os.chown(tmp, info.st_uid, info.st_gid)
        except OSError:
            with contextlib.suppress(OSError):
                os.chown(tmp, -1, info.st_gid)  # not the owner's to give away: the group, where allowed
        os.chmod(tmp, stat.S_IMODE(info.st_mode))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--check", "check_only", is_flag=True, help="Write nothing; exit 1 if a file is not formatted.")
@click.option("--diff", "show_diff", is_flag=True, help="Write nothing; print a unified diff of the changes.")
@_guarded
def fmt(paths: Sequence[str], check_only: bool, show_diff: bool) -> None:
    """Format rule files in place in the canonical layout ('-' formats stdin to stdout)."""
    if list(paths) == ["-"]:
        given = _stdin("fmt -", MAX_FILE_BYTES, "rule files")
        tree, diagnostics = parse_partial(given, "<stdin>")
        if tree is None or diagnostics:
            raise FleetrulesError(diagnostics, {"<stdin>": given})
        click.echo(format_file(tree, given), nl=False)
        return
    unformatted: list[str] = []
    failed = unreadable = False
    for path in expand(paths):
        shown = display_path(path)
        problems: list[Diagnostic] = []
        text = read_source(path, shown, problems)
        tree = None
        if text is not None:
            tree, syntax = parse_partial(text, shown)
            problems += syntax
        if problems or tree is None or text is None:
            _say("\n".join(render(d, {shown: text or ""}) for d in problems), err=True)
            failed = True
            unreadable = unreadable or any(d.unreadable for d in problems)
            continue
        formatted = format_file(tree, text)
        if text.count("\r\n") * 2 > text.count("\n"):  # a file of CRLF lines keeps them
            formatted = formatted.replace("\n", "\r\n")
        if formatted == text:
            continue
        unformatted.append(shown)
        if show_diff:
            diff = difflib.unified_diff(
                text.splitlines(keepends=True), formatted.splitlines(keepends=True), f"a/{shown}", f"b/{shown}"
            )
            click.echo("".join(diff), nl=False)
        elif check_only:
            _say(f"would reformat {shown}")
        elif not (mode := stat.S_IMODE(os.stat(path).st_mode)) & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            # read-only on purpose: a rename would replace it all the same (and root may write anything)
            _say(f"{shown}: error: read-only file (mode {mode:04o}); not reformatted", err=True)
            failed = unreadable = True
        else:
            _rewrite(path, formatted)
            _say(f"formatted {shown}", err=True)
    if unreadable:
        sys.exit(EXIT_USAGE)
    if failed:
        sys.exit(EXIT_PROBLEMS)
    if unformatted and (check_only or show_diff):
        sys.exit(EXIT_PROBLEMS)


def _now(value: str | None) -> dt.datetime | None:
    return evaluation_time(value, "--now")


class _Snapshots(dict[str, str]):
    """The text of rule files, and of snapshots read as facts, read again only when a diagnostic about one is
    shown (a fleet's snapshot is tens of megabytes)."""

    def __init__(self, texts: Mapping[str, str], snapshots: Mapping[str, Path]) -> None:
        super().__init__(texts)
        self.snapshots = dict(snapshots)

    def get(self, key: str, default: Any = None) -> Any:
        if key not in self and key in self.snapshots:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                self[key] = self.snapshots.pop(key).read_text(encoding="utf-8-sig")
        return super().get(key, default)


def _rules(paths: Sequence[str], snapshot: Facts | None = None) -> RuleSet:
    """The rule set under ``paths``; its errors raise, its warnings go to stderr. ``snapshot``: the facts
    read from the snapshot files named among ``paths``, whose policies are taken from there (read once)."""
    extra: list[File] = []
    named: dict[str, Path] = {}
    if snapshot is not None:
        named = {display_path(Path(p)): Path(p) for p in paths if _is_snapshot(p)}
        paths = [p for p in paths if not _is_snapshot(p)]
        for shown in named:
            own = tuple(p for p in snapshot.policies if p.span.file == shown)
            extra.append(File(path=shown, items=own, span=Span(shown, 1, 1, 1, 1)))
    rule_set, diagnostics = load_rule_set(paths, extra, version=_version(), roots=_roots())
    if named:
        rule_set = replace(rule_set, sources=_Snapshots(rule_set.sources, named))
    errors = [d for d in diagnostics if d.is_error]
    if errors:
        raise RuleError(errors, rule_set.sources)
    for d in diagnostics:
        _warn(d, rule_set.sources)
    return rule_set


def _facts(facts: Sequence[str], rules: Sequence[str]) -> Facts:
    """The --facts paths; without them, the snapshot files among the rule paths (a snapshot given as rules
    contributes its policies there, and everything else here)."""
    paths = list(facts) or [p for p in rules if not p.endswith(RULE_SUFFIX)]
    if not paths:
        raise UsageError("no facts: give --facts, or snapshot YAML files (kubectl get … -o yaml) among the paths")
    if "-" not in paths:
        return load_facts(paths)
    text = _stdin("--facts -", MAX_BYTES, "fact files")  # `kubectl get … -o yaml | fleetrules eval RULES --facts -`
    return load_facts([p for p in paths if p != "-"], texts=[("<stdin>", text)])


def _stdin(what: str, limit: int, held_as: str) -> str:
    """Standard input as UTF-8 text, held to the limit of the files it stands for (``held_as``); a UsageError
    when it is closed, unreadable, larger, binary or not UTF-8 (its bytes are read, never decoded with the
    locale's escapes)."""
    stream = sys.stdin
    if stream is None:
        raise UsageError(f"{what}: standard input is closed")
    try:
        buffer = getattr(stream, "buffer", None)
        data = buffer.read(limit + 1) if buffer is not None else stream.read(limit + 1).encode("utf-8")
    except (OSError, ValueError, UnicodeError) as exc:
        raise UsageError(f"{what}: cannot read standard input ({exc})") from None
    if len(data) > limit:
        raise UsageError(f"{what}: standard input is larger than {limit} bytes; {held_as} are limited to {limit}")
    if b"\0" in data:
        raise UsageError(f"{what}: standard input is binary, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UsageError(f"{what}: standard input is not UTF-8 text (byte {exc.start}, line {line})") from None


def _is_snapshot(path: str) -> bool:
    """A YAML or JSON file named among the rules: a snapshot, its policies the rules and the rest the facts."""
    return Path(path).suffix in POLICY_SUFFIXES and Path(path).is_file()


def _inputs(rules: Sequence[str], facts: Sequence[str]) -> tuple[RuleSet, Facts]:
    """The rule set and the facts. Without --facts, a snapshot named among the rules is read once, as the
    facts, and its policies (the facts' own) are checked as rules."""
    if facts or not any(_is_snapshot(p) for p in rules):
        return _rules(rules), _facts(facts, rules)
    loaded = _facts(facts, rules)
    return _rules(rules, loaded), loaded


def _evaluate(
    rules: Sequence[str], facts: Sequence[str], now: str | None, reschedule: str, explanations: bool
) -> Result:
    rule_set, loaded = _inputs(rules, facts)
    when, all_ = _now(now), reschedule == "all"
    flags = _controller_flags()
    with _progress(_worth_a_bar(loaded, len(loaded.bindings)), "bindings") as progress:
        result = evaluate(rule_set, loaded, when, all_, flags, _reference(), progress, explanations)
    for d in result.warnings:
        _warn(d, rule_set.sources)
    return result


_REPORT = click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False),
    help="Also write a self-contained HTML report (placement matrix, timeline, diff) to this file.",
)


def _write_report(path: str | None, html: Callable[[], str]) -> None:
    """The report (``html`` makes it, only when asked for) written whole or not at all: to a temporary file
    beside it, then renamed."""
    if path is None:
        return
    target = Path(path)
    if not target.parent.is_dir():
        raise UsageError(f"--report: no such directory: {target.parent}")
    if target.is_symlink() or (target.exists() and not target.is_file()):  # a device, a FIFO, a link elsewhere
        raise UsageError(f"--report: {path} exists and is not a regular file; give the path of a file to write")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(html())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _events(path: str) -> tuple[dt.datetime, list[Event]]:
    """The --events file: its start and its events."""
    if not Path(path).is_file():
        raise UsageError(f"--events: no such file: {path}")
    return load_events(Path(path))


_FACTS = click.option(
    "--facts",
    "facts",
    multiple=True,
    type=click.Path(),
    help="Fact file or directory (repeatable); default: the YAML files among the rule paths, read as a snapshot.",
)
_NOW = click.option("--now", help="The evaluation time, RFC 3339 (default: the facts' own times only).")
_RESCHEDULE = click.option(
    "--reschedule",
    type=click.Choice(["needed", "all"]),
    default="needed",
    show_default=True,
    help="needed: run the bindings Karmada's scheduler would (not yet scheduled, placement or replicas changed, "
    "reschedule triggered, a target cluster deleting); the others keep their clusters. all: place every one anew.",
)


_REJECTIONS = click.option(
    "--rejections",
    type=click.Choice(["summary", "all"]),
    default="summary",
    show_default=True,
    help="summary: per binding, the rejected clusters counted by reason with the first few names (as Karmada's "
    "FitError counts them) and the best feasible clusters. all: also every rejected cluster with its rule and "
    "source line, and every feasible cluster with its score.",
)
# eval's output formats: each writes a Result one binding at a time
_WRITERS: dict[str, Callable[[Result, bool], Iterator[str]]] = {
    "text": text_chunks,
    "json": json_chunks,
    "jsonl": jsonl_chunks,
    "yaml": yaml_chunks,
}


def _stream(chunks: Iterable[str]) -> None:
    """Write ``chunks`` to stdout as they come (escaped as ``_say`` escapes), in pieces of about 64 KiB."""
    out = sys.stdout
    pending: list[str] = []
    size = 0
    for chunk in chunks:
        pending.append(chunk)
        size += len(chunk)
        if size >= 65536:
            out.write(printable("".join(pending)))
            pending, size = [], 0
    out.write(printable("".join(pending)))


@main.command("eval")
@click.argument("rules", nargs=-1, required=True, type=click.Path())
@_FACTS
@_NOW
@_RESCHEDULE
@click.option("-o", "--output", type=click.Choice(list(_WRITERS)), default="text", show_default=True)
@_REJECTIONS
@_REPORT
@_CONTROLLER
@_REFERENCE
@_KARMADA_VERSION
@_ROOT
@_guarded
def eval_command(
    rules: Sequence[str],
    facts: Sequence[str],
    now: str | None,
    reschedule: str,
    output: str,
    rejections: str,
    report_path: str | None,
) -> None:
    """Evaluate rule files (and PropagationPolicy YAML) over Karmada facts: placements and evictions."""
    result = _evaluate(rules, facts, now, reschedule, explanations=False)
    _write_report(report_path, lambda: report_html(_package_version(), result=result))
    _stream(_WRITERS[output](result, rejections == "all"))


@main.command()
@click.argument("rules", nargs=-1, required=True, type=click.Path())
@_FACTS
@_NOW
@_RESCHEDULE
@click.option("--binding", required=True, help="The binding, as NAMESPACE/NAME.")
@click.option("--cluster", required=True, help="The cluster whose decision to explain.")
@_CONTROLLER
@_REFERENCE
@_KARMADA_VERSION
@_ROOT
@_guarded
def explain(
    rules: Sequence[str], facts: Sequence[str], now: str | None, reschedule: str, binding: str, cluster: str
) -> None:
    """Show the rules and facts behind one binding's decision about one cluster."""
    result = _evaluate(rules, facts, now, reschedule, explanations=True)
    try:
        placement = result.placement(binding)
    except KeyError:
        known = [p.binding for p in result.placements]
        hint = did_you_mean(binding, known) or (f"; known: {', '.join(known)}" if known else "")
        raise UsageError(f"--binding: no placed binding {binding!r}{hint}") from None
    evictions = [e for e in result.evictions if e.binding == binding and e.cluster == cluster]
    _say(explain_text(placement, cluster, evictions), nl=False)


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--to",
    "target",
    type=click.Choice(["dsl", "yaml"]),
    default="dsl",
    show_default=True,
    help="dsl: policies of the rule language; yaml: PropagationPolicy / ClusterPropagationPolicy objects.",
)
@_KARMADA_VERSION
@_ROOT
@_guarded
def convert(paths: Sequence[str], target: str) -> None:
    """Print PropagationPolicy YAML as rule-language policies, or (--to yaml) the other way round."""
    rule_set = _rules(paths)
    if target == "yaml":
        _say(policies_yaml(rule_set.files, rule_set.sources), nl=False)
        return
    policies = tuple(p for f in rule_set.files for p in f.policies)
    _say(format_file(File(path="<converted>", items=policies)), nl=False)


@main.command()
@click.argument("rules", nargs=-1, required=True, type=click.Path())
@_FACTS
@click.option("--events", "events", required=True, type=click.Path(), help="The timed events (YAML).")
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
@_REPORT
@_CONTROLLER
@_REFERENCE
@_KARMADA_VERSION
@_ROOT
@_guarded
def simulate(rules: Sequence[str], facts: Sequence[str], events: str, output: str, report_path: str | None) -> None:
    """Step failover through time: evictions, placements, deletions and injected labels."""
    rule_set, loaded = _inputs(rules, facts)
    start, timeline = _events(events)
    for d in loaded.warnings:
        _warn(d)
    with _progress(_worth_a_bar(loaded, len(timeline) + 1), "steps") as progress:
        entries = run_simulation(rule_set, loaded, start, timeline, _warn, _controller_flags(), _reference(), progress)
    initial = {b.key: b.cluster_names for b in loaded.bindings}
    _write_report(report_path, lambda: report_html(_package_version(), timeline=(entries, start, initial)))
    if output == "json":
        _say(json.dumps({"start": rfc3339(start), "timeline": [e.data() for e in entries]}, indent=2))
    else:
        _say(timeline_text(entries, start), nl=False)


def _git(*args: str, cwd: Path | None = None) -> bytes:
    """git's output as bytes (file names are bytes to git; -z output is split on NUL, never on spaces)."""
    try:
        run = subprocess.run(["git", *args], capture_output=True, check=False, cwd=cwd)
    except OSError as exc:
        raise UsageError(f"--base-ref needs git: {exc}") from None
    if run.returncode != 0:
        message = run.stderr.decode("utf-8", "replace").strip()
        raise UsageError(f"git {' '.join(args)}: {message}")
    return run.stdout


def _rules_at(ref: str, paths: Sequence[str], into: Path) -> list[str]:
    """The rule files under ``paths`` as they were at git revision ``ref``, written below ``into``."""
    out = []
    for raw in paths:
        resolved = Path(raw).resolve()
        if not resolved.exists():
            raise UsageError(f"--head: no such file or directory: {raw}")
        given = Path(raw).absolute()
        here = given if given.is_dir() else given.parent
        top = Path(os.fsdecode(_git("rev-parse", "--show-toplevel", cwd=here).strip())).resolve()
        if not resolved.is_relative_to(top):  # a symlink out of the repository
            raise UsageError(f"--head {raw}: outside the git repository at {top}; --base-ref compares files of it")
        relative = resolved.relative_to(top).as_posix()
        listing = _git("ls-tree", "-r", "-z", "--name-only", "--full-name", ref, "--", relative or ".", cwd=top)
        names = [os.fsdecode(n) for n in listing.split(b"\0") if n]
        if not names:
            raise UsageError(f"--base-ref: {raw} does not exist at {ref}")
        for name in names:
            if name == relative or name.endswith(RULE_SUFFIX):
                target = into / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(_git("cat-file", "blob", f"{ref}:{name}", cwd=top))
        out.append(str(into / relative))
    return out


@main.command("diff")
@click.option("--base", "base", multiple=True, type=click.Path(), help="The old rules (repeatable).")
@click.option("--head", "head", multiple=True, required=True, type=click.Path(), help="The new rules (repeatable).")
@click.option("--base-ref", help="Take the old rules from this git revision of the --head paths.")
@_FACTS
@_NOW
@_RESCHEDULE
@click.option(
    "-o", "--output", type=click.Choice(["text", "json", "markdown", "sarif"]), default="text", show_default=True
)
@click.option("--threshold", type=click.IntRange(min=0), default=0, help="Ignore score changes up to this much.")
@click.option("--fail-on", "fail_on", default="", help=f"Exit 1 if any of these changed: {','.join(CATEGORIES)}.")
@_REPORT
@_CONTROLLER
@_REFERENCE
@_KARMADA_VERSION
@_ROOT
@_guarded
def diff_command(
    base: Sequence[str],
    head: Sequence[str],
    base_ref: str | None,
    facts: Sequence[str],
    now: str | None,
    reschedule: str,
    output: str,
    threshold: int,
    fail_on: str,
    report_path: str | None,
) -> None:
    """Evaluate two versions of the rules over the same facts and report what changed."""
    gates = _gates(fail_on, CATEGORIES)
    if bool(base) == bool(base_ref):
        raise UsageError("give the old rules with either --base or --base-ref")
    loaded = _facts(facts, head)
    when = _now(now)
    with tempfile.TemporaryDirectory(prefix="fleetrules-base-") as tmp:
        old_paths = list(base) if base else _rules_at(str(base_ref), head, Path(tmp))
        old_rules, new_rules = _rules(old_paths), _rules(head)
        count = len(loaded.bindings)
        with _progress(_worth_a_bar(loaded, 2 * count), "bindings (base, head)") as progress:
            flags, again = _controller_flags(), reschedule == "all"
            old = evaluate(old_rules, loaded, when, again, flags, _reference(), progress, explanations=False)
            then = None if progress is None else (lambda done: progress(count + done))
            new = evaluate(new_rules, loaded, when, again, flags, _reference(), then, explanations=False)
    result = compare(old, new, threshold)
    if output == "sarif":
        text = diff_sarif(result, gates, _package_version())
    else:
        text = {"text": diff_text, "json": diff_json, "markdown": diff_markdown}[output](result)
    if base_ref:  # the old rules' files by the revision they were read from, not the directory they were put in
        text = _renamed(text, f"{tmp}/", f"{base_ref}:", output in ("json", "sarif"))
    _write_report(
        report_path, lambda: report_html(_package_version(), result=new, diff=result, title="fleetrules: policy change")
    )
    _say(text, nl=False)
    if any(result.count(g) for g in gates):
        sys.exit(EXIT_PROBLEMS)


def _renamed(text: str, old: str, new: str, in_json: bool) -> str:
    """``text`` with ``old`` replaced by ``new``, inside JSON strings when ``in_json`` (both as JSON escapes
    them: a revision named 'q"z' stays a string)."""
    if in_json:
        old, new = json.dumps(old)[1:-1], json.dumps(new)[1:-1]
    return text.replace(old, new)


PROGRESS_FROM = 5000
"""A snapshot with this many bindings takes long enough to show a progress bar for."""


def _worth_a_bar(facts: Facts, total: int) -> int:
    """``total`` steps for a progress bar over ``facts``, or 0 (no bar) for a small snapshot."""
    return total if len(facts.bindings) >= PROGRESS_FROM else 0


def _gates(fail_on: str, known: Sequence[str]) -> set[str]:
    """The comma-separated ``--fail-on`` categories, each one of ``known``."""
    gates = {g.strip() for g in fail_on.split(",") if g.strip()}
    unknown = gates - set(known)
    if unknown:
        raise UsageError(f"--fail-on: unknown {', '.join(sorted(unknown))}; choose from {', '.join(known)}")
    return gates


def _progress(total: int, label: str) -> contextlib.AbstractContextManager[Callable[[int], None] | None]:
    """A progress bar on a terminal (click's), nothing on a pipe or in CI."""

    @contextlib.contextmanager
    def bar() -> Iterator[Callable[[int], None] | None]:
        if not sys.stderr.isatty() or os.environ.get("CI") or total < 2:
            yield None
            return
        with click.progressbar(length=total, label=label, file=sys.stderr) as progress:
            done = [0]

            def advance(count: int) -> None:
                progress.update(count - done[0])
                done[0] = count

            yield advance
            advance(total)  # done: the last report may come before the last step

    return bar()


@main.command()
@click.argument("rules", nargs=-1, required=True, type=click.Path())
@_FACTS
@click.option(
    "--failure",
    "failures",
    multiple=True,
    type=click.Choice(list(FAILURES)),
    help="How the clusters fail (repeatable; default no-execute): "
    + "; ".join(f"{k}: {v}" for k, v in FAILURES.items()),
)
@click.option("--by", type=click.Choice(GROUPINGS), default="cluster", show_default=True, help="What fails together.")
@click.option(
    "--k", "k", type=click.IntRange(min=1, max=MAX_K), default=1, show_default=True, help="Fail every set of k at once."
)
@click.option(
    "--workers",
    type=click.IntRange(min=1, max=MAX_WORKERS),
    help="Local worker processes (default: one per core; never more than the scenarios).",
)
@click.option("--scheduler", "address", help="Run on the Dask cluster at this scheduler address (tcp://HOST:8786).")
@click.option("--base", "base", multiple=True, type=click.Path(), help="Compare with these old rules (repeatable).")
@click.option("--base-ref", help="Compare with the rules at this git revision.")
@click.option(
    "-o", "--output", type=click.Choice(["text", "json", "markdown", "sarif"]), default="text", show_default=True
)
@click.option("--top", type=click.IntRange(min=1), help="Show only the N worst scenarios (text, Markdown).")
@click.option(
    "--fail-on",
    "fail_on",
    default="",
    help="Exit 1 if a scenario has any of these: unschedulable,spread-lost,state-lost (with --base: new ones).",
)
@_REPORT
@_CONTROLLER
@_REFERENCE
@_KARMADA_VERSION
@_ROOT
@_guarded
def resilience(
    rules: Sequence[str],
    facts: Sequence[str],
    failures: Sequence[str],
    by: str,
    k: int,
    workers: int | None,
    address: str | None,
    base: Sequence[str],
    base_ref: str | None,
    output: str,
    top: int | None,
    fail_on: str,
    report_path: str | None,
) -> None:
    """What each cluster failure does to the fleet: evictions, moves, unschedulable workloads, lost spread and
    state, ranked by blast radius (a fleetrules extension; Karmada has no offline failover analysis)."""
    gates = _gates(fail_on, RESILIENCE_GATES)
    if base and base_ref:
        raise UsageError("--base and --base-ref: give one of them")
    rule_set, loaded = _inputs(rules, facts)
    chosen = list(failures) or ["no-execute"]
    if "no-execute" in chosen and not _controller_flags().taint_manager:
        _warn(
            warning(
                "the taint manager is off, as Karmada ships it: a NoExecute taint evicts nothing, in Karmada as "
                "here; it runs with --controller enable-no-execute-taint-eviction=true --controller "
                "feature-gates=Failover=true",
                subject="--failure no-execute",
            )
        )
    plan = scenarios(loaded.clusters, chosen, by, k)
    if not plan:
        what = "clusters" if by == "cluster" else f"{by} values among the clusters (a cluster without one is left out)"
        raise UsageError(f"no scenarios: fewer than {k} {what}")

    def run(rule_set: RuleSet, label: str) -> list[Impact]:
        with _progress(len(plan), label) as progress:
            return sweep(rule_set, loaded, plan, _controller_flags(), workers, address, progress, _reference())

    new = run(rule_set, "scenarios")
    _write_report(report_path, lambda: report_html(_package_version(), resilience=new, title="fleetrules: resilience"))
    old: list[Impact] | None = None
    if base or base_ref:
        with tempfile.TemporaryDirectory(prefix="fleetrules-base-") as tmp:
            old_paths = list(base) if base else _rules_at(str(base_ref), rules, Path(tmp))
            old = run(_rules(old_paths), "base scenarios")
    if old is not None:
        changes = resilience_changes(old, new)
        text = {"text": changes_text, "json": changes_json, "markdown": changes_markdown, "sarif": None}[output]
        _say(text(changes) if text else resilience_sarif([c.new for c in changes], _package_version()), nl=False)
        failed = any(gate in c.worse for c in changes for gate in gates)
    else:
        if output == "sarif":
            _say(resilience_sarif(new, _package_version()), nl=False)
        elif output == "json":
            _say(resilience_json(new), nl=False)
        else:
            _say((resilience_markdown if output == "markdown" else resilience_text)(new, top), nl=False)
        failed = any(gate in i.harms for i in new for gate in gates)
    if failed:
        sys.exit(EXIT_PROBLEMS)


def _package_version() -> str:
    try:
        return importlib.metadata.version("fleetrules")
    except importlib.metadata.PackageNotFoundError:
        return "0"


@main.command("test")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--format", "output_format", type=click.Choice(["text", "junit", "sarif"]), default="text", show_default=True
)
@_KARMADA_VERSION
@_ROOT
@_guarded
def test_command(paths: Sequence[str], output_format: str) -> None:
    """Run rule tests (*_test.yaml files, below the current directory by default)."""
    report = run_tests(paths or ["."], _version(), _roots())
    if not report.outcomes:
        raise UsageError(f"no test files (*{TEST_SUFFIX}) found")
    if output_format == "sarif":
        _say(test_sarif(report, _package_version()), nl=False)
    else:
        _say(junit(report) if output_format == "junit" else test_text(report), nl=False)
    if report.failed:
        sys.exit(EXIT_PROBLEMS)


@main.command()
@click.argument("rules", nargs=-1, required=True, type=click.Path())
@_FACTS
@_NOW
@_RESCHEDULE
@click.option("--events", type=click.Path(), help="Also step failover through these timed events (the timeline).")
@click.option("--base", "base", multiple=True, type=click.Path(), help="Also show the change from these old rules.")
@click.option("-o", "--output", "report_path", required=True, type=click.Path(dir_okay=False), help="The HTML file.")
@_CONTROLLER
@_REFERENCE
@_KARMADA_VERSION
@_ROOT
@_guarded
def report(
    rules: Sequence[str],
    facts: Sequence[str],
    now: str | None,
    reschedule: str,
    events: str | None,
    base: Sequence[str],
    report_path: str,
) -> None:
    """Write one self-contained HTML page: the placement matrix, the failover timeline (--events) and the
    change from older rules (--base), to look at rather than read."""
    rule_set, loaded = _inputs(rules, facts)
    result = evaluate(rule_set, loaded, _now(now), reschedule == "all", _controller_flags(), reference=_reference())
    timeline = None
    if events is not None:
        start, planned = _events(events)
        entries = run_simulation(rule_set, loaded, start, planned, _warn, _controller_flags(), _reference())
        timeline = (entries, start, {b.key: b.cluster_names for b in loaded.bindings})
    changes = None
    if base:
        old = evaluate(
            _rules(base), loaded, _now(now), reschedule == "all", _controller_flags(), reference=_reference()
        )
        changes = compare(old, result, 0)
    _write_report(report_path, lambda: report_html(_package_version(), result, timeline, changes))
    _say(f"wrote {report_path}", err=True)


@main.command()
def lsp() -> None:
    """Serve the language server for editors (LSP over standard input and output): diagnostics, formatting,
    hover, go to definition."""
    from engine.lsp import serve

    serve()


def run(prog_name: str | None = None) -> None:
    """The command (the `fleetrules` script, `python -m engine`): ``main``, where output that cannot be written
    even before a command runs (`--help > /dev/full`, a closed pipe) ends it with a message, not a traceback."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        main(prog_name=prog_name)
    except OSError as exc:
        _unwritable(exc)
    except SystemExit as exc:
        if exc.code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
            # stopped: what the command started was ended as the exception left it (workers killed, files
            # removed); the interpreter's own shutdown would still join a killed pool's threads, which then
            # write to closed pipes and print their tracebacks
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(exc.code)
        raise


def kubectl_main() -> None:
    """The kubectl plugin (`kubectl fleetrules …`): the same commands, named as kubectl users type them."""
    run(prog_name="kubectl fleetrules")
