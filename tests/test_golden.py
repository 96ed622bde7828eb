"""Golden files for the language: rule file → AST dump and formatted text; bad file → messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.checker.rule_set import load_rule_set
from engine.errors import render
from engine.syntax.ast import dump
from engine.syntax.fmt import format_file, format_source
from engine.syntax.parse import keywords, parse
from tests.golden import assert_golden

GOLDEN = Path(__file__).parent / "golden"
SYNTAX = sorted((GOLDEN / "syntax").glob("*.fr"))
ERRORS = [*sorted((GOLDEN / "errors").glob("*.fr")), GOLDEN / "errors" / "cycle"]


@pytest.mark.parametrize("path", SYNTAX, ids=lambda p: p.stem)
def test_ast_dump(path: Path, in_root: Path) -> None:
    tree = parse(path.read_text(), str(path.relative_to(in_root)))
    assert_golden(dump(tree) + "\n", path.with_suffix(".ast"))


@pytest.mark.parametrize("path", SYNTAX, ids=lambda p: p.stem)
def test_formatted(path: Path) -> None:
    text = path.read_text()
    formatted = format_source(text, path.name)
    assert_golden(formatted, path.with_suffix(".fmt"))
    assert format_source(formatted) == formatted, "formatting is not idempotent"
    assert parse(formatted) == parse(text), "formatting changed the meaning"


@pytest.mark.parametrize("path", ERRORS, ids=lambda p: p.stem)
def test_error_messages(path: Path, in_root: Path) -> None:
    rule_set, diagnostics = load_rule_set([path.relative_to(in_root)])
    assert diagnostics, "a bad file must produce diagnostics"
    text = "\n".join(render(d, rule_set.sources) for d in diagnostics) + "\n"
    assert_golden(text, path.with_suffix(".err") if path.is_file() else path / "expected.err")


def test_three_errors_in_one_run(in_root: Path) -> None:
    """Issue 2's acceptance case: typo, weight 150 and bad label key, each with its line."""
    _, diagnostics = load_rule_set(["tests/golden/errors/three_errors.fr"])
    found = [(d.span.line, d.span.column, d.message.split(":")[0].split(";")[0]) for d in diagnostics if d.span]
    assert found == [
        (4, 3, "unknown keyword 'tolerat'"),
        (5, 60, "weight 150 is out of range"),
        (6, 23, "invalid label key '-bad key'"),
    ]


def test_comments_survive_formatting() -> None:
    text = (GOLDEN / "syntax" / "strings_comments.fr").read_text()
    formatted = format_file(parse(text), text)
    for line in text.splitlines():
        if "#" in line:
            assert line[line.index("#") :] in formatted


def test_documented_keywords_are_the_grammar_keywords() -> None:
    doc = (Path(__file__).parent.parent / "docs" / "language.md").read_text()
    listed = doc.split("Keywords are reserved: `")[1].split("`")[0].split()
    assert sorted(listed) == sorted(keywords())
