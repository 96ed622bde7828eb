"""fleetrules on the oracle's cases (tests/data/oracle/cases.json), against what Karmada's own scheduler answered
(answers.json): ``compare(cases, answers)`` lists each difference."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from engine import Controllers, RuleError, RuleSet, evaluate, load_facts, load_rules, simulate
from engine.detector.templates import not_propagated
from engine.inputs.facts import Binding, parse_time
from engine.karmada.controllers.world import TAINT_MANAGER_RULES
from engine.karmada.gates import skipped_namespaces
from engine.kube.dependencies import Dependent, dependencies
from engine.results import EntryKind

# Karmada's defaults: no gate the cases need is off (no workload affinity, no components)
CONTROLLERS = Controllers()
TAINT_MANAGER = Controllers.parse(["enable-no-execute-taint-eviction=true", "feature-gates=Failover=true"])


def _policy(placement: dict[str, Any]) -> dict[str, Any]:
    """The PropagationPolicy n/p of the Deployment n/w, with ``placement``."""
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "p", "namespace": "n"},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "w"}],
            "placement": placement,
        },
    }


def objects(case: dict[str, Any]) -> list[dict[str, Any]]:
    """The case as a snapshot: its clusters, a PropagationPolicy with its placement, the fresh ResourceBinding."""
    spec = case["spec"]
    policy = _policy(spec["placement"])
    binding = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "w-deployment", "namespace": "n"},
        "spec": spec,
    }
    return [*case["clusters"], policy, binding]


def answer_of(case: dict[str, Any]) -> dict[str, Any]:
    """fleetrules' answer in the oracle's shape: the target clusters with replicas, or the error; and the reasons
    each rejected cluster is rejected for."""
    facts = load_facts(objects=objects(case))  # the policy among them, as in a snapshot
    (placement,) = evaluate(RuleSet((), {}), facts, controllers=CONTROLLERS).placements
    rejected = {c: sorted({r.summary for r in reasons}) for c, reasons in placement.rejected.items()}
    if placement.unschedulable:
        return {"clusters": None, "error": placement.message, "rejected": rejected}
    clusters = [{"name": c, "replicas": placement.replicas.get(c, 0)} for c in placement.clusters]
    return {"clusters": clusters, "rejected": rejected}


FIT_ERROR = re.compile(r"^0/(\d+) clusters are available: (.*)\.$")
# a FitError's reasons: "N cluster(s) …", and the workload affinity plugins' own words ("N ResourceBinding …",
# "N cluster already has …")
_REASON = re.compile(r", (?=\d+ (?:cluster|ResourceBinding))")


def _histogram(message: str) -> tuple[int, Counter[str]] | None:
    """A FitError's message as (all clusters, count per reason); None for another message."""
    found = FIT_ERROR.match(message)
    if found is None:
        return None
    counts: Counter[str] = Counter()
    for part in _REASON.split(found.group(2)):
        number, _, reason = part.partition(" ")
        counts[reason] += int(number)
    return int(found.group(1)), counts


def _one_reason_each(counts: Counter[str], rejected: dict[str, list[str]]) -> bool:
    """Whether ``counts`` names one reason of each rejected cluster: a choice of one reason per cluster that gives
    these counts (a matching of clusters to the counted reasons' places, found by augmenting paths)."""
    if sum(counts.values()) != len(rejected):
        return False
    slots = [reason for reason, n in sorted(counts.items()) for _ in range(n)]
    taken: dict[int, str] = {}  # slot → cluster

    def place(cluster: str, seen: set[int]) -> bool:
        for i, reason in enumerate(slots):
            if reason in rejected[cluster] and i not in seen:
                seen.add(i)
                if i not in taken or place(taken[i], seen):
                    taken[i] = cluster
                    return True
        return False

    return all(place(cluster, set()) for cluster in rejected)


TAINT = "cluster(s) had untolerated taint {"


def _first_taints(rejected: dict[str, list[str]], taints: dict[str, list[str]]) -> dict[str, list[str]]:
    """fleetrules names every untolerated taint of a cluster; Karmada's TaintToleration filter the first in the
    cluster's spec.taints (FindMatchingUntoleratedTaint): the reasons with the first only."""
    out = {}
    for cluster, reasons in rejected.items():
        order = taints.get(cluster, [])
        found = [r for r in reasons if r.startswith(TAINT)]
        first = sorted(found, key=lambda r: order.index(r[len(TAINT) : -1]) if r[len(TAINT) : -1] in order else 99)
        out[cluster] = sorted([r for r in reasons if not r.startswith(TAINT)] + first[:1])
    return out


