"""Kubernetes JSONPath templates as client-go parses them (k8s.io/client-go/util/jsonpath/parser.go, node.go): the
syntax tree, the parser in Go's own order of checks and messages, and the doubts a template raises.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any


class JsonPathError(ValueError):
    """A template client-go refuses to parse, or one that fails on the data (``offset``: where in the
    template parsing stopped, for a parse error)."""

    def __init__(self, message: str, offset: int | None = None, values: list[Any] | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.values = values or []  # what client-go returns with the error (an `exists` filter reads it)


@dataclass
class ListNode:
    nodes: list[Node] = field(default_factory=list)


@dataclass(frozen=True)
class TextNode:
    text: str


@dataclass(frozen=True)
class FieldNode:
    value: str


@dataclass(frozen=True)
class IdentifierNode:
    name: str


@dataclass(frozen=True)
class Param:
    value: int = 0
    known: bool = False
    derived: bool = False


@dataclass(frozen=True)
class ArrayNode:
    params: tuple[Param, Param, Param]


@dataclass(frozen=True)
class FilterNode:
    left: ListNode
    right: ListNode
    operator: str


@dataclass(frozen=True)
class IntNode:
    value: int


@dataclass(frozen=True)
class FloatNode:
    value: float


@dataclass(frozen=True)
class BoolNode:
    value: bool


@dataclass(frozen=True)
class WildcardNode:
    pass


@dataclass(frozen=True)
class RecursiveNode:
    pass


@dataclass(frozen=True)
class UnionNode:
    nodes: tuple[ListNode, ...]


Node = (
    ListNode
    | TextNode
    | FieldNode
    | IdentifierNode
    | ArrayNode
    | FilterNode
    | IntNode
    | FloatNode
    | BoolNode
    | WildcardNode
    | RecursiveNode
    | UnionNode
)


_EOF = ""


_DICT_KEY = re.compile(r"'([^']*)'")


_SLICE = re.compile(r"(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?")


_FILTER = re.compile(r"([^!<>=]+)([!<>=]+)(.+?)", re.DOTALL)


_INT64 = 2**63


def _is_digit(r: str) -> bool:  # unicode.IsDigit: category Nd
    return r != _EOF and unicodedata.category(r) == "Nd"


def _is_alphanumeric(r: str) -> bool:  # isAlphaNumeric: '_', unicode.IsLetter, unicode.IsDigit
    return r == "_" or (r != _EOF and (unicodedata.category(r) in ("Lu", "Ll", "Lt", "Lm", "Lo") or _is_digit(r)))


def _is_terminator(r: str) -> bool:
    return r in (" ", "\t", "\r", "\n", _EOF, ".", ",", "[", "]", "$", "@", "{", "}")


def _rune(r: str) -> str:
    """Go's %#U of a rune: U+007B '{' (the character only when printable)."""
    code = f"U+{ord(r):04X}"
    return f"{code} '{r}'" if r.isprintable() else code


def _atoi(text: str) -> int | None:
    """strconv.Atoi: an optional sign and ASCII digits, within int64; None otherwise."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if -_INT64 <= value < _INT64 else None


def _parse_float(text: str) -> float | None:
    """strconv.ParseFloat of what parseNumber gathers (a sign, ASCII digits and dots)."""
    if not re.fullmatch(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)", text):
        return None
    return float(text)


class _Parser:
    def __init__(self, text: str) -> None:
        self.input = text
        self.pos = 0
        self.start = 0
        self.width = 0
        self.root = ListNode()
        self.action_start = 0

    def fail(self, message: str, at: int | None = None) -> JsonPathError:
        """An error of client-go's words, at ``at`` (where the construct it is about begins) or here."""
        return JsonPathError(message, self.pos if at is None else at)

    def parse(self) -> ListNode:
        action = self.parse_text()
        while action is not None:
            self.inside_action(action)
            action = self.parse_text()
        return self.root

    def consume(self) -> str:
        value = self.input[self.start : self.pos]
        self.start = self.pos
        return value

    def next(self) -> str:
        if self.pos >= len(self.input):
            self.width = 0
            return _EOF
        r = self.input[self.pos]
        self.width = 1
        self.pos += 1
        return r

    def peek(self) -> str:
        r = self.next()
        self.backup()
        return r

    def backup(self) -> None:
        self.pos -= self.width

    def parse_text(self) -> ListNode | None:
        """parseText up to the next action, which it returns (appended to the root); None at the end."""
        while True:
            if self.input.startswith("{", self.pos):
                if self.pos > self.start:
                    self.root.nodes.append(TextNode(self.consume()))
                self.action_start = self.pos
                self.pos += 1
                self.consume()
                action = ListNode()
                self.root.nodes.append(action)
                return action
            if self.next() == _EOF:
                break
        if self.pos > self.start:
            self.root.nodes.append(TextNode(self.consume()))
        return None

    def inside_action(self, cur: ListNode) -> None:
        while True:  # parseInsideAction, its tail calls as a loop, up to the action's "}"
            rest = self.input[self.pos :]
            if rest.startswith("}"):
                self.pos += 1
                self.consume()
                return
            if rest.startswith("[?("):
                self.parse_filter(cur)
                continue
            if rest.startswith(".."):
                self.parse_recursive(cur)
                continue
            r = self.next()
            if r == _EOF or r in "\r\n":
                raise self.fail("unclosed action", self.action_start)
            if r == " " or r in "@$":
                self.consume()
            elif r == "[":
                self.parse_array(cur)
            elif r in "\"'":
                self.parse_quote(cur, r)
            elif r == ".":
                self.parse_field(cur)
            elif r in "+-" or _is_digit(r):
                self.backup()
                self.parse_number(cur)
            elif _is_alphanumeric(r):
                self.backup()
                self.parse_identifier(cur)
            else:
                raise self.fail(f"unrecognized character in action: {_rune(r)}", self.pos - 1)

    def parse_identifier(self, cur: ListNode) -> None:
        while True:
            if _is_terminator(self.next()):
                self.backup()
                break
        value = self.consume()
        cur.nodes.append(BoolNode(value == "true") if value in ("true", "false") else IdentifierNode(value))

    def parse_recursive(self, cur: ListNode) -> None:
        if cur.nodes and isinstance(cur.nodes[-1], RecursiveNode):
            raise self.fail("invalid multiple recursive descent")
        self.pos += 2
        self.consume()
        cur.nodes.append(RecursiveNode())
        if _is_alphanumeric(self.peek()):
            self.parse_field(cur)

    def parse_number(self, cur: ListNode) -> None:
        begin = self.pos
        if self.peek() in ("+", "-"):
            self.next()
        while True:
            r = self.next()
            if r != "." and not _is_digit(r):
                self.backup()
                break
        value = self.consume()
        integer = _atoi(value)
        if integer is not None:
            cur.nodes.append(IntNode(integer))
            return
        number = _parse_float(value)
        if number is None:
            raise self.fail(f"cannot parse number {value}", begin)
        cur.nodes.append(FloatNode(number))

    def parse_array(self, cur: ListNode) -> None:
        begin = self.start  # the "["
        while True:
            r = self.next()
            if r in (_EOF, "\n"):
                raise self.fail("unterminated array", begin)
            if r == "]":
                break
        text = self.consume()[1:-1]
        if text == "*":
            text = ":"
        parts = text.split(",")
        if len(parts) > 1:
            union = tuple(self.sub(f"[{part.strip(' ')}]", begin) for part in parts)
            cur.nodes.append(UnionNode(union))
            return
        key = _DICT_KEY.fullmatch(text)
        if key is not None:
            cur.nodes.extend(self.sub(f".{key.group(1)}", begin).nodes)
            return
        found = _SLICE.fullmatch(text)
        if found is None:
            raise self.fail(f"invalid array index {text}", begin)
        groups = [g or "" for g in found.groups()]
        params: list[Param] = []
        for i in range(3):
            if groups[i]:
                raw = groups[i][1:] if i > 0 else groups[i]
                if i > 0 and not raw:
                    params.append(Param())
                    continue
                number = _atoi(raw)
                if number is None:
                    raise self.fail(f"array index {raw} is not a number", begin)
                params.append(Param(number, known=True))
            elif i == 1:
                params.append(Param(params[0].value + 1, known=True, derived=True))
            else:
                params.append(Param())
        cur.nodes.append(ArrayNode((params[0], params[1], params[2])))

    def parse_filter(self, cur: ListNode) -> None:
        opening = self.pos  # the "[?("
        self.pos += 3
        self.consume()
        begin = end = False
        pair = ""
        while True:
            r = self.next()
            if r in (_EOF, "\n"):
                raise self.fail("unterminated filter", opening)
            if r in "\"'":
                if not begin:
                    begin, pair = True, r
                    continue
                if self.input[self.pos - 2] != "\\" and r == pair:
                    end = True
            elif r == ")" and begin == end:
                break
        if self.next() != "]":
            raise self.fail("unclosed array expect ]", opening)
        text = self.consume()[:-2]
        found = _FILTER.fullmatch(text)
        if found is None:
            cur.nodes.append(FilterNode(self.sub(text, opening), ListNode(), "exists"))
        else:
            left, right = self.sub(found.group(1), opening), self.sub(found.group(3), opening)
            cur.nodes.append(FilterNode(left, right, found.group(2)))

    def parse_quote(self, cur: ListNode, end: str) -> None:
        begin = self.pos - 1  # the opening quote
        while True:
            r = self.next()
            if r in (_EOF, "\n"):
                raise self.fail("unterminated quoted string", begin)
            if r == end and self.input[self.pos - 2] != "\\":
                break
        value = self.consume()
        unquoted = _unquote(value)
        if unquoted is None:
            raise self.fail(f"unquote string {value} error invalid syntax", begin)
        cur.nodes.append(TextNode(unquoted))

    def parse_field(self, cur: ListNode) -> None:
        self.consume()
        while self.advance():
            pass
        value = self.consume()
        cur.nodes.append(WildcardNode() if value == "*" else FieldNode(value.replace("\\", "")))

    def sub(self, text: str, begin: int) -> ListNode:
        """parseAction of a part of this template (that begins at ``begin``), where its errors stand."""
        try:
            return _action(text)
        except JsonPathError as exc:
            raise JsonPathError(str(exc), begin) from None

    def advance(self) -> bool:
        r = self.next()
        if r == "\\":
            self.next()
        elif _is_terminator(r):
            self.backup()
            return False
        return True


def _action(text: str) -> ListNode:
    """parseAction: ``text`` parsed as the inside of one action."""
    parser = _Parser("{" + text + "}")
    root = parser.parse()
    first = root.nodes[0]
    assert isinstance(first, ListNode)
    return first


_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\"}


def _unquote(s: str) -> str | None:
    """UnquoteExtend: strconv.Unquote, with single quotes too; None for invalid syntax."""
    if len(s) < 2 or s[0] != s[-1] or s[0] not in "\"'":
        return None
    quote, body = s[0], s[1:-1]
    if "\\" not in body and quote not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == quote:
            return None  # an unescaped quote of the kind that delimits
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(body):
            return None
        e = body[i + 1]
        i += 2
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
        elif e == quote:
            out.append(e)
        elif e in "xuU":
            size = {"x": 2, "u": 4, "U": 8}[e]
            digits = body[i : i + size]
            if len(digits) != size or not re.fullmatch(r"[0-9A-Fa-f]+", digits):
                return None
            code = int(digits, 16)
            i += size
            if e != "x" and (code > 0x10FFFF or 0xD800 <= code < 0xE000):
                return None
            out.append(chr(code))
        elif e in "01234567":
            digits = body[i - 1 : i + 2]
            if len(digits) != 3 or not re.fullmatch(r"[0-7]{3}", digits) or int(digits, 8) > 255:
                return None
            out.append(chr(int(digits, 8)))
            i += 2
        else:
            return None
    return "".join(out)


def parse(template: str) -> ListNode:
    """Parse a JSONPath template as client-go does; raise JsonPathError (with the offset) if it refuses it."""
    try:
        return _Parser(template).parse()
    except RecursionError:  # filters nested inside filters, hundreds deep
        raise JsonPathError("the template nests too deeply", 0) from None


def doubts(root: ListNode) -> list[str]:
    """What in a template client-go parses will go wrong on any data, or not as it looks: a {range}
    without its {end}, an {end} without a {range}, a word that is no keyword."""
    out, depth = [], 0
    for node in root.nodes:
        if not isinstance(node, ListNode):
            continue
        words = [n.name for n in node.nodes if isinstance(n, IdentifierNode)]
        for word in words:
            if word == "range":
                depth += 1
            elif word == "end":
                if depth == 0:
                    out.append("{end} without a {range}: it fails on any data (not in range, nothing to end)")
                else:
                    depth -= 1
            else:
                out.append(f"'{word}' is no keyword (range, end): it fails on any data (unrecognized identifier)")
    if depth:
        out.append(
            "{range} without its {end}: client-go evaluates what follows once per item, then once more on the "
            "whole status"
        )
    return out
