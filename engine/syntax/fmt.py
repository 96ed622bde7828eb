"""The formatter: the inverse of the parser, printing an AST in the one canonical layout.

Comments are not in the grammar; they are put back by position: a comment is printed before
the first statement that starts after it, or at the end of the line of a statement it trails.
A blank line between two statements of a block is kept (collapsed to one); top-level items are
always separated by one blank line. ``parse(format(x)) == parse(x)`` holds for every valid file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import TypeVar, assert_never

from engine.errors import expect
from engine.syntax import ast
from engine.syntax.parse import UNIT_SECONDS, keywords, parse

INDENT = "  "
N = TypeVar("N", bound=ast.Node)
_BARE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\/-]*")
_BARE_STEP = re.compile(r"[A-Za-z0-9_-]+")


def word(w: ast.Word | str) -> str:
    value = w.value if isinstance(w, ast.Word) else w
    if _BARE_WORD.fullmatch(value) and value not in keywords():
        return value
    return json.dumps(value, ensure_ascii=False)


def string(w: ast.Word) -> str:
    return json.dumps(w.value, ensure_ascii=False)


def duration(d: ast.Duration) -> str:
    rest, parts = d.seconds, []
    for unit, size in UNIT_SECONDS.items():
        if rest >= size:
            parts.append(f"{rest // size}{unit}")
            rest %= size
    return "".join(parts) or "0s"


_SOFT_KEYWORDS = frozenset({"name", "kind", "namespace", "labels", "names", "weight", "reason"})


def field_name(w: ast.Word) -> str:
    """Field names of derived facts may be one of a few keywords without quotes."""
    return w.value if w.value in _SOFT_KEYWORDS else word(w)


def words(ws: Sequence[ast.Word]) -> str:
    return ", ".join(word(w) for w in ws)


def requirement(r: ast.Requirement) -> str:
    key = word(r.key)
    match r.op:
        case ast.Op.EQUALS:
            return f"{key} = {word(r.values[0])}"
        case ast.Op.NOT_EQUALS:
            return f"{key} != {word(r.values[0])}"
        case ast.Op.IN:
            return f"{key} in ({words(r.values)})"
        case ast.Op.NOT_IN:
            return f"{key} notin ({words(r.values)})"
        case ast.Op.EXISTS:
            return key
        case ast.Op.DOES_NOT_EXIST:
            return f"!{key}"


def selector(s: ast.Selector) -> str:
    if not s.requirements:
        return "{}"
    return "{ " + ", ".join(requirement(r) for r in s.requirements) + " }"


def path(p: ast.Path) -> str:
    out, subscripts = p.var, False
    for step in p.steps:
        subscripts = subscripts or not _BARE_STEP.fullmatch(step)
        out += f"[{json.dumps(step, ensure_ascii=False)}]" if subscripts else f".{step}"
    return out


_PRECEDENCE = {ast.Or: 1, ast.And: 2, ast.Not: 3, ast.Compare: 4, ast.Member: 4}


def expr(e: ast.Expr, parent: int = 0) -> str:
    """Print ``e`` inside a context of precedence ``parent``, bracketing where needed."""
    level = _PRECEDENCE.get(type(e), 5)
    match e:
        case ast.Path():
            text = path(e)
        case ast.Literal(value=bool() as b):
            text = "true" if b else "false"
        case ast.Literal(value=int() as n):
            text = str(n)
        case ast.Literal():
            text = json.dumps(e.value, ensure_ascii=False)
        case ast.ListExpr():
            text = "[" + ", ".join(expr(i, 5) for i in e.items) + "]"
        case ast.Compare():
            text = f"{expr(e.left, 5)} {e.op.value} {expr(e.right, 5)}"
        case ast.Member():
            text = f"{expr(e.item, 5)} {'not in' if e.negated else 'in'} {expr(e.container, 5)}"
        case ast.Not():
            text = f"not {expr(e.operand, 3)}"
        case ast.And() | ast.Or():
            joiner = " and " if isinstance(e, ast.And) else " or "
            # a nested operator of the same kind keeps its brackets: the parser flattens chains
            text = joiner.join(expr(o, level + 1) for o in e.operands)
        case ast.Call():
            text = f"{word(e.name)}({', '.join(word(a) for a in e.args)})"
        case _:
            assert_never(e)
    return f"({text})" if level < parent else text


def pattern(p: ast.Pattern) -> str:
    head = f"{'not ' if p.negated else ''}{word(p.fact_type)} {p.var.value}"
    return head if p.condition is None else f"{head} ({expr(p.condition)})"


def action(a: ast.Action) -> str:
    match a:
        case ast.Reject():
            reason = f" reason {string(a.reason)}" if a.reason is not None else ""
            return f"reject {a.cluster.value} for {a.binding.value} {string(a.message)}{reason}"
        case ast.Prefer():
            return f"prefer {a.cluster.value} for {a.binding.value} weight {a.weight.value}"
        case ast.Derive():
            fields = ", ".join(f"{field_name(f.name)} = {expr(f.value)}" for f in a.fields)
            return f"derive {word(a.fact_type)}({fields})"
        case ast.Evict():
            return f"evict {a.binding.value} from {a.cluster.value} reason {word(a.reason)} {string(a.message)}"
        case _:
            assert_never(a)


def toleration(t: ast.Toleration) -> str:
    out = "tolerate " + ("*" if t.key is None else word(t.key))
    if t.value is not None:
        out += f" = {word(t.value)}"
    if t.effect is not None:
        out += f" : {word(t.effect)}"
    if t.seconds is not None:
        out += f" for {duration(t.seconds)}"
    return out


def workload_term(t: ast.WorkloadTerm) -> str:
    out = f"{'prefer ' if t.preferred else ''}workload {t.keyword} by {word(t.key)}"
    if t.weight is not None:
        out += f" weight {t.weight.value}"
    if t.topology is not None:
        out += f" within {word(t.topology)}"
    return out


def replicas(node: ast.Replicas) -> str:
    out = f"replicas {word(node.mode)}"
    if node.by is not None and node.by.value == "weight":
        entries = []
        for w in node.weights:
            target = w.target
            one = target[0] if len(target) == 1 else None
            if isinstance(one, ast.ClusterList) and one.field is ast.ClusterField.NAMES and len(one.values) == 1:
                entries.append(f"{word(one.values[0])} {w.weight.value}")
                continue
            entries.append(f"clusters {{ {' '.join(_leaf(s) for s in target)} }} {w.weight.value}")
        return out + (f" by weight {{ {', '.join(entries)} }}" if entries else " by weight {}")
    if node.by is not None:
        out += f" by {word(node.by)}"
    return out


def _leaf(node: ast.Leaf) -> str:
    """One-line statements; blocks are handled by the printer."""
    match node:
        case ast.Include():
            return f"include {string(node.path)}"
        case ast.SelectList():
            return f"{node.field.value} {words(node.values)}"
        case ast.SelectLabels():
            return f"labels {selector(node.selector)}"
        case ast.ClusterList():
            return f"{node.field.value} {words(node.values)}"
        case ast.ClusterSelector():
            return f"{node.field.value} {selector(node.selector)}"
        case ast.Toleration():
            return toleration(node)
        case ast.WorkloadTerm():
            return workload_term(node)
        case ast.Priority():
            return f"priority {node.value.value}"
        case ast.SchedulePriority():
            return f"priority class {word(node.class_name)}"
        case ast.Preemption():
            return f"preemption {word(node.mode)}"
        case ast.Activation():
            return f"activation {word(node.mode)}"
        case ast.PropagateDeps():
            return f"propagate {word(node.what)}"
        case ast.Spread():
            low = f" min {node.min_groups.value}" if node.min_groups else ""
            high = f" max {node.max_groups.value}" if node.max_groups else ""
            return f"spread by {word(node.field)}{low}{high}"
        case ast.Replicas():
            return replicas(node)
        case ast.FailoverToleration():
            return f"toleration {duration(node.duration)}"
        case ast.Purge():
            return f"purge {word(node.mode)}"
        case ast.Grace():
            return f"grace {duration(node.duration)}"
        case ast.Preserve():
            return f"preserve {word(node.alias)} = {string(node.json_path)}"
        case _:
            assert_never(node)


class _Printer:
    def __init__(self, file: ast.File, source: str | None) -> None:
        self.lines: list[str] = []
        self.comments = sorted(file.comments, key=lambda c: (c.span.line, c.span.column))
        self.source_lines = source.splitlines() if source is not None else []

    def _blank_between(self, after_line: int, before_line: int) -> bool:
        lines = range(max(after_line + 1, 1), min(before_line, len(self.source_lines) + 1))
        return any(not self.source_lines[i - 1].strip() for i in lines)

    def flush_comments(self, before_line: int, indent: str, after_line: int | None = None) -> None:
        """Print the comments above ``before_line``; ``after_line`` ends the previous statement."""
        pending = self.comments and self.comments[0].span.line < before_line
        if pending and after_line and self._blank_between(after_line, self.comments[0].span.line):
            self.lines.append("")
        while self.comments and self.comments[0].span.line < before_line:
            comment = self.comments.pop(0)
            self.lines.append(f"{indent}{comment.text}".rstrip())
            following = self.comments[0].span.line if self.comments else before_line
            if self._blank_between(comment.span.line, min(following, before_line)):
                self.lines.append("")

    def trailing_comment(self, line: int) -> None:
        if self.comments and self.comments[0].span.line == line and self.lines:
            self.lines[-1] += f"  {self.comments.pop(0).text}".rstrip()

    def statements(self, nodes: Sequence[N], depth: int, emit: Callable[[N, int], None]) -> None:
        indent = INDENT * depth
        previous_end = 0
        for index, node in enumerate(nodes):
            start = node.span.line
            first = min([start] + [c.span.line for c in self.comments if c.span.line < start]) if start else 0
            if index and start and self._blank_between(previous_end, first):
                self.lines.append("")
            self.flush_comments(start, indent)
            emit(node, depth)
            previous_end = node.span.end_line

    def node(self, node: ast.Statement, depth: int) -> None:
        match node:
            case ast.Policy():
                self.block(f"policy {word(node.name)}", node, node.statements, depth)
            case ast.Select():
                self.block("select", node, node.statements, depth)
            case ast.ClusterAffinity():
                head = "clusters" if node.name is None else f"clusters {word(node.name)}"
                children: list[ast.Statement] = [*node.statements, *node.overflow]
                children.sort(key=lambda n: (n.span.line, n.span.column))
                self.block(head, node, children, depth)
            case ast.Overflow():
                self.block(f"overflow {word(node.name)}", node, node.statements, depth)
            case ast.Failover():
                self.block(f"failover {word(node.kind)}", node, node.statements, depth)
            case ast.Rule():
                self.rule(node, depth)
            case ast.Condition():
                self.condition(node, depth)
            case _:
                self.lines.append(INDENT * depth + _leaf(node))
                self.trailing_comment(node.span.end_line)

    def block(self, head: str, node: ast.Node, children: Sequence[ast.Statement], depth: int) -> None:
        indent = INDENT * depth
        self.lines.append(f"{indent}{head} {{")
        self.trailing_comment(node.span.line)
        last = children[-1].span.end_line if children else None
        self.statements(children, depth + 1, self.node)
        self.flush_comments(node.span.end_line, indent + INDENT, last)
        self.lines.append(f"{indent}}}")
        self.trailing_comment(node.span.end_line)

    def condition(self, node: ast.Condition, depth: int) -> None:
        indent, inner = INDENT * depth, INDENT * (depth + 1)
        self.lines.append(f"{indent}condition {word(node.name)}({', '.join(word(p) for p in node.params)}) {{")
        self.trailing_comment(node.span.line)
        self.flush_comments(node.body.span.line, inner)
        self.lines.append(inner + expr(node.body))
        self.trailing_comment(node.body.span.end_line)
        self.flush_comments(node.span.end_line, inner, node.body.span.end_line)
        self.lines.append(f"{indent}}}")
        self.trailing_comment(node.span.end_line)

    def rule(self, rule: ast.Rule, depth: int) -> None:
        indent = INDENT * depth
        self.lines.append(f"{indent}rule {word(rule.name)} {{")
        self.trailing_comment(rule.span.line)
        parts: list[tuple[ast.Node, str]] = [
            (p, ("when " if i == 0 else " and ") + pattern(p)) for i, p in enumerate(rule.patterns)
        ]
        parts += [(a, ("then " if i == 0 else " and ") + action(a)) for i, a in enumerate(rule.actions)]
        nodes = [n for n, _ in parts]
        texts = {id(n): text for n, text in parts}

        def emit(node: ast.Node, d: int) -> None:
            self.lines.append(INDENT * d + texts[id(node)])
            self.trailing_comment(node.span.end_line)

        self.statements(nodes, depth + 1, emit)
        self.flush_comments(rule.span.end_line, indent + INDENT, nodes[-1].span.end_line)
        self.lines.append(f"{indent}}}")
        self.trailing_comment(rule.span.end_line)

    def file(self, file: ast.File) -> str:
        for index, item in enumerate(file.items):
            if index and not (isinstance(item, ast.Include) and isinstance(file.items[index - 1], ast.Include)):
                self.lines.append("")
            self.flush_comments(item.span.line, "")
            self.node(item, 0)
        if self.comments and self.lines:
            self.lines.append("")
        self.flush_comments(10**9, "")
        return "\n".join(self.lines) + "\n" if self.lines else ""


def format_file(file: ast.File, source: str | None = None) -> str:
    """The canonical text of ``file`` (as `fleetrules fmt` writes it); ``source``, its original text, lets its
    blank lines and comments be kept where they were."""
    expect("file", file, ast.File, "a File from parse()")
    expect("source", source, (str, type(None)), "the file's text (str) or None")
    return _Printer(file, source).file(file)


def format_source(text: str, path: str = "<string>") -> str:
    """A rule file's ``text`` in the canonical layout (parsed and printed again: `fleetrules fmt`); raises
    RuleError, its diagnostics at ``path``, when the text does not parse."""
    expect("text", text, str, "the rule file's text (str)")
    return format_file(parse(text, path), text)