def difference(ours: dict[str, Any], theirs: dict[str, Any], taints: dict[str, list[str]]) -> str:
    """ "" when fleetrules answers as Karmada; "fit-error order" when both name the same rejections and their
    FitError messages differ only in which reason of a cluster rejected for several each names (Karmada's filter
    plugins run in the random order of a Go map: runtime.NewFramework over the registry); else what differs."""
    theirs_rejected = {c: sorted(set(r)) for c, r in (theirs.get("rejected") or {}).items()}
    if _first_taints(ours["rejected"], taints) != theirs_rejected:
        return "rejections"
    if ours.get("error") or theirs.get("error"):
        if ours.get("error") == theirs.get("error"):
            return ""
        ours_fit, theirs_fit = _histogram(ours.get("error") or ""), _histogram(theirs.get("error") or "")
        if ours_fit and theirs_fit and ours_fit[0] == theirs_fit[0] and _one_reason_each(ours_fit[1], theirs_rejected):
            return "fit-error order"
        return "error"
    mine = {c["name"]: c.get("replicas", 0) for c in ours["clusters"] or []}
    karmada = {c["name"]: c.get("replicas", 0) for c in theirs["clusters"] or []}
    return "" if mine == karmada else "placement"


def compare(
    cases: list[dict[str, Any]], answers: list[dict[str, Any]]
) -> list[tuple[int, str, dict[str, Any], dict[str, Any]]]:
    """Each case fleetrules answers otherwise than Karmada: (index, difference, ours, Karmada's)."""
    out = []
    for i, (case, theirs) in enumerate(zip(cases, answers, strict=True)):
        ours = answer_of(case)
        taints = {
            c["metadata"]["name"]: [f"{t['key']}:{t['effect']}" for t in c["spec"].get("taints", [])]
            for c in case["clusters"]
        }
        kind = difference(ours, theirs, taints)
        if kind:
            out.append((i, kind, ours, theirs))
    return out


def taint_answer_of(case: dict[str, Any]) -> dict[str, Any]:
    """fleetrules' taint manager decision in the oracle's shape: the tolerations read from a PropagationPolicy's
    clusterTolerations as a snapshot's policy is read, the taints from a Cluster object."""
    placement = {"clusterTolerations": case["tolerations"]}
    policy = _policy(placement)
    cluster = {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "m1"},
        "spec": {"taints": case["taints"]},
    }
    # the Deployment n/w and its binding on m1, settled (the applied placement is the policy's), run through time
    # from the case's moment as `simulate` runs it: the taint manager's rules (rules/taint_manager.fr) evict it at
    # once where a NoExecute taint is not tolerated or a toleration's seconds ran out, later where they run out then
    binding = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": "w-deployment",
            "namespace": "n",
            "annotations": {"policy.karmada.io/applied-placement": json.dumps(placement)},
        },
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "n", "name": "w"},
            "clusters": [{"name": "m1"}],
        },
    }
    workload = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w", "namespace": "n"}}
    facts = load_facts(objects=[policy, cluster, binding, workload])
    now = parse_time(case["now"])
    entries = simulate(RuleSet((), {}), facts, now, [], controllers=TAINT_MANAGER)
    evicted = next((e for e in entries if e.kind is EntryKind.EVICTED), None)
    if evicted is None:
        return {"decision": "never"}
    assert evicted.detail["rule"] in TAINT_MANAGER_RULES
    if evicted.time == now:
        return {"decision": "now"}
    return {"decision": "after", "seconds": (evicted.time - now).total_seconds()}


def compare_taints(
    cases: list[dict[str, Any]], answers: list[dict[str, Any]]
) -> list[tuple[int, dict[str, Any], dict[str, Any]]]:
    """Each taint manager decision fleetrules makes otherwise than Karmada: (index, ours, Karmada's)."""
    return _unequal(cases, answers, taint_answer_of)


A = TypeVar("A")


def _unequal(
    cases: list[dict[str, Any]], answers: list[A], answer_of: Callable[[dict[str, Any]], A]
) -> list[tuple[int, A, A]]:
    """(index, fleetrules' answer, Karmada's) of each case the two answer otherwise."""
    ours = ((i, answer_of(case), theirs) for i, (case, theirs) in enumerate(zip(cases, answers, strict=True)))
    return [(i, mine, theirs) for i, mine, theirs in ours if mine != theirs]


