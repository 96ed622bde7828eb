"""Reading a Karmada policy object's fields as the rule language's words, each problem at the field's
``file:line:col`` (or the object and the field's path): what the PropagationPolicy and the ClusterTaintPolicy
converters share, with label selectors and cluster affinities, which both read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.codes import Code
from engine.errors import Diagnostic, Span, error, warning
from engine.inputs.marks import Marks
from engine.kube.gojson import quote
from engine.syntax import ast
from engine.syntax.schema import FIELD_SELECTOR_KEYS


@dataclass(frozen=True)
class PolicyObject:
    """A PropagationPolicy or ClusterPropagationPolicy object, where it came from and its positions."""

    source: str  # FILE:LINE, or "object N" for a Python object
    obj: Mapping[str, Any]
    marks: Marks | None = None


def mapping_of(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class Converting:
    """One object's fields read, its problems collected in ``problems``."""

    def __init__(self, source: str, marks: Marks | None, problems: list[Diagnostic]) -> None:
        self.source = marks.file if marks is not None else source
        self.marks = marks
        self.problems = problems
        self.default_line = 0

    def span(self, obj: Any, key: Any = None, of_key: bool = False) -> Span:
        """Where ``obj`` (or its entry ``key``) stands; the object's line when not known."""
        position = self.marks.position(obj, key, of_key) if self.marks is not None else None
        if position is None:
            return Span(self.source, self.default_line, 1, self.default_line, 1)
        return Span(self.source, position.line, position.column, position.line, position.column)

    def field_span(self, obj: Any, path: str) -> Span:
        """The span of the field ``path`` ends in (``spec.priority``, ``values[2]``), inside ``obj``."""
        last = re.search(r"\[([0-9]+)\]$|([^.\[\]]+)$", path)
        if last is not None and isinstance(obj, (dict, list)):
            key: Any = int(last.group(1)) if last.group(1) else last.group(2)
            if (isinstance(obj, dict) and key in obj) or (isinstance(obj, list) and isinstance(key, int)):
                return self.span(obj, key)
        return self.span(obj)

    def fail(self, obj: Any, path: str, message: str) -> None:
        self.problems.append(
            error(f"{path}: {message}", self.field_span(obj, path), subject=self.source, code=Code.POLICY_YAML)
        )

    def warn(self, obj: Any, path: str, message: str) -> None:
        self.problems.append(
            warning(f"{path}: {message}", self.field_span(obj, path), subject=self.source, code=Code.POLICY_YAML)
        )

    def word(self, value: Any, obj: Any, path: str) -> ast.Word:
        if not isinstance(value, str):
            self.fail(obj, path, f"expected a string, found {value!r}")
            value = str(value)
        return ast.Word(value, span=self.field_span(obj, path))

    def integer(self, obj: dict[str, Any], key: str, path: str, bits: int = 64) -> int | None:
        """``obj[key]`` as the API server takes an integer field: absent is None, any other type is the
        structural schema's error, and a value the field's Go type cannot hold is refused."""
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            kind = {bool: "boolean", str: "string", float: "number", list: "array", dict: "object"}.get(
                type(value), type(value).__name__
            )
            self.fail(obj, path, f'Invalid value: "{kind}": {path} in body must be of type integer: "{kind}"')
            return None
        if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            self.fail(obj, path, f"Invalid value: {value}: must fit a {bits}-bit integer")
            return None
        return value

    def words(self, values: Any, obj: Any, path: str) -> tuple[ast.Word, ...]:
        if not isinstance(values, list):
            self.fail(obj, path, "expected a list")
            return ()
        return tuple(self.word(v, values, f"{path}[{i}]") for i, v in enumerate(values))

    def mapping(self, value: Any, parent: Any, path: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(parent, path, "expected a mapping")
            return {}
        return value

    def sequence(self, value: Any, parent: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(parent, path, "expected a list")
            return []
        return value

    def known(self, obj: Mapping[str, Any], allowed: set[str], path: str) -> None:
        for key in obj:
            if key not in allowed:
                message = f"{path}.{key}: unknown field, not evaluated"
                self.problems.append(
                    warning(message, self.span(obj, key, of_key=True), subject=self.source, code=Code.POLICY_YAML)
                )

    # ------------------------------------------------------------ selectors
    def label_selector(self, raw: Any, parent: Any, path: str) -> ast.Selector:
        sel = self.mapping(raw, parent, path)
        self.known(sel, {"matchLabels", "matchExpressions"}, path)
        reqs = [
            ast.Requirement(
                self.word(k, sel, f"{path}.matchLabels"),
                ast.Op.EQUALS,
                (self.word(v, sel, f"{path}.matchLabels.{k}"),),
                span=self.span(sel),
            )
            for k, v in sorted(self.mapping(sel.get("matchLabels"), sel, f"{path}.matchLabels").items())
        ]
        reqs += self.expressions(sel.get("matchExpressions"), sel, f"{path}.matchExpressions")
        return ast.Selector(tuple(reqs), span=self.span(sel))

    def expressions(self, raw: Any, parent: Any, path: str) -> list[ast.Requirement]:
        ops = {"In": ast.Op.IN, "NotIn": ast.Op.NOT_IN, "Exists": ast.Op.EXISTS, "DoesNotExist": ast.Op.DOES_NOT_EXIST}
        out = []
        for i, item in enumerate(raw or []):
            expr = self.mapping(item, parent, f"{path}[{i}]")
            op = ops.get(expr.get("operator", ""))
            if op is None:
                self.fail(expr, f"{path}[{i}].operator", f"unsupported operator {expr.get('operator')!r}")
                continue
            values = self.words(expr.get("values", []), expr, f"{path}[{i}].values")
            out.append(
                ast.Requirement(self.word(expr.get("key"), expr, f"{path}[{i}].key"), op, values, span=self.span(expr))
            )
        return out

    def cluster_affinity(self, raw: dict[str, Any], name: ast.Word | None, path: str) -> ast.ClusterAffinity:
        """A ClusterAffinity; with a ``name``, a ClusterAffinityTerm (affinityName, overflowAffinities)."""
        fields = {"clusterNames", "exclude", "labelSelector", "fieldSelector"}
        self.known(raw, fields | ({"affinityName", "overflowAffinities"} if name is not None else set()), path)
        overflow = []
        for i, item in enumerate(self.sequence(raw.get("overflowAffinities") or [], raw, f"{path}.overflowAffinities")):
            where = f"{path}.overflowAffinities[{i}]"
            group = self.mapping(item, raw, where)
            self.known(group, fields | {"affinityName"}, where)
            group_name = self.word(group.get("affinityName"), group, f"{where}.affinityName")
            overflow.append(ast.Overflow(group_name, self.cluster_statements(group, where), span=self.span(group)))
        return ast.ClusterAffinity(name, self.cluster_statements(raw, path), tuple(overflow), span=self.span(raw))

    def cluster_statements(self, raw: dict[str, Any], path: str) -> tuple[ast.ClusterStmt, ...]:
        stmts: list[ast.ClusterStmt] = []
        if raw.get("clusterNames"):
            stmts.append(
                ast.ClusterList(
                    ast.ClusterField.NAMES,
                    self.words(raw["clusterNames"], raw, f"{path}.clusterNames"),
                    span=self.span(raw),
                )
            )
        if raw.get("exclude"):
            stmts.append(
                ast.ClusterList(
                    ast.ClusterField.EXCLUDE, self.words(raw["exclude"], raw, f"{path}.exclude"), span=self.span(raw)
                )
            )
        if raw.get("labelSelector") is not None:
            stmts.append(
                ast.ClusterSelector(
                    ast.ClusterField.LABELS,
                    self.label_selector(raw["labelSelector"], raw, f"{path}.labelSelector"),
                    span=self.span(raw["labelSelector"]),
                )
            )
        if raw.get("fieldSelector") is not None:
            fs = self.mapping(raw["fieldSelector"], raw, f"{path}.fieldSelector")
            problem = field_selector_problem(fs.get("matchExpressions"))
            if problem is not None:  # ValidatePolicyFieldSelector: the first problem, of the whole selector
                self.fail(fs, f"{path}.fieldSelector", problem)
                return tuple(stmts)
            reqs = self.expressions(fs.get("matchExpressions"), fs, f"{path}.fieldSelector.matchExpressions")
            stmts.append(
                ast.ClusterSelector(
                    ast.ClusterField.FIELDS, ast.Selector(tuple(reqs), span=self.span(fs)), span=self.span(fs)
                )
            )
        return tuple(stmts)


def go_quote(value: Any) -> str:
    """Go's %q of a string field (a missing one is empty)."""
    return quote("" if value is None else str(value))


def field_selector_problem(expressions: Any) -> str | None:
    """ValidatePolicyFieldSelector (pkg/util/validation/validation.go): key, then operator, of each expression."""
    for expr in expressions if isinstance(expressions, list) else []:
        if not isinstance(expr, dict):
            continue
        key, operator = expr.get("key"), expr.get("operator")
        if key not in FIELD_SELECTOR_KEYS:
            return f"unsupported key {go_quote(key)}, must be provider, region, or zone"
        if operator not in ("In", "NotIn"):
            return f"unsupported operator {go_quote(operator)}, must be In or NotIn"
    return None
