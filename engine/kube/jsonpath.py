"""Kubernetes JSONPath templates, as ``kubectl -o jsonpath`` and Karmada's state preservation use them.

Template: text with ``{expression}`` actions, ``{range EXPR}…{end}`` loops and quoted literals.
Expression steps: ``.field``, ``..field`` (recursive), ``['key']``, ``[0]``, ``[-1]``, ``[1:3]``,
``[*]``, ``[0,2]``, ``['a','b']`` and filters ``[?(@.x == "y")]``. Missing keys are errors, as with
client-go's ``AllowMissingKeys(false)``; several results of one action are joined by spaces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from engine.kube import gojson


class JsonPathError(ValueError):
    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset


# ---------------------------------------------------------------- syntax


@dataclass(frozen=True)
class Field:
    names: tuple[str, ...]  # one name, a union of names, or ("*",)


@dataclass(frozen=True)
class Recursive:
    pass


@dataclass(frozen=True)
class Index:
    indexes: tuple[int, ...]


@dataclass(frozen=True)
class Slice:
    start: int | None
    stop: int | None
    step: int | None


@dataclass(frozen=True)
class Wildcard:
    pass


@dataclass(frozen=True)
class Filter:
    left: Expression | Constant
    op: str | None  # None: existence test
    right: Expression | Constant | None


@dataclass(frozen=True)
class Constant:
    value: Any


Step = Field | Recursive | Index | Slice | Wildcard | Filter


@dataclass(frozen=True)
class Expression:
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Range:
    over: Expression
    body: tuple[Node, ...]


Node = Text | Expression | Constant | Range

_NAME = re.compile(r"[A-Za-z0-9_\-/$]+|\*")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_FILTER_OPS = ("==", "!=", "<=", ">=", "<", ">")


class _Parser:
    def __init__(self, text: str, base: int) -> None:
        self.text = text
        self.pos = 0
        self.base = base

    def fail(self, message: str) -> JsonPathError:
        return JsonPathError(message, self.base + self.pos)

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos : self.pos + n]

    def skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def expect(self, s: str) -> None:
        if self.peek(len(s)) != s:
            raise self.fail(f"expected {s!r}")
        self.pos += len(s)

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def quoted(self) -> str:
        quote = self.peek()
        end = self.pos + 1
        out: list[str] = []
        while end < len(self.text) and self.text[end] != quote:
            if self.text[end] == "\\" and end + 1 < len(self.text):
                out.append({"n": "\n", "t": "\t"}.get(self.text[end + 1], self.text[end + 1]))
                end += 2
            else:
                out.append(self.text[end])
                end += 1
        if end >= len(self.text):
            raise self.fail("unterminated quoted string")
        self.pos = end + 1
        return "".join(out)

    def operand(self) -> Expression | Constant:
        self.skip_spaces()
        c = self.peek()
        if c in "'\"":
            return Constant(self.quoted())
        number = _NUMBER.match(self.text, self.pos)
        if number:
            self.pos = number.end()
            return Constant(float(number.group()) if number.group(1) else int(number.group()))
        for word, value in (("true", True), ("false", False)):
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return Constant(value)
        if c == "@":
            self.pos += 1
            return self.expression(stop=" )=!<>")
        raise self.fail(f"unrecognized character {c!r} in filter" if c else "missing filter operand")

    def bracket(self) -> Step:
        self.expect("[")
        self.skip_spaces()
        if self.peek(2) == "?(":
            self.pos += 2
            left = self.operand()
            self.skip_spaces()
            op = next((o for o in _FILTER_OPS if self.peek(len(o)) == o), None)
            right = None
            if op:
                self.pos += len(op)
                right = self.operand()
            self.skip_spaces()
            self.expect(")")
            self.skip_spaces()
            self.expect("]")
            return Filter(left, op, right)
        if self.peek() == "*":
            self.pos += 1
            self.expect("]")
            return Wildcard()
        if self.peek() in "'\"":
            names = [self.quoted()]
            while True:
                self.skip_spaces()
                if self.peek() != ",":
                    break
                self.pos += 1
                self.skip_spaces()
                if self.peek() not in "'\"":
                    raise self.fail("expected a quoted key")
                names.append(self.quoted())
            self.expect("]")
            return Field(tuple(names))
        close = self.text.find("]", self.pos)
        if close < 0:
            raise self.fail("unclosed '['")
        inner = self.text[self.pos : close].replace(" ", "")
        try:
            if ":" in inner:
                parts = inner.split(":")
                if len(parts) > 3:
                    raise ValueError
                values = [int(p) if p else None for p in parts] + [None] * (3 - len(parts))
                step: Step = Slice(values[0], values[1], values[2])
            else:
                step = Index(tuple(int(p) for p in inner.split(",")))
        except ValueError:
            raise self.fail(f"invalid array index {inner!r}") from None
        self.pos = close + 1
        return step

    def expression(self, stop: str = " ") -> Expression:
        steps: list[Step] = []
        while not self.at_end() and self.peek() not in stop:
            c = self.peek()
            if self.peek(2) == "..":
                self.pos += 2
                steps.append(Recursive())
                if self.peek() == "[":
                    continue
            elif c == ".":
                self.pos += 1
                if self.at_end() or self.peek() in stop or self.peek() in ".[":
                    continue  # `.` alone is the current object
            elif c == "[":
                steps.append(self.bracket())
                continue
            elif c in "$@" and not steps:
                self.pos += 1
                continue
            name = _NAME.match(self.text, self.pos)
            if not name:
                raise self.fail(f"unrecognized character {self.peek()!r}")
            self.pos = name.end()
            steps.append(Wildcard() if name.group() == "*" else Field((name.group(),)))
        return Expression(tuple(steps))


def _actions(template: str) -> list[tuple[str, str, int]]:
    """Split a template into ('text', s, offset) and ('action', s, offset) pieces."""
    pieces: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(template):
        open_ = template.find("{", pos)
        if open_ < 0:
            pieces.append(("text", template[pos:], pos))
            break
        if open_ > pos:
            pieces.append(("text", template[pos:open_], pos))
        end, quote = open_ + 1, ""
        while end < len(template) and (quote or template[end] != "}"):
            if template[end] in "'\"" and not quote:
                quote = template[end]
            elif quote and template[end] == quote and template[end - 1] != "\\":
                quote = ""
            end += 1
        if end >= len(template):
            raise JsonPathError("unclosed action: missing '}'", open_)
        pieces.append(("action", template[open_ + 1 : end], open_ + 1))
        pos = end + 1
    return pieces


def parse(template: str) -> tuple[Node, ...]:
    """Parse a JSONPath template; raise JsonPathError (with the offset) if it is malformed."""
    stack: list[list[Node]] = [[]]
    ranges: list[tuple[Expression, int]] = []
    for kind, text, offset in _actions(template):
        if kind == "text":
            stack[-1].append(Text(text))
            continue
        stripped = text.strip()
        lead = offset + len(text) - len(text.lstrip())
        if not stripped:
            raise JsonPathError("empty action '{}'", offset)
        if stripped == "end":
            if not ranges:
                raise JsonPathError("{end} without a matching {range}", offset)
            over, _ = ranges.pop()
            body = stack.pop()
            stack[-1].append(Range(over, tuple(body)))
            continue
        if stripped.startswith("range ") or stripped == "range":
            parser = _Parser(stripped[5:].strip(), lead + 6)
            ranges.append((_whole_expression(parser), offset))
            stack.append([])
            continue
        if stripped[0] in "'\"":
            parser = _Parser(stripped, lead)
            value = parser.quoted()
            if not parser.at_end():
                raise parser.fail("unexpected text after a quoted string")
            stack[-1].append(Constant(value))
            continue
        stack[-1].append(_whole_expression(_Parser(stripped, lead)))
    if ranges:
        raise JsonPathError("{range} without a matching {end}", ranges[-1][1])
    return tuple(stack[0])


def _whole_expression(parser: _Parser) -> Expression:
    if parser.at_end():
        raise parser.fail("missing expression")
    expression = parser.expression(stop="")
    if not parser.at_end():
        raise parser.fail(f"unrecognized character {parser.peek()!r}")
    return expression


# ---------------------------------------------------------------- evaluation


def _descendants(value: Any) -> list[Any]:
    out = [value]
    if isinstance(value, dict):
        for key in sorted(value):
            out += _descendants(value[key])
    elif isinstance(value, list):
        for item in value:
            out += _descendants(item)
    return out


def _children_of(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return [value[k] for k in sorted(value)]
    return []


def _field(values: list[Any], names: tuple[str, ...], lenient: bool) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if names == ("*",):
            out += [value[k] for k in sorted(value)] if isinstance(value, dict) else []
            continue
        for name in names:
            if isinstance(value, dict) and name in value:
                out.append(value[name])
            elif not lenient:
                raise JsonPathError(f"{name} is not found")
    return out


def _compare(left: Any, op: str, right: Any) -> bool:
    if op == "==":
        return bool(left == right)
    if op == "!=":
        return bool(left != right)
    try:
        return bool({"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op])
    except TypeError:
        return False


def _filter(values: list[Any], step: Filter) -> list[Any]:
    def side(operand: Expression | Constant | None, item: Any) -> list[Any]:
        if isinstance(operand, Constant):
            return [operand.value]
        if operand is None:
            return []
        return _evaluate(operand, item, lenient=True)

    out: list[Any] = []
    for value in values:
        items = value if isinstance(value, list) else [value]
        for item in items:
            left = side(step.left, item)
            if step.op is None:
                keep = bool(left)
            else:
                right = side(step.right, item)
                keep = bool(left) and bool(right) and _compare(left[0], step.op, right[0])
            if keep:
                out.append(item)
    return out


def _evaluate(expression: Expression, root: Any, lenient: bool = False) -> list[Any]:
    values = [root]
    recursive = False
    for step in expression.steps:
        if isinstance(step, Recursive):
            values = [d for v in values for d in _descendants(v)]
            recursive = True
            continue
        if isinstance(step, Field):
            values = _field(values, step.names, lenient or recursive)
        elif isinstance(step, Wildcard):
            values = [x for v in values for x in _children_of(v)]
        elif isinstance(step, Index):
            out = []
            for v in values:
                if not isinstance(v, list):
                    if recursive:
                        continue
                    raise JsonPathError("array index on a value that is not an array")
                for i in step.indexes:
                    if not -len(v) <= i < len(v):
                        if lenient or recursive:
                            continue
                        raise JsonPathError(f"array index out of bounds: index {i}, length {len(v)}")
                    out.append(v[i])
            values = out
        elif isinstance(step, Slice):
            values = [x for v in values if isinstance(v, list) for x in v[step.start : step.stop : step.step]]
        elif isinstance(step, Filter):
            values = _filter(values, step)
        recursive = False
    return values


def format_value(value: Any) -> str:
    """As client-go prints one result: a map or list by json.Marshal, a scalar by fmt.Fprint (so numbers,
    all float64 after json.Unmarshal, print as Go prints them: 1e+07)."""
    if isinstance(value, (dict, list)):
        return gojson.marshal(value)
    return "null" if value is None else gojson.fprint(value)


def _render(nodes: tuple[Node, ...], current: Any, out: list[str]) -> None:
    for node in nodes:
        if isinstance(node, Text):
            out.append(node.text)
        elif isinstance(node, Constant):
            out.append(format_value(node.value))
        elif isinstance(node, Range):
            for value in _evaluate(node.over, current):
                items = value if isinstance(value, list) else [value]
                for item in items:
                    _render(node.body, item, out)
        else:
            out.append(" ".join(format_value(v) for v in _evaluate(node, current)))


def evaluate(template: str | tuple[Node, ...], data: Any) -> str:
    """Render ``template`` against ``data``; raise JsonPathError on a malformed template or missing key."""
    nodes = parse(template) if isinstance(template, str) else template
    try:
        data = gojson.unmarshalled(data)
    except gojson.NotJson as exc:
        raise JsonPathError(str(exc)) from None
    out: list[str] = []
    _render(nodes, data, out)
    return "".join(out)
