"""The one YAML loader (engine/inputs/yaml.py): values as PyYAML's safe loader builds them, with positions,
duplicate keys refused, merge keys, aliases shared and bounded, and other tags through PyYAML."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import FactError, load_facts
from engine.errors import Diagnostic
from engine.inputs.marks import Document, Position
from engine.inputs.yaml import MAX_DEPTH, MAX_VALUES, _load_yaml, load_text

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


# ---------------------------------------------------------------- JSON (kubectl get -o json)

SNAPSHOT = {
    "apiVersion": "v1",
    "kind": "List",
    "items": [
        {
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "Cluster",
            "metadata": {"name": "m1", "labels": {"region": "eu", "tier": "1"}},
            "spec": {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}], "zones": []},
        },
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"}, "spec": {"replicas": 3}},
    ],
}


def test_json_is_read_as_json_with_the_values_and_positions_the_yaml_reading_gives() -> None:
    text = json.dumps(SNAPSHOT, indent=4)  # as kubectl prints it
    (document,), problems = load_text(text, "s.json")
    assert problems == [] and document.value == SNAPSHOT
    (as_yaml,), _ = _load_yaml(text, "s.json")
    assert as_yaml.value == SNAPSHOT
    # the List itself begins where the YAML reading says (not at its last item), without a second reading
    assert document.marks.position(document.value) == as_yaml.marks.position(as_yaml.value) == Position(1, 1)
    # positions are found when first asked for, for every mapping and list, entries and keys alike
    cluster, yaml_cluster = document.value["items"][0], as_yaml.value["items"][0]
    for mine, theirs, key in (
        (cluster["metadata"]["labels"], yaml_cluster["metadata"]["labels"], "tier"),
        (cluster["spec"]["taints"], yaml_cluster["spec"]["taints"], 0),
        (cluster["spec"]["taints"][0], yaml_cluster["spec"]["taints"][0], "effect"),
        (document.value["items"], as_yaml.value["items"], 1),
    ):
        for of_key in (False, True):
            found = document.marks.position(mine, key, of_key)
            assert found is not None and found == as_yaml.marks.position(theirs, key, of_key)
    line = text.splitlines().index('                    "tier": "1"') + 1
    assert document.marks.position(cluster["metadata"]["labels"], "tier") == Position(line, 29)


def test_a_fact_error_in_a_json_file_names_its_line_and_column() -> None:
    snapshot = json.loads(json.dumps(SNAPSHOT))
    snapshot["items"][1]["spec"]["replicas"] = "three"
    text = json.dumps(snapshot, indent=4)
    with pytest.raises(FactError) as raised:
        load_facts(texts=[("s.json", text)])
    (problem,) = [d for d in raised.value.diagnostics if d.is_error]
    line = text.splitlines().index('                "replicas": "three"') + 1
    assert problem.span is not None and (problem.span.file, problem.span.line) == ("s.json", line)


def test_text_that_is_not_plain_json_is_read_as_yaml() -> None:
    # duplicate keys: refused where the YAML reading finds them
    _, problems = load_text('{"a": 1,\n "a": 2}', "d.json")
    assert [p.message for p in problems] == ["invalid YAML: duplicate key 'a' (first at line 1)"]
    assert problems[0].span is not None and problems[0].span.line == 2
    # NaN is no JSON: YAML's plain text
    (document,), problems = load_text('{"a": NaN}', "n.json")
    assert problems == [] and document.value == {"a": "NaN"}
    # YAML in flow style, with a comment
    (document,), problems = load_text("{a: 1} # flow\n", "f.yaml")
    assert problems == [] and document.value == {"a": 1}
    # deeper than the YAML bound
    _, problems = load_text("[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5), "deep.json")
    assert [p.message for p in problems] == [f"invalid YAML: nested more than {MAX_DEPTH} levels deep"]


def test_a_json_number_means_what_it_means_in_json() -> None:
    (document,), _ = load_text('{"a": 1e3, "b": 1.5, "c": -0, "d": "1e3"}', "n.json")
    assert document.value == {"a": 1000.0, "b": 1.5, "c": 0, "d": "1e3"}


def test_a_clean_json_snapshot_is_read_once_and_each_object_knows_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Positions inside objects are found only for a problem: a clean snapshot is never read as YAML, yet
    every object names the line it begins on, as when it is read as YAML."""
    import engine.inputs.yaml as loader

    text = json.dumps(SNAPSHOT, indent=4)
    reads: list[str] = []

    def counted(text: str, file: str) -> tuple[list[Document], list[Diagnostic]]:
        reads.append(file)
        return _load_yaml(text, file)

    monkeypatch.setattr(loader, "_load_yaml", counted)
    facts = load_facts(texts=[("s.json", text)])
    assert reads == []
    (as_yaml,), _ = _load_yaml(text, "s.json")
    expected = as_yaml.marks.position(as_yaml.value["items"][0])
    assert expected is not None and facts.clusters[0].source == f"s.json:{expected.line}"
    assert text.splitlines()[expected.line - 1] == "        {"


