"""Rule set → one compiled program: built-in rules (rules/*.fr), user rules and compiled policies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine.compile import ir
from engine.compile.encoding import Symbols
from engine.compile.joins import JoinPlan, plan
from engine.compile.lift import lift
from engine.compile.policies import policy_rules
from engine.compile.rules import compile_rules
from engine.errors import Diagnostic, RuleError, Span
from engine.syntax import ast
from engine.syntax.schema import GROUP_SCOPE


@dataclass(frozen=True)
class CompiledProgram:
    """What a backend runs: the IR rules, the names their facts' fields have, and how to run them."""

    rules: tuple[ir.Rule, ...]
    symbols: Symbols
    # fact types that some rule matches whatever the binding's workload affinity groups
    ungrouped: frozenset[str]
    # per rule, its join plan where its work grows with the bindings (engine.compile.joins)
    plans: tuple[JoinPlan | None, ...] = ()
    # the binding fields a group_scope fact has: those every rule lifted to it reads (engine.compile.lift)
    group_keys: tuple[str, ...] = ()
    # a rule that evicts matches placements (rules/taint_manager.fr): every binding's placements are facts when
    # failover asks for evictions (engine.schedule.store.FactStore.evictions)
    evicts_by_placement: bool = False

    @property
    def matched(self) -> frozenset[str]:
        """The fact types some rule matches (a fact of another type changes no decision)."""
        return frozenset(p.fact_type for rule in self.rules for p in rule.patterns)


@dataclass(frozen=True)
class Compilation:
    rules: list[ir.Rule]
    symbols: Symbols
    problems: list[Diagnostic]
    # (the span of each user rule and policy, the label keys and list values the rules named up to it)
    growth: list[tuple[Span, int]]


def compile_rule_set(
    builtin: Sequence[ast.Rule], policies: Sequence[ast.Policy], rules: Sequence[ast.Rule]
) -> Compilation:
    symbols = Symbols()
    compiled, problems = compile_rules(builtin, symbols, builtin=True)
    derived = {a.fact_type.value for r in rules for a in r.actions if isinstance(a, ast.Derive)}
    growth = []
    for rule in rules:
        user, user_problems = compile_rules([rule], symbols, derived=derived)
        compiled += [replace(r, user=True) for r in user]
        problems += user_problems
        growth.append((rule.span, symbols.size))
    for policy in policies:
        compiled += policy_rules(policy, symbols)
        growth.append((policy.span, symbols.size))
    return Compilation(compiled, symbols, problems, growth)


def compile_program(
    builtin: Sequence[ast.Rule], policies: Sequence[ast.Policy], rules: Sequence[ast.Rule]
) -> CompiledProgram:
    """The program of checked rules and policies; RuleError if they do not compile."""
    compilation = compile_rule_set(builtin, policies, rules)
    if compilation.problems:
        raise RuleError(compilation.problems)
    lifted = tuple(lift(rule) for rule in compilation.rules)
    # The built-in rules and required workload terms match placements of a binding's own groups only;
    # rule files and preferred terms match any.
    ungrouped = {p.fact_type.value for r in rules for p in r.patterns}
    if any(isinstance(s, ast.WorkloadTerm) and s.preferred for p in policies for s in p.statements):
        ungrouped.add("placement")
    plans = tuple(plan(rule) for rule in lifted)
    group_keys = tuple(sorted({k for rule in lifted if rule.scope == GROUP_SCOPE for k in rule.scope_keys}))
    evicts_by_placement = any(p.fact_type == "placement" for r in lifted if r.evicts for p in r.patterns)
    return CompiledProgram(lifted, compilation.symbols, frozenset(ungrouped), plans, group_keys, evicts_by_placement)
