"""Evaluation: facts into the engine, then bindings placed one at a time, as the scheduler does.

The engine (durable-rules, via engine.runtime) does the matching: as facts arrive, rules fire and
record rejections and preferences per binding. This module is the Python stage the engine cannot
express: choosing among feasible clusters (scores are sums, normalised; ordering; spread limits;
clusterAffinities terms tried in order), and then telling the engine where each binding went, so
that later bindings see it (S3: "bindings assigned in the same round count with their newest
assignment"). A binding's placement facts are asserted before its ``scheduled`` fact, and retracted
after it, which keeps negations over placements sound (see rules/workload_affinity.fr).
"""

from __future__ import annotations

import datetime as dt
import heapq
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any

from engine import ast
from engine.errors import Diagnostic, warning
from engine.facts import Binding, Cluster, EvictionTask, Facts, Taint
from engine.ir import ABSENT
from engine.karmada import policies_from_objects
from engine.load import RuleSet
from engine.policy import Groups, affinity_terms, groups, select_policy, spread_limits, tolerations
from engine.program import program
from engine.results import Explanation, FactRef, Placement, Reason, Result
from engine.runtime import Decision, Program, Session
from engine.schema import POLICY_SCOPE
from engine.views import Constant, Overlay, Subset

LOCALITY_SCORE = 100  # plugin ClusterLocality: a cluster the binding already targets


