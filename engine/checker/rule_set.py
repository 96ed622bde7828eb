"""Rule files → a checked rule set: read (engine.inputs.rule_files), checked, and compiled far enough to
know that every rule can run on the backend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from importlib.resources import files as files_of
from pathlib import Path

from engine.checker.limits import limit_problems
from engine.checker.semantic import check
from engine.errors import Diagnostic, RuleError
from engine.inputs.files import Paths
from engine.inputs.rule_files import RuleSet, library_files, library_rules, read_rule_files, visible_conditions
from engine.syntax import ast
from engine.syntax.conditions import expand_rule
from engine.syntax.schema import KARMADA_VERSION


@cache
def builtin_files() -> tuple[ast.File, ...]:
    """The built-in rule library (it ships as engine.rules), parsed and checked once."""
    out = library_files()
    problems = [d for d in check(out) if d.is_error]
    problems += limit_problems(library_rules(), (), ())
    if problems:
        raise RuleError(problems)
    return out


def builtin_rules() -> tuple[ast.Rule, ...]:
    """The library's rules, checked, each call of a named condition written out."""
    builtin_files()
    return library_rules()


def load_rule_set(
    paths: Paths,
    extra: Sequence[ast.File] = (),
    version: str = KARMADA_VERSION,
    strict: bool = False,
    overrides: Mapping[Path, str] | None = None,
    roots: Paths = (),
    policy_yaml: bool = False,
) -> tuple[RuleSet, list[Diagnostic]]:
    """Read and check every rule file under ``paths`` for Karmada ``version`` (``strict``: fleetrules'
    extensions are errors; ``overrides``: the text of files as an editor holds them; ``roots``: directories
    includes may reach besides the paths'; ``policy_yaml``: directories give their policy YAML too); returns the
    rule set and all diagnostics."""
    read, sources, diagnostics = read_rule_files(paths, overrides, roots, policy_yaml)
    files = (*extra, *read)
    diagnostics += check(files, version, strict)
    if not any(d.is_error for d in diagnostics):
        # rule files of the library itself, named explicitly, are checked as the library is
        library = Path(str(files_of("engine.rules"))).resolve()
        shipped = {f.path for f in files if Path(f.path).resolve().is_relative_to(library)}
        conditions = visible_conditions(files)
        builtin = [*builtin_rules(), *(expand_rule(r, conditions) for f in files if f.path in shipped for r in f.rules)]
        rules = [expand_rule(r, conditions) for f in files if f.path not in shipped for r in f.rules]
        diagnostics += limit_problems(builtin, [p for f in files for p in f.policies], rules)
    rule_set = RuleSet(files, sources, tuple(d for d in diagnostics if not d.is_error))
    return rule_set, sorted(diagnostics, key=Diagnostic.sort_key)


def load_rules(paths: Paths, version: str = KARMADA_VERSION, roots: Paths = ()) -> RuleSet:
    """The checked rule set under ``paths`` for Karmada ``version`` (includes below the paths or ``roots``);
    raises RuleError listing every error."""
    rule_set, diagnostics = load_rule_set(paths, version=version, roots=roots)
    errors = [d for d in diagnostics if d.is_error]
    if errors:
        raise RuleError(errors, rule_set.sources)
    return rule_set
