"""Rule files and directories → parsed files, following includes (checking is engine.check).

Directories contribute their ``*.fr`` files in sorted order, so the same tree gives the same rule
set whatever order the paths are named in. Includes are resolved relative to the including file,
each file is read once, and cycles, missing files and oversized files are errors with positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import Diagnostic, Span, error, warning
from engine.inputs.files import Paths, display_path, expand, read_source
from engine.inputs.policies import policy_file
from engine.syntax import ast
from engine.syntax.parse import parse_partial

# Karmada PropagationPolicy files are rule files too when named explicitly (directories give *.fr only).
POLICY_SUFFIXES = (".yaml", ".yml", ".json")
MAX_INCLUDE_DEPTH = 16


@dataclass(frozen=True)
class RuleSet:
    """The parsed files of a rule set (includes first), their text, and the warnings found."""

    files: tuple[ast.File, ...]
    sources: dict[str, str] = field(compare=False)
    warnings: tuple[Diagnostic, ...] = field(default=(), compare=False)

    @property
    def policies(self) -> tuple[ast.Policy, ...]:
        return tuple(p for f in self.files for p in f.policies)

    @property
    def rules(self) -> tuple[ast.Rule, ...]:
        return tuple(r for f in self.files for r in f.rules)


class _Loader:
    def __init__(self) -> None:
        self.files: dict[Path, ast.File | None] = {}
        self.order: list[ast.File] = []
        self.sources: dict[str, str] = {}
        self.diagnostics: list[Diagnostic] = []

    def load(self, path: Path, chain: tuple[Path, ...] = (), at: Span | None = None) -> None:
        key = path.resolve()
        if key in chain:
            cycle = " -> ".join(display_path(p) for p in (*chain[chain.index(key) :], key))
            self.diagnostics.append(error(f"include cycle: {cycle}", at))
            return
        if key in self.files:
            return
        if len(chain) >= MAX_INCLUDE_DEPTH:
            self.diagnostics.append(error(f"includes nest deeper than {MAX_INCLUDE_DEPTH} files", at))
            return
        shown = display_path(path)
        self.files[key] = None
        text = read_source(path, shown, self.diagnostics, at)
        if text is None:
            return
        self.sources[shown] = text
        if path.suffix in POLICY_SUFFIXES:
            tree, syntax = policy_file(shown, text)
        else:
            tree, syntax = parse_partial(text, shown)
        self.diagnostics += syntax
        if tree is None:
            return
        if not tree.items and not syntax:
            self.diagnostics.append(warning("no rules, policies or includes in this file", Span(shown, 0, 0, 0, 0)))
        for include in tree.includes:
            target = path.parent / include.path.value
            if not target.is_file():
                self.diagnostics.append(error(f"included file not found: {include.path.value}", include.path.span))
                continue
            self.load(target, (*chain, key), include.path.span)
        self.files[key] = tree
        self.order.append(tree)


def read_rule_files(paths: Paths) -> tuple[tuple[ast.File, ...], dict[str, str], list[Diagnostic]]:
    """The parsed files under ``paths``, includes first; their text by shown path; reading and syntax problems."""
    loader = _Loader()
    for path in expand(paths):
        loader.load(path)
    return tuple(loader.order), loader.sources, loader.diagnostics
