"""Kubernetes name and label validation (k8s.io/apimachinery/pkg/util/validation and
pkg/api/validate/content).

Each function returns the list of problems, empty when the value is valid, in apimachinery's own words
(checked in tests/test_k8s.py, with apimachinery's own tables).
"""

from __future__ import annotations

import re

# The Go integer types of Kubernetes API fields (int32 counts and seconds, int64 toleration seconds).
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

# k8s.io/apimachinery v0.36.2 (Karmada's): label keys and values by pkg/api/validate/content (lengths in
# bytes), DNS names by pkg/util/validation (lengths in characters), each message with its examples
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = f"({_LABEL_KEY_FMT})?"
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_LABEL_KEY = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)
_DNS1123_LABEL = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT)
_KIND = re.compile(r"[A-Za-z][A-Za-z0-9]*")

_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character"
)
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character"
)


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """RegexError: the message, its examples and the regex (its double space included)."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    return message + " (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{fmt}')"


def _too_long(value: str, limit: int, unit: str) -> list[str]:
    size = len(value.encode("utf-8", "surrogatepass")) if unit == "bytes" else len(value)
    return [f"must be no more than {limit} {unit}"] if size > limit else []


def qualified_name_problems(value: str) -> list[str]:
    """IsQualifiedName (content.IsLabelKey): ``[prefix/]name``, the syntax of label and annotation keys."""
    problems: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        key = regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        return [f"a valid label key {key} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            problems.append("prefix part must be non-empty")
        else:
            problems += [f"prefix part {p}" for p in _subdomain_problems(parts[0], "bytes")]
    if not name:
        problems.append("name part must be non-empty")
    else:
        problems += [f"name part {p}" for p in _too_long(name, 63, "bytes")]
    if not _LABEL_KEY.fullmatch(name):
        problems.append("name part " + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc"))
    return problems


label_key_problems = qualified_name_problems


def label_value_problems(value: str) -> list[str]:
    """IsValidLabelValue (content.IsLabelValue)."""
    problems = _too_long(value, 63, "bytes")
    if not _LABEL_VALUE.fullmatch(value):
        problems.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return problems


def _subdomain_problems(value: str, unit: str) -> list[str]:
    problems = _too_long(value, 253, unit)
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        problems.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return problems


def dns1123_subdomain_problems(value: str) -> list[str]:
    """IsDNS1123Subdomain."""
    return _subdomain_problems(value, "characters")


def dns1123_label_problems(value: str) -> list[str]:
    """IsDNS1123Label: "must not contain dots" for a valid subdomain that is no label."""
    problems = _too_long(value, 63, "characters")
    if not _DNS1123_LABEL.fullmatch(value):
        if _DNS1123_SUBDOMAIN.fullmatch(value):
            problems.append("must not contain dots")
        else:
            problems.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return problems


def kind_problems(value: str) -> list[str]:
    if _KIND.fullmatch(value):
        return []
    return ["a kind must be a CamelCase identifier such as Deployment or FlinkDeployment"]


_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL = re.compile(_DNS1035_LABEL_FMT)
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character"
)


def dns1035_label_problems(value: str) -> list[str]:
    """IsDNS1035Label."""
    problems = _too_long(value, 63, "characters")
    if not _DNS1035_LABEL.fullmatch(value):
        problems.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return problems


def path_segment_problems(value: str) -> list[str]:
    """content.IsPathSegmentName (path.IsValidPathSegmentName): no length limit, not '.' or '..', no '/' or '%'."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in "/%" if c in value]


# The name rule of each kind the API server validates otherwise than as a DNS subdomain (its ValidateObjectMeta's
# ValidateNameFunc): RBAC objects are path segments (pkg/apis/rbac/validation ValidateRBACName), a Service a
# DNS-1035 label (pkg/apis/core/validation ValidateServiceName), a Namespace a DNS-1123 label
# (ValidateNamespaceName). Every other built-in kind and every custom resource (apiextensions-apiserver's
# customresource validation) is a DNS subdomain.
_NAME_RULES = {
    ("rbac.authorization.k8s.io", "Role"): path_segment_problems,
    ("rbac.authorization.k8s.io", "ClusterRole"): path_segment_problems,
    ("rbac.authorization.k8s.io", "RoleBinding"): path_segment_problems,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): path_segment_problems,
    ("", "Service"): dns1035_label_problems,
    ("", "Namespace"): dns1123_label_problems,
}
CRON_JOB_NAME_MAX = 52  # pkg/apis/batch/validation ValidateCronJob: DNS1035LabelMaxLength - 11


def name_problems(api_version: str, kind: str, name: str) -> list[str]:
    """What the API server says of an object's metadata.name, by its kind (an empty name: "required")."""
    if not name:
        return ["name or generateName is required"]
    group = api_version.rpartition("/")[0]
    problems = _NAME_RULES.get((group, kind), dns1123_subdomain_problems)(name)
    if (group, kind) == ("batch", "CronJob") and len(name) > CRON_JOB_NAME_MAX:
        problems.append(f"must be no more than {CRON_JOB_NAME_MAX} characters")
    return problems


_RULE_WORDS = {
    path_segment_problems: "a path segment",
    dns1035_label_problems: "a DNS-1035 label",
    dns1123_label_problems: "a DNS-1123 label",
    dns1123_subdomain_problems: "a DNS-1123 subdomain",
}


def kind_name_problems(kind: str, name: str) -> tuple[str, list[str]]:
    """How a kind's names are checked (in words), whatever its group, and what that says of ``name``: a policy's
    resource selector names a kind without its group, so RBAC's kinds are known by their names alone."""
    rule = next((r for (_, k), r in _NAME_RULES.items() if k == kind), dns1123_subdomain_problems)
    problems = rule(name)
    if kind == "CronJob" and len(name) > CRON_JOB_NAME_MAX:
        problems.append(f"must be no more than {CRON_JOB_NAME_MAX} characters")
    return _RULE_WORDS[rule], problems
