"""Which policy claims a workload, as Karmada's resource detector decides (pkg/detector/policy.go
propagateResource, compare.go getHighestPriority*, pkg/util/selector.go ResourceSelectorPriority).

1. A workload already claimed (the claim labels and annotations on it, or on its binding) stays with
   that policy, if the policy exists and still matches it; if it exists and no longer matches, no
   policy applies. (A claimed policy that does not exist is cleaned up, and matching starts over.)
2. Otherwise the PropagationPolicies of the workload's namespace are ranked: explicit priority
   (spec.priority) first, then implicit priority (a name match over a label-selector match over a
   match of everything), then name. The first wins.
3. Only when no PropagationPolicy matches are the ClusterPropagationPolicies ranked the same way.

With the PropagationPolicyPreemption feature gate (alpha, off by default: `--controller
feature-gates=PropagationPolicyPreemption=true`), a policy with `preemption: Always` takes a claimed workload that one
of its resource selectors names (pkg/detector/preemption.go: the template is fetched by the selector's
name): a PropagationPolicy from a ClusterPropagationPolicy whatever the priorities, and from a
PropagationPolicy of lower explicit priority; a ClusterPropagationPolicy only from a ClusterPropagationPolicy
of lower explicit priority. Preemption is repeated while a preemptor outranks the claim, so the last
claim is the highest-priority preemptor's (a PropagationPolicy's, when there is one); between preemptors of
equal priority Karmada keeps whichever reconciled first, fleetrules the one ranked first as above.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from engine.inputs.facts import Binding, Claim
from engine.inputs.matching import selector_matches
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


def _highest(policies: Sequence[ast.Policy], rank: Callable[[ast.Policy], Implicit]) -> ast.Policy | None:
    """getHighestPriorityPropagationPolicy: explicit priority, then implicit (``rank``), then name."""
    ranked = [(p.priority, rank(p), p) for p in policies]
    matching = [r for r in ranked if r[1] > Implicit.MISMATCH]
    if not matching:
        return None
    return min(matching, key=lambda r: (-r[0], -r[1], r[2].name.value))[2]


def _preemptor(
    policies: Sequence[ast.Policy], claimed: ast.Policy, rank: Callable[[ast.Policy], Implicit]
) -> ast.Policy | None:
    """The policy that ends up with a workload ``claimed`` holds, by preemption; None if none takes it."""

    def can_take(p: ast.Policy, holder: ast.Policy) -> bool:
        if p.name.value == holder.name.value:
            return False
        if p.namespace is not None and holder.namespace is None:  # preemptClusterPropagationPolicyDirectly
            return True
        same_scope = (p.namespace is None) == (holder.namespace is None)
        return same_scope and p.priority > holder.priority

    named = [p for p in policies if p.preempts and rank(p) is Implicit.MATCH_NAME]
    holder, taken = claimed, False
    while True:  # each preemption may let another preemptor of higher priority take it in turn
        able = [p for p in named if can_take(p, holder)]
        if not able:
            return holder if taken else None
        best = _highest([p for p in able if p.namespace is not None] or able, rank)
        assert best is not None  # every able policy names the workload
        holder, taken = best, True


def select_policy(
    policies: Sequence[ast.Policy],
    kind: str,
    namespace: str,
    name: str,
    labels: Mapping[str, str],
    claim: Claim | None = None,
    preemption: bool = False,
    by_name: Mapping[str, ast.Policy] | None = None,
) -> Choice:
    """The policy that claims the workload; ``preemption``: the PropagationPolicyPreemption feature gate is on;
    ``by_name``: every policy by name, where ``policies`` are only those that can select the workload
    (PolicyChooser)."""
    if by_name is None:
        by_name = {p.name.value: p for p in policies}
    claimed = by_name.get(claim.policy) if claim is not None else None
    ranks: dict[str, Implicit] = {}

    def rank(policy: ast.Policy) -> Implicit:
        """The policy's implicit priority for the workload, found once, when first asked."""
        found = ranks.get(policy.name.value)
        if found is None:
            found = ranks[policy.name.value] = implicit_priority(policy, kind, namespace, name, labels)
        return found

    if claimed is not None:
        taker = _preemptor(policies, claimed, rank) if preemption else None
        if taker is not None:
            return Choice(taker, f"preempted from policy {claimed.name.value} (preemption Always)")
        if rank(claimed) > Implicit.MISMATCH:
            return Choice(claimed)
        return Choice(None, f"claimed by policy {claimed.name.value}, which no longer selects it")
    namespaced = [p for p in policies if p.namespace is not None]
    chosen = _highest(namespaced, rank)
    if chosen is None:
        chosen = _highest([p for p in policies if p.namespace is None], rank)
    if claim is not None:  # Karmada keeps the claim while that policy exists; here it is not given
        absent = f"claimed by policy {claim.policy}, which is not among the evaluated policies"
        return Choice(chosen, f"{absent}; evaluated as if it had been deleted" if chosen is not None else absent)
    return Choice(chosen)


class PolicyChooser:
    """select_policy for many bindings: the choice is the same for every workload of one kind and
    namespace (and claim) when no policy selects by name or labels, so it is computed once for them
    (unless ``share`` is off: the reference mode decides each binding on its own)."""

    def __init__(self, policies: Sequence[ast.Policy], preemption: bool = False, share: bool = True) -> None:
        self.policies = list(policies)
        self.preemption = preemption
        self.share = share
        selects = [s for p in policies for s in p.statements if isinstance(s, ast.Select)]
        # whether any policy selects by name, by labels: what the choice depends on besides kind
        self._by_name = any(s.values(ast.SelectField.NAME) for s in selects)
        self._by_labels = any(s.label_selectors for s in selects)
        self._choices: dict[tuple[object, ...], Choice] = {}
        # the policies by what they can select: a PropagationPolicy by its namespace and each kind it names, a
        # ClusterPropagationPolicy by each kind (a policy that names no kind of a workload never selects it), so
        # that choosing meets the few that can select a workload, not every policy of a control plane
        self._named = {p.name.value: p for p in self.policies}
        self._by_kind: dict[tuple[str | None, str], list[ast.Policy]] = {}
        for policy in self.policies:
            kinds = {
                w.value for s in policy.statements if isinstance(s, ast.Select) for w in s.values(ast.SelectField.KIND)
            }
            for kind in sorted(kinds):
                self._by_kind.setdefault((policy.namespace, kind), []).append(policy)

    def choose(self, binding: Binding) -> Choice:
        key = (
            binding.kind,
            binding.namespace,
            binding.resource_name if self._by_name else None,
            tuple(sorted(binding.labels.items())) if self._by_labels else None,
            binding.claim,
        )
        choice = self._choices.get(key) if self.share else None
        if choice is None:
            candidates = [
                *self._by_kind.get((binding.namespace, binding.kind), ()),
                *self._by_kind.get((None, binding.kind), ()),
            ]
            choice = self._choices[key] = select_policy(
                candidates,
                binding.kind,
                binding.namespace,
                binding.resource_name,
                binding.labels,
                binding.claim,
                self.preemption,
                self._named,
            )
        return choice
