"""Feasibility: which clusters a binding may go to, and why the others may not (the scheduler's filter stage).

The rules decide (engine.backend); this reads their decisions. A policy's scoped rules decide once for every
binding it selects (engine.compile.lift), so their result is made once per policy and clusterAffinities term
(``Feasibility.shared``, updated from the parts of the decisions that changed) and overlaid with what one binding
decided of its own and the exemptions it meets (``Feasibility.of``: a ``Feasible``, never changed once made).
The scheduler (engine.schedule.scheduler) scores, selects and assigns on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import NamedTuple
from weakref import WeakValueDictionary

from engine.backend import Decision, DecisionKind, Session
from engine.compile import encoding
from engine.compile.policies import affinity_terms
from engine.compile.program import CompiledProgram
from engine.inputs.facts import Binding
from engine.inputs.matching import cluster_matches
from engine.results import Reason, histogram
from engine.schedule.store import FactStore
from engine.schedule.views import Constant, Joined, Rejections, RejectionsOverlay, Subset
from engine.syntax import ast

NO_TIER = 1000  # getClusterOverflowOrder for a cluster of no group of the term (sorted last)


class Feasible(NamedTuple):
    """One binding's filter stage for one term: the rejected clusters with their reasons, the feasible clusters,
    the decisions that apply to it, and its own among them."""

    rejected: Mapping[str, tuple[Reason, ...]]
    feasible: Subset
    applied: Sequence[Decision]
    mine: list[Decision]


class Feasibility:
    """The filter stage over one session: each policy's shared result, and each binding's overlay on it.
    ``policies``: the evaluated policies by name; ``candidates``: the clusters not being deleted."""

    def __init__(
        self,
        session: Session,
        compiled: CompiledProgram,
        store: FactStore,
        policies: Mapping[str, ast.Policy],
        candidates: tuple[str, ...],
    ) -> None:
        self.session = session
        self.compiled = compiled
        self.store = store
        self.policies = policies
        self.candidates = candidates
        self._reasons: dict[tuple[int, str, str], Reason] = {}
        self._alone: dict[Reason, tuple[Reason]] = {}  # each reason as the one reason of a cluster, shared
        self._termed = any(r.term is not None for r in compiled.rules)  # rules of clusterAffinities terms
        self._shared_cache: dict[tuple[str, str | None, bool], Shared] = {}
        # the result each replaced, taken back when the policy's decisions are again those it was made of
        self._shared_before: dict[tuple[str, str | None, bool], Shared] = {}
        # bindings' rejections alike, shared while a placement holds them (Feasibility._overlay)
        self._overlays: WeakValueDictionary[tuple[int, int, int], RejectionsOverlay] = WeakValueDictionary()
        # (policy, clusterAffinities term) → each candidate's overflow tier; None: the term has no overflow
        self._tiers: dict[tuple[str, str | None], dict[str, int] | None] = {}
        self._terms: dict[str, list[str | None]] = {}  # policy → its clusterAffinities terms (affinity_terms)
        # policy scope fact → (its revision, whether a user's rule decided in it)
        self._scoped_user: dict[str, tuple[int, bool]] = {}
        self._user_rules = any(r.user for r in compiled.rules)
        # policy → (its scope's revision, the candidates, whether a workload, the feasible clusters of each term)
        self._feasible_at: dict[tuple[str, bool], tuple[int, tuple[str, ...], tuple[frozenset[str], ...]]] = {}

    def binding_decisions(self, binding: Binding) -> tuple[list[Decision], tuple[str, int] | tuple[()] | None]:
        """The binding's own decisions, then those of its group scope that apply to it; and what it shares with the
        bindings of its scope that decide alike: () when neither it nor its scope decided anything, (scope,
        revision) when the scope's all apply and it has none of its own, None else (its own placements or a cluster
        it targets lift some of the scope's: engine.compile.lift)."""
        key = binding.key
        own = list(self.session.decisions(self.store.binding_ids[key]))
        scope = self.store.group_ids.get(key)
        if scope is None:
            return own, () if not own else None
        placed = bool(self.store.placed.get(key))
        if placed or binding.cluster_names:  # an exemption may lift some: its own placements, its clusters
            name = self.store.binding_facts[key]["name"]
            lists = {"clusters": frozenset(binding.cluster_names), "name": frozenset((name,))}
            found = self.session.decisions(scope, name if placed else None)  # without its own placements' matches
            return own + [d for d in found if applies(d, lists)], None
        grouped = list(self.session.decisions(scope))
        if own:
            return own + grouped, None
        return grouped, ((scope, self.session.revision(scope)) if grouped else ())

    def decided_by_rules(self, binding: Binding, policy: ast.Policy) -> bool:
        """Whether a `rule` of the rule set rejects or prefers a cluster for the binding: a change of its
        placement that Karmada has no word for, so it is scheduled anew."""
        rules = self.compiled.rules
        if not self._user_rules:  # no `rule` in the rule set: nothing to ask the engine
            return False
        if any(rules[d.rule].user for d in self.binding_decisions(binding)[0]):
            return True
        scope = self.store.scope_ids[policy.name.value]
        revision = self.session.revision(scope)
        found = self._scoped_user.get(scope)
        if found is None or found[0] != revision:  # once per policy and change of its decisions
            found = self._scoped_user[scope] = (
                revision,
                any(rules[d.rule].user for d in self.session.decisions(scope)),
            )
        return found[1]

    def feasible_now(self, name: str, workload: bool) -> tuple[frozenset[str], ...]:
        """The feasible clusters of each of the policy's terms, as its shared result has them now."""
        policy = self.policies[name]
        revision = self.session.revision(self.store.scope_ids[name])
        found = self._feasible_at.get((name, workload))
        if found is None or found[0] != revision or found[1] is not self.candidates:
            feasible = tuple(self.shared(name, t, workload).feasible.members for t in self.terms(policy))
            found = self._feasible_at[(name, workload)] = (revision, self.candidates, feasible)
        return found[2]

    def release(self, policy: str) -> None:
        """Let go of the policy's shared results (their decisions by cluster), made again if asked for: an
        evaluation does once it has scheduled the policy's last binding (a control plane's 2,000 policies each
        held theirs to the end: 1.9 M lists of decisions)."""
        for cache in (self._shared_cache, self._shared_before):
            for key in [k for k in cache if k[0] == policy]:
                del cache[key]
        for workload in (False, True):
            self._feasible_at.pop((policy, workload), None)
        self.session.release(self.store.scope_ids[policy])

    def terms(self, policy: ast.Policy) -> list[str | None]:
        """The policy's clusterAffinities terms (affinity_terms), made once."""
        terms = self._terms.get(policy.name.value)
        if terms is None:
            terms = self._terms[policy.name.value] = affinity_terms(policy)
        return terms

    def reason(self, decision: Decision) -> Reason:
        key = (decision.rule, decision.message, decision.reason)  # bindings rejected alike share one Reason
        reason = self._reasons.get(key)
        if reason is None:
            rule = self.compiled.rules[decision.rule]
            source = f"{rule.span.file}:{rule.span.line}"
            reason = Reason(rule.name, source, decision.message, decision.reason or decision.message)
            self._reasons[key] = reason
        return reason

    def shared(self, policy: str, term: str | None, workload: bool = True) -> Shared:
        """The decisions of the policy's scoped rules for one clusterAffinities term, as they apply to a
        binding with no decisions of its own and no exemption: computed once per policy, not per binding.
        For a workload, a cluster of one of the term's overflow groups passes the ClusterAffinity filter
        (plugins/clusteraffinity: overflow applies to workloads only)."""
        scope = self.store.scope_ids[policy]
        revision = self.session.revision(scope)
        tiers = self.tiers(policy, term) if workload else None
        overflows = bool(tiers)  # without overflow groups, workloads and the rest share one result
        cached = self._shared_cache.get((policy, term, overflows))
        if cached is not None and cached.revision == revision and cached.candidates is self.candidates:
            return cached
        raw = self.session.decision_parts(scope)
        # the decisions those of the result in force, or of the one it replaced (a sweep's scenario undone): it stands
        for known in (cached, self._shared_before.get((policy, term, overflows))):
            if known is not None and known.candidates is self.candidates and _same_parts(known.raw, raw):
                known.revision = revision
                if known is not cached:
                    if cached is not None:
                        self._shared_before[(policy, term, overflows)] = cached
                    self._shared_cache[(policy, term, overflows)] = known
                return known
        rescued = frozenset(c for c, tier in tiers.items() if tier not in (0, NO_TIER)) if tiers else None
        # the result it is updated from: of the same candidates and parts
        before = cached if cached is not None and cached.candidates is self.candidates else None
        before = before if before is not None and len(before.raw) == len(raw) else None
        parts: list[Sequence[Decision]] = []
        infos: list[PartInfo] = []
        for i, part in enumerate(raw):
            if before is not None and before.raw[i] is part:  # unchanged: what was read of it stands
                parts.append(before.parts[i])
                infos.append(before.infos[i])
            else:
                parts.append(self._part_for(part, term, rescued))
                infos.append(part_info(parts[-1]))
        if before is not None:
            by_cluster, rejected, feasible = self._changed_clusters(before, parts, infos)
        else:
            by_cluster = {}
            for info in infos:
                for cluster, found in info.by_cluster.items():
                    by_cluster[cluster] = [*by_cluster[cluster], *found] if cluster in by_cluster else found
            rejected = Rejections({c: self._sorted_reasons(by_cluster[c]) for c in sorted(by_cluster)})
            feasible = self._not_rejected(by_cluster)
        shared = Shared(
            term=term,
            decisions=list(chain.from_iterable(parts)),
            raw=raw,
            parts=tuple(parts),
            infos=tuple(infos),
            revision=revision,
            candidates=self.candidates,
            by_cluster=by_cluster,
            rejected=rejected,
            feasible=feasible,
            zero_scores=Constant(feasible, 0),
            exemptable=[d for info in infos for d in info.exemptable],
            prefers=any(info.prefers for info in infos),
        )
        if cached is not None:
            self._shared_before[(policy, term, overflows)] = cached
        self._shared_cache[(policy, term, overflows)] = shared
        return shared

    def _part_for(
        self, part: Sequence[Decision], term: str | None, rescued: frozenset[str] | None
    ) -> Sequence[Decision]:
        """The decisions of ``part`` that count for the clusterAffinities term; with ``rescued``, less the term's own
        rejections of the clusters of its overflow groups."""
        if not self._termed and rescued is None:
            return part
        rules = self.compiled.rules
        kept = tuple(d for d in part if rules[d.rule].term in (None, term))
        return (
            kept
            if rescued is None
            else tuple(d for d in kept if not (rules[d.rule].term == term and d.cluster in rescued))
        )

    def _changed_clusters(
        self, before: Shared, parts: list[Sequence[Decision]], infos: list[PartInfo]
    ) -> tuple[dict[str, list[Decision]], Rejections, Subset]:
        """A shared result's rejections and feasible clusters made anew from the one ``before`` and the parts of its
        decisions that changed since (a planned rule's answer is the same object while nothing it reads changes, so
        a failed cluster's taint changes the taint rule's part alone, and in it that cluster's decisions)."""
        changed: set[str] = set()
        for old, new in zip(before.parts, parts, strict=True):
            if old is not new:
                old_ids, new_ids = {id(d) for d in old}, {id(d) for d in new}
                changed.update(d.cluster for d in new if id(d) not in old_ids and d.kind is DecisionKind.REJECT)
                changed.update(d.cluster for d in old if id(d) not in new_ids and d.kind is DecisionKind.REJECT)
        if not changed:
            return before.by_cluster, before.rejected, before.feasible
        by_cluster = dict(before.by_cluster)
        now: dict[str, tuple[Reason, ...]] = {}
        for cluster in changed:
            found = [d for info in infos for d in info.by_cluster.get(cluster, ())]
            if found:
                by_cluster[cluster] = found
                now[cluster] = self._sorted_reasons(found)
            else:
                by_cluster.pop(cluster, None)
        table = before.rejected.table
        if any((c in by_cluster) != (c in before.by_cluster) for c in changed):  # rejected clusters came or went
            kept = {c: reasons for c, reasons in table.items() if c not in changed}
            rejected = Rejections({c: now.get(c) or kept[c] for c in sorted(kept.keys() | now.keys())})
            return by_cluster, rejected, self._not_rejected(by_cluster)
        updated = dict(table)  # the same clusters, in the same order
        updated.update(now)
        return by_cluster, Rejections(updated), before.feasible

    def _not_rejected(self, rejected: Mapping[str, object]) -> Subset:
        """The candidates ``rejected`` does not name: a shared result's feasible clusters."""
        base = tuple(c for c in self.candidates if c not in rejected)
        return Subset(base, frozenset(base), set(), set())

    def tiers(self, policy: str, term: str | None) -> dict[str, int] | None:
        """getClusterOverflowOrder of every candidate, once per policy and term (enableOverflow): 0 for a
        cluster of the term's own clusters, i for the i-th overflow group that holds it first, NO_TIER
        otherwise; None when the term has no overflow groups."""
        if (policy, term) not in self._tiers:
            terms = [s for s in self.policies[policy].statements if isinstance(s, ast.ClusterAffinity)]
            found = next((t for t in terms if term is not None and t.name is not None and t.name.value == term), None)
            tiers = None
            if found is not None and found.overflow:
                tiers = {}
                for name in self.candidates:
                    cluster = self.store.clusters[name]
                    groups = (found.statements, *(o.statements for o in found.overflow))
                    tiers[name] = next((i for i, g in enumerate(groups) if cluster_matches(cluster, g)), NO_TIER)
            self._tiers[(policy, term)] = tiers
        return self._tiers[(policy, term)]

    def _counts(self, decision: Decision, term: str | None) -> bool:
        """A decision counts for a term if its rule belongs to no clusterAffinities term or to this one."""
        return self.compiled.rules[decision.rule].term in (None, term)

    def alone(self, reason: Reason) -> tuple[Reason]:
        """The reason as the one reason of a cluster: one tuple, shared by every cluster rejected for it alone."""
        alone = self._alone.get(reason)
        if alone is None:
            alone = self._alone[reason] = (reason,)
        return alone

    def _sorted_reasons(self, decisions: Sequence[Decision]) -> tuple[Reason, ...]:
        """One cluster's reasons by rule, source and message; a rule's untolerated taints in the order of the
        cluster's spec.taints, so that the FitError, which counts a cluster by its first reason, names the taint
        Karmada's TaintToleration filter names (FindMatchingUntoleratedTaint: the first untolerated one)."""
        if len(decisions) == 1:  # most clusters: one reason, as one shared tuple (a control plane's 2,000 policies
            return self.alone(self.reason(decisions[0]))  # reject 1.9 M clusters in all)
        reasons = {self.reason(d) for d in decisions}
        if len(reasons) < 2:
            return tuple(reasons)
        cluster = self.store.clusters.get(decisions[0].cluster)
        taints = cluster.taints if cluster is not None else ()
        order = {encoding.taint("", t)["display"]: i for i, t in enumerate(taints)}

        def rank(message: str) -> int:
            return order.get(message.removeprefix(UNTOLERATED), len(order)) if message.startswith(UNTOLERATED) else 0

        return tuple(sorted(reasons, key=lambda x: (x.rule, x.source, rank(x.message), x.message)))

    def of(self, binding: Binding, shared: Shared, own: list[Decision]) -> Feasible:
        """The binding's filter stage for one term: the policy's shared result, overlaid with the binding's own
        decisions (``own``: its own and its group scope's that apply to it) and the exemptions it meets."""
        lists = {"clusters": frozenset(binding.cluster_names)} if binding.cluster_names else {}
        gone = shared.exempted(lists) if lists else set()
        mine = [d for d in own if self._counts(d, shared.term)] if self._termed else own
        applied: Sequence[Decision] = (
            [*(d for d in shared.decisions if id(d) not in gone), *mine] if gone else Joined(shared.decisions, mine)
        )
        rejects = [d for d in mine if d.kind is DecisionKind.REJECT]
        if not gone and not rejects:
            return Feasible(shared.rejected, shared.feasible, applied, mine)
        changes: dict[str, tuple[Reason, ...] | None] = {}
        # the clusters whose reasons change: those an exemption frees, those the binding's own rejects name
        own_by_cluster: dict[str, list[Decision]] = (
            {d.cluster: [] for d in shared.exemptable if id(d) in gone} if gone else {}
        )
        for d in rejects:
            own_by_cluster.setdefault(d.cluster, []).append(d)
        for cluster, own_rejects in own_by_cluster.items():
            shared_reasons = shared.by_cluster.get(cluster, ())
            if not shared_reasons and len(own_rejects) == 1:  # most often: a peer's cluster, one reason
                changes[cluster] = self.alone(self.reason(own_rejects[0]))
                continue
            reasons = [d for d in shared_reasons if id(d) not in gone] if gone else list(shared_reasons)
            reasons += own_rejects
            changes[cluster] = self._sorted_reasons(reasons) if reasons else None
        now_rejected = {c for c, reasons in changes.items() if reasons is not None}
        now_free = {c for c, reasons in changes.items() if reasons is None}
        feasible = Subset(shared.feasible.base, shared.feasible.members, now_rejected, now_free)
        return Feasible(self._overlay(shared.rejected, changes), feasible, applied, mine)

    def _overlay(self, base: Rejections, changes: dict[str, tuple[Reason, ...] | None]) -> RejectionsOverlay:
        """The binding's rejections: its policy's shared ones with ``changes``, one object for every binding whose
        changes are the same (the three peers of an anti-affinity group left without room lose the same 250
        clusters for the same reason; at 5,000 clusters they each held them: 240 MB)."""
        key = (id(base), len(changes), hash(frozenset(changes)))
        found = self._overlays.get(key)
        if found is not None and found.parts() == (base, changes):
            return found
        made = self._overlays[key] = RejectionsOverlay(base, changes)
        return made


