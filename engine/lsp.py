"""``fleetrules lsp``: a language server for rule files (pygls), over standard input and output.

- Diagnostics as you type: the document is checked as `fleetrules check` checks it (syntax, semantics,
  Karmada's validation, what the engine could not run), with its includes read from disk and the editor's
  unsaved text for the document itself.
- Formatting: `fleetrules fmt`'s canonical layout, as one edit of the whole document.
- Hover on a policy or rule: what it compiles to (one engine rule per placement statement, the built-in
  rules it feeds), and for a rule where it is evaluated (durable-rules, policy scope, or an indexed join).
- Go to definition on an include: the included file, when the CLI would read it (in the rule tree, a rule file).

Robust as an editor needs it, and as a hostile client tries it: a message the server cannot take gets an error
response (a request with invalid params is answered, not dropped; a request after ``shutdown`` is an
InvalidRequest, as LSP says), a malformed or absurd header does not end the session (the reader finds the next
``Content-Length``; a length of thousands of digits, or past ``MAX_MESSAGE``, is refused without waiting for its
body), a body nested past the JSON parser's recursion is a parse error, no Python traceback or exception text goes
to the client, a document the editor has not opened is never read from disk, diagnostics wait for typing to pause
(a newer change supersedes a pending one), a document past ``MAX_DOCUMENT`` is not checked, and SIGINT and SIGTERM
end the server at once, quietly, even in the middle of a check.

Outer layer, beside engine.cli: nothing in the pipeline imports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, assert_never
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import FeatureRequestError, JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import TextDocument

from engine.checker.rule_set import load_rule_set
from engine.checker.semantic import check
from engine.codes import Code
from engine.compile import ir
from engine.compile.encoding import Symbols
from engine.compile.joins import plan
from engine.compile.lift import lift
from engine.compile.policies import policy_rules
from engine.compile.rules import compile_rules
from engine.errors import Diagnostic, FleetrulesError, Severity, Span
from engine.inputs.files import display_path
from engine.inputs.rule_files import RULE_FILE_SUFFIXES, in_tree, rule_tree, visible_conditions
from engine.karmada.gates import DEFAULT_CONTROLLERS, Controllers
from engine.karmada.notes import gate_notes
from engine.syntax import ast
from engine.syntax.conditions import Conditions, calls, expand_rule
from engine.syntax.fmt import expr, format_source
from engine.syntax.parse import parse_partial
from engine.syntax.schema import POLICY_SCOPE

SOURCE = "fleetrules"
_LOG = logging.getLogger("fleetrules.lsp")
_T = TypeVar("_T")
_SEVERITY = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning}


def _path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def _range(span: Span | None) -> types.Range:
    if span is None or span.line <= 0:
        return types.Range(types.Position(0, 0), types.Position(0, 0))
    end_line = max(span.end_line, span.line)
    end_column = span.end_column if span.end_line >= span.line else span.column
    return types.Range(
        types.Position(span.line - 1, max(span.column - 1, 0)), types.Position(end_line - 1, max(end_column - 1, 0))
    )


MAX_DOCUMENT = 1024 * 1024
"""Characters of a document the server checks as it changes (a rule file of this size parses in about 1.5 s;
the CLI's limit is MAX_FILE_BYTES)."""
DEBOUNCE = 0.3
"""Seconds of quiet after a change before the document is checked."""


def diagnostics(uri: str, text: str, roots: Sequence[Path] = ()) -> list[types.Diagnostic]:
    """What `fleetrules check` says about the document, with its includes from disk (below the document's
    directory or one of ``roots``: the workspace's folders)."""
    if len(text) > MAX_DOCUMENT:
        message = f"the document has {len(text):,} characters; fleetrules checks documents up to {MAX_DOCUMENT:,} here"
        warned = types.DiagnosticSeverity.Warning
        return [types.Diagnostic(_range(None), message, severity=warned, code=Code.TOO_LARGE.id, source=SOURCE)]
    path = _path(uri)
    if path is not None and path.is_file():
        try:
            rule_set, found = load_rule_set([path], overrides={path: text}, roots=roots)
        except FleetrulesError as exc:  # unreadable paths and the like: shown at the top of the document
            code = exc.diagnostics[0].code if exc.diagnostics else Code.USAGE
            found = [Diagnostic(Severity.ERROR, str(exc), code=code)]
        else:
            if not any(d.is_error for d in found):  # the gates off that the document's policies need, as check says
                found += gate_notes(_control_plane(path.parent), rule_set.policies)
        shown = display_path(path)
        mine = [d for d in found if d.span is None or d.span.file == shown]
    else:  # not on disk (an untitled buffer): the document alone
        tree, mine = parse_partial(text, uri)
        if tree is not None and not any(d.is_error for d in mine):
            mine += check([tree])
    return [
        types.Diagnostic(_range(d.span), d.message, severity=_SEVERITY.get(d.severity), code=d.code.id, source=SOURCE)
        for d in mine
    ]


def _control_plane(directory: Path) -> Controllers:
    """The control plane's flags as the CLI would take them for a file of ``directory``: the config file found from
    there up, then FLEETRULES_CONTROLLER; Karmada's defaults where either cannot be used (the CLI says why)."""
    from engine.karmada.config import find, load, split_flags

    try:
        found = find(directory)
        written = [flag for flag, _ in load(found).controller] if found is not None else []
        return Controllers.parse([*written, *split_flags(os.environ.get("FLEETRULES_CONTROLLER", ""))])
    except (FleetrulesError, ValueError):
        return DEFAULT_CONTROLLERS


def formatting(uri: str, text: str) -> list[types.TextEdit] | None:
    """The whole document in the canonical layout; None while it does not parse (diagnostics say why)."""
    try:
        formatted = format_source(text, uri)
    except FleetrulesError:
        return None
    if formatted == text:
        return []
    lines = text.split("\n")
    end = types.Position(len(lines) - 1, len(lines[-1]))
    return [types.TextEdit(types.Range(types.Position(0, 0), end), formatted)]


def _contains(span: Span, line: int, column: int) -> bool:
    """Whether the 1-based (line, column) is inside ``span``."""
    return (span.line, span.column) <= (line, column) < (span.end_line, span.end_column)


def _builtins_fed(policy: ast.Policy) -> list[str]:
    """The built-in rules (rules/*.fr) that act on the bindings of ``policy`` because of its statements."""
    fed = ["api-enablement", "cluster-eviction", "taint-toleration"]  # every binding a policy claims
    for stmt in policy.statements:
        if isinstance(stmt, ast.WorkloadTerm) and not stmt.preferred and stmt.topology is None:
            fed.append("workload-anti-affinity" if stmt.anti else "workload-affinity")
        if isinstance(stmt, ast.Spread) and stmt.field.value in ("provider", "region", "zone"):
            fed.append(f"spread-constraint-{'zones' if stmt.field.value == 'zone' else stmt.field.value}")
    return sorted(set(fed))


def _policy_hover(policy: ast.Policy) -> str:
    compiled = policy_rules(policy, Symbols())
    lines = [f"**policy {policy.name.value}**" + (f" (namespace {policy.namespace})" if policy.namespace else "")]
    if compiled:
        lines.append("")
        lines.append("Compiles to (one engine rule per placement statement):")
        lines += [f"- `{r.name}` (line {r.span.line})" for r in compiled]
    lines.append("")
    lines.append("Built-in rules acting on its bindings: " + ", ".join(f"`{n}`" for n in _builtins_fed(policy)))
    if policy.preempts:
        lines.append("")
        lines.append(
            "Preemption: takes the workloads its selects name from policies of lower priority (and a "
            "PropagationPolicy from any ClusterPropagationPolicy), with the PropagationPolicyPreemption gate only "
            "(off by default; `--controller feature-gates=PropagationPolicyPreemption=true`)."
        )
    if policy.lazy:
        lines.append("")
        lines.append(
            "Lazy activation: a change of this policy's placement reaches a scheduled workload only when "
            "the workload itself changes; until then its bindings are settled, and placed by the placement "
            "they hold when something else has them scheduled. A workload that existed before this policy "
            "claimed it is not propagated until it changes."
        )
    return "\n".join(lines)


def _scope(rule: ir.Rule, symbols: Symbols) -> str:
    """The bindings a lifted rule decides for at once (engine.compile.lift), in words."""
    if rule.scope == POLICY_SCOPE:
        return "policy (it reads the binding only through its policy)"
    names = {prop: f'labels["{key}"]' for key, prop in symbols.labels.items()}
    names |= {prop: f'"{value}" in {field}' for (field, value), prop in symbols.flags.items()}
    read = ", ".join(f"b.{names.get(k, k)}" for k in rule.scope_keys)
    return f"group of bindings alike in {read} (its own placements and clusters checked per binding)"


def _condition_hover(condition: ast.Condition) -> str:
    params = ", ".join(p.value for p in condition.params)
    where = condition.span if condition.span.file.startswith("<builtin>") else "this file"
    return "\n".join(
        [
            f"**condition {condition.name.value}({params})** ({where})",
            "",
            f"```fleetrules\n{expr(condition.body)}\n```",
            "",
            "A call is this condition with each parameter standing for the variable the call names.",
        ]
    )


def _rule_hover(rule: ast.Rule, conditions: Conditions) -> str:
    symbols = Symbols()
    compiled, problems = compile_rules([expand_rule(rule, conditions)], symbols)
    lines = [f"**rule {rule.name.value}**"]
    if problems or not compiled:
        lines.append("")
        lines.append("Does not compile: " + "; ".join(p.message for p in problems))
        return "\n".join(lines)
    for ir_rule in compiled:
        lifted = lift(ir_rule)
        join = plan(lifted)
        patterns = ", ".join(f"{'not ' if p.negated else ''}{p.fact_type}" for p in ir_rule.patterns)
        lines.append("")
        lines.append(f"Matches: {patterns}")
        if join is not None:
            steps = ", ".join(
                f"{'no ' if s.negated else ''}{s.fact_type}" + (f" by {', '.join(s.keys)}" if s.keys else "")
                for s in join.steps
            )
            if lifted.scoped:
                where = f"as an indexed join once per {_scope(lifted, symbols)}: {steps}"
            else:
                where = f"as an indexed join from each binding: {steps}"
        elif lifted.scoped:
            where = f"in durable-rules, once per cluster and {_scope(lifted, symbols)}"
        else:
            where = "in durable-rules, per binding"
        lines.append(f"Evaluated {where}.")
    return "\n".join(lines)


def hover(uri: str, text: str, line: int, character: int) -> types.Hover | None:
    """What the policy or rule under the 0-based position compiles to."""
    tree, _ = parse_partial(text, uri)
    if tree is None:
        return None
    at = (line + 1, character + 1)
    conditions = visible_conditions([tree])
    for item in tree.items:
        if isinstance(item, ast.Include) or not _contains(item.span, *at):
            continue
        span: Span = item.span
        match item:
            case ast.Policy():
                body = _policy_hover(item)
            case ast.Condition():
                body = _condition_hover(item)
            case ast.Rule():
                called = _call_at(item, conditions, at)
                if called is not None:
                    span, body = called[0].span, _condition_hover(called[1])
                else:
                    body = _rule_hover(item, conditions)
            case _:
                assert_never(item)
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, body), _range(span))
    return None


