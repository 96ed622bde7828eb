"""The select stage: which feasible clusters a binding goes to under its spread constraints
(karmada pkg/scheduler/core/spreadconstraint: group_clusters.go, select_clusters*.go, select_groups.go).

Clusters arrive as Candidates sorted as Karmada sorts them (overflow tier, score descending,
available replicas descending, name). Group selection exists for ``region`` (with ``cluster``) and
for ``cluster``; ``zone`` and ``provider`` constraints only filter (the SpreadConstraint plugin) and
group, as in Karmada.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from engine.schedule.replicas import Candidate, SchedulingError

WEIGHT_UNIT = 1000


class SelectError(SchedulingError):
    """An error of the select stage, in Karmada's words; the binding keeps its clusters."""


@dataclass(frozen=True)
class Limits:
    """One spread constraint: minGroups (defaulted to 1 by the webhook) and maxGroups (0: not set)."""

    min_groups: int = 1
    max_groups: int = 0


def order(candidates: Sequence[Candidate]) -> list[Candidate]:
    """sortClusters with the available-replicas comparison generateClustersInfo adds."""
    return sorted(candidates, key=lambda c: (c.overflow, -c.score, -c.available, c.name))


def _group_score(
    clusters: Sequence[Candidate], replicas: int, duplicated: bool, min_groups: int, cluster_min: int
) -> int:
    """calcGroupScore / calcGroupScoreForDuplicate."""
    if duplicated:
        valid = [c for c in clusters if c.available >= replicas]
        return len(valid) * WEIGHT_UNIT + sum(c.score for c in valid) // len(valid) if valid else 0
    target = math.ceil(replicas / min_groups) if min_groups else 0
    need = max(cluster_min, min_groups)
    total = score = count = 0
    for c in clusters:
        total += c.available
        score += c.score
        count += 1
        if count >= need and total >= target:
            break
    if total < target:
        return total * WEIGHT_UNIT + score // len(clusters)
    return target * WEIGHT_UNIT + score // count


@dataclass
class Group:
    """A region (zone, provider): its clusters in candidate order and its score."""

    name: str
    clusters: list[Candidate] = field(default_factory=list)
    score: int = 0


def regions(
    candidates: Sequence[Candidate], replicas: int, duplicated: bool, region: Limits, cluster_min: int
) -> dict[str, Group]:
    """generateRegionInfo: clusters with a region, grouped, each group scored."""
    groups: dict[str, Group] = {}
    for c in candidates:
        if c.cluster.region:
            groups.setdefault(c.cluster.region, Group(c.cluster.region)).clusters.append(c)
    for g in groups.values():
        g.score = _group_score(g.clusters, replicas, duplicated, region.min_groups, cluster_min)
    return groups


# ---------------------------------------------------------------- selectGroups


@dataclass(frozen=True)
class GroupInfo:
    name: str
    value: int
    weight: int


@dataclass
class _Path:
    id: int
    groups: list[GroupInfo]
    weight: int
    value: int


def _feasible_paths(groups: list[GroupInfo], low: int, high: int, target: int) -> list[_Path]:
    """findFeasiblePaths: depth-first over the groups sorted by (value asc, weight desc, name)."""
    groups = sorted(groups, key=lambda g: (g.value, -g.weight, g.name))
    paths: list[_Path] = []
    stack: list[GroupInfo] = []
    counter = [0]

    def dfs(total: int, begin: int) -> None:
        if total >= target and low <= len(stack) <= high:
            counter[0] += 1
            chosen = sorted(stack, key=lambda g: (-g.weight, g.name))
            paths.append(_Path(counter[0], chosen, sum(g.weight for g in chosen), sum(g.value for g in chosen)))
            return
        if len(stack) >= high:
            return
        for i in range(begin, len(groups)):
            stack.append(groups[i])
            dfs(total + groups[i].value, i + 1)
            if len(groups) == low:
                break
            stack.pop()

    dfs(0, 0)
    return paths


