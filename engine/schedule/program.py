"""The registered backend program for a rule set's policies and rules, compiled once per process."""

from __future__ import annotations

from functools import cache

from engine import backend
from engine.check.rules import builtin_files
from engine.compile.program import compile_program
from engine.syntax import ast


@cache
def program(policies: tuple[ast.Policy, ...], rules: tuple[ast.Rule, ...], reference: bool = False) -> backend.Program:
    """``reference``: every rule inside durable-rules, no indexed joins (engine.backend.load)."""
    builtin = [r for f in builtin_files() for r in f.rules]
    return backend.load(compile_program(builtin, policies, rules), reference)