def policy_answer_of(case: dict[str, Any]) -> str:
    """The policy fleetrules chooses for the case's template, in the oracle's words ("" for none)."""
    objects = [
        case["template"],
        *(
            {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy", **p}
            for p in case["propagationPolicies"]
        ),
        *(
            {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterPropagationPolicy", **p}
            for p in case["clusterPropagationPolicies"]
        ),
    ]
    result = evaluate(RuleSet((), {}), load_facts(objects=objects), controllers=CONTROLLERS)
    if not result.placements:
        return ""
    (placement,) = result.placements
    namespaced = "/" in (placement.policy or "")
    return f"{'PropagationPolicy' if namespaced else 'ClusterPropagationPolicy'} {placement.policy}"


def compare_policies(cases: list[dict[str, Any]], answers: list[str]) -> list[tuple[int, str, str]]:
    """Each template fleetrules gives another policy than Karmada's detector: (index, ours, Karmada's)."""
    return _unequal(cases, answers, policy_answer_of)


def webhook_answer_of(case: dict[str, Any], folder: Path) -> tuple[str, ...]:
    """fleetrules' errors on the case's PropagationPolicy, read as a policy file is (the webhook's refusals are
    errors of the converter and of the checker)."""
    policy = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "p", "namespace": case["namespace"]},
        "spec": case["spec"],
    }
    path = folder / "policy.yaml"
    path.write_text(json.dumps(policy))
    try:
        load_rules([path])
    except RuleError as exc:
        return tuple(sorted({d.message for d in exc.diagnostics if d.is_error}))
    return ()


def webhook_difference(ours: tuple[str, ...], theirs: list[dict[str, str]]) -> str:
    """ "" when fleetrules refuses the policy as Karmada's webhook does: the same decision, each of Karmada's
    reasons in one of fleetrules' errors (its words end them), and no error of fleetrules' that is none of them;
    "admission" when one admits what the other refuses; "subset" when both refuse and fleetrules names some of
    Karmada's reasons only; else "words"."""
    if bool(ours) != bool(theirs):
        return "admission"
    details = {t["detail"] for t in theirs}
    named = {d for d in details if any(m.endswith(d) for m in ours)}
    if any(not any(m.endswith(d) for d in details) for m in ours):
        return "words"
    return "" if named == details else "subset"


def compare_webhook(
    cases: list[dict[str, Any]], answers: list[list[dict[str, str]]], folder: Path
) -> list[tuple[int, str, tuple[str, ...], list[dict[str, str]]]]:
    """Each policy fleetrules admits or refuses otherwise than Karmada's webhooks: (index, how, ours, Karmada's)."""
    out = []
    for i, (case, theirs) in enumerate(zip(cases, answers, strict=True)):
        ours = webhook_answer_of(case, folder)
        kind = webhook_difference(ours, theirs)
        if kind:
            out.append((i, kind, ours, theirs))
    return out


# the fleets' control plane: workload affinity and multiple pod templates on, as the oracle runs them
FLEET_CONTROLLERS = Controllers.parse(["feature-gates=WorkloadAffinity=true,MultiplePodTemplatesScheduling=true"])


def fleet_objects(case: dict[str, Any]) -> list[dict[str, Any]]:
    """A fleet as a snapshot: its clusters, and for each binding its Deployment (with the labels its groups come
    from), a PropagationPolicy of its own with its placement, and the ResourceBinding."""
    out = list(case["clusters"])
    for b in case["bindings"]:
        spec = b["spec"]
        namespace, name = b["namespace"], spec["resource"]["name"]
        out.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": name, "namespace": namespace, "labels": b["labels"]},
                "spec": {"replicas": spec["replicas"]},
            }
        )
        policy = _policy(spec["placement"])
        policy["metadata"] = {"name": f"p-{name}", "namespace": namespace}
        policy["spec"]["resourceSelectors"][0]["name"] = name
        out.append(policy)
        binding = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding", "spec": spec}
        binding["metadata"] = {"name": b["name"], "namespace": namespace}
        out.append(binding)
    return out


def fleet_answer_of(case: dict[str, Any]) -> list[dict[str, Any]]:
    """fleetrules' answer for a fleet in the oracle's shape: per binding, its clusters with replicas (as spec.clusters
    stands after: a FitError empties them, another error keeps them), the term it was placed by, the error."""
    facts = load_facts(objects=fleet_objects(case))
    result = evaluate(RuleSet((), {}), facts, controllers=FLEET_CONTROLLERS)
    out = []
    for p in result.placements:
        entry: dict[str, Any] = {"binding": p.binding}
        entry["clusters"] = [{"name": c, "replicas": p.replicas.get(c, 0)} for c in p.clusters] or None
        if p.unschedulable:
            entry["error"] = p.message
            entry["rejected"] = {c: sorted({r.summary for r in reasons}) for c, reasons in p.rejected.items()}
        elif p.affinity_term:
            entry["term"] = p.affinity_term
        out.append(entry)
    return out


