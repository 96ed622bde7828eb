"""Kubernetes name and label validation (apimachinery IsQualifiedName / IsValidLabelValue / DNS-1123)."""

from __future__ import annotations

import pytest

from engine.kube import validation as k8s


@pytest.mark.parametrize(
    "key", ["app", "karmada.io/group", "app.kubernetes.io/name", "a", "A_b-c.d", "x" * 63, "example.com/" + "x" * 63]
)
def test_valid_label_keys(key: str) -> None:
    assert k8s.label_key_problems(key) == []


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("", "name part must be non-empty"),
        ("example.com/", "name part must be non-empty"),
        ("/name", "prefix part must be non-empty"),
        ("-bad", "must start and end with an alphanumeric"),
        ("x" * 64, "no more than 63 characters"),
        ("Example.com/x", "prefix part: a lowercase RFC 1123 subdomain"),
        ("a b", "must consist of alphanumeric"),
    ],
)
def test_invalid_label_keys(key: str, problem: str) -> None:
    assert any(problem in p for p in k8s.label_key_problems(key))


@pytest.mark.parametrize("value", ["", "prod", "v1.2_3-x", "x" * 63])
def test_valid_label_values(value: str) -> None:
    assert k8s.label_value_problems(value) == []


@pytest.mark.parametrize("value", ["-x", "x-", "a b", "x" * 64, "ü"])
def test_invalid_label_values(value: str) -> None:
    assert k8s.label_value_problems(value)


def test_names() -> None:
    assert k8s.dns1123_label_problems("streaming") == []
    assert k8s.dns1123_label_problems("Streaming")
    assert k8s.dns1123_label_problems("a.b")
    assert k8s.dns1123_subdomain_problems("member-1.eu") == []
    assert k8s.dns1123_subdomain_problems("member_1")
    assert k8s.kind_problems("FlinkDeployment") == []
    assert k8s.kind_problems("flink-deployment")
