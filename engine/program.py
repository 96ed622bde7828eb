"""Rule set → one engine program: built-in rules (rules/*.fr), user rules and compiled policies."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib.resources import files

from engine import ast, ir
from engine.check import check
from engine.compile import Symbols, compile_rules, lift
from engine.errors import Diagnostic, RuleError, Span, error
from engine.parse import parse
from engine.policy import policy_rules
from engine.runtime import Program
from engine.schema import BUILTIN_FACTS, INTERNAL_FACTS


@cache
def builtin_files() -> tuple[ast.File, ...]:
    """The built-in rule library, parsed and checked once; it ships as engine.rules."""
    out = []
    for entry in sorted(files("engine.rules").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".fr"):
            out.append(parse(entry.read_text(encoding="utf-8"), f"<builtin>/{entry.name}"))
    problems = [d for d in check(out) if d.is_error]
    if problems:
        raise RuleError(problems)
    return tuple(out)


def compile_rule_set(
    policies: Sequence[ast.Policy], rules: Sequence[ast.Rule]
) -> tuple[list[ir.Rule], Symbols, list[Diagnostic]]:
    symbols = Symbols()
    builtin = [r for f in builtin_files() for r in f.rules]
    compiled, problems = compile_rules(builtin, symbols, builtin=True)
    derived = {a.fact_type.value for r in rules for a in r.actions if isinstance(a, ast.Derive)}
    for rule in rules:
        user, user_problems = compile_rules([rule], symbols, derived=derived)
        compiled += user
        problems += user_problems
        problems += _too_many_properties(symbols, rule.span, problems)
    for policy in policies:
        compiled += policy_rules(policy, symbols)
        problems += _too_many_properties(symbols, policy.span, problems)
    return compiled, symbols, problems


# durable-rules 2.0.28 refuses a fact of more than 255 properties (MAX_OBJECT_PROPERTIES, error 302).
# Every label key the rules name is a property of every cluster and binding fact, and twice one of a
# placement fact (its binding's and its cluster's), besides a dozen fixed fields and list flags.
MAX_LABEL_KEYS = 110
_LIMIT = "the rules name more than {} label keys and zone or cluster values; the engine's facts hold at most 255 fields"


def _too_many_properties(symbols: Symbols, span: Span, problems: list[Diagnostic]) -> list[Diagnostic]:
    """One error, at the rule or policy that went over the limit."""
    over = len(symbols.labels) + len(symbols.flags) > MAX_LABEL_KEYS
    if not over or any(d.message == _LIMIT.format(MAX_LABEL_KEYS) for d in problems):
        return []
    return [error(_LIMIT.format(MAX_LABEL_KEYS), span)]


@cache
def program(policies: tuple[ast.Policy, ...], rules: tuple[ast.Rule, ...]) -> Program:
    """The registered engine program for these policies and rules (compiled once per process)."""
    compiled, symbols, problems = compile_rule_set(policies, rules)
    if problems:
        raise RuleError(problems)
    compiled = [lift(rule) for rule in compiled]
    fact_types = {*BUILTIN_FACTS, *INTERNAL_FACTS}
    fact_types |= {a.fact_type for r in compiled for a in r.actions if isinstance(a, ir.Derive)}
    # The built-in rules and required workload terms match placements of a binding's own groups only;
    # rule files and preferred terms match any.
    ungrouped = {p.fact_type.value for r in rules for p in r.patterns}
    if any(isinstance(s, ast.WorkloadTerm) and s.preferred for p in policies for s in p.statements):
        ungrouped.add("placement")
    return Program(compiled, symbols, fact_types, frozenset(ungrouped))