class _Evaluation:
    def __init__(self, program: Program, policies: Sequence[ast.Policy], facts: Facts) -> None:
        self.program = program
        self.symbols = program.symbols
        self.facts = facts
        self.policies = {p.name.value: p for p in policies}
        self.session: Session = program.session()
        self.cluster_ids: dict[str, str] = {}
        self.binding_ids: dict[str, str] = {}
        self.placement_ids: dict[str, list[str]] = defaultdict(list)
        self.binding_policy: dict[str, ast.Policy | None] = {}
        self.binding_facts: dict[str, dict[str, Any]] = {}
        self.owned: dict[tuple[str, str], list[str]] = {}  # (owner key, what) → fact ids
        self.clusters: dict[str, Cluster] = {c.name: c for c in facts.clusters}
        self.candidates = tuple(c.name for c in facts.clusters if not c.deleting)
        self.scope_ids: dict[str, str] = {}  # policy name → its policy_scope fact (engine.compile.lift)
        self._reasons: dict[Decision, Reason] = {}
        self._shared_cache: dict[tuple[str, str | None], _Shared] = {}

    # ------------------------------------------------------------ encoding
    def _labels(self, labels: Mapping[str, str], prefix: str = "") -> dict[str, str]:
        """Every label the program refers to, ABSENT where the object lacks it (see engine.ir.ABSENT)."""
        return {f"{prefix}{prop}": labels.get(key, ABSENT) for key, prop in self.symbols.labels.items()}

    def _flags(self, list_field: str, values: Sequence[str]) -> dict[str, int]:
        present = set(values)
        return {prop: 1 for (f, value), prop in self.symbols.flags.items() if f == list_field and value in present}

    def _member(self, owner: str, list_field: str, values: Sequence[str]) -> None:
        ids = [self.session.assert_fact("member", {"owner": owner, "field": list_field, "value": v}) for v in values]
        self.owned[(owner, list_field)] = ids

    def load(self) -> None:
        """Assert the input facts, those that rules only test for absence first (members, tolerations,
        tasks, taints), then clusters, then bindings, so that no rule fires on a partial picture."""
        s = self.session
        live = [c for c in self.facts.clusters if not c.deleting]
        for cluster in live:
            self._member(f"c/{cluster.name}", "zones", cluster.zones)
        for binding in self.facts.bindings:
            self._member(f"b/{binding.key}", "clusters", binding.cluster_names)
        for policy in self.policies.values():
            for toleration in tolerations(policy):
                s.assert_fact("cluster_toleration", toleration)
        for binding in self.facts.bindings:
            self._tasks(binding)
        for cluster in live:
            self._taints(cluster)
        for cluster in live:
            props: dict[str, Any] = {"key": f"c/{cluster.name}", "name": cluster.name, "ready": cluster.ready == "True"}
            props |= {"provider": cluster.provider, "region": cluster.region}
            props |= self._labels(cluster.labels) | self._flags("zones", cluster.zones)
            self.cluster_ids[cluster.name] = s.assert_fact("cluster", props)
        for binding in self.facts.bindings:
            self._select(binding)
        for name in sorted({p.name.value for p in self.binding_policy.values() if p is not None}):
            self.scope_ids[name] = s.assert_fact(POLICY_SCOPE, {"key": f"p/{name}", "policy": name})
        for binding in self.facts.bindings:
            self._load_binding(binding)
        for binding in self.facts.bindings:
            if binding.clusters and self.binding_policy[binding.key] is not None:
                self._place(binding.key, binding.cluster_names)

    def _tasks(self, binding: Binding) -> None:
        ids = [self.session.assert_fact("eviction_task", _task_props(binding, t)) for t in binding.eviction_tasks]
        self.owned[(f"b/{binding.key}", "tasks")] = ids

    def _taints(self, cluster: Cluster) -> None:
        ids = [self.session.assert_fact("taint", _taint_props(cluster.name, t)) for t in cluster.taints]
        self.owned[(f"c/{cluster.name}", "taints")] = ids

    def _retract_owned(self, owner: str, what: str) -> None:
        for fact_id in self.owned.pop((owner, what), []):
            self.session.retract(fact_id)

    # ------------------------------------------------------------ incremental updates (simulation)
    def update_cluster(self, cluster: Cluster) -> None:
        """A cluster's taints changed: retract and assert its taint facts only."""
        self._retract_owned(f"c/{cluster.name}", "taints")
        self.clusters = {**self.clusters, cluster.name: cluster}
        self._taints(cluster)

    def update_binding(self, binding: Binding) -> None:
        """A binding's target or eviction tasks changed: replace those facts only."""
        owner = f"b/{binding.key}"
        self._retract_owned(owner, "tasks")
        self._retract_owned(owner, "clusters")
        self._member(owner, "clusters", binding.cluster_names)
        self._tasks(binding)

    def _select(self, binding: Binding) -> None:
        self.binding_policy[binding.key] = select_policy(
            list(self.policies.values()), binding.kind, binding.namespace, binding.resource_name, binding.labels
        )

    def _load_binding(self, binding: Binding) -> None:
        policy = self.binding_policy[binding.key]
        g = groups(policy, binding.labels) if policy is not None else Groups()
        if policy is not None and not binding.labels:
            # no workload manifest: keep the groups recorded on the binding (spec.workloadAffinityGroups)
            g = replace(g, affinity=binding.affinity_group or "", anti_affinity=binding.anti_affinity_group or "")
        props: dict[str, Any] = {
            "key": f"b/{binding.key}",
            "namespace": binding.namespace,
            "name": binding.name,
            "kind": binding.kind,
            "api_version": binding.api_version,
            "replicas": binding.replicas,
            "policy": policy.name.value if policy is not None else "",
            "affinity_group": g.affinity,
            "anti_affinity_group": g.anti_affinity,
            "affinity_topology": g.affinity_topology,
            "anti_affinity_topology": g.anti_affinity_topology,
        }
        props |= self._labels(binding.labels) | self._flags("clusters", binding.cluster_names)
        self.binding_ids[binding.key] = self.session.assert_fact("binding", props)
        self.binding_facts[binding.key] = props

    # ------------------------------------------------------------ placements in the engine
    def _place(self, key: str, clusters: Sequence[str]) -> None:
        """Replace the binding's placement facts: retract the old (marker first), assert the new (marker last)."""
        for fact_id in reversed(self.placement_ids.pop(key, [])):
            self.session.retract(fact_id)
        b = self.binding_facts[key]
        ungrouped = self.program.ungrouped
        if not clusters or not (b["affinity_group"] or b["anti_affinity_group"] or "placement" in ungrouped):
            return  # no rule could match its placements (saves a third of the engine's work at scale)
        base = {k: b[k] for k in ("namespace", "affinity_group", "anti_affinity_group")} | {"binding": b["name"]}
        base |= self._labels_of_binding(key)
        ids = []
        for name in clusters:
            cluster = self._cluster(name)
            props = base | {"cluster": name} | (self._labels(cluster.labels, "C") if cluster else {})
            ids.append(self.session.assert_fact("placement", props))
        if b["affinity_group"] or "scheduled" in ungrouped:
            ids.append(self.session.assert_fact("scheduled", {k: v for k, v in base.items() if not k.startswith("L")}))
        self.placement_ids[key] = ids

    def _labels_of_binding(self, key: str) -> dict[str, Any]:
        return {k: v for k, v in self.binding_facts[key].items() if k.startswith("L")}

    def _cluster(self, name: str) -> Cluster | None:
        return self.clusters.get(name)

    # ------------------------------------------------------------ decisions
    def _reason(self, decision: Decision) -> Reason:
        reason = self._reasons.get(decision)
        if reason is None:
            rule = self.program.rules[decision.rule]
            reason = self._reasons[decision] = Reason(rule.name, f"{rule.span.file}:{rule.span.line}", decision.message)
        return reason

    def _shared(self, policy: str, term: str | None) -> _Shared:
        """The decisions of the policy's scoped rules for one clusterAffinities term, as they apply to a
        binding with no decisions of its own and no exemption: computed once per policy, not per binding."""
        scope = self.scope_ids[policy]
        revision = self.session.revision[scope]
        cached = self._shared_cache.get((policy, term))
        if cached is not None and cached.revision == revision and cached.candidates is self.candidates:
            return cached
        decisions = [d for d in self.session.decisions.get(scope, []) if self._counts(d, term)]
        by_cluster: dict[str, list[Decision]] = defaultdict(list)
        for d in decisions:
            if d.kind == "reject":
                by_cluster[d.cluster].append(d)
        base = tuple(c for c in self.candidates if c not in by_cluster)
        feasible = Subset(base, frozenset(base), set(), set())
        shared = _Shared(
            term=term,
            decisions=decisions,
            revision=revision,
            candidates=self.candidates,
            by_cluster=dict(by_cluster),
            rejected={c: self._sorted_reasons(by_cluster[c]) for c in sorted(by_cluster)},
            feasible=feasible,
            zero_scores=Constant(feasible, 0),
            exemptable=[d for d in decisions if d.exempt],
            prefers=any(d.kind == "prefer" for d in decisions),
        )
        self._shared_cache[(policy, term)] = shared
        return shared

    def _counts(self, decision: Decision, term: str | None) -> bool:
        """A decision counts for a term if its rule belongs to no clusterAffinities term or to this one."""
        return self.program.rules[decision.rule].term in (None, term)

    def _sorted_reasons(self, decisions: Sequence[Decision]) -> tuple[Reason, ...]:
        return tuple(sorted({self._reason(d) for d in decisions}, key=lambda x: (x.rule, x.source, x.message)))

    def _applies(self, decision: Decision, lists: Mapping[str, frozenset[str]]) -> bool:
        """False for a scoped decision whose exemption the binding meets (a cluster it already targets)."""
        return not any(value in lists.get(name, ()) for name, value in decision.exempt)

    def _feasibility(
        self, binding: Binding, shared: _Shared, own: list[Decision]
    ) -> tuple[Mapping[str, tuple[Reason, ...]], Subset, list[Decision], list[Decision]]:
        """(rejected clusters with reasons, feasible clusters, the decisions that apply, the binding's own
        among them) for one term: the policy's shared result, overlaid with the binding's own decisions
        and exemptions."""
        lists = {"clusters": frozenset(binding.cluster_names)} if binding.cluster_names else {}
        gone = {id(d) for d in shared.exemptable if not self._applies(d, lists)} if lists else set()
        mine = [d for d in own if self._counts(d, shared.term)]
        applied = [d for d in shared.decisions if id(d) not in gone] if gone else list(shared.decisions)
        applied += mine
        rejects = [d for d in mine if d.kind == "reject"]
        if not gone and not rejects:
            return shared.rejected, shared.feasible, applied, mine
        changes: dict[str, tuple[Reason, ...] | None] = {}
        for cluster in {d.cluster for d in shared.exemptable if id(d) in gone} | {d.cluster for d in rejects}:
            reasons = [d for d in shared.by_cluster.get(cluster, []) if id(d) not in gone]
            reasons += [d for d in rejects if d.cluster == cluster]
            changes[cluster] = self._sorted_reasons(reasons) if reasons else None
        now_rejected = {c for c, reasons in changes.items() if reasons is not None}
        now_free = {c for c, reasons in changes.items() if reasons is None}
        feasible = Subset(shared.feasible.base, shared.feasible.members, now_rejected, now_free)
        return Overlay(shared.rejected, changes), feasible, applied, mine

    def decide(self, binding: Binding) -> Placement:
        policy = self.binding_policy[binding.key]
        assert policy is not None
        name = policy.name.value
        own = self.session.decisions.get(self.binding_ids[binding.key], [])
        terms = affinity_terms(policy)
        start = terms.index(binding.observed_affinity_name) if binding.observed_affinity_name in terms else 0
        minimum, maximum = spread_limits(policy)
        for term in terms[start:]:  # clusterAffinities: the first term with enough feasible clusters, or the last
            shared = self._shared(name, term)
            rejected, feasible, applied, mine = self._feasibility(binding, shared, own)
            if len(feasible) >= max(minimum, 1):
                break
        scores = self._scores(shared, applied, mine, feasible, binding.cluster_names)
        unschedulable, message = False, ""
        if not feasible:
            unschedulable = True
            histogram = Counter(reasons[0].message for reasons in rejected.values())
            parts = ", ".join(f"{n} {m}" for m, n in sorted(histogram.items(), key=lambda x: x[0]))
            message = f"0/{len(self.candidates)} clusters are available: {parts}."
            selected: tuple[str, ...] = ()
        elif len(feasible) < minimum:
            unschedulable = True
            message = "the number of feasible clusters is less than spreadConstraint.MinGroups"
            selected = binding.cluster_names  # not a fit error: Karmada keeps the old result
        elif maximum is None:
            selected = tuple(feasible)
        elif isinstance(scores, Constant):  # all equal: the first by name
            selected = tuple(islice(feasible, maximum))
        else:
            selected = tuple(sorted(heapq.nsmallest(maximum, feasible, key=lambda c: (-scores[c], c))))
        self._place(binding.key, selected)
        binding_id = self.binding_ids[binding.key]
        return Placement(
            binding=binding.key,
            policy=name,
            clusters=selected,
            feasible=feasible,
            scores=scores,
            rejected=rejected,
            unschedulable=unschedulable,
            message=message,
            previous=binding.cluster_names,
            affinity_term=term,
            explanations=_Lazy(lambda: self._explain(applied, binding_id)),
        )

    def _scores(
        self, shared: _Shared, applied: list[Decision], mine: list[Decision], feasible: Subset, current: Sequence[str]
    ) -> Mapping[str, int]:
        """Preferences summed per cluster and normalised to 0-100 (as Kubernetes' InterPodAffinity
        NormalizeScore), plus ClusterLocality's 100 for clusters the binding already targets."""
        any_prefer = shared.prefers or any(d.kind == "prefer" for d in mine)
        prefers = [d for d in applied if d.kind == "prefer"] if any_prefer else []
        if not prefers and not current:
            return shared.zero_scores if feasible is shared.feasible else Constant(feasible, 0)
        raw = dict.fromkeys(feasible, 0)
        for d in prefers:
            if d.cluster in raw:
                raw[d.cluster] += d.weight
        low, high = (min(raw.values()), max(raw.values())) if raw else (0, 0)
        spread = high - low
        return {
            c: (int(100 * (raw[c] - low) / spread) if spread > 0 else 0) + (LOCALITY_SCORE if c in current else 0)
            for c in feasible
        }

    # ------------------------------------------------------------ explanations
    def _fact(self, alias: str, fact_id: str, seen: frozenset[str] = frozenset()) -> FactRef:
        fact = self.session.facts.get(fact_id, {})
        fact_type = str(fact.get("t", "?"))
        hidden = ("id", "t", "sid", "key")
        shown = {k: v for k, v in fact.items() if k not in hidden and k[:1] not in "LCF" and v not in ("", ABSENT)}
        labels = sorted((k, fact[p]) for k, p in self.symbols.labels.items() if fact.get(p, ABSENT) != ABSENT)
        if labels:
            shown["labels"] = "{" + ", ".join(f"{k}={v}" for k, v in labels) + "}"
        description = " ".join(f"{k}={v}" for k, v in sorted(shown.items()))
        derived_by: tuple[Explanation, ...] = ()
        derivation = self.session.derived.get(fact_id)
        if derivation is not None and fact_id not in seen:
            derived_by = (self._explanation(derivation, seen | {fact_id}),)
        return FactRef(alias.removeprefix("v_"), fact_type, description, derived_by)

    def _explanation(self, d: Decision, seen: frozenset[str] = frozenset(), binding: str = "") -> Explanation:
        """What ``d`` matched; a scoped rule's policy_scope fact is shown as the ``binding`` it applied to."""
        rule = self.program.rules[d.rule]
        action = {
            "reject": "rejected",
            "prefer": f"preferred ({d.weight:+d})",
            "derive": "derived",
            "evict": "evicted",
        }[d.kind]
        matched = d.matched or tuple(sorted(("?", i) for i in d.deps))
        if self.program.rules[d.rule].scoped and binding:
            matched = tuple((alias, binding if fact_id == d.binding else fact_id) for alias, fact_id in matched)
        facts = tuple(self._fact(alias, fact_id, seen) for alias, fact_id in matched if not alias.startswith("m"))
        return Explanation(rule.name, f"{rule.span.file}:{rule.span.line}", action, facts)

    def _explain(self, decisions: list[Decision], binding: str) -> dict[str, tuple[Explanation, ...]]:
        out: dict[str, list[Explanation]] = defaultdict(list)
        for d in decisions:
            out[d.cluster].append(self._explanation(d, binding=binding))
        return {c: tuple(sorted(e, key=lambda x: (x.rule, x.source, x.action))) for c, e in sorted(out.items())}

    def run(self, now: dt.datetime | None) -> Result:
        try:
            self.load()
            placements = [self.decide(b) for b in self.facts.bindings if self.binding_policy[b.key] is not None]
        finally:
            self.session.close()
        unmatched = tuple(b.key for b in self.facts.bindings if self.binding_policy[b.key] is None)
        notes: list[Diagnostic] = [warning(f"no policy selects binding {key}", subject=key) for key in unmatched]
        return Result(tuple(placements), (), unmatched, now, tuple(notes))


