"""A plain-Python reference for the end-to-end benchmark: reads the same snapshot YAML as `fleetrules eval`
and makes the same decisions for the shapes of benchmarks/fleets.py, written directly with dicts and sets.

    .venv/bin/python benchmarks/reference.py fleet.yaml > answer.json

What it models (enough for those shapes, nothing more): one PropagationPolicy per namespace selecting the
workloads by kind; cluster affinity by label selector (matchLabels, matchExpressions In); NoSchedule taints
against the policy's tolerations; required workload anti-affinity by a label, per namespace; bindings
already scheduled whose applied placement is the policy's kept on their clusters; Duplicated onto every
feasible cluster, or onto the first N by name with a spread by cluster of at most N. Divided replicas are not
modelled (the ``divided`` shape is timed against fleetrules alone). Its answer is written as fleetrules
writes its own: one JSON line per binding, with the rejected clusters counted by reason.
"""

from __future__ import annotations

import gc
import json
import sys
from collections import Counter, defaultdict
from typing import Any

import yaml

Object = dict[str, Any]
AFFINITY = "did not match the placement cluster affinity constraint"
TAINT = "cluster(s) had untolerated taint"
ANTI = "cluster already has workload with the same anti-affinity group"


def _matches(labels: dict[str, str], selector: Object) -> bool:
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        if e["operator"] == "In" and labels.get(e["key"]) not in e["values"]:
            return False
        if e["operator"] == "NotIn" and labels.get(e["key"]) in e["values"]:
            return False
    return True


def _tolerated(taint: Object, tolerations: list[Object]) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == taint["key"]):
            return True
        if t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def _filter(policy: Object, clusters: list[Object]) -> tuple[list[str], dict[str, str]]:
    """The policy's feasible clusters (sorted) and each other cluster's reason."""
    placement = policy["spec"]["placement"]
    selector = (placement.get("clusterAffinity") or {}).get("labelSelector") or {}
    tolerations = placement.get("clusterTolerations") or []
    feasible, rejected = [], {}
    for c in clusters:
        name = c["metadata"]["name"]
        if not _matches(c["metadata"].get("labels") or {}, selector):
            rejected[name] = AFFINITY
        elif any(t["effect"] == "NoSchedule" and not _tolerated(t, tolerations) for t in c["spec"].get("taints") or []):
            rejected[name] = TAINT
        else:
            feasible.append(name)
    return feasible, rejected


def _anti_affinity_key(policy: Object) -> str | None:
    affinity = policy["spec"]["placement"].get("workloadAffinity") or {}
    key: str | None = (affinity.get("antiAffinity") or {}).get("groupByLabelKey")
    return key


def decide(objects: list[Object]) -> list[Object]:
    clusters = sorted((o for o in objects if o["kind"] == "Cluster"), key=lambda o: o["metadata"]["name"])
    policies = {o["metadata"]["namespace"]: o for o in objects if o["kind"] == "PropagationPolicy"}
    bindings = {
        (o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objects if o["kind"] == "ResourceBinding"
    }
    workloads = [o for o in objects if o["kind"] not in ("Cluster", "PropagationPolicy", "ResourceBinding")]
    filtered = {ns: _filter(p, clusters) for ns, p in policies.items()}
    anti = {
        ns: ((p["spec"]["placement"].get("workloadAffinity") or {}).get("antiAffinity") or {}).get("groupByLabelKey")
        for ns, p in policies.items()
    }
    rows = []
    for w in workloads:
        meta = w["metadata"]
        ns = meta["namespace"]
        if ns not in policies:
            continue
        key = f"{meta['name']}-{w['kind'].lower()}"
        binding = bindings.get((ns, key))
        current = [t["name"] for t in binding["spec"]["clusters"]] if binding else []
        applied = binding["metadata"]["annotations"].get("policy.karmada.io/applied-placement") if binding else None
        placement = policies[ns]["spec"]["placement"]
        settled = bool(current) and applied is not None and json.loads(applied) == placement
        label = anti[ns]
        group = (ns, f"{label}={meta['labels'][label]}") if label and label in (meta.get("labels") or {}) else None
        rows.append((f"{ns}/{key}", ns, group, current, settled))
    rows.sort(key=lambda r: r[0])
    occupied: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for _, _, group, current, _ in rows:
        if group is not None:
            occupied[group].update(current)
    out = []
    for key, ns, group, current, settled in rows:
        if settled:
            out.append({"binding": key, "clusters": current, "settled": True})
            continue
        feasible, rejected = filtered[ns]
        reasons = Counter(rejected.values())
        taken = occupied[group] if group is not None else Counter()
        mine = set(current)
        left = []
        for c in feasible:
            if c not in mine and taken[c] > 0:
                reasons[ANTI] += 1
            else:
                left.append(c)
        spread = [
            s
            for s in policies[ns]["spec"]["placement"].get("spreadConstraints") or []
            if s.get("spreadByField") == "cluster"
        ]
        chosen = left[: spread[0]["maxGroups"]] if spread and left else left
        if group is not None:
            occupied[group].subtract(current)
            occupied[group].update(chosen)
        out.append(
            {
                "binding": key,
                "clusters": chosen,
                "feasible": len(left),
                "unschedulable": not chosen,
                "rejected": dict(sorted(reasons.items())),
            }
        )
    return out


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        text = handle.read()
    gc.disable()  # as fleetrules loads: the collector would rescan the growing document many times
    if sys.argv[1].endswith(".json"):  # kubectl's -o json, read as JSON
        document = json.loads(text)
    else:
        document = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    gc.enable()
    objects = document["items"] if document.get("kind") == "List" else [document]
    write = sys.stdout.write
    write('{\n  "placements": [\n')
    write(",\n".join("    " + json.dumps(row) for row in decide(objects)))
    write("\n  ]\n}\n")


if __name__ == "__main__":
    main()
