"""Evaluation, the pipeline end to end: the scheduler over the facts, and with a time, the failover
controllers after it on the same session; simulation through a timeline of events."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import replace

from engine.collector import with_fewer_collections
from engine.detector.dependencies import distribute
from engine.detector.policy import PolicyChooser
from engine.detector.templates import detected, unbuilt_bindings
from engine.errors import Diagnostic, UsageError
from engine.failover.simulate import Simulator
from engine.inputs.events import Event
from engine.inputs.facts import LAST_YEAR, Facts, TimeOutOfRange, parse_time
from engine.inputs.rule_files import RuleSet
from engine.karmada.gates import DEFAULT_CONTROLLERS, Controllers
from engine.karmada.notes import changed_clusters, cluster_controller_note, scheduling_gate_notes
from engine.results import Entry, Eviction, Result
from engine.schedule.registry import program
from engine.schedule.reschedule import HeldPlacement, Trigger, held_placements
from engine.schedule.scheduler import Scheduler


def scheduler_for(
    rules: RuleSet,
    facts: Facts,
    reference: bool = False,
    controllers: Controllers = DEFAULT_CONTROLLERS,
    held: bool = True,
    explanations: bool = True,
    share: bool | None = None,
) -> Scheduler:
    """A scheduler with the facts loaded, on the program of the rules and the facts' own policies;
    ``reference``: every rule evaluated inside durable-rules, without the indexed joins; ``share``: bindings
    alike share one policy choice, one filter result, one attempt (None: on, and off with ``reference``, which
    then decides every binding on its own); ``controllers``:
    the controller manager's flags (its resource detector's PropagationPolicyPreemption and WorkloadAffinity gates);
    ``held``: a binding that holds an older placement than its Lazy policy's is scheduled by it, as
    Karmada's scheduler does (off: by the policy as it is now, as ``--reschedule all`` shows);
    ``explanations``: placements keep what explains them (off: their decisions are freed as it goes)."""
    shared = not reference if share is None else share
    # the detector's event filter: the templates it never sees are never bound (reserved and skipped namespaces)
    bindings, not_propagated = detected(facts.bindings, controllers.skipped_namespaces)
    if not_propagated:
        facts = replace(facts, bindings=bindings)
    notes = scheduling_gate_notes(controllers, (*facts.policies, *rules.policies), facts)
    if facts.shown_clusters and not controllers.failover:  # no ClusterTaintPolicy controller: taints as shown
        facts = replace(facts, clusters=facts.shown_clusters, shown_clusters=())
    changed = changed_clusters(facts)
    if any(c.controller_changes for c in changed):
        notes.append(cluster_controller_note(changed))
    if not controllers.multiple_pod_templates and any(b.components for b in facts.bindings):
        # the scheduler's gate off: spec.components are not read (pkg/scheduler/core common.go, util.go)
        facts = replace(facts, bindings=tuple(replace(b, components=()) if b.components else b for b in facts.bindings))
    # a policy of the rules replaces the snapshot's copy of the same policy (NAMESPACE/NAME): under review
    by_name = {p.name.value: p for p in facts.policies} | {p.name.value: p for p in rules.policies}
    policies = tuple(by_name.values())
    # one policy choice for the held placements and the scheduler (among these policies, not the variants)
    chooser = PolicyChooser(policies, controllers.policy_preemption, share=shared)
    holding: dict[str, HeldPlacement] = {}
    if held and any(p.lazy for p in policies):
        holding = held_placements(facts.bindings, lambda b: chooser.choose(b).policy)
    variants = {h.variant.name.value: h.variant for h in holding.values()}
    policies += tuple(variants[name] for name in sorted(variants))
    # the detector's part, before the scheduler runs: the policy that claims each binding's workload
    choices = {b.key: chooser.choose(b) for b in facts.bindings}
    unbuilt = unbuilt_bindings(facts, choices, controllers.priority_based_scheduling)
    if unbuilt:  # the detector could not build their bindings: never scheduled
        gone = {n.binding for n in unbuilt}
        facts = replace(facts, bindings=tuple(b for b in facts.bindings if b.key not in gone))
        choices = {k: c for k, c in choices.items() if k not in gone}
        not_propagated = tuple(sorted((*not_propagated, *unbuilt), key=lambda n: n.binding))
    scheduler = Scheduler(
        program(policies, tuple(rules.rules), reference),
        policies,
        facts,
        choices,
        share=shared,
        workload_affinity=controllers.workload_affinity,
        held=holding,
        explanations=explanations,
    )
    scheduler.gate_warnings = notes
    scheduler.not_propagated = not_propagated
    scheduler.changed_clusters = changed
    scheduler.priority_based = controllers.priority_based_scheduling
    return scheduler


def _arguments(rules: object, facts: object, controllers: object) -> None:
    """The public functions' arguments are what they say they are, or a UsageError naming the wrong one."""
    for name, value, kind, source in (
        ("rules", rules, RuleSet, "load_rules()"),
        ("facts", facts, Facts, "load_facts()"),
        ("controllers", controllers, Controllers, "Controllers.parse()"),
    ):
        if not isinstance(value, kind):
            raise UsageError(f"{name}: expected a {kind.__name__} from {source}, found {type(value).__name__}")