def test_positions_inside_a_json_list_item_are_found_from_that_item_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A position inside one object of a kubectl List is found by reading that object again, not the whole text
    (a control plane's policies each name their lines), and is where the whole text read as YAML puts it."""
    import engine.inputs.yaml as loader

    text = json.dumps(SNAPSHOT, indent=4)
    read: list[int] = []

    def counted(part: str, file: str) -> tuple[list[Document], list[Diagnostic]]:
        read.append(len(part))
        return _load_yaml(part, file)

    monkeypatch.setattr(loader, "_load_yaml", counted)
    (document,), _ = load_text(text, "s.json")
    cluster = document.value["items"][0]
    (as_yaml,), _ = _load_yaml(text, "s.json")
    yaml_cluster = as_yaml.value["items"][0]
    read.clear()
    for mine, theirs, key in (
        (cluster["spec"]["taints"][0], yaml_cluster["spec"]["taints"][0], "effect"),
        (cluster, yaml_cluster, "kind"),
        (cluster["metadata"], yaml_cluster["metadata"], "labels"),
    ):
        for of_key in (False, True):
            assert document.marks.position(mine, key, of_key) == as_yaml.marks.position(theirs, key, of_key)
    assert len(read) == 1 and read[0] < len(text) - 200  # the cluster's object, once
    deployment = document.value["items"][1]
    assert document.marks.position(deployment["spec"], "replicas") == as_yaml.marks.position(
        as_yaml.value["items"][1]["spec"], "replicas"
    )
    assert len(read) == 2
    # a copy of an object is no object of the text: asking about it reads nothing
    assert document.marks.position(dict(deployment["spec"]), "replicas") is None and len(read) == 2


def test_a_json_policy_names_its_own_lines() -> None:
    """A PropagationPolicy of a JSON List: its rules name the lines of its own object in the file."""
    policy = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
            "placement": {"clusterAffinity": {"clusterNames": ["m1"]}},
        },
    }
    snapshot = json.loads(json.dumps(SNAPSHOT))
    snapshot["items"].append(policy)
    text = json.dumps(snapshot, indent=4)
    facts = load_facts(texts=[("s.json", text)])
    (converted,) = facts.policies
    lines = text.splitlines()
    assert lines[converted.span.line - 1] == "        {" and '"PropagationPolicy"' in lines[converted.span.line + 1]
    names = [s for s in converted.statements if type(s).__name__ == "ClusterAffinity"]
    assert names and '"clusterAffinity"' in lines[names[0].span.line - 1]


def test_trailing_text_after_a_json_value_is_read_as_yaml() -> None:
    _, problems = load_text('{"a": 1} x\n', "t.json")
    assert problems and problems[0].message.startswith("invalid YAML")
    (document,), problems = load_text('{"kind": "List", "items": [], "x": [1, {"items": [2]}]}', "e.json")
    assert problems == [] and document.value == {"kind": "List", "items": [], "x": [1, {"items": [2]}]}


