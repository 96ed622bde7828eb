"""Rule files and directories → parsed files, following includes (checking is engine.checker).

Directories contribute their ``*.fr`` files in sorted order, so the same tree gives the same rule
set whatever order the paths are named in. Includes are resolved relative to the including file,
each file is read once, and cycles, missing files and oversized files are errors with positions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files as files_of
from pathlib import Path

from engine.codes import Code
from engine.errors import Diagnostic, Severity, Span, error, warning
from engine.inputs.files import MAX_FILE_BYTES, RULE_SUFFIX, Paths, display_path, expand, path_list, read_source
from engine.inputs.policies import policy_file
from engine.inputs.yaml import MAX_BYTES
from engine.syntax import ast
from engine.syntax.conditions import defined, expand_rule
from engine.syntax.parse import parse, parse_partial

# Karmada PropagationPolicy files are rule files too when named explicitly (directories give *.fr only).
POLICY_SUFFIXES = (".yaml", ".yml", ".json")
RULE_FILE_SUFFIXES = (RULE_SUFFIX, *POLICY_SUFFIXES)  # what an include (or a test's rules) may name
MAX_INCLUDE_DEPTH = 16
# limits of a whole rule set, over every rule file and include (a file alone is limited to MAX_FILE_BYTES)
MAX_FILES = 1_000
MAX_TOTAL_BYTES = 16 * 1024 * 1024
MAX_ITEMS = 2_000  # rules and policies


@dataclass(frozen=True)
class RuleSet:
    """The parsed files of a rule set (includes first), their text, and the warnings found: what load_rules
    returns (``RuleSet()`` is the empty rule set, which places nothing)."""

    files: tuple[ast.File, ...] = ()
    sources: dict[str, str] = field(default_factory=dict, compare=False)
    warnings: tuple[Diagnostic, ...] = field(default=(), compare=False)

    @property
    def policies(self) -> tuple[ast.Policy, ...]:
        return tuple(p for f in self.files for p in f.policies)

    @property
    def conditions(self) -> dict[str, ast.Condition]:
        """The named conditions its rules may use: the library's, then its files' own."""
        return visible_conditions(self.files)

    @property
    def rules(self) -> tuple[ast.Rule, ...]:
        """Its rules, each call of a named condition written out (engine.syntax.conditions)."""
        conditions = self.conditions
        return tuple(expand_rule(r, conditions) for f in self.files for r in f.rules)


@cache
def library_files() -> tuple[ast.File, ...]:
    """The built-in rule library (it ships as engine.rules) as parsed, in name order; engine.checker.rule_set checks
    it once (builtin_files)."""
    out = []
    for entry in sorted(files_of("engine.rules").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(RULE_SUFFIX):
            out.append(parse(entry.read_text(encoding="utf-8"), f"<builtin>/{entry.name}"))
    return tuple(out)


def visible_conditions(files: Sequence[ast.File] = ()) -> dict[str, ast.Condition]:
    """The conditions rules of ``files`` may use: the library's (which a file cannot redefine: the checker says
    so), then those of ``files``."""
    library = defined(library_files())
    return {**defined(files), **library}


def library_rules() -> tuple[ast.Rule, ...]:
    """The library's rules, each call of a named condition written out."""
    conditions = visible_conditions()
    return tuple(expand_rule(r, conditions) for f in library_files() for r in f.rules)


