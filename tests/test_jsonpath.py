"""Kubernetes JSONPath templates as Karmada's state preservation evaluates them.

Cases from pkg/util/helper/failover_test.go and the state preservation of propagation_types.go.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.kube.gojson import quote as go_quote
from engine.kube.jsonpath import evaluate
from engine.kube.jsonpath_syntax import JsonPathError, parse

DATA = Path(__file__).parent / "data" / "jsonpath"

STATUS = {"replicas": 2, "health": True}
LIST = {
    "kind": "List",
    "items": [
        {"metadata": {"name": "nginx-01", "namespace": "default", "resourceVersion": "1148"}},
        {"metadata": {"name": "nginx-02", "namespace": "default", "resourceVersion": "1149"}},
    ],
}
FLINK = {"jobStatus": {"jobID": "a1b2", "checkpointInfo": {"lastCheckpoint": "s3://ckpt/chk-42"}}}


@pytest.mark.parametrize(
    ("template", "data", "expected"),
    [
        ("{ .replicas }", STATUS, "2"),  # a number prints as "2"
        ("{ .health }", STATUS, "true"),  # a bool prints as "true"
        ("{ ['kind'] }", LIST, "List"),
        ("{ ..resourceVersion }", LIST, "1148 1149"),
        ("{ .items[*].metadata.name }", LIST, "nginx-01 nginx-02"),
        ("{ .items[0].metadata.name }", LIST, "nginx-01"),
        ("{ .items[-1].metadata.name }", LIST, "nginx-02"),
        ("{ .items[0:1].metadata.name }", LIST, "nginx-01"),
        ('{ .items[?(@.metadata.name=="nginx-01")].metadata.name }', LIST, "nginx-01"),
        (
            "{range .items[*]}[{.metadata.name}, {.metadata.namespace}] {end}",
            LIST,
            "[nginx-01, default] [nginx-02, default] ",
        ),
        ("{.jobStatus.checkpointInfo.lastCheckpoint}", FLINK, "s3://ckpt/chk-42"),
        ("job={.jobStatus.jobID}", FLINK, "job=a1b2"),
        ('{.jobStatus.jobID}{"\\n"}', FLINK, "a1b2\n"),
        ("{.jobStatus.checkpointInfo}", FLINK, '{"lastCheckpoint":"s3://ckpt/chk-42"}'),
        ("{.items[?(@.metadata.missing)].metadata.name}", LIST, ""),
    ],
)
def test_evaluate(template: str, data: Any, expected: str) -> None:
    assert evaluate(template, data) == expected


@pytest.mark.parametrize(
    ("template", "data", "message"),
    [
        ("{ .notfound }", STATUS, "notfound is not found"),  # AllowMissingKeys(false)
        ("{ .replicas }", {"readyReplicas": 2}, "replicas is not found"),
        ("{ .items[5].metadata }", LIST, "array index out of bounds"),
    ],
)
def test_missing_keys_are_errors(template: str, data: Any, message: str) -> None:
    with pytest.raises(JsonPathError, match=message):
        evaluate(template, data)


@pytest.mark.parametrize(
    ("template", "message", "offset"),
    [
        ("{ %health }", "unrecognized character in action: U+0025 '%'", 2),
        ("x{.a", "unclosed action", 1),
        ("{.a[x]}", "invalid array index x", 3),
        ("{.a[}", "unterminated array", 3),
        ("{.a['b}", "unterminated array", 3),
        ("{'b}", "unterminated quoted string", 1),
        ("{.a[?(@.b}", "unterminated filter", 3),
        ("{.a[1,x]}", "invalid array index x", 3),
        ("{....a}", "invalid multiple recursive descent", 3),
        ("{1.2.3}", "cannot parse number 1.2.3", 1),
    ],
)
def test_parse_errors_in_client_gos_words_with_offsets(template: str, message: str, offset: int) -> None:
    with pytest.raises(JsonPathError) as caught:
        parse(template)
    assert str(caught.value) == message and caught.value.offset == offset


@pytest.mark.parametrize("template", ["{range .a}x", "{end}", "{}", "{.}", "{@}", "{..}", "{.a[?(@.b>)]}"])
def test_what_client_go_parses(template: str) -> None:
    """Templates client-go accepts, however odd: some fail on any data ({end} outside a range, {.} looks up
    the empty key), which is an error of the evaluation, not of the template."""
    parse(template)


ORDERED_BY_GO_MAP = ("..", ".*")  # Go iterates maps in a random order there


def _words(text: str) -> list[str]:
    return sorted(text.split(" "))


def test_templates_evaluate_as_client_go_evaluates_them() -> None:
    """tests/data/jsonpath: 493 templates over statuses, and what client-go's JSONPath made of each as
    Karmada's state preservation runs it (parseJSONValue: a parse error as it is, an evaluation error as
    "failed to execute jsonpath %q: …"). Where the output depends on Go's random map order, the same
    results in any order."""
    data = json.loads((DATA / "cases.json").read_text())
    expected = json.loads((DATA / "out.json").read_text())
    assert len(data["cases"]) == len(expected) == 493
    for (template, which), go in zip(data["cases"], expected, strict=True):
        status = data["statuses"][which]
        try:
            nodes = parse(template)
        except JsonPathError as exc:
            assert go == {"error": str(exc)}, template
            continue
        try:
            out = evaluate(nodes, status)
        except JsonPathError as exc:
            assert go == {"error": f"failed to execute jsonpath {go_quote(template)}: {exc}"}, template
            continue
        assert "out" in go, (template, out, go)
        if any(marker in template for marker in ORDERED_BY_GO_MAP):
            assert _words(out) == _words(go["out"]), template
        else:
            assert out == go["out"], template


def test_a_number_in_a_filter_is_an_int_and_the_datas_a_float64() -> None:
    """client-go compares with Go's template package, which does not compare an int with a float64."""
    items = {"items": [{"replicas": 2, "phase": "Running"}]}
    with pytest.raises(JsonPathError, match="incompatible types for comparison"):
        evaluate("{.items[?(@.replicas==2)].phase}", items)
    assert evaluate("{.items[?(@.replicas==2.0)].phase}", items) == "Running"
    assert evaluate("{.items[?(@.phase=='Running')].replicas}", items) == "2"
