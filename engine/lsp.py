"""``fleetrules lsp``: a language server for rule files (pygls), over standard input and output.

- Diagnostics as you type: the document is checked as `fleetrules check` checks it (syntax, semantics,
  Karmada's validation, what the engine could not run), with its includes read from disk and the editor's
  unsaved text for the document itself.
- Formatting: `fleetrules fmt`'s canonical layout, as one edit of the whole document.
- Hover on a policy or rule: what it compiles to (one engine rule per placement statement, the built-in
  rules it feeds), and for a rule where it is evaluated (durable-rules, policy scope, or an indexed join).
- Go to definition on an include: the included file.

Outer layer, beside engine.cli: nothing in the pipeline imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from engine.check.rules import load_rule_set
from engine.check.semantic import check
from engine.compile.encoding import Symbols
from engine.compile.joins import plan
from engine.compile.lift import lift
from engine.compile.policies import policy_rules
from engine.compile.rules import compile_rules
from engine.errors import Diagnostic, FleetrulesError, Severity, Span
from engine.inputs.files import display_path
from engine.syntax import ast
from engine.syntax.fmt import format_source
from engine.syntax.parse import parse_partial

SOURCE = "fleetrules"
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


def diagnostics(uri: str, text: str) -> list[types.Diagnostic]:
    """What `fleetrules check` says about the document, with its includes from disk."""
    path = _path(uri)
    if path is not None and path.is_file():
        try:
            _, found = load_rule_set([path], overrides={path: text})
        except FleetrulesError as exc:  # unreadable paths and the like: shown at the top of the document
            found = [Diagnostic(Severity.ERROR, str(exc))]
        shown = display_path(path)
        mine = [d for d in found if d.span is None or d.span.file == shown]
    else:  # not on disk (an untitled buffer): the document alone
        tree, mine = parse_partial(text, uri)
        if tree is not None and not any(d.is_error for d in mine):
            mine += check([tree])
    return [
        types.Diagnostic(_range(d.span), d.message, severity=_SEVERITY.get(d.severity), source=SOURCE) for d in mine
    ]


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
            "PropagationPolicy from any ClusterPropagationPolicy), with the PolicyPreemption gate only "
            "(off by default; `--controller feature-gates=PolicyPreemption=true`)."
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


def _rule_hover(rule: ast.Rule) -> str:
    compiled, problems = compile_rules([rule], Symbols())
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
                where = f"as an indexed join once per policy (it reads the binding only through its policy): {steps}"
            else:
                where = f"as an indexed join from each binding: {steps}"
        elif lifted.scoped:
            where = "in durable-rules, once per policy and cluster (it reads the binding only through its policy)"
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
    for item in tree.items:
        if isinstance(item, (ast.Policy, ast.Rule)) and _contains(item.span, *at):
            body = _policy_hover(item) if isinstance(item, ast.Policy) else _rule_hover(item)
            return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, body), _range(item.span))
    return None


def definition(uri: str, text: str, line: int, character: int) -> types.Location | None:
    """The file an include under the position names."""
    path = _path(uri)
    tree, _ = parse_partial(text, uri)
    if tree is None or path is None:
        return None
    for include in tree.includes:
        if _contains(include.span, line + 1, character + 1):
            target = (path.parent / include.path.value).resolve()
            if target.is_file():
                return types.Location(target.as_uri(), types.Range(types.Position(0, 0), types.Position(0, 0)))
    return None


def server() -> LanguageServer:
    from importlib.metadata import PackageNotFoundError, version

    try:
        own = version("fleetrules")
    except PackageNotFoundError:
        own = "0"
    ls = LanguageServer("fleetrules", own, text_document_sync_kind=types.TextDocumentSyncKind.Full)

    def publish(uri: str) -> None:
        document = ls.workspace.get_text_document(uri)
        params = types.PublishDiagnosticsParams(uri, diagnostics(uri, document.source), version=document.version)
        ls.text_document_publish_diagnostics(params)

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @ls.feature(types.TEXT_DOCUMENT_FORMATTING)
    def format_document(params: types.DocumentFormattingParams) -> Sequence[types.TextEdit] | None:
        uri = params.text_document.uri
        return formatting(uri, ls.workspace.get_text_document(uri).source)

    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        source = ls.workspace.get_text_document(uri).source
        return hover(uri, source, params.position.line, params.position.character)

    @ls.feature(types.TEXT_DOCUMENT_DEFINITION)
    def on_definition(params: types.DefinitionParams) -> types.Location | None:
        uri = params.text_document.uri
        source = ls.workspace.get_text_document(uri).source
        return definition(uri, source, params.position.line, params.position.character)

    return ls


def serve() -> None:
    """Serve one editor session over standard input and output."""
    server().start_io()