def _call_at(rule: ast.Rule, conditions: Conditions, at: tuple[int, int]) -> tuple[ast.Call, ast.Condition] | None:
    """The call of a known condition under ``at`` in ``rule``, and the condition."""
    for pattern in rule.patterns:
        for call in calls(pattern.condition):
            condition = conditions.get(call.name.value)
            if condition is not None and _contains(call.span, *at):
                return call, condition
    return None


def definition(uri: str, text: str, line: int, character: int, roots: Sequence[Path] = ()) -> types.Location | None:
    """The file an include under the position names, when the CLI would read it: a relative path to a rule
    file below the document's directory or one of ``roots`` (``include "/etc/passwd"`` goes nowhere)."""
    path = _path(uri)
    if path is None or len(text) > MAX_DOCUMENT:
        return None
    tree, _ = parse_partial(text, uri)
    if tree is None:
        return None
    for rule in tree.rules:  # a call: its condition, where this document defines it
        called = _call_at(rule, {c.name.value: c for c in tree.conditions}, (line + 1, character + 1))
        if called is not None:
            return types.Location(uri, _range(called[1].name.span))
    allowed = rule_tree([path.parent], roots)
    for include in tree.includes:
        if _contains(include.span, line + 1, character + 1):
            name = include.path.value
            target = Path(os.path.realpath(path.parent / name))
            if (
                not Path(name).is_absolute()
                and in_tree(target, allowed)
                and target.name.endswith(RULE_FILE_SUFFIXES)
                and target.is_file()
            ):
                return types.Location(target.as_uri(), types.Range(types.Position(0, 0), types.Position(0, 0)))
    return None


