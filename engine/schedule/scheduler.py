"""The scheduler: bindings placed one at a time, as Karmada's scheduler does.

The backend does the matching: as facts arrive, rules fire and record rejections and preferences per binding.
The scheduler is in parts: the session's facts (engine.schedule.store: loaded, placed and changed there alone),
feasibility (engine.schedule.feasibility: the filter stage, each policy's shared result and each binding's overlay
on it), the kept unschedulable bindings of a sweep (engine.schedule.waiting), and here what the rules cannot
express: the policy each binding is decided by (the detector's choice, given; a held placement's variant), scores
(sums, normalised, ClusterLocality), the select stage (ordering, spread limits; engine.schedule.spread), replica
assignment (engine.schedule.replicas), clusterAffinities terms tried in order, and telling the store where each
binding went, so that later bindings see it (as Karmada's scheduler cache does: "bindings assigned in the same round
count with their newest
assignment").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any
from weakref import WeakKeyDictionary

from engine.backend import Decision, Program, Session
from engine.codes import Code
from engine.compile import encoding
from engine.detector.policy import Choice
from engine.errors import Diagnostic, listed, warning
from engine.inputs.facts import Binding, Cluster, Facts
from engine.results import SHOWN_NAMES, NotPropagated, Placement
from engine.schedule.explain import Explainer, Explanations
from engine.schedule.feasibility import Feasibility, Shared, fit_error
from engine.schedule.generic import Attempt, Chosen, GenericScheduling, request_key
from engine.schedule.plan import Plan
from engine.schedule.queue import order_notes, queue_order, queue_priority
from engine.schedule.replicas import (
    Request,
    SchedulingError,
    Strategy,
    assign,
    assign_overflow,
)
from engine.schedule.reschedule import (
    HELD_PLACEMENT,
    HELD_SCHEDULED,
    LAZY,
    UNPROPAGATED,
    HeldPlacement,
    Trigger,
    held_by_lazy_activation,
    is_workload,
    requeued,
    reschedule_required,
    schedules_with_held_placement,
    trigger,
    waits_for_the_workload,
)
from engine.schedule.spread import SelectError
from engine.schedule.store import FactStore
from engine.schedule.views import Constant
from engine.schedule.waiting import Waiting
from engine.syntax import ast
from engine.syntax.schema import MEMBER


class Scheduler(GenericScheduling):
    """One evaluation: a backend session over the facts, and the placements decided on it.

    ``choices``: the detector's choice for each binding (engine.detector.policy, made before). The facts are
    loaded as it is made (``store``), ``decide`` places one binding (and tells the store), ``close`` ends the
    session; the failover controllers change facts through ``store``."""

    def __init__(
        self,
        program: Program,
        policies: Sequence[ast.Policy],
        facts: Facts,
        choices: Mapping[str, Choice],
        share: bool = True,
        workload_affinity: bool = True,
        held: Mapping[str, HeldPlacement] | None = None,
        explanations: bool = True,
    ) -> None:
        self.program = program
        # each placement's explanations (the decisions behind each cluster, for `explain`); off, a placement
        # keeps none of its binding's decisions, and they are freed as the evaluation goes on
        self.explanations = explanations
        # the WorkloadAffinity gate: off, the detector records no groups on bindings (pkg/detector/detector.go)
        # and the scheduler's indexer keeps none (pkg/scheduler/indexer.go), so no workload term acts
        self.workload_affinity = workload_affinity
        self.gate_warnings: list[Diagnostic] = []  # what a feature gate off turns off (engine.pipeline.scheduler_for)
        # the clusters the snapshot shows about to change (the cluster controller's taints, a ClusterTaintPolicy's):
        # each requeues the bindings its affinity matches (engine.schedule.reschedule.requeued)
        self.changed_clusters: tuple[Cluster, ...] = ()
        self.priority_based = True  # the PriorityBasedScheduling gate (engine.pipeline.scheduler_for)
        # the bindings the dependencies distributor made (engine.detector.dependencies): not the scheduler's
        self.attached_keys: frozenset[str] = frozenset()
        # the templates the detector never binds (engine.detector.templates, by engine.pipeline.scheduler_for)
        self.not_propagated: tuple[NotPropagated, ...] = ()
        # bindings alike share one policy choice, one select stage, one whole attempt; off, each binding is
        # decided on its own (the reference mode, which tests compare with)
        self.share = share
        # binding key → the policy as the scheduler reads it for a binding that holds an older placement
        # (lazy activation); its variant is among ``policies``, and chosen for no other binding
        self.held: Mapping[str, HeldPlacement] = held or {}
        self._shown = {h.variant.name.value: h.policy.name.value for h in self.held.values()}
        self.compiled = program.compiled
        self.symbols = program.compiled.symbols
        self.facts = facts
        self.policies = {p.name.value: p for p in policies}
        # binding key → how its policy was chosen, where a claim decided, and what else is said of it
        self.notes: dict[str, str] = {key: choice.note for key, choice in choices.items() if choice.note}
        self.session: Session = program.session(explanations)
        # binding key → the policy it is decided by (None: no policy): the one chosen, or for a binding that holds an
        # older placement its variant with that placement (``held``)
        self.binding_policy: dict[str, ast.Policy | None] = {
            key: self.held[key].variant if key in self.held else choice.policy for key, choice in choices.items()
        }
        self.candidates = tuple(c.name for c in facts.clusters if not c.deleting)
        # resilience sweeps: a binding left unschedulable is not decided again while its own facts, its groups'
        # placements and its policy's feasible clusters stay as they were (failures only take clusters away),
        # so it stays unschedulable (its FitError message, which sweeps do not show, may count fewer reasons)
        self.keep_unschedulable = False
        # the bindings left unschedulable (keep_unschedulable), and what each waits on
        self.waiting = Waiting(lambda policy, workload: self.feasibility.feasible_now(policy, workload))
        # the facts in the session: loaded (at once), placed and changed there alone
        try:
            self.store = FactStore(
                self.session,
                self.compiled,
                facts,
                list(self.policies.values()),
                self.binding_policy,
                self.waiting,
                frozenset(self.held),
                workload_affinity,
            )
        except BaseException:
            self.session.close()
            raise
        # the rules of the rule set read facts that change in a sweep other than a binding's own: what an
        # unschedulable binding waits on is not known, and none is kept
        changing = {"placement", "scheduled", "taint", "eviction_task", "unhealthy_workload", MEMBER}
        self._unkeepable = bool(self.compiled.ungrouped & changing)
        # the filter stage: each policy's shared result, each binding's overlay on it
        self.feasibility = Feasibility(self.session, self.compiled, self.store, self.policies, self.candidates)
        # what bindings alike chose on a shared result (Scheduler._attempt, Scheduler._choose), kept while it is
        self._chosen: WeakKeyDictionary[Shared, Chosen] = WeakKeyDictionary()
        self._plans: dict[str, Plan] = {}
        self._estimates: dict[tuple[Any, bool], dict[str, int]] = {}
        self._uniformity: dict[tuple[Any, bool], bool] = {}
        self.explainer = Explainer(program, self.session)

    def close(self) -> None:
        self.session.close()

    # ------------------------------------------------------------ decisions

    def decide(self, binding: Binding, why: str = "") -> Placement:
        """Schedule one binding: for each clusterAffinities term from the observed one, filter (the
        engine's decisions), score, select and assign; the first term that succeeds wins. When every
        term fails, the first failure stands: a FitError empties spec.clusters, any other error
        keeps them (karmada scheduler.go scheduleResourceBindingWithClusterAffinities). ``why``: the
        reason the scheduler runs it (engine.schedule.reschedule.Trigger), recorded on the placement."""
        policy = self.binding_policy[binding.key]
        assert policy is not None
        return self._decide(binding, policy, why)

    # ------------------------------------------------------------ unschedulable bindings kept (resilience sweeps)
    def decide_unless_kept(self, binding: Binding, why: str = "") -> Placement:
        """``decide``; with ``keep_unschedulable``, a binding left unschedulable whose room nothing has grown since
        keeps that placement (``kept``), and one left unschedulable now is kept (engine.schedule.waiting)."""
        if not self.keep_unschedulable:
            return self.decide(binding, why)
        kept = self.kept(binding)
        if kept is not None:
            return kept
        self.waiting.forget(binding.key)
        placement = self.decide(binding, why)
        policy = self.binding_policy[binding.key]
        if placement.unschedulable and not placement.clusters and not self._unkeepable and policy is not None:
            owner = encoding.binding_owner(binding.key)
            groups = self.store.group_names(binding.key)
            self.waiting.keep(binding, policy.name.value, is_workload(binding), placement, owner, groups)
        return placement

    def kept(self, binding: Binding) -> Placement | None:
        """With ``keep_unschedulable``: the placement of this very binding when it was left unschedulable, if
        nothing since has given it room (engine.schedule.waiting); else None."""
        return self.waiting.kept(binding)

    def kept_keys(self, bindings: Mapping[str, Binding]) -> set[str]:
        """The keys whose binding in ``bindings`` ``kept`` would answer for, found at once: a sweep's
        unschedulable bindings are asked about at every step of every scenario."""
        return self.waiting.kept_keys(bindings)

    def _decide(self, binding: Binding, policy: ast.Policy, why: str) -> Placement:
        name = self._shown.get(policy.name.value, policy.name.value)
        held = binding.key in self.held
        if held or (why != Trigger.ALL and schedules_with_held_placement(binding, policy)):
            note = HELD_SCHEDULED if held else HELD_PLACEMENT
            said = self.notes.get(binding.key)  # said in the warnings once, after what was said of it before
            if said is None:
                self.notes[binding.key] = note
            elif note not in said:
                self.notes[binding.key] = f"{said}; {note}"
        own, alike = self.feasibility.binding_decisions(binding)
        terms = self.feasibility.terms(policy)
        # getAffinityIndex: from the observed term; a manual reschedule starts again at the first
        # (scheduler.go scheduleResourceBindingWithClusterAffinities, util.RescheduleRequired)
        observed = binding.observed_affinity_name
        rescheduled = reschedule_required(binding)
        start = terms.index(observed) if observed in terms and not rescheduled else 0
        plan = self._plan(policy)
        first: Attempt | None = None
        for term in terms[start:]:
            attempt = self._attempt(binding, plan, term, own, alike, rescheduled)
            if attempt.error is None:
                break
            first = first or attempt
        else:
            assert first is not None
            attempt = first
        selected = attempt.selected if attempt.error is None or attempt.fit_error else binding.cluster_names
        self.store.set_placement(binding.key, selected)
        binding_id = self.store.binding_ids[binding.key]
        applied = attempt.applied
        return Placement(
            binding=binding.key,
            policy=name,
            clusters=selected,
            feasible=attempt.feasible,
            scores=attempt.scores,
            rejected=attempt.rejected,
            unschedulable=attempt.error is not None,
            message=attempt.error or "",
            previous=binding.cluster_names,
            affinity_term=attempt.term,
            trigger=why,
            explanations=Explanations(self.explainer, applied, binding_id) if self.explanations else {},
            replicas=attempt.replicas if attempt.error is None else binding.replicas_by_cluster,
            components=(
                tuple((c.name, c.replicas) for c in binding.components)
                if attempt.error is None and len(binding.components) > 1 and self._multi_template(binding)
                else ()
            ),
        )

    def _attempt(
        self,
        binding: Binding,
        plan: Plan,
        term: str | None,
        own: list[Decision],
        alike: tuple[str, int] | tuple[()] | None,
        rescheduled: bool,
    ) -> Attempt:
        """Filter, score, select and assign for one clusterAffinities term (generic_scheduler.go Schedule).
        ``own``: the binding's decisions and its group scope's that apply to it; ``alike``: what the bindings
        of its group scope that have them all share (Feasibility.binding_decisions), None when they differ;
        ``rescheduled``: a manual reschedule asked of it (util.RescheduleRequired), found once for every term."""
        policy = self.binding_policy[binding.key].name.value  # type: ignore[union-attr]
        # AssignReplicas divides replicas only for a workload of one pod template: a multi-component one goes, as a
        # whole, to every selected cluster
        workload = is_workload(binding)
        divides = (binding.replicas > 0 or binding.requirements is not None) and len(binding.components) <= 1
        shared = self.feasibility.shared(policy, term, workload)
        if self.share and alike is not None and not binding.clusters:  # it decides as any binding alike
            key = (
                alike,
                workload,
                divides,
                request_key(binding),
                self._multi_template(binding),
                binding.uid if plan.strategy is not Strategy.DUPLICATED else None,
                rescheduled,
                id(plan),
            )
            attempts = self._chosen_on(shared).attempts
            found = attempts.get(key)
            if found is not None:
                return found
            attempt = attempts[key] = self._attempt_anew(binding, plan, shared, own, workload, divides, rescheduled)
            return attempt
        return self._attempt_anew(binding, plan, shared, own, workload, divides, rescheduled)

    def _attempt_anew(
        self,
        binding: Binding,
        plan: Plan,
        shared: Shared,
        own: list[Decision],
        workload: bool,
        divides: bool,
        rescheduled: bool,
    ) -> Attempt:
        term, policy = shared.term, self.binding_policy[binding.key].name.value  # type: ignore[union-attr]
        rejected, feasible, applied, mine = self.feasibility.of(binding, shared, own)
        scores = self._scores(shared, applied, mine, feasible, binding.cluster_names)
        # only explanations read the decisions applied: without, an attempt shared by bindings alike does not hold
        # them (a group's decisions, one per cluster its members hold)
        attempt = Attempt(term, feasible, scores, rejected, applied if self.explanations else ())
        if not feasible:
            attempt.error, attempt.fit_error = fit_error(len(self.store.clusters), rejected), True
            return attempt
        if plan.strategy is Strategy.DUPLICATED and not (plan.spreads and not plan.ignore_spread):
            # the common case, without building per-cluster structures: every feasible cluster
            if divides and binding.replicas == 0:
                attempt.selected, attempt.replicas = (), {}  # zero-replica targets are dropped
            else:
                attempt.selected = tuple(feasible)
                attempt.replicas = Constant(feasible, binding.replicas if divides else 0)
            return attempt
        request = Request(binding.replicas, divides, binding.clusters, binding.uid, rescheduled)
        try:
            tiers = self.feasibility.tiers(policy, term)
            if plan.duplicated and set(plan.spreads) == {"cluster"}:
                chosen = self._first_clusters(binding, plan, feasible, scores)
            else:
                chosen = self._choose(binding, plan, shared, feasible, scores, tiers)
            if tiers is None:
                targets = assign(plan.strategy, chosen, request, plan.weights)
            else:
                targets = assign_overflow(plan.strategy, chosen, request, plan.weights)
        except SelectError as exc:
            attempt.error = f"failed to select clusters: {exc}"
            return attempt
        except SchedulingError as exc:
            attempt.error = f"failed to assign replicas: {exc}"
            return attempt
        attempt.selected, attempt.replicas = tuple(targets), targets
        return attempt

    def schedule_all(
        self, reschedule_all: bool = False, progress: Callable[[int], None] | None = None
    ) -> tuple[Placement, ...]:
        """Every binding a policy selects, in the order of the scheduler's queue (``queue``): placed when the
        scheduler would run it (engine.schedule.reschedule), or all of them with ``reschedule_all``; settled
        otherwise; returned in NAMESPACE/NAME order. ``progress`` hears how many bindings are done, every 1,000."""
        out: dict[str, Placement] = {}
        order = self.queue()
        # each policy's last binding: once it is scheduled, the policy's shared results are let go (made again if a
        # controller asks after), so that a control plane of many policies holds one policy's at a time
        last = {policy.name.value: i for i, b in enumerate(order) if (policy := self.binding_policy[b.key])}
        for done, binding in enumerate(order, 1):
            if progress is not None and done % 1000 == 0:
                progress(done)
            policy = self.binding_policy[binding.key]
            if policy is None:
                continue
            why = Trigger.ALL if reschedule_all else self.why_run(binding, policy)
            out[binding.key] = self.settled(binding, policy) if why is None else self.decide(binding, why)
            if last[policy.name.value] == done - 1 and len(last) > 1:
                self.feasibility.release(policy.name.value)
        self._order_notes(out)
        return tuple(out[b.key] for b in self.facts.bindings if b.key in out)

    def queue(self) -> list[Binding]:
        """The bindings in the order of the scheduler's queue (engine.schedule.queue)."""
        return queue_order(self.facts.bindings, self.queue_priority)

    def queue_priority(self, binding: Binding) -> int:
        return queue_priority(
            binding, self.binding_policy.get(binding.key), self.facts.priority_classes, self.priority_based
        )

    def _order_notes(self, placed: Mapping[str, Placement]) -> None:
        self.gate_warnings += order_notes(placed, self.store.binding_facts, self.facts.bindings, self.queue_priority)

    def why_run(self, binding: Binding, policy: ast.Policy) -> Trigger | None:
        """Why the scheduler runs ``binding`` now (engine.schedule.reschedule), or because a `rule` of the
        rule set decides about it; None when it is settled."""
        why = trigger(binding, policy, self.store.clusters)
        if why is None and self.feasibility.decided_by_rules(binding, policy):
            why = Trigger.RULES
        if why is None and requeued(binding, policy, self.changed_clusters):
            why = Trigger.CLUSTER_CHANGED
        return why

    def settled(self, binding: Binding, policy: ast.Policy) -> Placement:
        """A binding the scheduler would not run: it keeps its clusters (their placement facts stay)."""
        return Placement(
            settled_why=(
                UNPROPAGATED
                if waits_for_the_workload(binding, policy)
                else LAZY
                if binding.key in self.held or held_by_lazy_activation(binding, policy)
                else ""
            ),
            binding=binding.key,
            policy=self._shown.get(policy.name.value, policy.name.value),
            clusters=binding.cluster_names,
            feasible=(),
            scores={},
            rejected={},
            unschedulable=False,
            previous=binding.cluster_names,
            # the term the status records; none for a policy without clusterAffinities (nothing was patched)
            affinity_term=(binding.observed_affinity_name or None) if self._has_terms(policy) else None,
            settled=True,
            replicas=binding.replicas_by_cluster,
        )

    def _has_terms(self, policy: ast.Policy) -> bool:
        return self.feasibility.terms(policy) != [None]

    @property
    def evaluated(self) -> tuple[ast.Policy, ...]:
        """The policies evaluated, without the variants of held placements (``held``)."""
        return tuple(p for name, p in self.policies.items() if name not in self._shown)

    @property
    def unmatched(self) -> tuple[str, ...]:
        """The bindings no policy selects (a Namespace is not one: the namespace sync controller propagates every
        namespace to every cluster, selected or not)."""
        return tuple(
            b.key
            for b in self.facts.bindings
            if self.binding_policy[b.key] is None
            and b.kind != "Namespace"
            and not b.attached
            and b.key not in self.attached_keys
        )

    def warnings(self) -> tuple[Diagnostic, ...]:
        out = []
        live = [c for c in self.facts.clusters if not c.deleting]
        unreported = [c.name for c in live if c.api_enablements is None]
        if unreported and any(b.api_version and self.binding_policy.get(b.key) for b in self.facts.bindings):
            names = listed(unreported, 5)
            message = (
                f"clusters without status.apiEnablements ({names}) are taken to serve every API; Karmada's "
                "APIEnablement filter places nothing new on a cluster whose APIs it does not know"
            )
            out.append(warning(message, subject="clusters", code=Code.EVALUATION))
        out += self.gate_warnings
        unmatched = set(self.unmatched)
        # a control plane's dump holds thousands of templates no policy selects (RBAC, CRDs, Services, …): beyond a
        # few, they are counted by kind in one warning; those a note explains are said each
        plain = [b for b in self.facts.bindings if b.key in unmatched and not self.notes.get(b.key)]
        summarized = len(plain) > SHOWN_NAMES
        if summarized:
            out.append(unselected_warning(plain))
        for binding in self.facts.bindings:
            key, note = binding.key, self.notes.get(binding.key)
            if key in unmatched and (note or not summarized):
                out.append(
                    warning(
                        f"no policy selects binding {key}" + (f" ({note})" if note else ""),
                        subject=key,
                        code=Code.EVALUATION,
                    )
                )
            elif note and key not in unmatched:
                out.append(warning(f"binding {key}: {note}", subject=key, code=Code.EVALUATION))
        return tuple(out)


def unselected_warning(bindings: Sequence[Binding]) -> Diagnostic:
    """The bindings no policy selects, counted by kind with the first names of each."""
    by_kind: dict[str, list[str]] = {}
    for b in bindings:
        by_kind.setdefault(b.kind, []).append(b.key)
    kinds = sorted(by_kind.items(), key=lambda item: (-len(item[1]), item[0]))
    said = "; ".join(f"{kind} {len(keys)} ({listed(keys, SHOWN_NAMES)})" for kind, keys in kinds)
    return warning(f"no policy selects {len(bindings)} bindings: {said}", subject="bindings", code=Code.EVALUATION)
