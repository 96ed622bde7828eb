"""Kubernetes JSONPath templates as Karmada's state preservation evaluates them.

Cases from karmada-reference.md §6.6 (pkg/util/helper/failover_test.go) and S5.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.kube.jsonpath import JsonPathError, evaluate, parse

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
    ("template", "offset"),
    [("{ %health }", 2), ("{ %replicas }", 2), ("{.a", 0), ("{range .a}x", 1), ("{end}", 1), ("{}", 1), ("{.a[x]}", 4)],
)
def test_parse_errors_have_offsets(template: str, offset: int) -> None:
    with pytest.raises(JsonPathError) as caught:
        parse(template)
    assert caught.value.offset == offset