def fleet_difference(ours: dict[str, Any], theirs: dict[str, Any], taints: dict[str, list[str]]) -> str:
    """ "" when a binding's answers agree; "fit-error order" when both reject each cluster for the same reasons and
    the FitError messages differ only in which reason of a cluster several filters reject each names (the order of
    Karmada's filters is random); else what differs."""
    mine = sorted((c["name"], c.get("replicas", 0)) for c in ours.get("clusters") or [])
    karmadas = sorted((c["name"], c.get("replicas", 0)) for c in theirs.get("clusters") or [])
    if mine != karmadas:
        return "clusters"
    if bool(ours.get("error")) != bool(theirs.get("error")):
        return "error"
    if ours.get("error"):
        theirs_rejected = {c: sorted(set(r)) for c, r in (theirs.get("rejected") or {}).items()}
        if _first_taints(ours.get("rejected") or {}, taints) != theirs_rejected:
            return "rejections"
        if ours["error"] == theirs["error"]:
            return ""
        counted = _histogram(ours["error"])
        if counted is None or not _one_reason_each(counted[1], theirs_rejected):
            return "message"
        return "fit-error order"
    if not ours.get("error") and (ours.get("term") or "") != (theirs.get("term") or ""):
        return "term"
    return ""


def compare_fleets(
    cases: list[dict[str, Any]], answers: list[list[dict[str, Any]]]
) -> list[tuple[int, str, str, dict[str, Any], dict[str, Any]]]:
    """Every binding of every fleet fleetrules answers otherwise than Karmada: (fleet, binding, what, ours, theirs)."""
    out = []
    for i, (case, theirs) in enumerate(zip(cases, answers, strict=True)):
        ours = {a["binding"]: a for a in fleet_answer_of(case)}
        taints = {
            c["metadata"]["name"]: [f"{t['key']}:{t['effect']}" for t in c["spec"].get("taints", [])]
            for c in case["clusters"]
        }
        for answer in theirs:
            mine = ours.get(answer["binding"], {"clusters": None, "error": "not placed"})
            kind = fleet_difference(mine, answer, taints)
            if kind:
                out.append((i, answer["binding"], kind, mine, answer))
    return out


def template_answer_of(case: dict[str, Any]) -> dict[str, Any]:
    """fleetrules on a template: whether the detector binds it (engine.detector.templates, the event filter's part:
    reserved and skipped namespaces, the API server's ConfigMap) and its dependencies (engine.kube.dependencies),
    in the oracle's shape, each dependency's set of references (Karmada's order is a Go set's)."""
    obj = case["object"]
    meta = obj["metadata"]
    binding = Binding(
        namespace=meta.get("namespace", ""),
        name=f"{meta['name']}-{obj['kind'].lower()}",
        kind=obj["kind"],
        resource_name=meta["name"],
        from_workload=True,
    )
    why = not_propagated(binding, skipped_namespaces(case["skipped"]))
    return {
        "propagated": why is None or why.reason == "InvalidBindingName",
        "dependencies": sorted(_reference(d) for d in dependencies(obj)),
    }


def _reference(d: Dependent) -> str:
    selector = ",".join(f"{k}={v}" for k, v in d.labels)
    return f"{d.api_version} {d.kind} {d.namespace}/{d.name}{' ' + selector if selector else ''}"


def _karmada_reference(d: dict[str, Any]) -> str:
    labels = ((d.get("labelSelector") or {}).get("matchLabels")) or {}
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    where = f"{d.get('namespace', '')}/{d.get('name', '')}"
    return f"{d['apiVersion']} {d['kind']} {where}{' ' + selector if selector else ''}"


def compare_templates(cases: list[dict[str, Any]], answers: list[dict[str, Any]]) -> list[tuple[int, str, Any, Any]]:
    """Each template fleetrules judges otherwise than Karmada: (index, what, ours, theirs). Karmada lists a reference
    once per visit (a Secret named twice, twice), fleetrules once: the references are compared as sets."""
    out = []
    for i, (case, theirs) in enumerate(zip(cases, answers, strict=True)):
        ours = template_answer_of(case)
        if ours["propagated"] != theirs["propagated"]:
            out.append((i, "propagated", ours["propagated"], theirs["propagated"]))
        # a reference with neither name nor selector (an Ingress's TLS entry without a secretName) the distributor
        # fails on and passes over (handleDependentResource): fleetrules does not list it
        found = [d for d in theirs.get("dependencies") or [] if d.get("name") or d.get("labelSelector")]
        karmadas = sorted({_karmada_reference(d) for d in found})
        if ours["dependencies"] != karmadas:
            out.append((i, "dependencies", ours["dependencies"], karmadas))
    return out
