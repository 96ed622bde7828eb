"""The fact types rules can match on, and their fields: shared by the checker and the compiler."""

from __future__ import annotations

import enum


class FieldType(enum.Enum):
    STRING = "string"
    NUMBER = "number"
    BOOL = "bool"
    LIST = "list"
    LABELS = "labels"  # a map from label key to value: `x.labels["key"]`


BUILTIN_FACTS: dict[str, dict[str, FieldType]] = {
    "cluster": {
        "name": FieldType.STRING,
        "labels": FieldType.LABELS,
        "provider": FieldType.STRING,
        "region": FieldType.STRING,
        "zones": FieldType.LIST,
        "ready": FieldType.BOOL,
    },
    "binding": {
        "namespace": FieldType.STRING,
        "name": FieldType.STRING,
        "kind": FieldType.STRING,
        "api_version": FieldType.STRING,
        "labels": FieldType.LABELS,
        "clusters": FieldType.LIST,
        "replicas": FieldType.NUMBER,
        "policy": FieldType.STRING,
    },
}

PURGE_MODES = ("Directly", "Gracefully", "Never")
DEPRECATED_PURGE_MODES = {"Immediately": "Directly", "Graciously": "Gracefully"}
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
FIELD_SELECTOR_KEYS = ("provider", "region", "zone")
FAILOVER_KINDS = ("application", "cluster")
DEFAULT_TOLERATION_SECONDS = 300
DEFAULT_GRACE_PERIOD_SECONDS = 600
