"""DSL rules → engine rules (engine.ir) → durable-rules ruleset JSON.

A pattern's condition may only test its own fact, against literals or facts of earlier patterns
(the engine joins left to right). ``x in v.list`` where both sides belong to different facts
becomes a join on ``member`` facts, one per list element; it may stand only as a top-level
``and``-ed condition (or its negation), which the compiler checks with a positioned error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine import ast, ir
from engine.errors import Diagnostic, Span, error
from engine.schema import BUILTIN_FACTS, MEMBER, POLICY_SCOPE, FieldType

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\.([^{}\s]+)\}")
# Facts whose negation is only sound under the engine's placement protocol (see engine.evaluate).
_CHANGING = ("placement", "scheduled")


class CompileError(Exception):
    def __init__(self, message: str, span: Span) -> None:
        super().__init__(message)
        self.diagnostic = error(message, span)


@dataclass
class Symbols:
    """Flat property names for label keys and for list-element flags, shared by a whole program."""

    labels: dict[str, str] = field(default_factory=dict)
    flags: dict[tuple[str, str], str] = field(default_factory=dict)

    def label(self, key: str) -> str:
        return self.labels.setdefault(key, f"L{len(self.labels)}")

    def flag(self, list_field: str, value: str) -> str:
        return self.flags.setdefault((list_field, value), f"F{len(self.flags)}")


def derived_prop(name: str) -> str:
    return f"f_{name}"


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
        raise CompileError("this is not a condition (a comparison, membership or true/false)", expr.span)

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
        return [ir.Pattern(own, fact_type, pattern.negated, cond), *joins]

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
                return ir.Reject(
                    self.alias(action.cluster.value), self.alias(action.binding.value), self.message(action.message)
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
        raise AssertionError(action)

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


# ---------------------------------------------------------------- lifting to policy scope


def _refs(cond: ir.Cond) -> Iterator[ir.Ref]:
    if isinstance(cond, ir.Test) and isinstance(cond.operand, ir.Ref):
        yield cond.operand
    elif isinstance(cond, (ir.AllOf, ir.AnyOf)):
        for item in cond.items:
            yield from _refs(item)


def _props(cond: ir.Cond) -> Iterator[str]:
    if isinstance(cond, (ir.Test, ir.Present)):
        yield cond.prop
    elif isinstance(cond, (ir.AllOf, ir.AnyOf)):
        for item in cond.items:
            yield from _props(item)


def _exemption(pattern: ir.Pattern, binding: str) -> tuple[str, ir.Ref | str | int | bool] | None:
    """``(field, value)`` when ``pattern`` is ``not member(owner == binding.key, field == F, value == V)``."""
    if not (pattern.negated and pattern.fact_type == MEMBER and isinstance(pattern.cond, ir.AllOf)):
        return None
    tests = {t.prop: t.operand for t in pattern.cond.items if isinstance(t, ir.Test) and t.op == "=="}
    if len(tests) != 3 or len(pattern.cond.items) != 3 or tests.get("owner") != ir.Ref(binding, "key"):
        return None
    field_name, value = tests.get("field"), tests.get("value")
    if not isinstance(field_name, str) or value is None or (isinstance(value, ir.Ref) and value.alias == binding):
        return None
    return field_name, value


def lift(rule: ir.Rule) -> ir.Rule:
    """The rule at policy scope, when it depends on its binding only through the binding's policy.

    Most placement rules are of that kind (a policy's cluster statements, taints against the policy's
    tolerations): matched per binding they fire once per (binding, cluster) pair, so their cost grows
    with bindings x clusters. Lifted, the binding pattern matches one ``policy_scope`` fact per policy
    (``key``, ``policy``), the rule fires once per (policy, cluster), and evaluation applies each
    decision to the policy's bindings. A ``not (x in b.clusters)`` condition, the one per-binding part
    such rules have (a cluster the binding already targets passes), becomes an exemption checked then.
    Rules that derive or evict, or read other binding fields, are returned unchanged."""
    if not rule.actions or not all(isinstance(a, (ir.Reject, ir.Prefer)) for a in rule.actions):
        return rule
    bindings = {a.binding for a in rule.actions if isinstance(a, (ir.Reject, ir.Prefer))}
    if len(bindings) != 1:
        return rule
    binding = bindings.pop()
    patterns: list[ir.Pattern] = []
    exempt: list[tuple[str, ir.Ref | str | int | bool]] = []
    for pattern in rule.patterns:
        if pattern.alias == binding:
            if pattern.fact_type != "binding" or set(_props(pattern.cond)) - {"policy"} or any(_refs(pattern.cond)):
                return rule
            patterns.append(ir.Pattern(binding, POLICY_SCOPE, False, pattern.cond))
            continue
        exemption = _exemption(pattern, binding)
        if exemption is not None:
            exempt.append(exemption)
        elif any(r.alias == binding and r.prop != "policy" for r in _refs(pattern.cond)):
            return rule
        else:
            patterns.append(pattern)
    messages = [a.message for a in rule.actions if isinstance(a, ir.Reject)]
    if any(isinstance(p, ir.Ref) and p.alias == binding and p.prop != "policy" for m in messages for p in m.parts):
        return rule
    return replace(rule, patterns=tuple(patterns), scoped=True, exempt=tuple(exempt))


# ---------------------------------------------------------------- durable-rules JSON

_DURABLE_OP = {"!=": "$neq", "<": "$lt", "<=": "$lte", ">": "$gt", ">=": "$gte"}


def _durable_cond(cond: ir.Cond) -> dict[str, Any]:
    if isinstance(cond, ir.Present):
        return {"$ex" if cond.present else "$nex": {cond.prop: 1}}
    if isinstance(cond, ir.Test):
        operand: Any = {cond.operand.alias: cond.operand.prop} if isinstance(cond.operand, ir.Ref) else cond.operand
        if cond.op == "==":
            return {cond.prop: operand}
        return {_DURABLE_OP[cond.op]: {cond.prop: operand}}
    if isinstance(cond, ir.AllOf):
        return {"$and": [_durable_cond(c) for c in cond.items] or [{"$ex": {"t": 1}}]}
    return {"$or": [_durable_cond(c) for c in cond.items] or [{"$nex": {"t": 1}}]}


MAX_VARIANTS = 64


def _has_ref(cond: ir.Cond) -> bool:
    if isinstance(cond, ir.Test):
        return isinstance(cond.operand, ir.Ref)
    if isinstance(cond, (ir.AllOf, ir.AnyOf)):
        return any(_has_ref(c) for c in cond.items)
    return False


def _dnf(cond: ir.Cond) -> list[ir.Cond]:
    """Alternatives whose ``$or``s hold no join: in durable-rules 2.0.28 an ``$or`` with a join loses
    its literal branches, and one inside an ``$and`` disables the ``$and``'s other joins (measured;
    tests/test_durable_behaviour.py)."""
    if not _has_ref(cond) or isinstance(cond, (ir.Test, ir.Present)):
        return [cond]
    if isinstance(cond, ir.AnyOf):
        return [alt for c in cond.items for alt in _dnf(c)]
    assert isinstance(cond, ir.AllOf)
    alternatives: list[ir.Cond] = [ir.TRUE]
    for item in cond.items:
        alternatives = [ir.all_of(a, b) for a in alternatives for b in _dnf(item)]
    return alternatives


def _renamed(cond: ir.Cond, suffix: str) -> ir.Cond:
    if isinstance(cond, ir.Test) and isinstance(cond.operand, ir.Ref):
        return ir.Test(cond.op, cond.prop, ir.Ref(cond.operand.alias + suffix, cond.operand.prop))
    if isinstance(cond, ir.AllOf):
        return ir.AllOf(tuple(_renamed(c, suffix) for c in cond.items))
    if isinstance(cond, ir.AnyOf):
        return ir.AnyOf(tuple(_renamed(c, suffix) for c in cond.items))
    return cond


def _is_guard(cond: ir.Cond) -> bool:
    """A join other than equality: evaluated in Python, never by durable-rules 2.0.28, whose C join
    evaluation (reduceExpressionSequence) crashed intermittently on `$neq` and `$lt` joins (measured)."""
    return isinstance(cond, ir.Test) and isinstance(cond.operand, ir.Ref) and cond.op != "=="


def _pattern(alias: str, fact_type: str, cond: ir.Cond) -> dict[str, Any]:
    body = {"$and": [{"t": fact_type}, _durable_cond(cond)]} if cond != ir.TRUE else {"t": fact_type}
    return {alias: body}


Guard = tuple[str, ir.Cond]  # (alias, condition on that alias's fact), checked before the action


@dataclass(frozen=True)
class Variant:
    body: dict[str, Any]  # the durable-rules rule, without "run"
    guards: tuple[Guard, ...]


def _split(cond: ir.Cond) -> tuple[ir.Cond, ir.Cond]:
    """(what durable-rules tests, what Python tests) of one alternative."""
    items = cond.items if isinstance(cond, ir.AllOf) else (cond,)
    engine = [c for c in items if not _is_guard(c)]
    guards = [c for c in items if _is_guard(c)]
    return ir.all_of(*engine), ir.all_of(*guards)


def durable_rules(rule: ir.Rule, suffix: str = "") -> list[Variant]:
    """The durable-rules rules for ``rule``, with the Python guards of each.

    A condition with a join inside an alternative becomes several negated patterns (for ``not``:
    no fact matches any alternative) or several rules (one per alternative; the session counts a
    match that several alternatives accept once). Joins other than equality are guards.

    Aliases get ``suffix``, so that the rules of one ruleset never share an alias."""
    variants: list[tuple[list[dict[str, Any]], list[Guard]]] = [([], [])]
    for p in rule.patterns:
        alias = p.alias + suffix
        alternatives = [_split(alt) for alt in _dnf(p.cond)]
        if p.negated:
            if any(guard != ir.TRUE for _, guard in alternatives):
                raise CompileError(
                    f"rule '{rule.name}': a 'not' pattern can compare with another fact only by '=='", rule.span
                )
            negations = [
                _pattern(f"{alias}_{i}$not", p.fact_type, _renamed(engine, suffix))
                for i, (engine, _) in enumerate(alternatives)
            ]
            variants = [(body + negations, guards) for body, guards in variants]
        else:
            variants = [
                (
                    [*body, _pattern(alias, p.fact_type, _renamed(engine, suffix))],
                    guards + ([(p.alias, guard)] if guard != ir.TRUE else []),
                )
                for body, guards in variants
                for engine, guard in alternatives
            ]
        if len(variants) > MAX_VARIANTS:
            raise CompileError(
                f"rule '{rule.name}' has more than {MAX_VARIANTS} alternative matchings; simplify its 'or's",
                rule.span,
            )
    return [Variant({"all": body}, tuple(guards)) for body, guards in variants]
