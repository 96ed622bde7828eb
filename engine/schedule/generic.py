"""One binding through Karmada's generic scheduler after the filters (pkg/scheduler/core/generic_scheduler.go): the
scores (prioritizeClusters: the rules' preferences normalised as InterPodAffinity does, and ClusterLocality), the
select stage (selectClusters: spread constraints, engine.schedule.spread) and the assign stage (assignReplicas,
engine.schedule.replicas), with what bindings alike share of them. The Scheduler (engine.schedule.scheduler) runs
it for each binding on the filter stage's result (engine.schedule.feasibility).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any
from weakref import WeakKeyDictionary

from engine.backend import Decision, DecisionKind
from engine.inputs.facts import Binding
from engine.results import Reason
from engine.schedule.feasibility import Shared
from engine.schedule.plan import Plan, plan_of
from engine.schedule.replicas import (
    MAX_INT32,
    Candidate,
    component_sets,
    estimate,
)
from engine.schedule.spread import Limits, cluster_count, select
from engine.schedule.store import FactStore
from engine.schedule.views import Constant, Locality, Subset
from engine.syntax import ast

LOCALITY_SCORE = 100  # plugin ClusterLocality: a cluster the binding already targets
ONE = Limits(1, 1)  # a spread by cluster with minGroups 1 and maxGroups 1: exactly one cluster


class GenericScheduling:
    """Scores, select and assign for one binding; the Scheduler's state they read."""

    store: FactStore
    binding_policy: dict[str, ast.Policy | None]
    candidates: tuple[str, ...]
    share: bool
    _chosen: WeakKeyDictionary[Shared, Chosen]
    _plans: dict[str, Plan]
    _estimates: dict[tuple[Any, bool], dict[str, int]]
    _uniformity: dict[tuple[Any, bool], bool]

    def _first_clusters(
        self, binding: Binding, plan: Plan, feasible: Subset, scores: Mapping[str, int]
    ) -> list[Candidate]:
        """selectBestClustersByCluster for a Duplicated binding without building every candidate: the
        first maxGroups clusters in Karmada's order (score, available replicas, name), by a partial sort."""
        count = cluster_count(len(feasible), plan.spreads["cluster"])
        assigned = binding.replicas_by_cluster
        uniform = not self._estimated(binding) or self._uniform(binding)  # every cluster estimated alike
        if isinstance(scores, Constant) and uniform and not assigned:
            chosen = list(islice(feasible, count))  # all equal: by name
        elif uniform:
            chosen = heapq.nsmallest(count, feasible, key=lambda c: (-scores[c], -assigned.get(c, 0), c))
        else:
            available = self._estimator(binding)
            chosen = heapq.nsmallest(
                count, feasible, key=lambda c: (-scores[c], -(available(c) + assigned.get(c, 0)), c)
            )
        return self._candidates(binding, chosen, scores, plan)

    def _choose(
        self,
        binding: Binding,
        plan: Plan,
        shared: Shared,
        feasible: Subset,
        scores: Mapping[str, int],
        tiers: Mapping[str, int] | None = None,
    ) -> list[Candidate]:
        """The select stage (spread.select) over the feasible clusters as candidates. A binding with no
        clusters yet, on the policy's shared feasible set and scores, chooses as every such binding with
        the same pod request and replicas does: that choice is computed once (a Divided fleet spends
        most of its time here otherwise, docs/performance.md)."""
        fresh = self.share and not binding.clusters and feasible is shared.feasible and scores is shared.zero_scores
        key = (request_key(binding), binding.replicas, id(plan))
        selections = self._chosen_on(shared).selections if fresh else {}
        if key in selections:
            return list(selections[key])
        candidates = self._candidates(binding, feasible, scores, plan, tiers)
        # a multi-component workload scheduled as a whole needs room for one set (SelectClusters)
        needed = 1 if self._multi_template(binding) else binding.replicas
        chosen = select(candidates, plan.spreads, needed, plan.duplicated, plan.ignore_spread)
        if fresh:
            selections[key] = list(chosen)
        return chosen

    def _chosen_on(self, shared: Shared) -> Chosen:
        found = self._chosen.get(shared)
        if found is None:
            found = self._chosen[shared] = Chosen()
        return found

    def _candidates(
        self,
        binding: Binding,
        names: Iterable[str],
        scores: Mapping[str, int],
        plan: Plan,
        tiers: Mapping[str, int] | None = None,
    ) -> list[Candidate]:
        """ClusterDetailInfo for each feasible cluster: score, available replicas where they count, and the
        overflow tier where the term has overflow groups."""
        assigned = binding.replicas_by_cluster
        available = self._estimator(binding) if plan.needs_estimates else lambda _name: MAX_INT32
        out = []
        for name in names:
            n = available(name)
            tier = tiers[name] if tiers is not None else 0
            out.append(Candidate(self.store.clusters[name], scores[name], n + assigned.get(name, 0), n, tier))
        return out

    def _uniform(self, binding: Binding) -> bool:
        """Whether the estimator gives every cluster the same available replicas for this request (no
        cluster reports a resourceSummary, say), so that only scores and names order them."""
        key = (request_key(binding), self._multi_template(binding))
        found = self._uniformity.get(key)
        if found is None:
            available = self._estimator(binding)
            found = self._uniformity[key] = len({available(c) for c in self.candidates}) <= 1
        return found

    def _plan(self, policy: ast.Policy) -> Plan:
        """What the policy asks of the select and assign stages, computed once per policy."""
        plan = self._plans.get(policy.name.value)
        if plan is None:
            plan = self._plans[policy.name.value] = plan_of(policy)
        return plan

    def _estimated(self, binding: Binding) -> bool:
        """calAvailableReplicas estimates a workload: replicas or components (a non-workload: MaxInt32)."""
        return binding.replicas > 0 or bool(binding.components)

    def _multi_template(self, binding: Binding) -> bool:
        """isMultiTemplateSchedulingApplicable: components, and a placement of exactly one cluster (a spread
        by cluster with minGroups 1 and maxGroups 1). A binding carrying spec.components was made with the
        MultiplePodTemplatesScheduling gate on; the scheduler's gate is taken to be on with it."""
        policy = self.binding_policy.get(binding.key)
        return bool(binding.components) and policy is not None and self._plan(policy).spreads.get("cluster") == ONE

    def _estimator(self, binding: Binding) -> Callable[[str], int]:
        """calAvailableReplicas for the binding, one cluster at a time, cached by cluster, replicas and
        resource request (or components); a non-workload is not estimated (MaxInt32). An estimate of
        MaxInt32 becomes the binding's replicas."""
        if not self._estimated(binding):
            return lambda _name: MAX_INT32
        requirements, components = binding.requirements, binding.components
        sets = self._multi_template(binding)
        cache = self._estimates.setdefault((request_key(binding), sets), {})

        def available(name: str) -> int:
            found = cache.get(name)
            if found is None:
                cluster = self.store.clusters[name]
                n = component_sets(cluster, components) if sets else estimate(cluster, requirements)
                found = cache[name] = binding.replicas if n == MAX_INT32 else n
            return found

        return available

    def _scores(
        self,
        shared: Shared,
        applied: Sequence[Decision],
        mine: list[Decision],
        feasible: Subset,
        current: Sequence[str],
    ) -> Mapping[str, int]:
        """Preferences summed per cluster and normalised to 0-100 (as Kubernetes' InterPodAffinity
        NormalizeScore), plus ClusterLocality's 100 for clusters the binding already targets."""
        any_prefer = shared.prefers or any(d.kind is DecisionKind.PREFER for d in mine)
        prefers = [d for d in applied if d.kind is DecisionKind.PREFER] if any_prefer else []
        if not prefers:
            if current:
                return Locality(feasible, 0, frozenset(current), LOCALITY_SCORE)
            return shared.zero_scores if feasible is shared.feasible else Constant(feasible, 0)
        raw = dict.fromkeys(feasible, 0)
        for d in prefers:
            if d.cluster in raw:
                raw[d.cluster] += d.weight
        low, high = (min(raw.values()), max(raw.values())) if raw else (0, 0)
        spread = high - low
        targeted = frozenset(current)  # looked up once per cluster (a tuple of 50 was searched for each of 50)
        return {
            c: (int(100 * (raw[c] - low) / spread) if spread > 0 else 0) + (LOCALITY_SCORE if c in targeted else 0)
            for c in feasible
        }


