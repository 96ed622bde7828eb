"""What every check of rule files shares: the problems found, each with its span and code, and the checks of
words (names, label keys, values of a set) that policies and rules alike make.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engine.codes import Code
from engine.errors import Diagnostic, Span, did_you_mean, error, warning
from engine.inputs.rule_files import visible_conditions
from engine.kube import validation as k8s
from engine.syntax import ast
from engine.syntax.schema import (
    KARMADA_VERSION,
)

_REASON = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
_FACT_TYPE = re.compile(r"[a-z][a-z0-9_]*")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# tolerationSeconds and gracePeriodSeconds of a failover behaviour are *int32 (k8s.INT32_MAX); a
# toleration's tolerationSeconds is an *int64 (k8s.INT64_MAX)
INT32_MAX, INT64_MAX = k8s.INT32_MAX, k8s.INT64_MAX
GO_DURATION_SECONDS = INT64_MAX // 1_000_000_000  # the longest time.Duration in whole seconds


def _one_of(choices: Sequence[str]) -> str:
    return ", ".join(choices)


class Checking:
    """The problems of one check of a rule set (``out``), and the words every part of it checks."""

    def __init__(self, files: Sequence[ast.File], version: str = KARMADA_VERSION, strict: bool = False) -> None:
        self.files = files
        self.version = version
        self.strict = strict  # fleetrules' extensions are errors: what Karmada cannot do
        self.out: list[Diagnostic] = []
        self.derived = self._derived_fact_fields()
        self.conditions = visible_conditions(files)

    def err(self, message: str, span: Span, code: Code) -> None:
        self.out.append(error(message, span, code=code))

    def warn(self, message: str, span: Span, code: Code) -> None:
        self.out.append(warning(message, span, code=code))

    def extension(self, what: str, span: Span) -> None:
        """--strict-karmada: a fleetrules extension, which Karmada would not do."""
        if self.strict:
            self.err(f"not Karmada: {what} is a fleetrules extension (--strict-karmada)", span, Code.EXTENSION)

    # ------------------------------------------------------------ words
    def problems(self, word: ast.Word, what: str, found: list[str]) -> None:
        for problem in found:
            self.err(f"invalid {what} '{word.value}': {problem}", word.span, Code.INVALID_NAME)

    def label_key(self, word: ast.Word, what: str = "label key") -> None:
        self.problems(word, what, k8s.label_key_problems(word.value))

    def label_value(self, word: ast.Word) -> None:
        self.problems(word, "label value", k8s.label_value_problems(word.value))

    def enum(self, word: ast.Word, what: str, choices: Sequence[str]) -> bool:
        if word.value in choices:
            return True
        hint = did_you_mean(word.value, choices) or f"; expected one of {_one_of(choices)}"
        self.err(f"unknown {what} '{word.value}'{hint}", word.span, Code.UNKNOWN_NAME)
        return False

    def _derived_fact_fields(self) -> dict[str, set[str]]:
        fields: dict[str, set[str]] = {}
        for file in self.files:
            for rule in file.rules:
                for action in rule.actions:
                    if isinstance(action, ast.Derive):
                        fields.setdefault(action.fact_type.value, set()).update(a.name.value for a in action.fields)
        return fields
