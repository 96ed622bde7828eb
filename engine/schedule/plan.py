"""What a policy asks of the select and assign stages: its replica strategy and spread constraints
(karmada assignment.go newAssignState, select_clusters.go shouldIgnoreSpreadConstraint)."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.inputs.facts import Cluster
from engine.inputs.matching import cluster_matches
from engine.schedule.replicas import Strategy, Weights
from engine.schedule.spread import Limits
from engine.syntax import ast


@dataclass(frozen=True)
class Plan:
    strategy: Strategy = Strategy.DUPLICATED
    # the type is Duplicated (or replicaScheduling unset): selection ignores available replicas
    duplicated: bool = True
    ignore_spread: bool = False  # static weights: every feasible cluster is selected
    weights: Weights = None
    spreads: dict[str, Limits] = field(default_factory=dict)

    @property
    def needs_estimates(self) -> bool:
        """Whether available replicas decide anything: the order of a spread selection, or a division."""
        return bool(self.spreads and not self.ignore_spread) or self.strategy in (
            Strategy.AGGREGATED,
            Strategy.DYNAMIC_WEIGHT,
        )


def _static_weights(entries: tuple[ast.StaticWeight, ...]) -> Weights:
    def weight(cluster: Cluster) -> int:
        """getStaticWeightInfoList: the largest weight of the entries whose targetCluster matches."""
        return max((e.weight.value for e in entries if cluster_matches(cluster, e.target)), default=0)

    return weight


def plan_of(policy: ast.Policy) -> Plan:
    spreads = {
        s.field.value: Limits(s.min_groups.value if s.min_groups else 1, s.max_groups.value if s.max_groups else 0)
        for s in policy.statements
        if isinstance(s, ast.Spread)
    }
    stmt = next((s for s in policy.statements if isinstance(s, ast.Replicas)), None)
    if stmt is None or stmt.mode.value == "duplicated":
        return Plan(spreads=spreads)
    if stmt.mode.value == "aggregated":
        return Plan(Strategy.AGGREGATED, False, spreads=spreads)
    if stmt.by is not None and stmt.by.value == "available":
        return Plan(Strategy.DYNAMIC_WEIGHT, False, spreads=spreads)
    if stmt.by is None:  # no weightPreference: every cluster weight 1, spread constraints ignored
        return Plan(Strategy.STATIC_WEIGHT, False, True, None, spreads)
    ignore = bool(stmt.weights)  # an empty staticWeightList does not make the scheduler ignore spreads
    return Plan(Strategy.STATIC_WEIGHT, False, ignore, _static_weights(stmt.weights), spreads)