INTERNAL_ERROR = "internal error in the fleetrules language server (its log on stderr says more)"


class _Protocol(LanguageServerProtocol):
    """pygls' protocol, sending no Python traceback (an internal error's ``data``) and no exception text (its
    message, "TypeError: unhashable type: 'list'") to the client: the server's log on stderr has both."""

    def _send_response(self, msg_id: Any, result: Any | None = None, error: Any | None = None) -> None:
        if error is not None and error.code == types.ErrorCodes.InternalError:
            error = types.ResponseError(code=error.code, message=INTERNAL_ERROR)
        elif error is not None and getattr(error, "data", None) is not None:
            error = types.ResponseError(code=error.code, message=error.message)
        super()._send_response(msg_id, result, error)


class _Server(LanguageServer):
    """pygls' server, whose out-of-band error messages (a notification that failed) say no exception text; a
    failed request has its error response, as in pygls."""

    def report_server_error(self, error: Exception, source: Any) -> None:
        _LOG.error("fleetrules lsp: %s: %s", getattr(source, "__name__", source), error)
        if source is not FeatureRequestError:
            self.window_show_message(types.ShowMessageParams(message=INTERNAL_ERROR, type=types.MessageType.Error))


def _guarded(feature: Callable[..., _T]) -> Callable[..., _T | None]:
    """A feature that answers None (and logs why) instead of raising into pygls."""

    @functools.wraps(feature)
    def guarded(*args: Any) -> _T | None:
        try:
            return feature(*args)
        except Exception:  # the editor gets no answer, the log says why
            _LOG.exception("fleetrules lsp: %s failed", feature.__name__)
            return None

    return guarded