@dataclass
class _Shared:
    """What a policy's scoped rules decided for one clusterAffinities term (see _Evaluation._shared)."""

    term: str | None
    decisions: list[Decision]
    revision: int
    candidates: tuple[str, ...]
    by_cluster: dict[str, list[Decision]]
    rejected: dict[str, tuple[Reason, ...]]
    feasible: Subset
    zero_scores: Constant
    exemptable: list[Decision]
    prefers: bool


class _Lazy(Mapping[str, tuple[Explanation, ...]]):
    """Explanations, built on first use: only `explain` and tests read them, and building them for
    every decision took a quarter of the evaluation time (docs/performance.md)."""

    def __init__(self, build: Callable[[], dict[str, tuple[Explanation, ...]]]) -> None:
        self._build: Callable[[], dict[str, tuple[Explanation, ...]]] | None = build
        self._data: dict[str, tuple[Explanation, ...]] = {}

    def _get(self) -> dict[str, tuple[Explanation, ...]]:
        if self._build is not None:
            self._data, self._build = self._build(), None
        return self._data

    def __getitem__(self, cluster: str) -> tuple[Explanation, ...]:
        return self._get()[cluster]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


def _task_props(binding: Binding, task: EvictionTask) -> dict[str, Any]:
    return {
        "namespace": binding.namespace,
        "binding": binding.name,
        "from_cluster": task.from_cluster,
        "purge_mode": task.purge_mode,
        "reason": task.reason,
        "producer": task.producer,
    }


def _taint_props(cluster: str, taint: Taint) -> dict[str, Any]:
    value = f"={taint.value}" if taint.value else ""
    display = f"{{{taint.key}{value}:{taint.effect}}}"  # as Karmada's TaintToleration message shows it
    return {"cluster": cluster, "key": taint.key, "value": taint.value, "effect": taint.effect, "display": display}


def evaluate(rules: RuleSet, facts: Facts, now: dt.datetime | None = None) -> Result:
    """Place every binding the rules' policies select; see the module docstring for the order.

    With ``now``, also run the failover controllers at that time (S4, S5): the evictions they make,
    with each binding's clusters afterwards and the labels injected there."""
    policies = (*rules.policies, *policies_from_objects(facts.policies))
    engine_program = program(tuple(policies), tuple(rules.rules))
    result = _Evaluation(engine_program, policies, facts).run(now)
    evictions: tuple[Any, ...] = ()
    if now is not None:
        from engine.simulate import Simulator  # simulate builds on this module

        simulator = Simulator(rules, facts, now)
        try:
            simulator.step()
        finally:
            simulator.engine.session.close()
        evictions = tuple(simulator.evictions())
    return Result(result.placements, evictions, result.unmatched, now, (*facts.warnings, *result.warnings))