class _Loader:
    def __init__(self, roots: Sequence[Path] = (), overrides: Mapping[Path, str] | None = None) -> None:
        # includes stay below these: the directories given (a file's own directory), and any root named
        self.roots = tuple(roots)
        self.overrides = {p.resolve(): text for p, text in (overrides or {}).items()}  # text not yet on disk
        self.files: dict[Path, ast.File | None] = {}
        self.order: list[ast.File] = []
        self.sources: dict[str, str] = {}
        self.diagnostics: list[Diagnostic] = []
        self.total_bytes = 0
        self.items = 0
        self.stopped = False  # a limit of the whole rule set was reached

    def load(self, path: Path, chain: tuple[Path, ...] = (), at: Span | None = None, optional: bool = False) -> None:
        """Read one file (and its includes); ``optional``: a YAML file found in a directory, kept only when it
        holds a policy."""
        if self.stopped:
            return
        key = path.resolve()
        if key in chain:
            cycle = " -> ".join(display_path(p) for p in (*chain[chain.index(key) :], key))
            self.diagnostics.append(error(f"include cycle: {cycle}", at, code=Code.INCLUDE))
            return
        if key in self.files:
            return
        if len(chain) >= MAX_INCLUDE_DEPTH:
            self.diagnostics.append(
                error(f"includes nest deeper than {MAX_INCLUDE_DEPTH} files", at, code=Code.INCLUDE)
            )
            return
        shown = display_path(path)
        if len(self.files) >= MAX_FILES:
            self._over(f"the rule set has more than {MAX_FILES:,} files", at, shown)
            return
        self.files[key] = None
        # a YAML file is a snapshot (its policies are the rules): limited as fact files are, apart from the rules
        snapshot = path.suffix in POLICY_SUFFIXES
        limit, what = (MAX_BYTES, "snapshots") if snapshot else (MAX_FILE_BYTES, "rule files")
        text = (
            self.overrides[key]
            if key in self.overrides
            else read_source(path, shown, self.diagnostics, at, limit, what)
        )
        if text is None:
            return
        self.total_bytes += 0 if snapshot else len(text.encode("utf-8"))
        if self.total_bytes > MAX_TOTAL_BYTES:
            self._over(f"the rule set is larger than {MAX_TOTAL_BYTES:,} bytes over all its files", at, shown)
            return
        if snapshot:
            tree, syntax, held = policy_file(shown, text)
            if optional and not held and not syntax:
                del self.files[key]
                return  # no policy: not a rule file, and not counted as one
        else:
            tree, syntax = parse_partial(text, shown)
        self.sources[shown] = text
        self.diagnostics += syntax
        if tree is None:
            return
        if not tree.items and not syntax:
            self.diagnostics.append(
                warning("no rules, policies or includes in this file", Span(shown, 0, 0, 0, 0), code=Code.INCLUDE)
            )
        for include in tree.includes:
            target = self._include(path, include)
            if target is not None:
                self.load(target, (*chain, key), include.path.span)
        self.files[key] = tree
        self.order.append(tree)
        self.items += len(tree.policies) + len(tree.rules)
        if self.items > MAX_ITEMS:
            past = [*tree.policies, *tree.rules][-(self.items - MAX_ITEMS)]
            self._over(
                f"the rule set has more than {MAX_ITEMS:,} rules and policies over all its files", past.span, shown
            )

    def _over(self, message: str, at: Span | None, shown: str) -> None:
        """A limit of the whole rule set: reported once, at the file or item past it; reading stops."""
        if not self.stopped:
            self.diagnostics.append(
                Diagnostic(Severity.ERROR, message, at or Span(shown, 0, 0, 0, 0), unreadable=True, code=Code.TOO_LARGE)
            )
        self.stopped = True

    def _include(self, path: Path, include: ast.Include) -> Path | None:
        """The file an include names, relative to the including file and inside the rule tree; else None
        and why not."""
        name, span = include.path.value, include.path.span
        if Path(name).is_absolute():
            self.diagnostics.append(
                error(f"include {name!r}: an include is a path relative to the including file", span, code=Code.INCLUDE)
            )
            return None
        target = path.parent / name
        if self.roots and not in_tree(target, self.roots):
            where = ", ".join(display_path(r) for r in self.roots)
            message = (
                f"include {name!r}: outside the rule tree ({where}); includes stay below the paths given (or a --root)"
            )
            self.diagnostics.append(error(message, span, code=Code.INCLUDE))
            return None
        if not target.exists():
            self.diagnostics.append(error(f"included file not found: {name}", span, code=Code.INCLUDE))
            return None
        if not target.is_file():
            self.diagnostics.append(error(f"included path is not a regular file: {name}", span, code=Code.INCLUDE))
            return None
        if not os.path.realpath(target).endswith(RULE_FILE_SUFFIXES):  # never read (and echo) what is not ours
            suffixes = ", ".join(RULE_FILE_SUFFIXES)
            message = f"include {name!r}: not a rule file (its name ends in none of {suffixes})"
            self.diagnostics.append(error(message, span, code=Code.INCLUDE))
            return None
        return target


def rule_tree(paths: Paths, roots: Paths = ()) -> list[Path]:
    """The directories the paths that rule and test files name must stay below: each of ``paths`` (a file's own
    directory) and each of ``roots``, after symlinks."""
    given = [Path(p) for p in path_list(paths)]
    return [
        *(Path(os.path.realpath(p if p.is_dir() else p.parent)) for p in given),
        *(Path(os.path.realpath(r)) for r in path_list(roots, "roots")),
    ]


def in_tree(path: Path, tree: Sequence[Path]) -> bool:
    """Whether ``path``, after symlinks, is below one of ``tree``'s directories (as ``rule_tree`` gives them)."""
    real = Path(os.path.realpath(path))
    return any(real.is_relative_to(root) for root in tree)


def read_rule_files(
    paths: Paths, overrides: Mapping[Path, str] | None = None, roots: Paths = (), policy_yaml: bool = False
) -> tuple[tuple[ast.File, ...], dict[str, str], list[Diagnostic]]:
    """The parsed files under ``paths``, includes first; their text by shown path; reading and syntax problems.
    ``overrides``: the text of some files as an editor holds it, instead of what is on disk. Includes stay in
    the rule tree: below the directories given (a file's own directory) or one of ``roots``. ``policy_yaml``:
    directories give their YAML and JSON files too (`check DIR` of a repository of PropagationPolicies), each read
    for its policies; one without a policy (facts, rule tests, CI workflows) is passed over."""
    loader = _Loader(rule_tree(paths, roots), overrides)
    named = {Path(p).resolve() for p in path_list(paths)}
    for path in expand(paths, RULE_FILE_SUFFIXES if policy_yaml else (RULE_SUFFIX,)):
        loader.load(path, optional=path.suffix in POLICY_SUFFIXES and path.resolve() not in named)
    return tuple(loader.order), loader.sources, loader.diagnostics
