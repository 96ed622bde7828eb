"""Named conditions: ``condition NAME(X, Y) { EXPR }`` written once, used in rules' patterns as ``NAME(A, B)``.

A call is its condition's body with each parameter standing for the variable the call names, so a rule with calls
is the rule with the bodies written in their place (``expand_rule``): the checker, the compiler and both engines
see only that. Every node put in a call's place takes the call's span, so that what a rule's part is told (an
unknown field, a comparison that never matches) is told where the rule names the condition.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace

from engine.errors import Span
from engine.syntax import ast

Conditions = Mapping[str, ast.Condition]


def defined(files: Iterable[ast.File]) -> dict[str, ast.Condition]:
    """The conditions of ``files`` by name, the first of a name kept (the checker reports the others)."""
    out: dict[str, ast.Condition] = {}
    for file in files:
        for condition in file.conditions:
            out.setdefault(condition.name.value, condition)
    return out


def calls(expr: ast.Expr | None) -> Iterator[ast.Call]:
    """Every call in ``expr``, outermost first."""
    return (e for e in (ast.subexpressions(expr) if expr is not None else ()) if isinstance(e, ast.Call))


def expandable(call: ast.Call, conditions: Conditions, within: tuple[str, ...] = ()) -> ast.Condition | None:
    """The condition ``call`` stands for, when it can stand in its place: defined, with as many parameters as the
    call has arguments, and not the condition it is inside of (a condition that calls itself never ends)."""
    condition = conditions.get(call.name.value)
    if condition is None or len(condition.params) != len(call.args) or call.name.value in within:
        return None
    return condition


def expand(expr: ast.Expr, conditions: Conditions, within: tuple[str, ...] = ()) -> ast.Expr:
    """``expr`` with every call that can be expanded replaced by its condition's body (calls inside it too); a call
    that cannot be is kept, for the checker to report and the compiler to refuse."""
    if isinstance(expr, ast.Call):
        condition = expandable(expr, conditions, within)
        if condition is None:
            return expr
        standing = {p.value: a.value for p, a in zip(condition.params, expr.args, strict=True)}
        body = _substitute(condition.body, standing, expr.span)
        return expand(body, conditions, (*within, expr.name.value))
    return ast.with_children(expr, [expand(c, conditions, within) for c in ast.children(expr)])


def _substitute(expr: ast.Expr, standing: Mapping[str, str], span: Span) -> ast.Expr:
    """A condition's body as a call puts it: each parameter renamed to the variable it stands for, at ``span``."""
    if isinstance(expr, ast.Path):
        return replace(expr, var=standing.get(expr.var, expr.var), span=span)
    if isinstance(expr, ast.Call):
        args = tuple(replace(a, value=standing.get(a.value, a.value), span=span) for a in expr.args)
        return replace(expr, name=replace(expr.name, span=span), args=args, span=span)
    new = [_substitute(c, standing, span) for c in ast.children(expr)]
    return replace(ast.with_children(expr, new), span=span)


def expand_rule(rule: ast.Rule, conditions: Conditions) -> ast.Rule:
    """``rule`` with its patterns' calls expanded (the same object when it has none)."""
    if not any(True for p in rule.patterns for _ in calls(p.condition)):
        return rule
    patterns = tuple(
        replace(p, condition=expand(p.condition, conditions)) if p.condition is not None else p for p in rule.patterns
    )
    return replace(rule, patterns=patterns)