def evaluation_time(now: object, name: str = "now") -> dt.datetime | None:
    """``now`` as an aware datetime: one already, or an RFC 3339 string; UsageError for anything else,
    naming the argument (``name``: ``now``, or ``--now`` on the command line)."""
    if now is None:
        return None
    if isinstance(now, str):
        try:
            return parse_time(now)
        except TimeOutOfRange as exc:
            raise UsageError(f"{name}: {exc}") from None
        except ValueError:
            raise UsageError(f"{name}: {now!r} is not an RFC 3339 time such as 2026-01-02T03:04:05Z") from None
    if not isinstance(now, dt.datetime):
        raise UsageError(f"{name}: expected an aware datetime or an RFC 3339 string, found {type(now).__name__}")
    if now.tzinfo is None:
        raise UsageError(f"{name}: a datetime with a time zone (a naive one is ambiguous), e.g. 2026-12-02T10:00:00Z")
    if now.year > LAST_YEAR:
        raise UsageError(f"{name}: past the year {LAST_YEAR}, beyond the times fleetrules computes with")
    return now


def _share_argument(share: object) -> None:
    if share is not None and not isinstance(share, bool):
        raise UsageError(f"share: expected True, False or None, found {type(share).__name__}")


def _progress_argument(progress: object) -> None:
    if progress is not None and not callable(progress):
        raise UsageError(f"progress: expected a function of the number of steps done, found {type(progress).__name__}")