def applies(decision: Decision, lists: Mapping[str, frozenset[str]]) -> bool:
    """False for a scoped decision whose exemption the binding meets (``lists``: its list fields' values, and
    its name under ``"name"``: a cluster it already targets, its own placement)."""
    return not any(value in lists.get(name, ()) for name, value in decision.exempt)


# how many lookups of a binding's values by exemption (Shared.exempted) cost as much as testing one decision
_LOOKUPS_PER_TEST = 16

# the TaintToleration filter's words before the taint (rules/taint_toleration.fr)
UNTOLERATED = "cluster(s) had untolerated taint "


@dataclass(eq=False)
class Shared:
    """What a policy's scoped rules decided for one clusterAffinities term (Feasibility.shared), one object per
    result (compared by identity: the scheduler keeps what it chose on it beside it)."""

    term: str | None
    decisions: list[Decision]
    raw: tuple[Sequence[Decision], ...]  # the policy's decisions as the session's parts (Session.decision_parts)
    parts: tuple[Sequence[Decision], ...]  # each of those that counts for the term
    infos: tuple[PartInfo, ...]  # what is read of each part
    revision: int
    candidates: tuple[str, ...]
    by_cluster: dict[str, list[Decision]]
    rejected: Rejections
    feasible: Subset
    zero_scores: Constant
    exemptable: list[Decision]
    prefers: bool

    @cached_property
    def exempt_by(self) -> dict[tuple[str, str], list[Decision]]:
        """The exemptable decisions by each (list field, value) of their exemptions."""
        out: dict[tuple[str, str], list[Decision]] = {}
        for d in self.exemptable:
            for pair in d.exempt:
                out.setdefault(pair, []).append(d)
        return out

    def exempted(self, lists: Mapping[str, frozenset[str]]) -> set[int]:
        """The ids of the exemptable decisions a binding with ``lists`` meets an exemption of (``applies``: False),
        looked up by its values unless they outnumber the decisions ``_LOOKUPS_PER_TEST`` to one (a lookup costs a
        small part of a test: a Duplicated binding on 49 clusters looks up 49 values rather than test the 21 taint
        decisions)."""
        if sum(len(values) for values in lists.values()) >= _LOOKUPS_PER_TEST * len(self.exemptable):
            return {id(d) for d in self.exemptable if not applies(d, lists)}
        by = self.exempt_by
        return {id(d) for name, values in lists.items() for v in values for d in by.get((name, v), ())}


