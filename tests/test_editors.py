"""The VS Code extension (editors/vscode) and the language cannot drift: every keyword and operator of
grammar/fleetrules.lark is highlighted, and the TextMate grammar highlights no keyword the language lacks."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from lark.lexer import PatternRE, PatternStr

from engine.syntax.parse import _parser, keywords

ROOT = Path(__file__).resolve().parent.parent
VSCODE = ROOT / "editors" / "vscode"
GRAMMAR = json.loads((VSCODE / "syntaxes" / "fleetrules.tmLanguage.json").read_text())
WORD = r"[A-Za-z_][A-Za-z0-9_.\/-]*"
KEYWORD_GROUPS = ("declaration", "control", "constant", "keyword")
OPERATOR_GROUPS = ("operator", "punctuation")


def _regexes(entry: dict[str, Any]) -> list[str]:
    found = [entry["match"]] if "match" in entry else []
    for nested in entry.get("patterns", ()):
        found += _regexes(nested)
    return found


def _group(name: str) -> list[re.Pattern[str]]:
    return [re.compile(r) for r in _regexes(GRAMMAR["repository"][name])]


def _operators() -> set[str]:
    """The language's punctuation and operators: literal terminals that are not words, and the
    alternatives of literal-only regex terminals (ORDER)."""
    out = set()
    for terminal in _parser().terminals:
        pattern = terminal.pattern
        if isinstance(pattern, PatternStr) and not re.fullmatch(WORD, pattern.value):
            out.add(pattern.value)
        elif isinstance(pattern, PatternRE) and terminal.name == "ORDER":
            out |= set(pattern.value.removeprefix("(?:").removesuffix(")").split("|"))
    return out


@pytest.mark.parametrize("keyword", sorted(keywords()))
def test_every_keyword_is_highlighted_once(keyword: str) -> None:
    groups = [g for g in KEYWORD_GROUPS if any(r.fullmatch(keyword) for r in _group(g))]
    assert len(groups) == 1, f"{keyword!r} is highlighted by {groups or 'no group'}"


def test_no_word_is_highlighted_that_the_language_does_not_reserve() -> None:
    highlighted = set()
    for group in KEYWORD_GROUPS:
        for regex in _regexes(GRAMMAR["repository"][group]):
            inner = re.search(r"\(\?:([^)]*)\)", regex)
            assert inner is not None, regex
            highlighted |= set(inner.group(1).split("|"))
    assert highlighted == set(keywords())


@pytest.mark.parametrize("operator", sorted(_operators()))
def test_every_operator_is_highlighted(operator: str) -> None:
    assert any(r.fullmatch(operator) for g in OPERATOR_GROUPS for r in _group(g)), operator


def test_keywords_inside_names_are_not_highlighted() -> None:
    keyword_regexes = [r for g in KEYWORD_GROUPS for r in _group(g)]
    for name in ("my-policy", "policy.fr", "spread_x", "app.kubernetes.io/name", "rule2", "x-affinity"):
        assert not any(r.search(name) for r in keyword_regexes), name
    # the longest keyword wins: `anti-affinity` is one keyword, not `affinity` after a minus
    found = [m.group(0) for r in _group("keyword") for m in r.finditer("workload anti-affinity by x")]
    assert found == ["workload", "anti-affinity", "by"]


def test_the_extension_names_the_language_and_grammar() -> None:
    package = json.loads((VSCODE / "package.json").read_text())
    (language,) = package["contributes"]["languages"]
    (grammar,) = package["contributes"]["grammars"]
    assert language["extensions"] == [".fr"] and grammar["language"] == language["id"]
    assert grammar["scopeName"] == GRAMMAR["scopeName"]
    assert (VSCODE / grammar["path"]).is_file() and (VSCODE / language["configuration"]).is_file()
    configuration = json.loads((VSCODE / language["configuration"]).read_text())
    assert configuration["comments"]["lineComment"] == "#"  # as the grammar's COMMENT terminal
    assert {"{", "(", "["} <= {pair[0] for pair in configuration["brackets"]}