@with_fewer_collections(off=True)
def evaluate(
    rules: RuleSet,
    facts: Facts,
    now: dt.datetime | str | None = None,
    reschedule_all: bool = False,
    controllers: Controllers = DEFAULT_CONTROLLERS,
    reference: bool = False,
    progress: Callable[[int], None] | None = None,
    explanations: bool = True,
    share: bool | None = None,
) -> Result:
    """Place every binding the rules' policies select, as Karmada's scheduler would: the bindings it
    would run (not scheduled yet, placement or replicas changed, …; engine.schedule.reschedule) are
    placed anew, the others keep their clusters; ``reschedule_all`` places every one anew.

    With ``now``, also run the failover controllers at that time on the same session: the
    evictions they make, with each binding's clusters afterwards and the labels injected there;
    ``controllers`` are the controller manager's flags that change failover. ``reference`` evaluates every
    rule inside durable-rules, without the indexed joins (slow; the same result, which tests check), and
    decides each binding on its own; ``share`` turns sharing among bindings alike on or off by itself (None: on,
    off with ``reference``), so that a difference from the reference can be pinned on the engine or on sharing;
    ``progress`` hears how many bindings are placed (for a progress bar); ``explanations``: each placement
    keeps the rules and facts behind its decisions, for ``Placement.explanations`` (off: an empty mapping,
    and an evaluation of a large fleet holds far less)."""
    _arguments(rules, facts, controllers)
    _progress_argument(progress)
    _share_argument(share)
    now = evaluation_time(now)
    if not isinstance(explanations, bool):
        raise UsageError(f"explanations: expected True or False, found {type(explanations).__name__}")
    scheduler = scheduler_for(rules, facts, reference is True, controllers, not reschedule_all, explanations, share)
    try:
        placements = scheduler.schedule_all(reschedule_all, progress)
        evictions: tuple[Eviction, ...] = ()
        notes: list[Diagnostic] = []
        if now is not None:
            scheduler.store.reset()
            simulator = Simulator(scheduler, now, controllers)
            notes = simulator.warnings
            simulator.step()
            evictions = simulator.evictions()
            # each binding as it stands at ``now``: an evicted one where the scheduler placed it afterwards,
            # with its open tasks and Works
            after, states = simulator.after_failover, simulator.states()
            placements = tuple(
                replace(
                    replace(after[p.binding], previous=p.previous, trigger=Trigger.FAILOVER)
                    if p.binding in after
                    else p,
                    at_now=states.get(p.binding),
                )
                for p in placements
            )
        # the dependencies distributor, on the bindings as they stand
        bindings = {b.key: b for b in scheduler.facts.bindings}
        placements, attached = distribute(placements, bindings, scheduler.binding_policy, facts.workloads)
    finally:
        scheduler.close()
    # a template bound as a dependency is no binding no policy selects
    scheduler.attached_keys = frozenset(a.binding for a in attached)
    warnings = (*facts.warnings, *scheduler.warnings(), *notes)
    return Result(placements, evictions, scheduler.unmatched, now, warnings, scheduler.not_propagated, attached)


@with_fewer_collections()
def simulate(
    rules: RuleSet,
    facts: Facts,
    start: dt.datetime,
    events: Sequence[Event],
    warn: Callable[[Diagnostic], None] | None = None,
    controllers: Controllers = DEFAULT_CONTROLLERS,
    reference: bool = False,
    progress: Callable[[int], None] | None = None,
    share: bool | None = None,
    flush: Callable[[Sequence[Entry]], None] | None = None,
) -> tuple[Entry, ...]:
    """Failover through time from ``start``: the timeline of what the events and controllers did;
    ``warn`` hears what will not happen as the policies say (a kind without a health interpreter), and
    after the run what an evaluation warns of (bindings no policy selects, notes on bindings it scheduled);
    ``progress`` hears how many of ``len(events) + 1`` steps are done (for a progress bar); ``reference`` and
    ``share`` as for ``evaluate``. ``flush``: hears the timeline in pieces as it is made, in order, and then
    none of it is kept or returned (a long timeline is written as it comes, not held whole)."""
    _arguments(rules, facts, controllers)
    _progress_argument(progress)
    _share_argument(share)
    if not isinstance(start, dt.datetime) or start.tzinfo is None:
        raise UsageError(f"start: expected an aware datetime, found {start!r}")
    if isinstance(events, (str, bytes)) or not isinstance(events, Sequence):
        raise UsageError(f"events: expected a list of Event from load_events(), found {type(events).__name__}")
    strays = [e for e in events if not isinstance(e, Event)]
    if strays:
        raise UsageError(f"events: expected Event objects from load_events(), found {type(strays[0]).__name__}")
    if flush is not None and not callable(flush):
        raise UsageError(f"flush: expected a function of a list of Entry, found {type(flush).__name__}")
    if warn is not None and not callable(warn):
        raise UsageError(f"warn: expected a function of a Diagnostic, found {type(warn).__name__}")
    # a timeline names rules and clusters, and explains no placement: nothing of one is kept for explanations
    scheduler = scheduler_for(rules, facts, reference is True, controllers, explanations=False, share=share)
    try:
        simulator = Simulator(scheduler, start, controllers)
        for d in simulator.warnings:
            if warn is not None:
                warn(d)
        simulator.check(events)
        simulator.schedule_triggered()
        entries = simulator.run(events, progress, flush=flush)
        # after the run: the loops it listed once, what it said of the bindings it scheduled too
        for d in (*simulator.loop_warnings(), *scheduler.warnings()):
            if warn is not None:
                warn(d)
        return entries
    finally:
        scheduler.close()
