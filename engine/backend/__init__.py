"""The rule-engine boundary: what the rest of fleetrules may ask of a backend.

A backend takes a compiled program (engine.compile.program) and runs sessions over it: facts are
asserted and retracted, rules fire, and the session answers what they decided. Nothing outside this
package sees how a backend represents facts or rules. Two engines implement the protocol: `planned` (the
planner's joins over hash indexes, with a durable-rules session of its own for the rules it has no plan for)
and `durable` (durable-rules 2.0.28 alone, the reference; the only module that imports durable_rules).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.backend import durable, planned
from engine.backend.protocol import Decision, DecisionKind, Program, Session
from engine.compile import ir
from engine.compile.program import CompiledProgram

__all__ = ["MAX_FACT_FIELDS", "Decision", "DecisionKind", "Program", "Session", "load", "unsupported"]

# How many fields one fact may have.
MAX_FACT_FIELDS = durable.MAX_FACT_FIELDS


def load(compiled: CompiledProgram, reference: bool = False) -> Program:
    """Register ``compiled`` with one of the two engines behind the protocol: the planner (engine.backend.planned:
    the rules with a join plan evaluated over indexes, the others in durable-rules), or with ``reference`` every
    rule inside durable-rules (engine.backend.durable; slow: what the planner is tested against)."""
    return durable.DurableProgram(compiled) if reference else planned.PlannedProgram(compiled)


def unsupported(rules: Sequence[ir.Rule]) -> list[tuple[ir.Rule, ir.Pattern | None, str]]:
    """The rules the backend cannot run, each with the pattern at fault (if one is) and why: the checker
    reports them at that pattern's span, or the rule's."""
    return durable.unsupported(rules)
