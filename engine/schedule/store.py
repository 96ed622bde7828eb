"""The facts in the engine: the only place a scheduler's facts are asserted and retracted.

A ``FactStore`` asserts the input facts once, as it is made, in the order rules need (what rules only test for absence
first, then clusters, then bindings, then the scopes rules were lifted to: engine.compile.lift). After that,
three kinds of change reach the session, all through here: a placement the scheduler decided
(``set_placement``: it tells the engine where the binding went, so later bindings see it), a cluster's taints and a
binding's targets and eviction tasks as the failover controllers change them (``update_cluster``, ``update_binding``,
``restore``). Each change is told to the store's ``Listener``: what it changed, in the words below (the kept
unschedulable bindings of a sweep listen: engine.schedule.waiting).
The filter stage (engine.schedule.feasibility) reads decisions from the session; the scheduler
(engine.schedule.scheduler) neither reads nor writes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, assert_never

from engine.backend import Decision, Session
from engine.compile import encoding
from engine.compile.program import CompiledProgram
from engine.inputs.facts import Binding, Cluster, Facts
from engine.syntax import ast, schema
from engine.syntax.schema import GROUP_SCOPE, MEMBER, POLICY_SCOPE

# what a change is of: an owner's facts (its key: encoding.binding_owner, cluster_owner), an affinity group's
# placements, an anti-affinity group's (NAMESPACE/GROUP)
OWNER, AFFINITY, ANTI = "owner", "affinity", "anti-affinity"


class Listener(Protocol):
    """What is told of each change of the facts in the store."""

    def changed(self, what: tuple[str, str]) -> None:
        """An owner's facts or an affinity group's placements changed: (OWNER or AFFINITY, its name)."""

    def occupy(self, group: str, before: Sequence[str], after: Sequence[str]) -> None:
        """A member of the anti-affinity group moved from the clusters ``before`` to ``after``."""


# the most lists of clusters whose placements' parts are kept (FactStore._put): a fleet's bindings share far fewer
_PARTS_KEPT = 20_000


class FactStore:
    """A session's facts: the input facts, loaded as it is made, and every change made to them since.

    ``policies``: the evaluated policies; ``policy_of``: each binding's policy as the scheduler chose it (None: no
    policy selects it); ``held``: the keys of the bindings that hold an older placement (lazy activation);
    ``workload_affinity``: the WorkloadAffinity gate (off, the detector records no groups, pkg/detector/detector.go)."""

    def __init__(
        self,
        session: Session,
        compiled: CompiledProgram,
        facts: Facts,
        policies: Sequence[ast.Policy],
        policy_of: Mapping[str, ast.Policy | None],
        listener: Listener,
        held: frozenset[str] = frozenset(),
        workload_affinity: bool = True,
    ) -> None:
        self.session = session
        self.compiled = compiled
        self.symbols = compiled.symbols
        self.facts = facts
        self.policies = tuple(policies)
        self.policy_of = policy_of
        self.listener = listener
        self.held = held
        self.workload_affinity = workload_affinity
        self.clusters: dict[str, Cluster] = {c.name: c for c in facts.clusters}
        self.cluster_ids: dict[str, str] = {}
        self.binding_ids: dict[str, str] = {}
        self.binding_keys: dict[str, str] = {}  # a binding fact's id → its binding's key
        self.binding_facts: dict[str, dict[str, Any]] = {}
        self.scope_ids: dict[str, str] = {}  # policy name → its policy_scope fact (engine.compile.lift)
        self.group_ids: dict[str, str] = {}  # binding key → its group_scope fact (engine.compile.lift)
        # binding key → its placements' batch (Session.place) and its ``scheduled`` marker's id
        self.placement_ids: dict[str, tuple[str, str | None]] = {}
        self.placed: dict[str, tuple[str, ...]] = {}  # binding key → the clusters of its placement facts
        # binding key → its placements' batch (None: none yet), of the bindings whose placements only rules that
        # evict read, placed on ``placed`` when failover asks for evictions (``evictions``), not at every change
        self._deferred: dict[str, str | None] = {}
        # binding key → its placements' batch retracted when it was left without clusters: placed again with that id
        # (Session.place: the very batch again, when placed as it was)
        self._retracted: dict[str, str] = {}
        self._members: dict[tuple[str, str], tuple[str, ...]] = {}  # (owner, list field) → its member facts' values
        # (owner key, what) → the facts asserted for it and their batch (Session.place)
        self._owned: dict[tuple[str, str], tuple[list[dict[str, Any]], str]] = {}
        self._reads_members = MEMBER in compiled.matched
        self._synced: dict[str, Binding] = {}  # binding key → the binding its own facts were last made from
        self._clocked: dict[str, set[str]] = {}  # fact type → the owners of such facts (update_clocked)
        self._group_names: dict[str, tuple[tuple[str, str], ...]] = {}  # binding key → its groups (group_names)
        self._cluster_parts: dict[str, tuple[Cluster, dict[str, Any]]] = {}  # encoding.cluster_parts' cache
        # the clusters of a placement → its batch's cluster parts, the same tuple while the clusters' names and labels
        # stay (a sweep's scenario moves a region's bindings alike: their parts are made once, and are alike to the
        # session at a glance)
        self._parts_of: dict[tuple[str, ...], tuple[dict[str, Any], ...]] = {}
        self._load()

    # ------------------------------------------------------------ the input facts
    def _load(self) -> None:
        """Assert the input facts (engine.compile.encoding.input_facts: those that rules only test for absence
        first, then clusters, then bindings, so that no rule fires on a partial picture), keeping each one's id by
        what it stands for; then put every binding's placements on its spec.clusters."""
        made = encoding.input_facts(
            self.symbols,
            self.facts,
            self.policies,
            self.policy_of,
            self.held,
            self.workload_affinity,
            self.compiled.group_keys,
            self._reads_members,
        )
        for fact in made:
            match fact:
                case encoding.Owned() if fact.values is None or self._reads_members:
                    if fact.values is not None:  # a list's members, facts of their own
                        self._members[(fact.owner, fact.what)] = fact.values
                    self._set_owned(fact.owner, fact.what, fact.fact_type, fact.facts)
                case encoding.Owned():  # a list's members that no rule matches: their values alone
                    self._members[(fact.owner, fact.what)] = fact.values or ()
                    if fact.values:
                        self.listener.changed((OWNER, fact.owner))
                case encoding.Made(fact_type="cluster"):
                    self.cluster_ids[fact.of] = self.session.assert_fact("cluster", fact.props)
                case encoding.Made(fact_type="binding"):
                    fact_id = self.binding_ids[fact.of] = self.session.assert_fact("binding", fact.props)
                    self.binding_keys[fact_id] = fact.of
                    self.binding_facts[fact.of] = fact.props
                case encoding.Made(fact_type=schema.POLICY_SCOPE):
                    self.scope_ids[fact.of] = self.session.assert_fact(POLICY_SCOPE, fact.props)
                case encoding.Made():
                    self.session.assert_fact(fact.fact_type, fact.props)
                case encoding.GroupScope():
                    scope = self.session.assert_fact(GROUP_SCOPE, fact.props)
                    self.group_ids.update(dict.fromkeys(fact.bindings, scope))
                case _:
                    assert_never(fact)
        self.reset()

    def group_names(self, key: str) -> tuple[tuple[str, str], ...]:
        """(AFFINITY or ANTI, NAMESPACE/GROUP) of each workload affinity group of the binding (its binding fact's),
        made once."""
        names = self._group_names.get(key)
        if names is None:
            b = self.binding_facts[key]
            found = ((AFFINITY, b["affinity_group"]), (ANTI, b["anti_affinity_group"]))
            names = self._group_names[key] = tuple((kind, f"{b['namespace']}/{g}") for kind, g in found if g)
        return names

    def counts_as_peer(self, binding: Binding) -> bool:
        """A binding a policy selects, or one whose spec.workloadAffinityGroups the scheduler's indexer
        sees whatever policy made it (another team's, not among the evaluated ones)."""
        return self.policy_of[binding.key] is not None or (
            self.workload_affinity and bool(binding.affinity_group or binding.anti_affinity_group)
        )

    # ------------------------------------------------------------ what an owner has
    def _set_owned(self, owner: str, what: str, fact_type: str, facts: list[dict[str, Any]]) -> None:
        """Make ``facts`` the facts ``owner`` has for ``what``, one batch (Session.place: unchanged ones stay
        asserted, so explanations already given keep their facts; changed ones are retracted and asserted anew)."""
        owned = self._owned.pop((owner, what), None)
        if owned is not None and owned[0] == facts:
            self._owned[(owner, what)] = owned
            return
        if owned is not None or facts:
            self.listener.changed((OWNER, owner))
        if facts:
            self._owned[(owner, what)] = (facts, self.session.place(owned[1] if owned else None, fact_type, {}, facts))
        elif owned is not None:  # owning nothing is not owning (most bindings have no targets or tasks when loaded)
            self.session.retract(owned[1])

    def _set_members(self, owner: str, list_field: str, values: Sequence[str]) -> None:
        """The owner's member facts of ``list_field``: one per value (not made again while the values stay)."""
        values = tuple(values)
        before = self._members.get((owner, list_field))
        if before == values:
            return
        self._members[(owner, list_field)] = values
        if not self._reads_members:  # no rule matches them (lifted rules read the lists as exemptions)
            if before or values:
                self.listener.changed((OWNER, owner))
            return
        self._set_owned(owner, list_field, MEMBER, [encoding.member(owner, list_field, v) for v in values])

    def _tasks(self, binding: Binding) -> None:
        tasks = [encoding.eviction_task(binding, t) for t in binding.eviction_tasks]
        self._set_owned(encoding.binding_owner(binding.key), "tasks", "eviction_task", tasks)

    def _taints(self, cluster: Cluster) -> None:
        taints = [encoding.taint(cluster.name, t) for t in cluster.taints]
        self._set_owned(encoding.cluster_owner(cluster.name), "taints", "taint", taints)

    # ------------------------------------------------------------ what the failover controllers change
    def update_cluster(self, cluster: Cluster) -> None:
        """A cluster's taints changed: retract and assert its taint facts only."""
        before = self.clusters.get(cluster.name)
        self.clusters = {**self.clusters, cluster.name: cluster}
        if before is None or before.labels != cluster.labels:
            self._parts_of.clear()
        self._taints(cluster)

    def update_binding(self, binding: Binding) -> None:
        """A binding's target or eviction tasks changed: replace those facts only."""
        if self._synced.get(binding.key) is binding:  # its facts are this very binding's already
            return
        self._synced[binding.key] = binding
        self._set_members(encoding.binding_owner(binding.key), "clusters", binding.cluster_names)
        self._tasks(binding)

    def update_clocked(self, fact_type: str, facts: Mapping[str, list[dict[str, Any]]]) -> None:
        """The facts of ``fact_type`` the failover controllers' clock gives (their seconds change as it runs: an
        unhealthy workload's timer, a NoExecute taint's age), by owner key: made these, and none for the owners not
        named (those alike stay asserted, as an owner's facts do)."""
        held = self._clocked.get(fact_type, set())
        for owner in held - facts.keys():
            self._set_owned(owner, fact_type, fact_type, [])
        for owner, made in facts.items():
            self._set_owned(owner, fact_type, fact_type, made)
        self._clocked[fact_type] = set(facts)

    def restore(self, binding: Binding) -> None:
        """Put one binding's facts back as ``binding`` has them: targets, tasks, placements."""
        self.update_binding(binding)
        if self.counts_as_peer(binding):
            self.set_placement(binding.key, binding.cluster_names)

    def reset(self) -> None:
        """Put every selected binding's placement facts back on its spec.clusters, as when the store was made."""
        for binding in self.facts.bindings:
            if self.counts_as_peer(binding):
                self.set_placement(binding.key, binding.cluster_names)

    # ------------------------------------------------------------ placements
    def set_placement(self, key: str, clusters: Sequence[str]) -> None:
        """Replace the binding's placement facts: its ``scheduled`` marker retracted first and asserted last,
        around its placements, one batch (Session.place: kept whole, or the placements of the clusters it keeps
        staying asserted where the engine reads them)."""
        b = self.binding_facts[key]
        old = self.placement_ids.pop(key, None)
        deferred = self._deferred.pop(key, None)
        if old is not None or clusters:  # the placements its groups' rules read change
            for group in self.group_names(key):
                if group[0] == ANTI:
                    self.listener.occupy(group[1], self.placed.get(key, ()), clusters)
                else:
                    self.listener.changed(group)
        self.placed[key] = tuple(clusters)
        if old is not None and old[1] is not None:
            self.session.retract(old[1])
        batch_id = old[0] if old is not None else deferred if deferred is not None else self._retracted.pop(key, None)
        ungrouped = self.compiled.ungrouped
        if not clusters or not (b["affinity_group"] or b["anti_affinity_group"] or "placement" in ungrouped):
            if clusters and self.compiled.evicts_by_placement:
                self._deferred[key] = batch_id  # only rules that evict read them: made when they are asked
            elif batch_id is not None:
                self.session.retract(batch_id)
                self._retracted[key] = batch_id
            return  # no rule could match its placements now (saves a third of the engine's work at scale)
        batch, scheduled = self._placement_batch(key, clusters, batch_id)
        marker = None
        if b["affinity_group"] or "scheduled" in ungrouped:
            marker = self.session.assert_fact("scheduled", scheduled)
        self.placement_ids[key] = (batch, marker)

    def _placement_batch(self, key: str, clusters: Sequence[str], batch_id: str | None) -> tuple[str, dict[str, Any]]:
        """The binding's placements on ``clusters`` into the session, as the batch ``batch_id`` (None: a new one);
        the batch's id and the binding's ``scheduled`` fact."""
        named = tuple(clusters)
        parts = self._parts_of.get(named)
        if parts is None:
            if len(self._parts_of) >= _PARTS_KEPT:
                self._parts_of.clear()
            targets = [self.clusters.get(name, name) for name in named]
            parts = self._parts_of[named] = encoding.cluster_parts(self.symbols, targets, self._cluster_parts)
        common, scheduled = encoding.placement_common(self.binding_facts[key])
        return self.session.place(batch_id, "placement", common, parts), scheduled

    def evictions(self) -> Sequence[Decision]:
        """The evict decisions of the rules on the facts as they are: the placements only rules that evict read
        (rules/taint_manager.fr: a binding without workload affinity groups) put on the session first, as they
        stand now. An evaluation without failover makes none of them (10,000 bindings' placements, a third of an
        evaluation of a fleet without workload affinity)."""
        deferred, self._deferred = self._deferred, {}
        for key, batch_id in deferred.items():
            self.placement_ids[key] = (self._placement_batch(key, self.placed[key], batch_id)[0], None)
        return self.session.evictions()
