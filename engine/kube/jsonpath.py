"""Kubernetes JSONPath templates, as client-go runs them for ``kubectl -o jsonpath`` and for Karmada's state
preservation (k8s.io/client-go util/jsonpath, with AllowMissingKeys(false)): a port of its parser and
evaluator, quirks included, checked against client-go itself on 493 templates (tests/data/jsonpath).

The data is what json.Unmarshal makes of a status (engine.kube.gojson.unmarshalled: maps, lists,
float64 numbers, strings, booleans, nil). Where client-go depends on Go's map iteration order, which Go
randomises (``*`` over a map, ``..``), fleetrules takes the keys in the order the document gives them:
for a map of up to eight keys that is one of the orders Karmada can produce.

Some of client-go's quirks, kept because Karmada has them: a literal number in a filter is an int and a
JSON number a float64, so ``[?(@.replicas==2)]`` fails ("incompatible types for comparison") and
``[?(@.phase=='Running')]`` works; ``['a.b']`` looks up ``a`` then ``b``; ``{.}`` looks up the empty key.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from engine.kube import gojson


class JsonPathError(ValueError):
    """A template client-go refuses to parse, or one that fails on the data (``offset``: where in the
    template parsing stopped, for a parse error)."""

    def __init__(self, message: str, offset: int | None = None, values: list[Any] | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.values = values or []  # what client-go returns with the error (an `exists` filter reads it)


# ---------------------------------------------------------------- nodes (node.go)


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

# ---------------------------------------------------------------- parser (parser.go)

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


# ---------------------------------------------------------------- evaluation (jsonpath.go)


class _Invalid:
    """reflect.ValueOf(nil): the root when the data itself is null (not a nil inside a map or list)."""


INVALID = _Invalid()


class _Byte(int):
    """A byte of a string, as ``*`` over a string yields them (a uint8)."""


def _scalar(value: Any) -> tuple[str, str] | None:
    """A scalar's Go type and its basicKind (the template package's comparison classes); None otherwise."""
    if isinstance(value, bool):
        return "bool", "bool"
    if isinstance(value, _Byte):
        return "uint8", "uint"
    if isinstance(value, int):
        return "int", "int"
    if isinstance(value, float):
        return "float64", "float"
    if isinstance(value, str):
        return "string", "string"
    return None


def _go_type(value: Any) -> str:
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    scalar = _scalar(value)
    if scalar is None:
        raise JsonPathError("reflect: call of reflect.Value.Type on zero Value")
    return scalar[0]


def _go_v(value: Any) -> str:
    """fmt's %v of an unmarshalled value."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_v(v) for v in value) + "]"
    if value is INVALID:
        return "<invalid reflect.Value>"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return gojson.fprint(value)


def _children(value: Any) -> list[Any]:
    """What ``*`` and ``..`` visit of a value: a map's values (in document order; Go's is random), a
    list's items, a string's bytes."""
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return [_Byte(b) for b in value.encode("utf-8")]
    return []


_BAD_TYPE = "invalid type for comparison"
_BAD_COMPARISON = "incompatible types for comparison"


def _kind(value: Any) -> str:
    """basicKind."""
    scalar = _scalar(value)
    if scalar is None:
        raise JsonPathError(_BAD_TYPE)
    return scalar[1]


def _equal(a: Any, b: Any) -> bool:
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        if {ka, kb} == {"int", "uint"}:
            return bool(a == b)
        raise JsonPathError(_BAD_COMPARISON)
    return bool(a == b)


def _less(a: Any, b: Any) -> bool:
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        if {ka, kb} == {"int", "uint"}:
            return bool(a < b)
        raise JsonPathError(_BAD_COMPARISON)
    if ka == "bool":
        raise JsonPathError(_BAD_TYPE)
    return bool(a < b)


def _compare(op: str, a: Any, b: Any) -> bool:
    if op == "<":
        return _less(a, b)
    if op == ">":
        return not (_less(a, b) or _equal(a, b))
    if op == "==":
        return _equal(a, b)
    if op == "!=":
        return not _equal(a, b)
    if op == "<=":
        return _less(a, b) or _equal(a, b)
    if op == ">=":
        return not _less(a, b)
    raise JsonPathError(f"unrecognized filter operator {op}")


