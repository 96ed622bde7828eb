"""The registered backend program for a rule set's policies and rules, compiled once per process."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from functools import cache
from typing import Any

from engine import backend
from engine.checker.rule_set import builtin_rules
from engine.compile.program import compile_program
from engine.errors import Span
from engine.syntax import ast


def program(policies: tuple[ast.Policy, ...], rules: tuple[ast.Rule, ...], reference: bool = False) -> backend.Program:
    """``reference``: every rule inside durable-rules, no indexed joins (engine.backend.load).

    Compiled once per rule set and place: syntax trees are equal whatever their spans (engine.syntax.ast), so
    the same rules in another file, or moved by a line, are a program of their own; else every rejection
    would name the file and line the first of them was read from."""
    return _program(policies, rules, reference, tuple(_spans((*policies, *rules))))


@cache
def _program(
    policies: tuple[ast.Policy, ...], rules: tuple[ast.Rule, ...], reference: bool, spans: tuple[Span, ...]
) -> backend.Program:
    return backend.load(compile_program(builtin_rules(), policies, rules), reference)


def _spans(value: Any) -> Iterator[Span]:
    """Every span of the syntax trees in ``value``, in order."""
    if isinstance(value, ast.Node):
        yield value.span
        for f in dataclasses.fields(value):
            if f.name != "span":
                yield from _spans(getattr(value, f.name))
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _spans(item)
