"""The language's checklist (issue 29): a statement of the language is known everywhere it must be, or tests fail.

Adding a statement touches the grammar, the AST, the parser, the formatter, the checker, what evaluates it, the
YAML converter (when Karmada's YAML can say it), the editor grammar and the docs. Each AST class of a statement,
cluster statement, failover statement, action or item has an entry below saying where it is handled; a class
added to the AST's unions without an entry fails, and so does an entry whose places do not know its class or
keyword. The places are found by their source naming the class (``ast.Name``) or the keyword: a guard that the
work was not forgotten, not a proof that it is right (the other tests are that)."""

from __future__ import annotations

import json
import re
import typing
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.syntax import ast

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "engine"


@dataclass(frozen=True)
class Entry:
    grammar: str  # the production (rule or alias) in engine/grammar/fleetrules.lark
    keyword: str  # the word that starts it, for the editor grammar and the docs
    evaluated_by: tuple[str, ...]  # modules (under engine/) that act on it
    yaml: bool = True  # Karmada's PropagationPolicy YAML can say it: engine/inputs/policies.py (or converting.py)
    checked: bool = True  # engine/checker/ names it (False: checked through the statement holding it)


CHECKLIST: dict[type[ast.Node], Entry] = {
    ast.Select: Entry("select", "select", ("detector/policy.py",)),
    ast.Priority: Entry("priority", "priority", ("render/karmada.py", "detector/policy.py")),
    ast.SchedulePriority: Entry("schedule_priority", "priority", ("schedule/queue.py", "render/karmada.py")),
    ast.Preemption: Entry("preemption", "preemption", ("karmada/notes.py",)),
    ast.Activation: Entry("activation", "activation", ("render/karmada.py",)),
    ast.PropagateDeps: Entry("propagate", "propagate", ("detector/dependencies.py", "render/karmada.py")),
    ast.ClusterAffinity: Entry("cluster_affinity", "clusters", ("compile/policies.py", "schedule/scheduler.py")),
    ast.Overflow: Entry("overflow", "overflow", ("schedule/scheduler.py",), checked=False),
    ast.ClusterList: Entry("cluster_names", "names", ("compile/policies.py", "inputs/matching.py")),
    ast.ClusterSelector: Entry("cluster_labels", "labels", ("compile/policies.py",), checked=False),
    ast.Toleration: Entry("toleration", "tolerate", ("compile/encoding.py",)),
    ast.Spread: Entry("spread", "spread", ("schedule/plan.py", "compile/policies.py")),
    ast.Replicas: Entry("replicas_plain", "replicas", ("schedule/plan.py",)),
    ast.WorkloadTerm: Entry("workload_term", "workload", ("compile/policies.py", "schedule/scheduler.py")),
    ast.Failover: Entry("failover", "failover", ("karmada/controllers/world.py",)),
    ast.FailoverToleration: Entry(
        "fo_toleration", "toleration", ("compile/encoding.py", "karmada/controllers/world.py")
    ),
    ast.Purge: Entry("fo_purge", "purge", ("karmada/controllers/world.py",)),
    ast.Grace: Entry("fo_grace", "grace", ("karmada/controllers/world.py",)),
    ast.Preserve: Entry("fo_preserve", "preserve", ("karmada/controllers/world.py",)),
    ast.Reject: Entry("act_reject", "reject", ("compile/rules.py",), yaml=False),
    ast.Prefer: Entry("act_prefer", "prefer", ("compile/rules.py",), yaml=False),
    ast.Derive: Entry("act_derive", "derive", ("compile/rules.py",), yaml=False),
    ast.Evict: Entry("act_evict", "evict", ("compile/rules.py",), yaml=False),
    ast.Include: Entry("include", "include", ("inputs/rule_files.py",), yaml=False),
    ast.Policy: Entry("policy", "policy", ("schedule/scheduler.py",)),
    ast.Rule: Entry("rule", "rule", ("compile/rules.py",), yaml=False),
    ast.Condition: Entry("condition", "condition", ("syntax/conditions.py", "lsp.py"), yaml=False),
}

# read through what holds them, not by their class: a clusters block's overflow groups (ClusterAffinity.overflow,
# schedule/scheduler.py _overflow_tiers) and a selector by its field (labels, fields) wherever clusters are matched
READ_THROUGH = {ast.Overflow, ast.ClusterSelector}


def _members(union: object) -> set[type[ast.Node]]:
    return {t for t in typing.get_args(union) if isinstance(t, type)}


def test_every_statement_of_the_ast_has_an_entry() -> None:
    statements = set().union(
        *(_members(u) for u in (ast.PolicyStmt, ast.ClusterStmt, ast.FailoverStmt, ast.Action, ast.Item))
    )
    statements.add(ast.Overflow)  # held by a clusters block, outside the unions
    missing = sorted(t.__name__ for t in statements - set(CHECKLIST))
    stale = sorted(t.__name__ for t in set(CHECKLIST) - statements)
    assert not missing, f"add these to CHECKLIST, and make each place below know them: {missing}"
    assert not stale, f"no longer statements of the AST: {stale}"