@dataclass(frozen=True, slots=True)
class PartInfo:
    """What a shared result reads of one part of a policy's decisions (part_info)."""

    part: Sequence[Decision]
    by_cluster: dict[str, list[Decision]]  # the part's rejections of each cluster, in the part's order
    exemptable: list[Decision]
    prefers: bool


def _same_parts(a: Sequence[Sequence[Decision]], b: Sequence[Sequence[Decision]]) -> bool:
    """Whether two results' parts are the same decisions, the same objects in the same order."""
    return len(a) == len(b) and all(
        x is y or (len(x) == len(y) and all(d is e for d, e in zip(x, y, strict=True)))
        for x, y in zip(a, b, strict=True)
    )


def part_info(part: Sequence[Decision]) -> PartInfo:
    """A part's rejections by cluster, its exemptable decisions, whether it prefers."""
    by_cluster: dict[str, list[Decision]] = {}
    for d in part:
        if d.kind is DecisionKind.REJECT:
            by_cluster.setdefault(d.cluster, []).append(d)
    exemptable = [d for d in part if d.exempt]
    return PartInfo(part, by_cluster, exemptable, any(d.kind is DecisionKind.PREFER for d in part))


def fit_error(clusters: int, rejected: Mapping[str, tuple[Reason, ...]]) -> str:
    """FitError.Error (pkg/scheduler/framework/types.go): ``0/N clusters are available: `` and the
    histogram of the filters' reasons, one per rejected cluster, "count reason" sorted as strings."""
    if clusters == 0 or not rejected:
        return f"0/{clusters} clusters are available: no cluster exists."
    counts = histogram(rejected)
    return f"0/{clusters} clusters are available: {', '.join(sorted(f'{n} {m}' for m, n in counts.items()))}."
