"""Kubernetes name and label validation (k8s.io/apimachinery/pkg/util/validation).

Each function returns the list of problems, empty when the value is valid, worded like the
apimachinery messages so that users recognise them.
"""

from __future__ import annotations

import re

# The Go integer types of Kubernetes API fields (int32 counts and seconds, int64 toleration seconds).
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_KIND = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def qualified_name_problems(value: str) -> list[str]:
    """IsQualifiedName: ``[prefix/]name``, the syntax of label keys."""
    problems: list[str] = []
    prefix, slash, name = value.rpartition("/")
    if slash:
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems += [f"prefix part: {p}" for p in dns1123_subdomain_problems(prefix)]
    if not name:
        problems.append("name part must be non-empty")
    else:
        if len(name) > 63:
            problems.append("name part must be no more than 63 characters")
        if not _QUALIFIED_NAME.fullmatch(name):
            problems.append(
                "name part must consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character"
            )
    return problems


label_key_problems = qualified_name_problems


def label_value_problems(value: str) -> list[str]:
    problems: list[str] = []
    if len(value) > 63:
        problems.append("must be no more than 63 characters")
    if not _LABEL_VALUE.fullmatch(value):
        problems.append(
            "a valid label value must be an empty string or consist of alphanumeric characters, "
            "'-', '_' or '.', and must start and end with an alphanumeric character"
        )
    return problems


def dns1123_subdomain_problems(value: str) -> list[str]:
    problems: list[str] = []
    if len(value) > 253:
        problems.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        problems.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character"
        )
    return problems


def dns1123_label_problems(value: str) -> list[str]:
    problems: list[str] = []
    if len(value) > 63:
        problems.append("must be no more than 63 characters")
    if not _DNS1123_LABEL.fullmatch(value):
        problems.append(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
            "and must start and end with an alphanumeric character"
        )
    return problems


def kind_problems(value: str) -> list[str]:
    if _KIND.fullmatch(value):
        return []
    return ["a kind must be a CamelCase identifier such as Deployment or FlinkDeployment"]