def _source(relative: str) -> str:
    return (ENGINE / relative).read_text()


GRAMMAR = (ENGINE / "grammar" / "fleetrules.lark").read_text()
EDITOR = json.dumps(json.loads((ROOT / "editors" / "vscode" / "syntaxes" / "fleetrules.tmLanguage.json").read_text()))
DOCS = (ROOT / "docs" / "language.md").read_text()
CONVERTER = _source("inputs/policies.py") + _source("inputs/converting.py")
CHECKER = "\n".join(p.read_text() for p in sorted((ENGINE / "checker").glob("*.py")))


@pytest.mark.parametrize("kind", list(CHECKLIST), ids=lambda t: t.__name__)
def test_each_place_knows_the_statement(kind: type[ast.Node]) -> None:
    entry, name = CHECKLIST[kind], kind.__name__
    named = re.compile(rf"\bast\.{name}\b")
    places = {
        "the grammar": re.search(rf"^\??{entry.grammar}:|-> {entry.grammar}\b", GRAMMAR, re.M) is not None,
        "the parser (syntax/parse.py)": named.search(_source("syntax/parse.py")) is not None,
        "the formatter (syntax/fmt.py)": named.search(_source("syntax/fmt.py")) is not None,
        "the checker (checker/)": not entry.checked or named.search(CHECKER) is not None,
        "the YAML converter (inputs/policies.py, converting.py)": not entry.yaml or named.search(CONVERTER) is not None,
        "the converter to YAML (render/karmada.py)": not entry.yaml
        or kind in READ_THROUGH
        or named.search(_source("render/karmada.py")) is not None,
        "what evaluates it": kind in READ_THROUGH
        or any(named.search(_source(m)) is not None for m in entry.evaluated_by),
        "the editor grammar": re.search(rf"\b{entry.keyword}\b", EDITOR) is not None,
        "docs/language.md": f"`{entry.keyword}" in DOCS or f"{entry.keyword} " in DOCS,
    }
    unaware = [place for place, knows in places.items() if not knows]
    assert not unaware, f"{name} ({entry.keyword}) is not known to: {', '.join(unaware)}"


def test_the_checklist_can_fail() -> None:
    """A statement no place knows is reported (the check is not vacuous)."""
    named = re.compile(r"\bast\.NoSuchStatement\b")
    assert named.search(_source("syntax/fmt.py")) is None
    assert re.search(r"^\??no_such_rule:|-> no_such_rule\b", GRAMMAR, re.M) is None


def test_the_formatters_statements_are_every_statement() -> None:
    """ast.Statement (what the formatter prints, and the places below match on) is every statement of the unions."""
    unions = set().union(
        *(_members(u) for u in (ast.PolicyStmt, ast.SelectStmt, ast.ClusterStmt, ast.FailoverStmt, ast.Item))
    )
    assert _members(ast.Statement) == unions | {ast.Overflow}


# the places that act on every statement, expression or action of a kind: each match over the AST's classes ends in
# ``case _: assert_never(...)``, so that mypy (in CI) fails when a class is added to a union and a place forgets it
DISPATCH = (
    "syntax/fmt.py",
    "checker/semantic.py",
    "checker/policy_checks.py",
    "syntax/ast.py",
    "compile/rules.py",
    "render/karmada.py",
    "schedule/reschedule.py",
)


def _open_matches(source: str) -> list[int]:
    """The lines of the ``match`` statements over ``ast.`` classes whose last case is not ``assert_never``."""
    import ast as python

    found = []
    for node in python.walk(python.parse(source)):
        if not isinstance(node, python.Match):
            continue
        classes = [c.pattern for c in node.cases if isinstance(c.pattern, (python.MatchClass, python.MatchOr))]
        if not any("ast." in python.unparse(c) for c in classes):
            continue
        last = node.cases[-1]
        wildcard = isinstance(last.pattern, python.MatchAs) and last.pattern.pattern is None
        # or the rest handed to a function typed to take only the rest (the printer's leaves: fmt._leaf, itself
        # exhaustive over ast.Leaf), which mypy holds the same way
        body = "\n".join(python.unparse(b) for b in last.body) if wildcard else ""
        if "assert_never(" not in body and "_leaf(" not in body:
            found.append(node.lineno)
    return found


@pytest.mark.parametrize("module", DISPATCH)
def test_every_dispatch_over_the_ast_is_exhaustive(module: str) -> None:
    source = _source(module)
    assert "assert_never" in source, f"{module} dispatches on no statement"
    assert _open_matches(source) == [], f"{module}: a match over the AST that mypy cannot hold exhaustive"


def test_the_exhaustiveness_check_can_fail() -> None:
    source = "def f(s):\n    match s:\n        case ast.Priority():\n            pass\n"
    assert _open_matches(source) == [2]
