"""The one YAML loader (engine/inputs/yaml.py): values as PyYAML's safe loader builds them, with positions,
duplicate keys refused, merge keys, aliases shared and bounded, and other tags through PyYAML."""

from __future__ import annotations

import yaml

from engine.inputs.yaml import MAX_VALUES, load_text

TEXT = """\
base: &base {a: 1, b: two}
merged:
  <<: *base
  b: three
  c: 2026-12-02T10:00:00Z
flags: [yes, no, on, 0x1f, 1_000, .inf, ~, "quoted"]
list: &l [x, y]
again: *l
"""


def test_values_are_those_of_the_safe_loader_with_text_timestamps() -> None:
    (document,), problems = load_text(TEXT, "t.yaml")
    assert problems == []
    expected = yaml.safe_load(TEXT)
    expected["merged"]["c"] = "2026-12-02T10:00:00Z"  # kept as the text JSON holds
    assert document.value == expected
    assert document.value["again"] is document.value["list"]  # an alias shares its value
    position = document.marks.position(document.value["merged"], "b")
    assert position is not None and (position.line, position.column) == (4, 6)


def test_duplicate_keys_are_refused_but_a_merge_may_be_overridden() -> None:
    _, problems = load_text("a: 1\nb: 2\na: 3\n", "d.yaml")
    assert [p.message for p in problems] == ["invalid YAML: duplicate key 'a' (first at line 1)"]
    (document,), problems = load_text("x: &x {a: 1}\ny: {<<: *x, a: 2}\n", "m.yaml")
    assert problems == [] and document.value["y"] == {"a": 2}


def test_a_recursive_alias_counts_as_unbounded() -> None:
    _, problems = load_text("a: &a [x, *a]\n", "r.yaml")
    assert [p.message for p in problems] == [f"document 1: YAML aliases expand to more than {MAX_VALUES:,} values"]


def test_other_tags_go_through_pyyaml() -> None:
    (document,), problems = load_text("s: !!set {a, b}\n", "s.yaml")
    assert problems == [] and document.value == {"s": {"a", "b"}}
    _, problems = load_text("x: !custom 1\n", "c.yaml")
    assert problems and "could not determine a constructor" in problems[0].message
