"""The fact types rules can match on, and their fields: shared by the checker and the compiler."""

from __future__ import annotations

import enum


class FieldType(enum.Enum):
    STRING = "string"
    NUMBER = "number"
    BOOL = "bool"
    LIST = "list"
    LABELS = "labels"  # a map from label key to value: `x.labels["key"]`


# Facts the engine asserts itself. `binding.affinity_group` is Karmada's instantiated group
# ("key=value" of the policy's groupByLabelKey on the workload, "" when none); `placement` is one
# (binding, cluster) target, current or decided in this evaluation; `scheduled` is asserted after all
# placements of a binding, so that a rule joining it sees the binding's whole target set.
BUILTIN_FACTS: dict[str, dict[str, FieldType]] = {
    "cluster": {
        "name": FieldType.STRING,
        "labels": FieldType.LABELS,
        "provider": FieldType.STRING,
        "region": FieldType.STRING,
        "zones": FieldType.LIST,
        "zone_count": FieldType.NUMBER,
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
        "affinity_group": FieldType.STRING,
        "anti_affinity_group": FieldType.STRING,
        # the topology key of the required terms ("" = the cluster itself; `within KEY` otherwise)
        "affinity_topology": FieldType.STRING,
        "anti_affinity_topology": FieldType.STRING,
    },
    "cluster_toleration": {
        "policy": FieldType.STRING,
        "key": FieldType.STRING,
        "operator": FieldType.STRING,
        "value": FieldType.STRING,
        "effect": FieldType.STRING,
    },
    "spread_constraint": {  # one placement.spreadConstraints item of a policy
        "policy": FieldType.STRING,
        "field": FieldType.STRING,  # cluster | region | zone | provider
    },
    "taint": {
        "cluster": FieldType.STRING,
        "key": FieldType.STRING,
        "value": FieldType.STRING,
        "effect": FieldType.STRING,
        "display": FieldType.STRING,  # as Karmada prints it: {key=value:Effect}
    },
    "api_unavailable": {  # a binding's API (apiVersion, kind) that a cluster is not known to serve
        "cluster": FieldType.STRING,
        "api_version": FieldType.STRING,
        "kind": FieldType.STRING,
    },
    "eviction_task": {
        "namespace": FieldType.STRING,
        "binding": FieldType.STRING,
        "from_cluster": FieldType.STRING,
        "purge_mode": FieldType.STRING,
        "reason": FieldType.STRING,
        "producer": FieldType.STRING,
    },
    # the taint manager's clock of a NoExecute taint with a timeAdded: since then (RFC 3339), and for how many seconds
    # now, rounded down (so `seconds >= N` holds exactly when the clock is at or past timeAdded + N seconds)
    "taint_age": {
        "cluster": FieldType.STRING,
        "key": FieldType.STRING,
        "value": FieldType.STRING,
        "effect": FieldType.STRING,
        "display": FieldType.STRING,
        "since": FieldType.STRING,
        "seconds": FieldType.NUMBER,
    },
    # a toleration the taint manager uses on a cluster (GetMatchingTolerations: the first of its policy's tolerations
    # that tolerates one of the cluster's NoExecute taints): its fields, its place among the policy's, and its
    # tolerationSeconds (`timed`: set; `seconds`: as Go adds them to a time, int64 nanoseconds wrapped, rounded up)
    "toleration_used": {
        "policy": FieldType.STRING,
        "cluster": FieldType.STRING,
        "key": FieldType.STRING,
        "operator": FieldType.STRING,
        "value": FieldType.STRING,
        "effect": FieldType.STRING,
        "position": FieldType.NUMBER,
        "timed": FieldType.BOOL,
        "seconds": FieldType.NUMBER,
    },
    # a policy's spec.failover.application, defaults applied (tolerationSeconds 300, purgeMode Gracefully)
    "application_failover": {
        "policy": FieldType.STRING,
        "toleration_seconds": FieldType.NUMBER,
        "purge_mode": FieldType.STRING,
    },
    # the application failover controller's timer (workloadUnhealthyMap) of a workload Unhealthy on a cluster its
    # binding targets: since when (RFC 3339) and for how many seconds now, rounded up (so `seconds > N` holds
    # exactly when Karmada's clock is past since + N seconds); only for bindings that controller watches
    "unhealthy_workload": {
        "namespace": FieldType.STRING,
        "binding": FieldType.STRING,
        "cluster": FieldType.STRING,
        "since": FieldType.STRING,
        "seconds": FieldType.NUMBER,
    },
    "placement": {
        "namespace": FieldType.STRING,
        "binding": FieldType.STRING,
        "cluster": FieldType.STRING,
        "affinity_group": FieldType.STRING,
        "anti_affinity_group": FieldType.STRING,
    },
    "scheduled": {
        "namespace": FieldType.STRING,
        "binding": FieldType.STRING,
        "affinity_group": FieldType.STRING,
        "anti_affinity_group": FieldType.STRING,
    },
}

# Facts the engine asserts for its own bookkeeping: rules cannot name them, and no rule may derive them.
# `member` is one element of a list field (engine.compile); `policy_scope` stands for every binding of
# one policy in rules that depend on the binding only through its policy, `group_scope` for every binding
# alike in the fields other lifted rules read (a namespace's affinity groups: engine.compile.lift).
MEMBER = "member"
POLICY_SCOPE = "policy_scope"
GROUP_SCOPE = "group_scope"
INTERNAL_FACTS = (MEMBER, POLICY_SCOPE, GROUP_SCOPE)

PURGE_MODES = ("Directly", "Gracefully", "Never")
# accepted with a deprecation warning up to v1.18, removed in v1.19 (karmada commit 2aeae1ee)
DEPRECATED_PURGE_MODES = {"Immediately": "Directly", "Graciously": "Gracefully"}

# The Karmada minor versions whose differences fleetrules models; the newest is the default.
KARMADA_VERSIONS = ("1.18", "1.19")
KARMADA_VERSION = KARMADA_VERSIONS[-1]


def karmada_version(text: str) -> str:
    """ "v1.18.2", "1.18" → "1.18"; ValueError naming the modelled versions otherwise."""
    parts = text.strip().removeprefix("v").split(".")
    minor = ".".join(parts[:2])
    if len(parts) < 2 or minor not in KARMADA_VERSIONS or not all(p.isdigit() for p in parts[:2]):
        modelled = ", ".join(KARMADA_VERSIONS)
        raise ValueError(f"{text!r} is not a Karmada version fleetrules models ({modelled}; e.g. v1.18.2)")
    return minor


TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
FIELD_SELECTOR_KEYS = ("provider", "region", "zone")
FAILOVER_KINDS = ("application", "cluster")
SPREAD_FIELDS = ("cluster", "region", "zone", "provider")
REPLICA_MODES = ("duplicated", "aggregated", "divided")
DYNAMIC_WEIGHTS = ("available",)
DEFAULT_TOLERATION_SECONDS = 300
DEFAULT_GRACE_PERIOD_SECONDS = 600
