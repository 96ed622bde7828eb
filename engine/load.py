"""Rule files and directories → a checked rule set, following includes.

Directories contribute their ``*.fr`` files in sorted order, so the same tree gives the same rule
set whatever order the paths are named in. Includes are resolved relative to the including file,
each file is read once, and cycles, missing files and oversized files are errors with positions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib.resources import files as files_of
from pathlib import Path

from engine import ast
from engine.check import check
from engine.errors import Diagnostic, RuleError, Severity, Span, UsageError, error, warning
from engine.karmada import policy_file
from engine.parse import parse_partial

RULE_SUFFIX = ".fr"
# Karmada PropagationPolicy files are rule files too when named explicitly (directories give *.fr only).
POLICY_SUFFIXES = (".yaml", ".yml", ".json")
MAX_FILE_BYTES = 4 * 1024 * 1024
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


def display_path(path: Path) -> str:
    """Paths are shown relative to the working directory when they lie below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def expand(paths: Iterable[str | Path], suffixes: tuple[str, ...] = (RULE_SUFFIX,)) -> list[Path]:
    """Files named directly, and the files below named directories whose names end in one of
    ``suffixes``, sorted; a missing path is a usage error."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(suffixes))
        elif path.is_file():
            found.append(path)
        else:
            raise UsageError(f"no such file or directory: {raw}")
    return found


def read_source(path: Path, shown: str, diagnostics: list[Diagnostic], at: Span | None = None) -> str | None:
    """The UTF-8 text of a file, or None with a diagnostic saying why it could not be read."""
    where = at or Span(shown, 0, 0, 0, 0)

    def unreadable(message: str, span: Span = where) -> None:
        diagnostics.append(Diagnostic(Severity.ERROR, message, span, unreadable=True))

    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            unreadable(f"{shown} is {size} bytes; rule files are limited to {MAX_FILE_BYTES}")
            return None
        data = path.read_bytes()
    except OSError as exc:
        unreadable(f"cannot read {shown}: {exc.strerror or exc}")
        return None
    if b"\0" in data:
        unreadable(f"{shown} is a binary file, not a rule file")
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        unreadable(f"{shown} is not UTF-8 text (byte {exc.start})", Span(shown, line, 1, line, 2))
        return None


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
            tree, syntax = policy_file(path, shown, text)
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


def load_rule_set(paths: Sequence[str | Path], extra: Sequence[ast.File] = ()) -> tuple[RuleSet, list[Diagnostic]]:
    """Parse and check every rule file under ``paths``; returns the rule set and all diagnostics."""
    loader = _Loader()
    for path in expand(paths):
        loader.load(path)
    files = (*extra, *loader.order)
    diagnostics = loader.diagnostics + check(files)
    if not any(d.is_error for d in diagnostics):
        from engine.compile import Symbols, compile_rules  # the compiler imports the loader's neighbours
        from engine.program import compile_rule_set

        library = Path(str(files_of("engine.rules"))).resolve()
        shipped = {f.path for f in files if Path(f.path).resolve().is_relative_to(library)}
        rules = [r for f in files if f.path not in shipped for r in f.rules]
        diagnostics += compile_rule_set([p for f in files for p in f.policies], rules)[2]
        diagnostics += compile_rules([r for f in files if f.path in shipped for r in f.rules], Symbols(), builtin=True)[
            1
        ]
    rule_set = RuleSet(files, loader.sources, tuple(d for d in diagnostics if not d.is_error))
    return rule_set, sorted(diagnostics, key=Diagnostic.sort_key)


def load_rules(paths: Sequence[str | Path]) -> RuleSet:
    """The checked rule set under ``paths``; raises RuleError listing every error found."""
    rule_set, diagnostics = load_rule_set(paths)
    errors = [d for d in diagnostics if d.is_error]
    if errors:
        raise RuleError(errors, rule_set.sources)
    return rule_set