class _Run:
    """One Execute: the range bookkeeping of client-go's JSONPath."""

    def __init__(self, root: ListNode) -> None:
        self.nodes = root.nodes
        self.begin_range = 0
        self.in_range = 0
        self.end_range = 0
        self.last_end = -1  # the index of the last end node met

    def find(self, data: Any, start: int) -> list[list[Any]]:
        """FindResults over the top-level nodes from ``start``."""
        cur = [data]
        out: list[list[Any]] = []
        i = start
        while i < len(self.nodes):
            node = self.nodes[i]
            results = self.walk(cur, node)
            if 0 < self.end_range <= self.in_range:
                self.end_range -= 1
                self.last_end = i
                break
            if self.begin_range > 0:
                self.begin_range -= 1
                self.in_range += 1
                if results:
                    for value in results:
                        out += self.find(INVALID if value is None else value, i + 1)
                else:
                    self.find(INVALID, i + 1)
                self.in_range -= 1
                if self.last_end > i:  # resume after the most recent end node
                    i = self.last_end
                i += 1
                continue
            out.append(results)
            i += 1
        return out

    def walk(self, values: list[Any], node: Node) -> list[Any]:
        if isinstance(node, ListNode):
            for child in node.nodes:
                values = self.walk(values, child)
            return values
        if isinstance(node, UnionNode):
            out: list[Any] = []
            for part in node.nodes:
                try:
                    out += self.walk(values, part)
                except JsonPathError as exc:
                    raise JsonPathError(str(exc), values=values) from None
            return out
        if isinstance(node, TextNode):
            return [node.text]
        if isinstance(node, FieldNode):
            return _field(values, node.value)
        if isinstance(node, ArrayNode):
            return _array(values, node.params)
        if isinstance(node, FilterNode):
            return self.filter(values, node)
        if isinstance(node, IntNode | FloatNode | BoolNode):
            return [node.value for _ in values]
        if isinstance(node, WildcardNode):
            return [child for value in values if value is not None for child in _children(value)]
        if isinstance(node, RecursiveNode):
            return _recursive(values)
        return self.identifier(values, node)

    def identifier(self, values: list[Any], node: IdentifierNode) -> list[Any]:
        if node.name == "range":
            self.begin_range += 1
            return values
        if node.name == "end":
            if self.in_range > 0:
                self.end_range += 1
                return []
            raise JsonPathError("not in range, nothing to end")
        raise JsonPathError(f"unrecognized identifier {node.name}", values=values)

    def filter(self, values: list[Any], node: FilterNode) -> list[Any]:
        out = []
        for value in values:
            if not isinstance(value, list):
                message = f"{_go_v(value)} is not array or slice and cannot be filtered"
                raise JsonPathError(message, values=values)
            for item in value:
                try:
                    lefts = self.walk([item], node.left)
                except JsonPathError as exc:
                    if node.operator != "exists":
                        raise JsonPathError(str(exc), values=values) from None
                    lefts = exc.values  # the error itself is not looked at
                if node.operator == "exists":
                    if lefts:
                        out.append(item)
                    continue
                if not lefts:
                    continue
                if len(lefts) > 1:
                    raise JsonPathError("can only compare one element at a time", values=values)
                try:
                    rights = self.walk([item], node.right)
                except JsonPathError as exc:
                    raise JsonPathError(str(exc), values=values) from None
                if not rights:
                    continue
                if len(rights) > 1:
                    raise JsonPathError("can only compare one element at a time", values=values)
                try:
                    passes = _compare(node.operator, lefts[0], rights[0])
                except JsonPathError as exc:
                    raise JsonPathError(str(exc), values=out) from None
                if passes:
                    out.append(item)
        return out


def _field(values: list[Any], name: str) -> list[Any]:
    if not values:
        return []
    out = [value[name] for value in values if isinstance(value, dict) and name in value]
    if not out:
        raise JsonPathError(f"{name} is not found")
    return out


def _array(values: list[Any], params: tuple[Param, Param, Param]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if value is None:  # a nil inside the data
            continue
        if not isinstance(value, list):
            raise JsonPathError(f"{_go_type(value)} is not array or slice", values=values)
        length = len(value)
        start = params[0].value if params[0].known else 0
        if start < 0:
            start += length
        stop = params[1].value if params[1].known else length
        if stop < 0 or (stop == 0 and params[1].derived):
            stop += length
        if stop == start:  # zero elements requested: allowed through
            return out
        if start >= length or start < 0:
            raise JsonPathError(f"array index out of bounds: index {start}, length {length}", values=values)
        if stop > length or stop < 0:
            raise JsonPathError(f"array index out of bounds: index {stop - 1}, length {length}", values=values)
        if start > stop:
            raise JsonPathError(f"starting index {start} is greater than ending index {stop}", values=values)
        step = 1
        if params[2].known:
            if params[2].value <= 0:
                raise JsonPathError("step must be > 0", values=values)
            step = params[2].value
        out += value[start:stop:step]
    return out


def _recursive(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if value is None:
            continue
        children = _children(value)
        if children:
            out.append(value)
            out += _recursive(children)
    return out


def format_value(value: Any) -> str:
    """As client-go prints one result: a map or list by json.Marshal, anything else by fmt.Fprint (so
    numbers, all float64 after json.Unmarshal, print as Go prints them: 1e+07; a nil prints null, the
    data itself when it is null <no value>)."""
    if isinstance(value, dict | list):
        return gojson.marshal(value)
    if value is INVALID:
        return "<no value>"
    if value is None:
        return "null"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return gojson.fprint(value)


def evaluate(template: str | ListNode, data: Any) -> str:
    """Render ``template`` against ``data`` as client-go's Execute does; raise JsonPathError when client-go
    refuses the template or fails on the data (a missing key included)."""
    root = parse(template) if isinstance(template, str) else template
    try:
        data = gojson.unmarshalled(data)
    except gojson.NotJson as exc:
        raise JsonPathError(str(exc)) from None
    groups = _Run(root).find(INVALID if data is None else data, 0)
    return "".join(" ".join(format_value(v) for v in group) for group in groups)