def _error(protocol: LanguageServerProtocol, msg_id: int | str | None, code: int, message: str) -> None:
    """An error response (JSON-RPC: the id null when the request's could not be read)."""
    protocol._send_response(msg_id, error=types.ResponseError(code, message))  # type: ignore[arg-type]


_HEADER = re.compile(rb"Content-Length:[ \t]*(\d+)", re.IGNORECASE)
MAX_MESSAGE = 64 * 1024 * 1024  # bytes of one message's body
_DOCUMENT_NOTIFICATIONS = (types.TEXT_DOCUMENT_DID_CHANGE, types.TEXT_DOCUMENT_DID_SAVE, types.TEXT_DOCUMENT_DID_CLOSE)


class _Reader:
    """Standard input read in a worker thread (as pygls' StdinAsyncReader), a line at most ``MAX_LINE`` bytes."""

    MAX_LINE = 64 * 1024

    def __init__(self, stdin: BinaryIO) -> None:
        self.stdin = stdin

    def readline(self) -> Awaitable[bytes]:
        return asyncio.get_running_loop().run_in_executor(None, self.stdin.readline, self.MAX_LINE)

    def read(self, n: int) -> Awaitable[bytes]:
        return asyncio.get_running_loop().run_in_executor(None, self.stdin.read, n)


async def _serve(server: LanguageServer, reader: _Reader) -> None:
    """pygls' message loop (pygls.io_.run_async), answering what it drops: a header without a usable length is
    skipped up to the next ``Content-Length`` (pygls waited for one at the start of a line, so after one
    malformed header it never answered again); a length past ``MAX_MESSAGE`` is refused at once and its body, if
    any comes, skipped as the search for the next header reads it (reading it all first waited for 99 GB that
    never came); a body that is not JSON, or nested past the parser's recursion, gets a parse error; a request
    whose params do not fit its method gets an invalid-params error with its id (pygls answered none)."""
    protocol = server.protocol
    while not server._stop_event.is_set():  # type: ignore[union-attr]
        length: int | None = None
        while True:
            line = await reader.readline()
            if not line:
                return
            found = _HEADER.search(line)
            if found is not None:
                digits = found.group(1)  # thousands of digits are past int()'s limit, and past any real message
                length = int(digits) if len(digits) <= len(str(MAX_MESSAGE)) else MAX_MESSAGE + 1
            elif line.strip() == b"" and length is not None:
                break
        if length > MAX_MESSAGE:
            _error(protocol, None, -32600, f"message over {MAX_MESSAGE} bytes")
            continue
        body = await reader.read(length) if length else b""
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            _error(protocol, None, -32700, "parse error: the body is not JSON (or nests too deep)")
            continue
        try:
            message = protocol.structure_message(data) if isinstance(data, dict) else None
        except JsonRpcException as exc:
            msg_id = data.get("id")
            if msg_id is not None and "method" in data:
                protocol._send_response(
                    msg_id, error=types.ResponseError(exc.code, f"{exc.message} for {data['method']}")
                )
            continue
        if message is None or isinstance(message, dict):
            _error(protocol, None, -32600, "invalid request: not JSON-RPC 2.0")
            continue
        if _refused(server, message):
            continue
        try:
            protocol.handle_message(message)
        except Exception:  # one message's failure does not end the session
            _LOG.exception("fleetrules lsp: a message could not be handled")


