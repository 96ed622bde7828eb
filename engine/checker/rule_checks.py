"""The checks of general rules and named conditions (a fleetrules extension): fact types, variables, fields and
the types they are compared with, the actions, and conditions' parameters, calls and cycles.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import replace

from engine.checker.checking import _FACT_TYPE, _REASON, _VARIABLE, Checking, _one_of
from engine.codes import Code
from engine.errors import did_you_mean
from engine.inputs.rule_files import library_files
from engine.syntax import ast
from engine.syntax.conditions import calls, defined, expand
from engine.syntax.schema import (
    BUILTIN_FACTS,
    INTERNAL_FACTS,
    FieldType,
)

# field type → (literal type, what the field is, what to compare it with)
_LITERAL_TYPES: dict[FieldType | None, tuple[type, str, str]] = {
    FieldType.BOOL: (bool, "a boolean", "true or false"),
    FieldType.NUMBER: (int, "a number", "a number"),
    FieldType.STRING: (str, "a string", "a string"),
    FieldType.LABELS: (str, "a string", "a string"),
}


class RuleChecks(Checking):
    """The checks of rules and named conditions."""

    def condition(self, condition: ast.Condition, builtin: bool) -> None:
        name = condition.name.value
        library = defined(library_files()).get(name)
        if not builtin and library is not None and library != condition:  # the library's own file, named, is it
            self.err(
                f"condition '{name}' is the library's ({library.name.span}); name yours otherwise",
                condition.name.span,
                Code.DUPLICATE,
            )
        params: set[str] = set()
        for param in condition.params:
            if not _VARIABLE.fullmatch(param.value):
                self.err(
                    f"invalid variable name '{param.value}': use letters, digits and _", param.span, Code.INVALID_NAME
                )
            if param.value in params:
                self.err(f"parameter '{param.value}' is named twice", param.span, Code.DUPLICATE)
            params.add(param.value)
        for path in _paths(condition.body):
            if path.var not in params:
                hint = did_you_mean(path.var, params) or f"; its parameters are {', '.join(sorted(params))}"
                self.err(f"unknown variable '{path.var}' in condition '{name}'{hint}", path.span, Code.UNKNOWN_VARIABLE)
            elif not path.steps:
                self.err(
                    f"'{path.var}' is a whole fact; name a field such as {path.var}.name", path.span, Code.UNKNOWN_FIELD
                )
        for call in calls(condition.body):
            self.call(call, params)
        cycle = self.cycle((name,))
        if cycle:
            uses = " -> ".join(cycle)
            self.err(
                f"condition '{name}' uses itself ({uses}), which never ends", condition.name.span, Code.CONDITION_CYCLE
            )

    def cycle(self, chain: tuple[str, ...]) -> tuple[str, ...]:
        """``chain`` and the conditions by which its last uses its first again, or () when none leads back."""
        condition = self.conditions.get(chain[-1])
        for call in calls(condition.body if condition is not None else None):
            used = call.name.value
            if used == chain[0]:
                return (*chain, used)
            if used not in chain:
                found = self.cycle((*chain, used))
                if found:
                    return found
        return ()

    def call(self, call: ast.Call, visible: Iterable[str]) -> bool:
        """Whether ``call`` names a condition with as many parameters as it has arguments, each a variable of
        ``visible``; each problem told."""
        condition = self.conditions.get(call.name.value)
        if condition is None:
            hint = did_you_mean(call.name.value, self.conditions) or (
                f"; known: {_one_of(sorted(self.conditions))}" if self.conditions else ""
            )
            self.err(f"unknown condition '{call.name.value}'{hint}", call.name.span, Code.UNKNOWN_NAME)
            return False
        sound = True
        if len(call.args) != len(condition.params):
            params = ", ".join(p.value for p in condition.params)
            self.err(
                f"condition '{call.name.value}' takes {len(condition.params)} variable(s) ({params}), "
                f"not {len(call.args)}",
                call.span,
                Code.MISUSED,
            )
            sound = False
        names = set(visible)
        for arg in call.args:
            if arg.value not in names:
                self.err(
                    f"unknown variable '{arg.value}'{did_you_mean(arg.value, names)}", arg.span, Code.UNKNOWN_VARIABLE
                )
                sound = False
        return sound

    # ------------------------------------------------------------ rules
    def rule(self, rule: ast.Rule) -> None:
        bound: dict[str, ast.Pattern] = {}
        for pattern in rule.patterns:
            known = pattern.fact_type.value in BUILTIN_FACTS or pattern.fact_type.value in self.derived
            if not known:
                choices = [*BUILTIN_FACTS, *self.derived]
                hint = did_you_mean(pattern.fact_type.value, choices) or f"; known: {_one_of(sorted(choices))}"
                self.err(
                    f"unknown fact type '{pattern.fact_type.value}'{hint}", pattern.fact_type.span, Code.UNKNOWN_NAME
                )
            if pattern.var.value in bound:
                self.err(
                    f"variable '{pattern.var.value}' is already bound in this rule", pattern.var.span, Code.DUPLICATE
                )
            if not _VARIABLE.fullmatch(pattern.var.value):
                self.err(
                    f"invalid variable name '{pattern.var.value}': use letters, digits and _",
                    pattern.var.span,
                    Code.INVALID_NAME,
                )
            visible = {**bound, pattern.var.value: pattern}
            if pattern.condition is not None:
                self.pattern_condition(pattern.condition, visible, known)
            if not pattern.negated:
                bound[pattern.var.value] = pattern
        for action in rule.actions:
            self.action(action, bound)

    def pattern_condition(self, condition: ast.Expr, visible: dict[str, ast.Pattern], known: bool) -> None:
        """The fields a pattern's condition reads, and the literals it compares them with, its named conditions
        written out: what is wrong inside one is told where the pattern names it, and says which."""
        used = {c.span: c.name.value for c in calls(condition)}
        sound = all([self.call(c, visible) for c in calls(condition)])
        written = expand(condition, self.conditions) if sound else condition
        before = len(self.out)
        for path in _paths(written):
            self.path(path, visible, known_types=known)
        for path, literal in _literal_comparisons(written):
            self.literal_type(path, literal, visible)
        for index in range(before, len(self.out)):
            d = self.out[index]
            if d.span in used:
                self.out[index] = replace(d, message=f"{d.message} (in condition '{used[d.span]}')")

    def path(self, path: ast.Path, visible: dict[str, ast.Pattern], known_types: bool = True) -> None:
        pattern = visible.get(path.var)
        if pattern is None:
            hint = did_you_mean(path.var, visible)
            self.err(f"unknown variable '{path.var}'{hint}", path.span, Code.UNKNOWN_VARIABLE)
            return
        fact_type = pattern.fact_type.value
        fields = BUILTIN_FACTS.get(fact_type) or dict.fromkeys(self.derived.get(fact_type, ()), FieldType.STRING)
        if not path.steps:
            self.err(
                f"'{path.var}' is a whole {fact_type} fact; name a field such as {path.var}.name",
                path.span,
                Code.UNKNOWN_FIELD,
            )
            return
        if not fields:
            return  # unknown fact type: reported on the pattern
        name = path.steps[0]
        if name not in fields:
            self.err(f"{fact_type} has no field '{name}'{did_you_mean(name, fields)}", path.span, Code.UNKNOWN_FIELD)
            return
        if fields[name] is FieldType.LABELS:
            if len(path.steps) != 2:
                self.err(
                    f'labels take one key: {path.var}.labels["KEY"] (quote keys that contain dots or slashes)',
                    path.span,
                    Code.UNKNOWN_FIELD,
                )
        elif len(path.steps) > 1:
            self.err(f"{fact_type}.{name} has no fields", path.span, Code.UNKNOWN_FIELD)

    def literal_type(self, path: ast.Path, literal: ast.Literal, visible: dict[str, ast.Pattern]) -> None:
        """A field of a built-in fact compared with a literal of another type never matches: an error."""
        pattern = visible.get(path.var)
        fields = BUILTIN_FACTS.get(pattern.fact_type.value, {}) if pattern is not None and path.steps else {}
        expected = _LITERAL_TYPES.get(fields.get(path.steps[0])) if fields else None
        if expected is None:
            return
        python_type, noun, hint = expected
        value = literal.value
        if isinstance(value, python_type) and (python_type is bool or not isinstance(value, bool)):
            return
        shown = f'"{value}"' if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else value
        text = ".".join((path.var, *path.steps))
        self.err(f"{text} is {noun}: compare it with {hint}, not {shown}", literal.span, Code.TYPE_MISMATCH)

    def action(self, action: ast.Action, bound: dict[str, ast.Pattern]) -> None:
        def expect(var: ast.Word, fact_type: str) -> None:
            pattern = bound.get(var.value)
            if pattern is None:
                self.err(
                    f"unknown variable '{var.value}'{did_you_mean(var.value, bound)}", var.span, Code.UNKNOWN_VARIABLE
                )
            elif pattern.fact_type.value != fact_type:
                self.err(
                    f"'{var.value}' is a {pattern.fact_type.value}, not a {fact_type}", var.span, Code.TYPE_MISMATCH
                )

        if isinstance(action, (ast.Reject, ast.Prefer)):
            expect(action.cluster, "cluster")
            expect(action.binding, "binding")
        if isinstance(action, ast.Prefer) and not 1 <= action.weight.value <= 100:
            self.err(
                f"weight {action.weight.value} is out of range; it must be from 1 to 100",
                action.weight.span,
                Code.OUT_OF_RANGE,
            )
        if isinstance(action, ast.Reject) and not action.message.value.strip():
            self.err("a rejection needs a message that says why", action.message.span, Code.MISUSED)
        if isinstance(action, ast.Evict):
            expect(action.binding, "binding")
            expect(action.cluster, "cluster")
            reason = action.reason.value
            if len(reason) > 32 or not _REASON.fullmatch(reason):
                self.err(
                    f"invalid eviction reason '{reason}': CamelCase, at most 32 characters, "
                    "matching ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
                    action.reason.span,
                    Code.INVALID_NAME,
                )
            if len(action.message.value) > 1024:
                self.err(
                    "an eviction message must be no more than 1024 characters", action.message.span, Code.OUT_OF_RANGE
                )
        if isinstance(action, ast.Derive):
            name = action.fact_type.value
            if name in BUILTIN_FACTS or name in INTERNAL_FACTS:
                self.err(
                    f"'{name}' facts come from the input or the engine; derive a fact of another name",
                    action.fact_type.span,
                    Code.INVALID_NAME,
                )
            elif not _FACT_TYPE.fullmatch(name):
                self.err(f"invalid fact type '{name}': use lower_snake_case", action.fact_type.span, Code.INVALID_NAME)
            names = Counter(a.name.value for a in action.fields)
            for assignment in action.fields:
                if names[assignment.name.value] > 1:
                    self.err(f"field '{assignment.name.value}' is assigned twice", assignment.name.span, Code.DUPLICATE)
                for path in _paths(assignment.value):
                    self.path(path, bound)


def _paths(expr: ast.Expr) -> Iterator[ast.Path]:
    return (e for e in ast.subexpressions(expr) if isinstance(e, ast.Path))


def _literal_comparisons(expr: ast.Expr) -> Iterator[tuple[ast.Path, ast.Literal]]:
    """(field, literal) pairs compared directly or by `in [...]` in a condition."""
    for e in ast.subexpressions(expr):
        if isinstance(e, ast.Compare):
            for a, b in ((e.left, e.right), (e.right, e.left)):
                if isinstance(a, ast.Path) and isinstance(b, ast.Literal):
                    yield a, b
        elif isinstance(e, ast.Member) and isinstance(e.item, ast.Path) and isinstance(e.container, ast.ListExpr):
            for item in e.container.items:
                if isinstance(item, ast.Literal):
                    yield e.item, item
