"""Which policy claims a workload, as Karmada's resource detector decides (pkg/detector/policy.go
propagateResource, compare.go getHighestPriority*, pkg/util/selector.go ResourceSelectorPriority).

1. A workload already claimed (the claim labels and annotations on it, or on its binding) stays with
   that policy, if the policy exists and still matches it; if it exists and no longer matches, no
   policy applies. (A claimed policy that does not exist is cleaned up, and matching starts over.)
2. Otherwise the PropagationPolicies of the workload's namespace are ranked: explicit priority
   (spec.priority) first, then implicit priority (a name match over a label-selector match over a
   match of everything), then name. The first wins.
3. Only when no PropagationPolicy matches are the ClusterPropagationPolicies ranked the same way.

Preemption (spec.preemption: Always) needs the PolicyPreemption feature gate, alpha and off by default;
fleetrules evaluates as with it off (check warns): a claimed workload stays claimed.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.inputs.facts import Claim
from engine.schedule.matching import selector_matches
from engine.syntax import ast


class Implicit(enum.IntEnum):
    """util.ImplicitPriority."""

    MISMATCH = 0
    MATCH_ALL = 1
    MATCH_LABEL_SELECTOR = 2
    MATCH_NAME = 3


def _select_priority(select: ast.Select, kind: str, namespace: str, name: str, labels: Mapping[str, str]) -> Implicit:
    """ResourceSelectorPriority of one select block (its kinds are alternatives)."""
    kinds = {w.value for w in select.values(ast.SelectField.KIND)}
    namespaces = {w.value for w in select.values(ast.SelectField.NAMESPACE)}
    names = {w.value for w in select.values(ast.SelectField.NAME)}
    if kind not in kinds or (namespaces and namespace not in namespaces):
        return Implicit.MISMATCH
    if names:  # a name is matched alone: the label selector is not consulted
        return Implicit.MATCH_NAME if name in names else Implicit.MISMATCH
    if not select.label_selectors:
        return Implicit.MATCH_ALL
    if all(selector_matches(s, labels) for s in select.label_selectors):
        return Implicit.MATCH_LABEL_SELECTOR
    return Implicit.MISMATCH


def implicit_priority(policy: ast.Policy, kind: str, namespace: str, name: str, labels: Mapping[str, str]) -> Implicit:
    """ResourceMatchSelectorsPriority: the best of the policy's select blocks; a PropagationPolicy only
    ever matches workloads of its own namespace."""
    if policy.namespace is not None and policy.namespace != namespace:
        return Implicit.MISMATCH
    selects = [s for s in policy.statements if isinstance(s, ast.Select)]
    return max((_select_priority(s, kind, namespace, name, labels) for s in selects), default=Implicit.MISMATCH)


@dataclass(frozen=True)
class Choice:
    """The policy that claims a workload (None: no policy applies), and why, when a claim decided it."""

    policy: ast.Policy | None
    note: str = ""


def _highest(
    policies: Sequence[ast.Policy], kind: str, namespace: str, name: str, labels: Mapping[str, str]
) -> ast.Policy | None:
    ranked = [(p.priority, implicit_priority(p, kind, namespace, name, labels), p) for p in policies]
    matching = [r for r in ranked if r[1] > Implicit.MISMATCH]
    if not matching:
        return None
    return min(matching, key=lambda r: (-r[0], -r[1], r[2].name.value))[2]


def select_policy(
    policies: Sequence[ast.Policy],
    kind: str,
    namespace: str,
    name: str,
    labels: Mapping[str, str],
    claim: Claim | None = None,
) -> Choice:
    by_name = {p.name.value: p for p in policies}
    if claim is not None and claim.policy in by_name:
        claimed = by_name[claim.policy]
        if implicit_priority(claimed, kind, namespace, name, labels) > Implicit.MISMATCH:
            return Choice(claimed)
        return Choice(None, f"claimed by policy {claim.policy}, which no longer selects it")
    namespaced = [p for p in policies if p.namespace is not None]
    chosen = _highest(namespaced, kind, namespace, name, labels)
    if chosen is None:
        chosen = _highest([p for p in policies if p.namespace is None], kind, namespace, name, labels)
    if claim is not None:  # Karmada keeps the claim while that policy exists; here it is not given
        absent = f"claimed by policy {claim.policy}, which is not among the evaluated policies"
        return Choice(chosen, f"{absent}; evaluated as if it had been deleted" if chosen is not None else absent)
    return Choice(chosen)
