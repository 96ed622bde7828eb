"""DSL rules → engine rules (engine.ir) → durable-rules ruleset JSON.

A pattern's condition may only test its own fact, against literals or facts of earlier patterns
(the engine joins left to right). ``x in v.list`` where both sides belong to different facts
becomes a join on ``member`` facts, one per list element; it may stand only as a top-level
``and``-ed condition (or its negation), which the compiler checks with a positioned error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, assert_never

from engine.codes import Code
from engine.compile import ir
from engine.compile.encoding import Symbols, derived_prop
from engine.errors import Diagnostic, Span, error
from engine.syntax import ast
from engine.syntax.schema import BUILTIN_FACTS, MEMBER, FieldType

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\.([^{}\s]+)\}")
# Facts whose negation is only sound under the engine's placement protocol (see engine.pipeline).
_CHANGING = ("placement", "scheduled")


class CompileError(Exception):
    def __init__(self, message: str, span: Span) -> None:
        super().__init__(message)
        self.diagnostic = error(message, span, code=Code.NOT_COMPILABLE)


@dataclass(frozen=True)
class Resolved:
    alias: str
    prop: str
    optional: bool  # may be absent from the fact (labels, derived fields)
    list_field: str | None = None  # set when the path names a list field (zones, clusters)


class _RuleCompiler:
    def __init__(self, rule: ast.Rule, symbols: Symbols, derived: set[str], builtin: bool) -> None:
        self.rule = rule
        self.symbols = symbols
        self.derived = derived
        self.builtin = builtin
        self.types: dict[str, str] = {}
        self.members = 0

    @staticmethod
    def alias(var: str) -> str:
        return f"v_{var}"

    def resolve(self, path: ast.Path) -> Resolved:
        fact_type = self.types.get(path.var)
        if fact_type is None or not path.steps:
            raise CompileError(f"'{path.var}' is not a field of a matched fact", path.span)
        alias, name = self.alias(path.var), path.steps[0]
        schema = BUILTIN_FACTS.get(fact_type)
        if schema is None:
            return Resolved(alias, derived_prop(name), optional=True)
        kind = schema.get(name)
        if kind is FieldType.LABELS and len(path.steps) == 2:
            return Resolved(alias, self.symbols.label(path.steps[1]), optional=True)
        if kind is FieldType.LIST:
            return Resolved(alias, name, optional=False, list_field=name)
        if kind is None or len(path.steps) != 1:
            raise CompileError(f"{fact_type} has no field {'.'.join(path.steps)}", path.span)
        return Resolved(alias, name, optional=False)

    def operand(self, expr: ast.Expr, own: str) -> Resolved | ast.Literal:
        if isinstance(expr, ast.Literal):
            return expr
        if isinstance(expr, ast.Path):
            return self.resolve(expr)
        raise CompileError("compare a field with a literal or with another fact's field", expr.span)

    # ------------------------------------------------------------ conditions of one pattern
    def condition(self, expr: ast.Expr, own: str) -> ir.Cond:
        match expr:
            case ast.And():
                return ir.all_of(*(self.condition(e, own) for e in expr.operands))
            case ast.Or():
                return ir.any_of(*(self.condition(e, own) for e in expr.operands))
            case ast.Not():
                return ir.negate(self.condition(expr.operand, own))
            case ast.Literal(value=bool() as b):
                return ir.TRUE if b else ir.FALSE
            case ast.Path():
                return self.compare(ast.Compare(ast.CompareOp.EQ, expr, ast.Literal(True), span=expr.span), own)
            case ast.Compare():
                return self.compare(expr, own)
            case ast.Member():
                cond = self.membership(expr, own)
                return ir.negate(cond) if expr.negated else cond
            case ast.Literal() | ast.ListExpr():
                raise CompileError("this is not a condition (a comparison, membership or true/false)", expr.span)
            case ast.Call():  # written out before compiling (engine.syntax.conditions) where it can be
                raise CompileError(f"condition '{expr.name.value}' cannot be used here", expr.span)
            case _:
                assert_never(expr)

    def compare(self, expr: ast.Compare, own: str) -> ir.Cond:
        left, right = self.operand(expr.left, own), self.operand(expr.right, own)
        op = expr.op.value
        mine = [isinstance(x, Resolved) and x.alias == own for x in (left, right)]
        if all(mine):
            raise CompileError(
                "compare a field with a literal or with another fact's field, not with its own", expr.span
            )
        if not any(mine):
            raise CompileError(
                f"each condition in the pattern of '{own[2:]}' must test a field of '{own[2:]}'", expr.span
            )
        if mine[1]:
            left, right, op = right, left, ir.FLIPPED_OP[op]
        assert isinstance(left, Resolved)
        if left.list_field:
            raise CompileError(f"'{left.list_field}' is a list: test membership with 'in'", expr.span)
        value = ir.Ref(right.alias, right.prop) if isinstance(right, Resolved) else right.value
        test = ir.Test(op, left.prop, value)
        if left.optional and op != "!=":
            # an absent label equals nothing and orders with nothing; it differs from everything
            return ir.all_of(ir.present(left.prop), test)
        return test

    def membership(self, expr: ast.Member, own: str) -> ir.Cond:
        item, container = expr.item, expr.container
        if isinstance(container, ast.ListExpr):
            if not all(isinstance(i, ast.Literal) for i in container.items):
                raise CompileError("list literals in conditions hold literals only", container.span)
            tests = [ast.Compare(ast.CompareOp.EQ, item, i, span=expr.span) for i in container.items]
            return ir.any_of(*(self.compare(t, own) for t in tests))
        if isinstance(container, ast.Path):
            target = self.resolve(container)
            if target.list_field and target.alias == own and isinstance(item, ast.Literal):
                return ir.Present(self.symbols.flag(target.list_field, str(item.value)))
            if target.list_field:
                raise CompileError("membership between two facts must stand on its own, joined with 'and'", expr.span)
        raise CompileError("'in' takes a list literal or a list field (zones, clusters)", container.span)

    def member_pattern(self, expr: ast.Expr, own: str) -> ir.Pattern | None:
        """A top-level ``x in v.list`` across two facts, as a (negated) join on member facts."""
        negated = False
        if isinstance(expr, ast.Not):
            negated, expr = True, expr.operand
        if not isinstance(expr, ast.Member) or not isinstance(expr.container, ast.Path):
            return None
        target = self.resolve(expr.container)
        if not target.list_field:
            return None
        item = self.operand(expr.item, own)
        if isinstance(item, ast.Literal) and target.alias == own:
            return None  # a flag on the fact itself
        if own not in (target.alias, getattr(item, "alias", None)):
            raise CompileError(
                f"each condition in the pattern of '{own[2:]}' must test a field of '{own[2:]}'", expr.span
            )
        value: ir.Ref | str | int | bool = ir.Ref(item.alias, item.prop) if isinstance(item, Resolved) else item.value
        self.members += 1
        cond = ir.all_of(
            ir.Test("==", "owner", ir.Ref(target.alias, "key")),
            ir.Test("==", "field", target.list_field),
            ir.Test("==", "value", value),
        )
        return ir.Pattern(f"m{self.members}", MEMBER, negated != expr.negated, cond)

    def pattern(self, pattern: ast.Pattern) -> list[ir.Pattern]:
        var, fact_type = pattern.var.value, pattern.fact_type.value
        if pattern.negated and fact_type in _CHANGING and not self.builtin:
            raise CompileError(
                f"'not {fact_type}' is not available in rules: placements change while bindings are placed",
                pattern.span,
            )
        if pattern.negated and fact_type in self.derived:
            raise CompileError(
                f"'not {fact_type}' is not available: derived facts arrive during evaluation "
                "(negation over them needs stratification, which fleetrules does not do yet)",
                pattern.span,
            )
        self.types[var] = fact_type
        own = self.alias(var)
        conjuncts = list(_conjuncts(pattern.condition)) if pattern.condition is not None else []
        joins: list[ir.Pattern] = []
        simple: list[ast.Expr] = []
        for conjunct in conjuncts:
            join = self.member_pattern(conjunct, own)
            if join is None:
                simple.append(conjunct)
            else:
                joins.append(join)
        if pattern.negated and joins:
            raise CompileError("a 'not' pattern cannot test membership in another fact's list", pattern.span)
        cond = ir.all_of(*(self.condition(c, own) for c in simple))
        if pattern.negated:
            del self.types[var]
        return [ir.Pattern(own, fact_type, pattern.negated, cond, pattern.span), *joins]

    # ------------------------------------------------------------ actions
    def message(self, word: ast.Word) -> ir.Message:
        parts: list[str | ir.Ref] = []
        pos = 0
        for match in _PLACEHOLDER.finditer(word.value):
            parts.append(word.value[pos : match.start()])
            path = ast.Path(match.group(1), tuple(match.group(2).split(".", 1)), span=word.span)
            if path.var not in self.types:
                raise CompileError(f"unknown variable '{path.var}' in message", word.span)
            resolved = self.resolve(path)
            parts.append(ir.Ref(resolved.alias, resolved.prop))
            pos = match.end()
        parts.append(word.value[pos:])
        return ir.Message(tuple(p for p in parts if p != ""))

    def action(self, action: ast.Action) -> ir.Action:
        match action:
            case ast.Reject():
                reason = self.message(action.reason) if action.reason is not None else None
                return ir.Reject(
                    self.alias(action.cluster.value),
                    self.alias(action.binding.value),
                    self.message(action.message),
                    reason,
                )
            case ast.Prefer():
                return ir.Prefer(
                    self.alias(action.cluster.value), self.alias(action.binding.value), action.weight.value
                )
            case ast.Evict():
                return ir.Evict(
                    self.alias(action.binding.value),
                    self.alias(action.cluster.value),
                    action.reason.value,
                    self.message(action.message),
                )
            case ast.Derive():
                fields = []
                for assignment in action.fields:
                    fields.append((derived_prop(assignment.name.value), self.value(assignment.value)))
                return ir.Derive(action.fact_type.value, tuple(fields))
            case _:
                assert_never(action)

    def value(self, expr: ast.Expr) -> ValueExpr:
        if isinstance(expr, ast.Literal):
            return Constant(expr.value)
        if isinstance(expr, ast.Path):
            resolved = self.resolve(expr)
            if resolved.list_field:
                raise CompileError("derived fields hold a string, number or boolean, not a list", expr.span)
            return FieldValue(resolved.alias, resolved.prop)
        raise CompileError("a derived field is a literal or a field of a matched fact", expr.span)

    def compile(self) -> ir.Rule:
        patterns: list[ir.Pattern] = []
        for pattern in self.rule.patterns:
            patterns += self.pattern(pattern)
        actions = tuple(self.action(a) for a in self.rule.actions)
        return ir.Rule(self.rule.name.value, self.rule.span, tuple(patterns), actions, builtin=self.builtin)


@dataclass(frozen=True)
class Constant:
    value: str | int | bool

    def __call__(self, matched: dict[str, dict[str, Any]]) -> Any:
        return self.value


@dataclass(frozen=True)
class FieldValue:
    alias: str
    prop: str

    def __call__(self, matched: dict[str, dict[str, Any]]) -> Any:
        return matched[self.alias].get(self.prop)


ValueExpr = Constant | FieldValue


def _conjuncts(expr: ast.Expr) -> Iterator[ast.Expr]:
    if isinstance(expr, ast.And):
        for operand in expr.operands:
            yield from _conjuncts(operand)
    else:
        yield expr


def compile_rules(
    rules: Sequence[ast.Rule], symbols: Symbols, builtin: bool = False, derived: set[str] | None = None
) -> tuple[list[ir.Rule], list[Diagnostic]]:
    """``derived``: the fact types the rule set derives (by default, those ``rules`` derive)."""
    if derived is None:
        derived = {a.fact_type.value for r in rules for a in r.actions if isinstance(a, ast.Derive)}
    out: list[ir.Rule] = []
    problems: list[Diagnostic] = []
    for rule in rules:
        try:
            out.append(_RuleCompiler(rule, symbols, derived, builtin).compile())
        except CompileError as exc:
            problems.append(exc.diagnostic)
    return out, problems
