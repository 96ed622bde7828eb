"""Kubernetes JSONPath templates, as client-go runs them for ``kubectl -o jsonpath`` and for Karmada's state
preservation (k8s.io/client-go util/jsonpath, with AllowMissingKeys(false)): a port of its parser
(engine.kube.jsonpath_syntax) and evaluator, quirks included, checked against client-go itself on 493 templates
(tests/data/jsonpath).

The data is what json.Unmarshal makes of a status (engine.kube.gojson.unmarshalled: maps, lists,
float64 numbers, strings, booleans, nil). Where client-go depends on Go's map iteration order, which Go
randomises (``*`` over a map, ``..``), fleetrules takes the keys in the order the document gives them:
for a map of up to eight keys that is one of the orders Karmada can produce.

Some of client-go's quirks, kept because Karmada has them: a literal number in a filter is an int and a
JSON number a float64, so ``[?(@.replicas==2)]`` fails ("incompatible types for comparison") and
``[?(@.phase=='Running')]`` works; ``['a.b']`` looks up ``a`` then ``b``; ``{.}`` looks up the empty key.
"""

from __future__ import annotations

from typing import Any

from engine.kube import gojson
from engine.kube.jsonpath_syntax import (
    ArrayNode,
    BoolNode,
    FieldNode,
    FilterNode,
    FloatNode,
    IdentifierNode,
    IntNode,
    JsonPathError,
    ListNode,
    Node,
    Param,
    RecursiveNode,
    TextNode,
    UnionNode,
    WildcardNode,
    parse,
)


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