def select_groups(groups: list[GroupInfo], low: int, high: int, target: int) -> list[GroupInfo]:
    """selectGroups: the feasible path of the highest weight, then value, then discovery; a strict
    prefix of it that is also feasible is preferred."""
    if not groups:
        return []
    paths = _feasible_paths(groups, low, high, target)
    if not paths:
        return []
    if len(paths) == 1:
        return paths[0].groups
    paths.sort(key=lambda p: (-p.weight, -p.value, p.id))
    best = paths[0]
    for p in paths[1:]:
        if len(p.groups) < len(best.groups) and all(
            a.name == b.name for a, b in zip(p.groups, best.groups, strict=False)
        ):
            best = p
    return best.groups


# ---------------------------------------------------------------- selection


def _by_available(clusters: list[Candidate], count: int, replicas: int) -> list[Candidate] | None:
    """selectClustersByAvailableResource: the first ``count``, swapping in clusters of more available
    replicas from the rest, from the last, until they hold ``replicas``."""
    chosen, rest = list(clusters[:count]), list(clusters[count:])
    i = len(chosen) - 1
    while sum(c.available for c in chosen) < replicas and i >= 0:
        best, most = -1, chosen[i].available
        for j, c in enumerate(rest):
            if most < c.available:
                best, most = j, c.available
        if best != -1:
            chosen[i], rest[best] = rest[best], chosen[i]
        i -= 1
    return chosen if sum(c.available for c in chosen) >= replicas else None


def cluster_count(feasible: int, limits: Limits) -> int:
    """How many clusters selectBestClustersByCluster takes: min(feasible, maxGroups), or an error
    below minGroups."""
    if feasible < limits.min_groups:
        raise SelectError("the number of feasible clusters is less than spreadConstraint.MinGroups")
    return min(feasible, limits.max_groups)


def by_cluster(candidates: list[Candidate], limits: Limits, replicas: int | None) -> list[Candidate]:
    """selectBestClustersByCluster; ``replicas`` None when resources are ignored (Duplicated)."""
    count = cluster_count(len(candidates), limits)
    if replicas is None:
        return candidates[:count]
    chosen = _by_available(candidates, count, replicas)
    if not chosen:
        raise SelectError(f"no enough resource when selecting {count} clusters")
    return chosen


def by_region(groups: Mapping[str, Group], region: Limits, cluster: Limits) -> list[Candidate]:
    """selectBestClustersByRegion: the regions, the best cluster of each, then the most available of the
    rest up to the cluster constraint's maxGroups."""
    if len(groups) < region.min_groups:
        raise SelectError("the number of feasible region is less than spreadConstraint.MinGroups")
    infos = [GroupInfo(g.name, len(g.clusters), g.score) for g in groups.values()]
    chosen = select_groups(infos, region.min_groups, region.max_groups, cluster.min_groups)
    if not chosen:
        raise SelectError("the number of clusters is less than the cluster spreadConstraint.MinGroups")
    selected = [groups[g.name].clusters[0] for g in chosen]
    rest = [c for g in chosen for c in groups[g.name].clusters[1:]]
    count = min(len(rest) + len(selected), cluster.max_groups)
    if count - len(selected) > 0:
        rest = order(rest)
        selected += rest[: count - len(selected)]
    return selected


def select(
    candidates: Sequence[Candidate],
    spreads: Mapping[str, Limits],
    replicas: int,
    duplicated: bool,
    ignore_spread: bool,
) -> list[Candidate]:
    """SelectBestClusters: all feasible clusters when there is no spread constraint (or the strategy
    ignores them, shouldIgnoreSpreadConstraint); else by region or by cluster. ``duplicated``: the
    replica scheduling type is Duplicated or unset, so available replicas are not considered."""
    ordered = order(candidates)
    if not spreads or ignore_spread:
        return ordered
    if "region" in spreads:
        cluster = spreads.get("cluster", Limits(0, 0))
        groups = regions(ordered, replicas, duplicated, spreads["region"], cluster.min_groups)
        return by_region(groups, spreads["region"], cluster)
    if "cluster" in spreads:
        return by_cluster(ordered, spreads["cluster"], None if duplicated else replicas)
    raise SelectError("just support cluster and region spread constraint")
