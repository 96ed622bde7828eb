"""The NoExecute taint manager (pkg/controllers/cluster/taint_manager.go, pkg/util/helper/taint.go): which
tolerations it uses (GetMatchingTolerations, by the library's condition `tolerates`), when it looks again, and
the evictions rules/taint_manager.fr decides, as tasks under the policy's cluster failover.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from typing import Any

from engine.checker.rule_set import builtin_files
from engine.compile import encoding, ir
from engine.compile.encoding import Symbols
from engine.compile.rules import compile_rules
from engine.inputs.facts import Cluster, Taint
from engine.inputs.rule_files import visible_conditions
from engine.karmada.controllers.world import (
    TAINT_EVICTION_RETRY,
    TAINT_MANAGER_RULES,
    EvictionTrigger,
    Failover,
    RuleEviction,
    World,
    _go_after,
)
from engine.syntax import ast
from engine.syntax.conditions import expand


@cache
def _toleration_test() -> tuple[ir.Cond, str]:
    """The library's condition ``tolerates`` (rules/tolerations.fr: ToleratesTaint) of a ``cluster_toleration``
    against a ``taint``, compiled as a rule's pattern would have it, with the alias of the taint it reads."""
    builtin_files()  # the library, checked
    word = ast.Word
    call = ast.Call(word("tolerates"), (word("x"), word("t")))
    patterns = (
        ast.Pattern(False, word("taint"), word("t"), None),
        ast.Pattern(False, word("cluster_toleration"), word("x"), expand(call, visible_conditions())),
    )
    source = ast.Rule(word("tolerates"), patterns, (ast.Derive(word("tolerated"), ()),))
    (rule,), _ = compile_rules([source], Symbols(), builtin=True)
    test = next(p for p in rule.patterns if p.fact_type == "cluster_toleration")
    taint = next(p.alias for p in rule.patterns if p.fact_type == "taint")
    return test.cond, taint


def tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    """Whether ``toleration`` (a ``cluster_toleration`` fact of a policy) tolerates ``taint`` (ToleratesTaint): the
    condition the scheduler's TaintToleration filter and the taint manager's rules use (rules/tolerations.fr,
    written once), so that they cannot disagree."""
    cond, taint_alias = _toleration_test()
    return ir.holds(cond, dict(toleration), {taint_alias: encoding.taint("", taint)})


def used_tolerations(f: Failover, cluster: Cluster) -> list[tuple[int, Mapping[str, Any]]]:
    """GetMatchingTolerations (helper/taint.go): for each of the cluster's NoExecute taints, the first of the policy's
    tolerations that tolerates it (by the filter's own test, ``tolerates``); each (its place, it) once, in order. The
    taint manager's rule pairs them with the taints they tolerate (rules/taint_manager.fr)."""
    used: dict[int, Mapping[str, Any]] = {}
    for taint in cluster.taints:
        if taint.effect != "NoExecute":
            continue
        at = next((i for i, t in enumerate(f.tolerations) if tolerates(t, taint)), None)
        if at is not None:
            used.setdefault(at, f.tolerations[at])
    return sorted(used.items())


def taint_wakeups(cluster: Cluster, used: Sequence[tuple[int, Mapping[str, Any]]]) -> list[dt.datetime]:
    """When the taint manager's rule may come to evict from ``cluster`` by a toleration's seconds: each NoExecute
    taint's timeAdded plus the seconds of each toleration ``used`` there (used_tolerations), as Go adds them (a
    superset of the trigger times: which of them is one is the rule's to say; the controller requeues by the
    earliest)."""
    seconds = [int(t["seconds"]) for _, t in used if t.get("seconds") is not None]
    if not seconds:
        return []
    taints = [t.time_added for t in cluster.taints if t.effect == "NoExecute" and t.time_added is not None]
    return [_go_after(added, s) for added in taints for s in seconds]


def next_taint_resync(cluster: Cluster, now: dt.datetime) -> dt.datetime:
    """The taint manager's next sweep of ``cluster`` after ``now`` (NoExecuteTaintManager.syncCluster returns
    RequeueAfter the retry frequency): every 10 s from the last taint that started one."""
    started = [t.time_added for t in cluster.taints if t.effect == "NoExecute" and t.time_added is not None]
    anchor = max(started, default=now)
    if anchor > now:
        return anchor
    return anchor + TAINT_EVICTION_RETRY * ((now - anchor) // TAINT_EVICTION_RETRY + 1)


def no_execute_tainted(world: World) -> set[str]:
    """The clusters with a NoExecute taint: the only ones the taint manager evicts from."""
    return set(world.clusters.no_execute)


def taint_manager_by_rule(evictions: Iterable[RuleEviction]) -> dict[tuple[str, str], RuleEviction]:
    """(binding, cluster) → the taint manager's rules' eviction there, one per pair whatever the order of the facts:
    the untolerated taint's first (needEvictionWithCurrentTime evicts at once when not every taint is tolerated),
    else the first of a toleration's seconds run out (the first by its words, of several)."""
    out: dict[tuple[str, str], RuleEviction] = {}
    first = {name: i for i, name in enumerate(TAINT_MANAGER_RULES)}
    taken = (e for e in evictions if e.controller in first)
    for e in sorted(taken, key=lambda e: (e.binding, e.cluster, first[e.controller], e.message)):
        out.setdefault((e.binding, e.cluster), e)
    return out


def taint_manager(world: World, by_rule: Mapping[tuple[str, str], RuleEviction]) -> Iterator[EvictionTrigger]:
    """The taint manager's evictions at ``world.now``, by binding, in each binding's target order: those its rules
    decided (rules/taint_manager.fr: a NoExecute taint no toleration tolerates, or a toleration's seconds run out)."""
    if not world.controllers.taint_manager:
        return
    for key in world.bindings.targeting(no_execute_tainted(world)):  # the others have nothing to evict from
        if world.failover.get(key) is None:
            continue
        for name in world.bindings[key].cluster_names:
            e = by_rule.get((key, name))
            if e is not None:
                yield key, name, e, e.message