@dataclass
class Attempt:
    """One clusterAffinities term tried for a binding: what the filters left, and what came of it."""

    term: str | None
    feasible: Subset
    scores: Mapping[str, int]
    rejected: Mapping[str, tuple[Reason, ...]]
    applied: Sequence[Decision]
    selected: tuple[str, ...] = ()
    replicas: Mapping[str, int] = field(default_factory=dict)
    error: str | None = None  # the condition message, when the term failed
    fit_error: bool = False  # no cluster fits: spec.clusters is emptied


@dataclass
class Chosen:
    """What bindings alike chose on one shared result (Feasibility.shared)."""

    # the select stage's choice for a fresh binding on exactly these feasible clusters and scores, by
    # (request, replicas, plan): bindings of one policy alike in their pods choose alike
    selections: dict[tuple[Any, int, int], list[Candidate]] = field(default_factory=dict)
    # the whole attempt of a binding with no clusters and no decisions of its own, by what else it reads
    attempts: dict[tuple[Any, ...], Attempt] = field(default_factory=dict)


def request_key(binding: Binding) -> tuple[int, Any, Any]:
    """What an estimate depends on besides the cluster: the replicas, the resource request, the components."""
    requirements = binding.requirements
    components = tuple(
        (c.name, c.replicas, tuple(sorted(c.requirements.items())) if c.requirements is not None else None, c.binary)
        for c in binding.components
    )
    return binding.replicas, tuple(sorted(requirements.items())) if requirements is not None else None, components
