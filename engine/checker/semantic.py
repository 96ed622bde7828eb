"""Semantic checks of parsed rule files; every problem of every file is collected with its span and code.

The checks of policies are engine.checker.policy_checks, those of rules and named conditions
engine.checker.rule_checks, on what they share (engine.checker.checking). Karmada's own validation messages
(pkg/util/validation/validation.go) are reused word for word where a check mirrors one, so that users meet the
same wording in both tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from engine.checker.policy_checks import PolicyChecks
from engine.checker.rule_checks import RuleChecks
from engine.codes import Code
from engine.errors import Diagnostic, UsageError, expect
from engine.syntax import ast
from engine.syntax.schema import (
    KARMADA_VERSION,
    KARMADA_VERSIONS,
)


class _Checker(PolicyChecks, RuleChecks):
    """Every check of a rule set's files, item by item."""

    def run(self) -> list[Diagnostic]:
        seen: dict[str, ast.Word] = {}
        for file in self.files:
            for item in file.items:
                if isinstance(item, ast.Include):
                    continue
                earlier = seen.get(item.name.value)
                if earlier is not None:
                    self.err(
                        f"duplicate name '{item.name.value}' (first defined at {earlier.span})",
                        item.name.span,
                        Code.DUPLICATE,
                    )
                else:
                    seen[item.name.value] = item.name
                builtin = file.path.startswith("<builtin>")
                match item:
                    case ast.Policy():
                        self.policy(item)
                    case ast.Rule():
                        self.rule(item)
                        if not builtin:
                            self.extension("a rule (Karmada has no user-written scheduler rules)", item.name.span)
                    case ast.Condition():
                        self.condition(item, builtin)
                        if not builtin:
                            self.extension("a named condition (of rules: a fleetrules extension)", item.name.span)
                    case _:
                        assert_never(item)
        return self.out


def check(files: Sequence[ast.File], version: str = KARMADA_VERSION, strict: bool = False) -> list[Diagnostic]:
    """Every semantic problem of the rule set formed by ``files`` for Karmada ``version``, in source order;
    with ``strict``, each use of a fleetrules extension is an error too."""
    expect("files", files, (list, tuple), "a list of File objects from parse()")
    for file in files:
        expect("files[]", file, ast.File, "File objects from parse()")
    if version not in KARMADA_VERSIONS:
        raise UsageError(f"version: expected one of {', '.join(KARMADA_VERSIONS)}, found {version!r}")
    return sorted(_Checker(files, version, strict).run(), key=Diagnostic.sort_key)