def _loaded(text: str) -> tuple[list[object], dict[int, object]]:
    """Values and marks as the node-tree loader gives them (keyed by container order, not id)."""
    from engine.inputs.marks import Marks
    from engine.inputs.yaml import _Loader

    marks = Marks("t.yaml")
    loader = _Loader(text, marks)
    values = []
    while loader.check_node():
        values.append(loader.document())
    loader.dispose()
    return values, _marks_in_order(values, marks)


def _marks_in_order(values: list[object], marks: object) -> dict[int, object]:
    out: dict[int, object] = {}
    stack = list(reversed(values))
    while stack:
        item = stack.pop()
        if isinstance(item, (dict, list)):
            out[len(out)] = marks._at.get(id(item))  # type: ignore[attr-defined]
            stack += reversed(list(item.values()) if isinstance(item, dict) else item)
    return out


def _same_as_the_loader(text: str) -> bool:
    """The event reader gives what the loader gives, or leaves the text to it (False)."""
    from engine.inputs.yaml import _read_events

    read = _read_events(text, "t.yaml")
    if read is None:
        return False
    values, marks = _loaded(text)
    assert [d.value for d in read] == values
    assert [d.index for d in read] == list(range(1, len(values) + 1))
    assert _marks_in_order([d.value for d in read], read[0].marks if read else None) == marks
    return True


@pytest.mark.parametrize(
    "text",
    [
        TEXT,  # anchors, aliases, merge keys: the loader's
        "a: 1\nb: 2\na: 3\n",  # a duplicate key
        "!!omap [a: 1]\n",
        "a: !!str 1\n",
        "? [a]\n: 1\n",  # a key that is a list
        "{1: a, true: b, null: c}\n",
        "a: [" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2) + "\n",
        "a: 'unclosed\n",
        "k: =\n",
    ],
)
def test_the_event_reader_leaves_what_it_does_not_read_to_the_loader(text: str) -> None:
    from engine.inputs.yaml import _read_events

    read = _read_events(text, "t.yaml")
    assert read is None or _same_as_the_loader(text)


def test_the_event_reader_reads_a_kubectl_snapshot_as_the_loader_does() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent
    texts = [p.read_text() for p in sorted((root / "data" / "kubectl").glob("*.yaml"))]
    texts += ["", "---\n---\na: 1\n", "a:\nb: ''\nc: 2026-12-02T10:00:00Z\nd: [1, 1.5, .nan, ~, yes]\n"]
    assert all(_same_as_the_loader(t) for t in texts)


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.floats(allow_nan=False))
trees = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
)


@settings(max_examples=200, deadline=None)
@given(tree=trees, flow=st.sampled_from([None, True, False]))
def test_the_event_reader_reads_what_the_loader_reads(tree: object, flow: bool | None) -> None:
    _same_as_the_loader(yaml.safe_dump({"items": [tree, tree]}, default_flow_style=flow, allow_unicode=True))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a: !!omap [b: 1]\n", "cannot read a list as !!omap"),
        ("a: !!map [1]\n", "cannot read a list as !!map"),
        ("a: !!seq {b: 1}\n", "cannot read a mapping as !!seq"),
        ("a: !!int x\n", "cannot read 'x' as !!int"),
        ("a: !!float x\n", "cannot read 'x' as !!float"),
        ("a: !!bool x\n", "cannot read 'x' as !!bool"),
    ],
)
def test_a_tag_its_value_cannot_have_is_a_problem_at_its_place(text: str, words: str) -> None:
    _, problems = load_text(text, "t.yaml")
    assert [(p.message, p.span.line, p.span.column) for p in problems if p.span] == [(f"invalid YAML: {words}", 1, 4)]
