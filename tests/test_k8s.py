"""Kubernetes name and label validation (apimachinery IsQualifiedName / IsValidLabelValue / DNS-1123)."""

from __future__ import annotations

from typing import Any

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
        ("x" * 64, "name part must be no more than 63 bytes"),
        ("Example.com/x", "prefix part a lowercase RFC 1123 subdomain"),
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


# apimachinery's own tables (k8s.io/apimachinery pkg/util/validation/validation_test.go at eed236ce)
DNS1123_LABEL_GOOD = [
    "a",
    "ab",
    "abc",
    "a1",
    "a-1",
    "a--1--2--b",
    "0",
    "01",
    "012",
    "1a",
    "1-a",
    "1--a--b--2",
    "a" * 63,
]
DNS1123_LABEL_BAD = [
    *("", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1"),
    *("_", "a_", "_a", "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a.b", "1.", ".1", "1.2"),
    *(" ", "a ", " a", "a b", "1 ", " 1", "1 2", "a" * 64),
]
DNS1123_SUBDOMAIN_GOOD = [
    *("a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "012", "1a", "1-a", "1--a--b--2"),
    *("a.a", "ab.a", "abc.a", "a1.a", "a-1.a", "a--1--2--b.a", "a.1", "ab.1", "abc.1", "a1.1", "a-1.1"),
    *("a--1--2--b.1", "0.a", "01.a", "012.a", "1a.a", "1-a.a", "1--a--b--2", "0.1", "01.1", "012.1"),
    *("1a.1", "1-a.1", "1--a--b--2.1", "a.b.c.d.e", "aa.bb.cc.dd.ee", "1.2.3.4.5", "11.22.33.44.55", "a" * 253),
]
DNS1123_SUBDOMAIN_BAD = [
    *("", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1"),
    *("_", "a_", "_a", "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a..b", "1.", ".1", "1..2"),
    *(" ", "a ", " a", "a b", "1 ", " 1", "1 2", "A.a", "aB.a", "ab.A", "A1.a", "a1.A"),
    *("A.1", "aB.1", "A1.1", "1A.1", "0.A", "01.A", "012.A", "1A.a", "1a.A"),
    *("A.B.C.D.E", "AA.BB.CC.DD.EE", "a.B.c.d.e", "aa.bB.cc.dd.ee"),
    *("a@b", "a,b", "a_b", "a;b", "a:b", "a%b", "a?b", "a$b", "a" * 254),
]
QUALIFIED_NAME_GOOD = [
    *("simple", "now-with-dashes", "1-starts-with-num", "1234", "simple/simple", "now-with-dashes/simple"),
    *("now-with-dashes/now-with-dashes", "now.with.dots/simple", "now-with.dashes-and.dots/simple"),
    *("1-num.2-num/3-num", "1234/5678", "1.2.3.4/5678", "Uppercase_Is_OK_123", "example.com/Uppercase_Is_OK_123"),
    *("requests.storage-foo", "a" * 63, "a" * 253 + "/" + "b" * 63),
]
QUALIFIED_NAME_BAD = [
    *("nospecialchars%^=@", "cantendwithadash-", "-cantstartwithadash-", "only/one/slash", "Example.com/abc"),
    *("example_com/abc", "example.com/", "/simple", "a" * 64, "a" * 254 + "/abc"),
]
LABEL_VALUE_GOOD = ["simple", "now-with-dashes", "1-starts-with-num", "end-with-num-1", "1234", "a" * 63, ""]
LABEL_VALUE_BAD = [
    *("nospecialchars%^=@", "Tama-nui-te-rā.is.Māori.sun", "\\backslashes\\are\\bad", "-starts-with-dash"),
    *("ends-with-dash-", ".starts.with.dot", "ends.with.dot.", "a" * 64),
]


@pytest.mark.parametrize(
    ("check", "value", "valid"),
    [(k8s.dns1123_label_problems, v, True) for v in DNS1123_LABEL_GOOD]
    + [(k8s.dns1123_label_problems, v, False) for v in DNS1123_LABEL_BAD]
    + [(k8s.dns1123_subdomain_problems, v, True) for v in DNS1123_SUBDOMAIN_GOOD]
    + [(k8s.dns1123_subdomain_problems, v, False) for v in DNS1123_SUBDOMAIN_BAD]
    + [(k8s.qualified_name_problems, v, True) for v in QUALIFIED_NAME_GOOD]
    + [(k8s.qualified_name_problems, v, False) for v in QUALIFIED_NAME_BAD]
    + [(k8s.label_value_problems, v, True) for v in LABEL_VALUE_GOOD]
    + [(k8s.label_value_problems, v, False) for v in LABEL_VALUE_BAD],
)
def test_apimachinery_tables(check: Any, value: str, valid: bool) -> None:
    """TestIsDNS1123Label, TestIsDNS1123Subdomain, TestIsQualifiedName, TestIsValidLabelValue."""
    assert (check(value) == []) is valid


def test_messages_in_apimachinerys_words() -> None:
    """As the API server words them (apimachinery v0.36.2, Karmada's), examples and regex included."""
    assert k8s.label_value_problems("no way") == [
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
        "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    ]
    assert k8s.dns1123_label_problems("a.b") == ["must not contain dots"]
    assert k8s.dns1123_subdomain_problems("a" * 254) == ["must be no more than 253 characters"]
    assert k8s.label_value_problems("é" * 32) == [  # 64 bytes
        "must be no more than 63 bytes",
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
        "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]