def _refused(server: LanguageServer, message: Any) -> bool:
    """Whether ``message`` is one the server answers (or drops) itself: a request after ``shutdown`` gets
    InvalidRequest (LSP: "If a server receives requests after a shutdown request those requests should error
    with InvalidRequest"); a change, save or close of a document that was never opened is logged and dropped
    (pygls raised KeyError, and said so to the client)."""
    method = getattr(message, "method", None)
    msg_id = getattr(message, "id", None)
    if server.protocol._shutdown and method is not None and msg_id is not None and method != types.EXIT:
        _error(server.protocol, msg_id, types.ErrorCodes.InvalidRequest, "the server is shut down")
        return True
    if method in _DOCUMENT_NOTIFICATIONS and msg_id is None:
        uri = message.params.text_document.uri
        if _opened(server, uri) is None:
            _LOG.warning("fleetrules lsp: %s for a document that is not open: %s", method, uri)
            return True
    return False


def _opened(server: LanguageServer, uri: str) -> TextDocument | None:
    """The document as the editor holds it, or None when the editor has not opened it: the server never reads
    a ``file://`` URI it is merely told of from disk (a formatting request for /etc/shadow answers nothing)."""
    document: TextDocument | None = server.workspace.text_documents.get(unquote(uri))
    return document


def server() -> LanguageServer:
    from importlib.metadata import PackageNotFoundError, version

    try:
        own = version("fleetrules")
    except PackageNotFoundError:
        own = "0"
    ls = _Server("fleetrules", own, text_document_sync_kind=types.TextDocumentSyncKind.Full, protocol_cls=_Protocol)
    pending: dict[str, int] = {}  # uri → the number of its latest change

    def roots() -> list[Path]:
        folders = [_path(f.uri) for f in ls.workspace.folders.values()]
        root = _path(ls.workspace.root_uri) if ls.workspace.root_uri else None
        return [p for p in (*folders, root) if p is not None]

    @_guarded
    def publish(uri: str) -> None:
        document = _opened(ls, uri)
        if document is None:
            return
        found = diagnostics(uri, document.source, roots())
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, found, version=document.version))

    async def publish_later(uri: str) -> None:
        """Check the document once typing pauses: a change while this one waits supersedes it."""
        pending[uri] = mine = pending.get(uri, 0) + 1
        await asyncio.sleep(DEBOUNCE)
        if pending.get(uri) == mine:
            publish(uri)

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(params: types.DidChangeTextDocumentParams) -> None:
        await publish_later(params.text_document.uri)

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        pending.pop(params.text_document.uri, None)

    @ls.feature(types.TEXT_DOCUMENT_FORMATTING)
    @_guarded
    def format_document(params: types.DocumentFormattingParams) -> Sequence[types.TextEdit] | None:
        uri = params.text_document.uri
        document = _opened(ls, uri)
        if document is None or len(document.source) > MAX_DOCUMENT:
            return None
        return formatting(uri, document.source)

    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    @_guarded
    def on_hover(params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        document = _opened(ls, uri)
        if document is None or len(document.source) > MAX_DOCUMENT:
            return None
        return hover(uri, document.source, params.position.line, params.position.character)

    @ls.feature(types.TEXT_DOCUMENT_DEFINITION)
    @_guarded
    def on_definition(params: types.DefinitionParams) -> types.Location | None:
        uri = params.text_document.uri
        document = _opened(ls, uri)
        if document is None:
            return None
        return definition(uri, document.source, params.position.line, params.position.character, roots())

    return ls


class _Stopped(BaseException):
    """SIGINT or SIGTERM, raised where the server is (in the middle of a check too): asyncio.run's own SIGINT
    handler only cancels its task when the loop next runs, after the check, and SIGTERM printed a traceback."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.code = 128 + signum


def _stop(signum: int, frame: object) -> None:
    raise _Stopped(signum)


def serve(stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Serve one editor session over standard input and output (pygls' start_io, with ``_serve``'s loop)."""
    ls = server()
    ls._stop_event = threading.Event()
    reader = _Reader(stdin or sys.stdin.buffer)
    ls.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _stop)
    try:
        asyncio.run(_serve(ls, reader))
    except (BrokenPipeError, KeyboardInterrupt):
        pass  # the client went away
    except _Stopped as stopped:
        # at once: the reader's thread is blocked reading standard input, and the interpreter would wait for it
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os._exit(stopped.code)
    finally:
        ls.shutdown()  # type: ignore[no-untyped-call]
