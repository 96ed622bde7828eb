"""The notes every verb says where the inputs use what a flag or feature gate off turns off (or on, and not
modelled), and where the controllers change what the snapshot shows: one set of words for check, eval, explain,
simulate, diff, resilience, report and the language server.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engine.codes import Code
from engine.errors import Diagnostic, Span, listed, warning
from engine.inputs.facts import Cluster, Facts
from engine.inputs.matching import taint_changes
from engine.karmada.gates import INERT_GATES, Controllers
from engine.syntax import ast


def gate_note(what: Sequence[str], does: str, off: str, turn_on: str, span: Span | None = None) -> Diagnostic:
    """One warning for one feature gate (or flag) ``off`` as Karmada ships it that the inputs use: ``what`` uses it
    (the first three named), what that does without it, and the ``--controller`` settings that turn it on."""
    message = (
        f"{listed(what, 3)}: {does}: {off}, as Karmada ships it (v1.18, v1.19); if your control plane turns it on, "
        f"evaluate with {turn_on}"
    )
    return (
        warning(message, span, code=Code.GATE_OFF)
        if span is not None
        else warning(message, subject="feature gates", code=Code.GATE_OFF)
    )


def scheduling_gate_notes(controllers: Controllers, policies: Sequence[ast.Policy], facts: Facts) -> list[Diagnostic]:
    """What the inputs use that a feature gate off turns off, for placement: said once per gate."""
    out = []

    def policies_with(kind: Any, test: Callable[[Any], bool] = bool) -> list[tuple[str, Span]]:
        found = ((p, next((s for s in p.of_type(kind) if test(s)), None)) for p in policies)
        return [(f"policy {p.name.value}", s.span) for p, s in found if s is not None]

    preempting = policies_with(ast.Preemption, lambda s: s.mode.value == "always")
    if preempting and not controllers.policy_preemption:
        does = "preemption Always takes nothing (a workload another policy claims stays with it)"
        off, on = (
            "the PropagationPolicyPreemption feature gate (alpha) is off",
            "--controller feature-gates=PropagationPolicyPreemption=true",
        )
        out.append(gate_note([n for n, _ in preempting], does, off, on, preempting[0][1]))
    # the required terms (Karmada's, and fleetrules' `within` ones, which read the same groups); preferred terms
    # are fleetrules' own, read the workloads' labels, and act whatever the gate
    grouped = policies_with(ast.WorkloadTerm, lambda s: not s.preferred)
    if grouped and not controllers.workload_affinity:
        does = "workload affinity and anti-affinity do nothing (the detector records no groups, the scheduler has "
        does += "no affinity plugin)"
        if policies_with(ast.WorkloadTerm, lambda s: s.preferred):  # fleetrules' own: they read workloads' labels
            does += "; preferred workload terms, a fleetrules extension, act whatever the gate"
        off, on = "the WorkloadAffinity feature gate (alpha) is off", "--controller feature-gates=WorkloadAffinity=true"
        out.append(gate_note([n for n, _ in grouped], does, off, on, grouped[0][1]))
    components = [f"binding {b.key}" for b in facts.bindings if b.components]
    if components and not controllers.multiple_pod_templates:
        does = "spec.components are not read (the scheduler places by spec.replicas and spec.replicaRequirements)"
        off = "the MultiplePodTemplatesScheduling feature gate (alpha) is off"
        out.append(gate_note(components, does, off, "--controller feature-gates=MultiplePodTemplatesScheduling=true"))
    if facts.taint_policies and not controllers.failover:
        named = [f"ClusterTaintPolicy {p.name}" for p in facts.taint_policies]
        does = "taints nothing (the clusters' taints are as the snapshot shows them)"
        off = "the Failover feature gate (beta), which starts its controller, is off"
        out.append(gate_note(named, does, off, "--controller feature-gates=Failover=true"))
    elif facts.shown_clusters:
        out.append(_taint_policy_changes(facts.shown_clusters, facts.clusters))
    unmodelled = unmodelled_gate_note(controllers)
    if unmodelled is not None:
        out.append(unmodelled)
    return out


# what an unmodelled gate that is on leaves out of the answer (after pkg/features/features.go's comments)
_UNMODELLED = {
    "FederatedQuotaEnforcement": "FederatedResourceQuota limits enforced on the control plane",
    "ResourceQuotaEstimate": "the scheduler estimator's resource quota check",
    "SchedulingOvercommitProtection": "replicas reserved between a placement and the usage its cluster reports",
}


def unmodelled_gate_note(controllers: Controllers) -> Diagnostic | None:
    """One warning naming the gates on (not by Karmada's default: AllAlpha, AllBeta or by name) that fleetrules does
    not model: those whose effect the answer lacks, and those it ignores because they change nothing it computes."""
    gates = controllers.unmodelled_gates
    flags = [f"--{f}" for f in controllers.unmodelled_flags]
    quiet = [f"--{f}" for f in controllers.ignored_flags]
    if not gates and not flags and not quiet:
        return None
    lacking = [g for g in gates if g not in INERT_GATES]
    inert = [g for g in gates if g in INERT_GATES]
    parts = []
    if flags:
        verb = "are" if len(flags) > 1 else "is"
        parts.append(f"{_and(flags)} {verb} set and not modelled: the answer is as with Karmada's default")
    if lacking:
        left_out = "; ".join(_UNMODELLED.get(g, g) for g in lacking)
        verb = "are" if len(lacking) > 1 else "is"
        parts.append(f"{_and(lacking)} {verb} on and not modelled: the answer leaves out {left_out}")
    for names, state in ((inert, "on"), (quiet, "set")):
        if names:
            verb = "are" if len(names) > 1 else "is"
            parts.append(f"{_and(names)} {verb} {state} and ignored: nothing fleetrules computes changes")
    return warning("; ".join(parts), subject="control plane" if not gates else "feature gates", code=Code.NOT_MODELLED)


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def changed_clusters(facts: Facts) -> tuple[Cluster, ...]:
    """The clusters whose spec the controllers change from what the snapshot shows: the cluster controller's
    taints for the Ready condition, a ClusterTaintPolicy's (``facts.shown_clusters``: with the Failover gate)."""
    shown = {c.name: c for c in facts.shown_clusters}
    return tuple(
        c for c in facts.clusters if c.controller_changes or (c.name in shown and shown[c.name].taints != c.taints)
    )


def cluster_controller_note(changed: Sequence[Cluster]) -> Diagnostic:
    """The clusters whose taints the cluster controller changes from what the snapshot shows, said once."""
    named = [f"{c.name} ({', '.join(c.controller_changes)})" for c in changed if c.controller_changes]
    message = (
        f"the cluster controller changes the taints of {len(named)} cluster(s) the snapshot shows, as it does at once "
        f"for their Ready condition (taintClusterByCondition): {listed(named, 3)}; the scheduler requeues the "
        "bindings their affinity matches, and schedules the Duplicated ones again"
    )
    return warning(message, subject="clusters", code=Code.CONTROLLER_CHANGE)


def _taint_policy_changes(shown: Sequence[Cluster], tainted: Sequence[Cluster]) -> Diagnostic:
    """The clusters whose taints the ClusterTaintPolicy controller changes from what the snapshot shows."""
    changed = []
    for before, after in zip(shown, tainted, strict=True):
        added, removed = taint_changes(before, after)
        if added or removed:
            change = [f"+{k}:{e}" for k, e in added] + [f"-{k}:{e}" for k, e in removed]
            changed.append(f"{after.name} ({', '.join(change)})")
    message = (
        f"the ClusterTaintPolicies change the taints of {len(changed)} cluster(s) the snapshot shows, as their "
        f"controller does at once for the conditions the clusters report: {listed(changed, 3)}"
    )
    return warning(message, subject="ClusterTaintPolicy", code=Code.CONTROLLER_CHANGE)


def failover_gate_notes(controllers: Controllers, policies: Sequence[ast.Policy], facts: Facts) -> list[Diagnostic]:
    """What the inputs use that a flag or feature gate off turns off, for failover: said once per gate."""
    out = []
    evicting = [
        f"policy {p.name.value}"
        for p in policies
        if any(isinstance(b, ast.Failover) and b.kind.value == "cluster" for b in p.of_type(ast.Failover))
    ]
    evicting += [f"cluster {c.name}" for c in facts.clusters if any(t.effect == "NoExecute" for t in c.taints)]
    if evicting and not controllers.taint_manager:
        settings = (
            ("--enable-taint-manager", "enable-taint-manager=true", controllers.enable_taint_manager),
            (
                "--enable-no-execute-taint-eviction",
                "enable-no-execute-taint-eviction=true",
                controllers.no_execute_taint_eviction,
            ),
            ("the Failover feature gate (beta)", "feature-gates=Failover=true", controllers.failover),
        )
        names = [name for name, _, on in settings if not on]
        needs = "all three" if not controllers.enable_taint_manager else "both"  # the first is on by default
        off = _and(names) + (" are off" if len(names) > 1 else " is off") + f" (the taint manager needs {needs})"
        does = "a NoExecute taint evicts nothing"
        turn_on = " ".join(f"--controller {flag}" for _, flag, on in settings if not on)
        out.append(gate_note(evicting, does, off, turn_on))
    preserving = [
        f"policy {p.name.value}"
        for p in policies
        if any(
            isinstance(b, ast.Failover) and any(isinstance(s, ast.Preserve) for s in b.statements)
            for b in p.of_type(ast.Failover)
        )
    ]
    if preserving and not controllers.stateful_failover_injection:
        does = "statePreservation keeps nothing (eviction tasks carry no preserved state, nothing is injected)"
        off = "the StatefulFailoverInjection feature gate (alpha) is off"
        out.append(gate_note(preserving, does, off, "--controller feature-gates=StatefulFailoverInjection=true"))
    return out


def gate_notes(
    controllers: Controllers, policies: Sequence[ast.Policy], facts: Facts | None = None
) -> list[Diagnostic]:
    """Every note of a gate off that the policies (and the facts, where there are some) use, for placement and for
    failover, in the words every verb says them in (check and the language server have no facts)."""
    facts = facts if facts is not None else Facts()
    return [*scheduling_gate_notes(controllers, policies, facts), *failover_gate_notes(controllers, policies, facts)]
