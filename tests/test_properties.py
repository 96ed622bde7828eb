"""Properties of the language front end: the formatter inverts the parser; no input crashes it."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.checker.semantic import check
from engine.errors import RuleError
from engine.syntax import ast
from engine.syntax.fmt import format_file, format_source
from engine.syntax.parse import keywords, parse, parse_partial
from tests.strategies import files

EXAMPLES = sorted(Path(__file__).parent.parent.joinpath("examples").rglob("*.fr"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files)
def test_parse_inverts_format(tree: ast.File) -> None:
    text = format_file(tree)
    assert parse(text) == tree
    assert format_source(text) == text


def test_examples_round_trip() -> None:
    for path in EXAMPLES:
        text = path.read_text()
        assert parse(format_source(text)) == parse(text), path


def _never_crashes(text: str) -> None:
    """Parsing and checking return diagnostics or raise RuleError; anything else is a bug."""
    tree, diagnostics = parse_partial(text, "fuzz.fr")
    assert tree is not None or diagnostics
    if tree is not None:
        check([tree])
    try:
        parse(text)
    except RuleError as exc:
        assert exc.diagnostics


@settings(max_examples=int(os.environ.get("FLEETRULES_FUZZ_EXAMPLES", "300")), deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_give_clean_errors(data: bytes) -> None:
    _never_crashes(data.decode("utf-8", errors="replace"))


_PUNCTUATION = ["{", "}", "(", ")", "[", "]", ",", ":", "=", "==", "!=", "<", "!", "*", "-", ";"]
_SOUP = [*sorted(keywords()), *_PUNCTUATION, "x", "c.name", '"s"', "5m", "42", "# c\n", "\n", "b.labels", '["k"]']


@settings(max_examples=int(os.environ.get("FLEETRULES_FUZZ_EXAMPLES", "500")), deadline=None)
@given(st.lists(st.sampled_from(_SOUP), max_size=40))
def test_token_soup_gives_clean_errors(tokens: list[str]) -> None:
    _never_crashes(" ".join(tokens))


@settings(max_examples=int(os.environ.get("FLEETRULES_FUZZ_EXAMPLES", "200")), deadline=None)
@given(st.data())
def test_mutated_examples_give_clean_errors(data: st.DataObject) -> None:
    """Delete or duplicate a slice of a real file: near-valid input exercises the recovery."""
    text = data.draw(st.sampled_from(EXAMPLES)).read_text()
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, min(len(text), start + 40)))
    mutated = data.draw(st.sampled_from([text[:start] + text[end:], text[:end] + text[start:]]))
    _never_crashes(mutated)
