"""What the compiler and the backend cannot take, as positioned errors: so that whatever `check`
accepts, `eval` can run."""

from __future__ import annotations

from collections.abc import Sequence

from engine import backend
from engine.codes import Code
from engine.compile.lift import lift
from engine.compile.program import compile_rule_set
from engine.errors import Diagnostic, error
from engine.syntax import ast

# Every label key the rules name is a property of every cluster and binding fact, and twice one of a
# placement fact (its binding's and its cluster's), besides some thirty fixed fields and list flags.
MAX_LABEL_KEYS = (backend.MAX_FACT_FIELDS - 32) // 2
_TOO_MANY = (
    f"the rules name more than {MAX_LABEL_KEYS} label keys and zone or cluster values; "
    "the engine's facts hold at most 255 fields"
)


def limit_problems(
    builtin: Sequence[ast.Rule], policies: Sequence[ast.Policy], rules: Sequence[ast.Rule]
) -> list[Diagnostic]:
    """Compile ``policies`` and ``rules`` (with the ``builtin`` rules before them) as evaluation will,
    and report what the compiler refuses, the first rule or policy past the backend's fact size, and
    every rule the backend cannot run."""
    compilation = compile_rule_set(builtin, policies, rules)
    problems = list(compilation.problems)
    over = next((span for span, size in compilation.growth if size > MAX_LABEL_KEYS), None)
    if over is not None:
        problems.append(error(_TOO_MANY, over, code=Code.TOO_LARGE))
    if not problems:
        lifted = [lift(rule) for rule in compilation.rules]
        for rule, pattern, why in backend.unsupported(lifted):
            span = pattern.span if pattern is not None and pattern.span is not None else rule.span
            problems.append(error(f"rule '{rule.name}': {why}", span, code=Code.NOT_COMPILABLE))
    return problems
