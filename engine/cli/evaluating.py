"""The verbs of evaluating rules over facts: ``eval``, ``explain``, ``simulate`` and the HTML ``report``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import click

from engine.cli import inputs, options
from engine.cli.app import EXIT_PROBLEMS, guarded, main, package_version, progress, say, stream, warn
from engine.cli.formats import EVAL, SIMULATE, Evaluated, Simulated
from engine.cli.output import html_page, write_report
from engine.errors import UsageError, did_you_mean
from engine.pipeline import evaluate
from engine.pipeline import simulate as run_simulation
from engine.render.results import explain_text
from engine.render.timeline import TimelineWriter
from engine.results import Result
from engine.review.diff import compare

# what `eval --fail-on` can fail on: each, whether the result has one
EVAL_GATES: dict[str, Callable[[Result], bool]] = {
    "unschedulable": lambda r: any(p.unschedulable for p in r.placements),
    "not-propagated": lambda r: bool(r.not_propagated),
    "evicted": lambda r: bool(r.evictions),
}


@main.command("eval")
@click.argument("rules", nargs=-1, required=True, type=click.Path())
@options.FACTS
@options.NOW
@options.RESCHEDULE
@EVAL.option()
@options.REJECTIONS
@click.option(
    "--fail-on",
    "fail_on",
    default="",
    help=f"Exit 1 if the answer has any of these: {','.join(EVAL_GATES)} (a binding without a cluster, a template "
    "never bound, an eviction).",
)
@options.REPORT
@options.evaluating
@guarded
def eval_command(
    rules: Sequence[str],
    facts: Sequence[str],
    now: str | None,
    reschedule: str,
    output: str,
    rejections: str,
    fail_on: str,
    report_path: str | None,
) -> None:
    """Evaluate rule files (and PropagationPolicy YAML) over Karmada facts: placements and evictions.

    \b
    Examples:
      fleetrules eval policies/ --facts snapshot.yaml
      kubectl get cluster,deploy,pp -A -o yaml | fleetrules eval policies/ --facts - -o json
      fleetrules eval snapshot.yaml --fail-on unschedulable
    """
    gates = options.gates(fail_on, list(EVAL_GATES))
    result = inputs.evaluated(rules, facts, now, reschedule, explanations=False)
    groups = inputs.cluster_groups()
    write_report(report_path, lambda: html_page(package_version(), result=result, groups=groups))
    EVAL.write(output, Evaluated(result, rejections == "all"))
    if any(EVAL_GATES[g](result) for g in gates):
        sys.exit(EXIT_PROBLEMS)


@main.command()
@click.argument("rules", nargs=-1, required=True, type=click.Path())
@options.FACTS
@options.NOW
@options.RESCHEDULE
@click.option("--binding", required=True, help="The binding, as NAMESPACE/NAME.")
@click.option("--cluster", required=True, help="The cluster whose decision to explain.")
@options.evaluating
@guarded
def explain(
    rules: Sequence[str], facts: Sequence[str], now: str | None, reschedule: str, binding: str, cluster: str
) -> None:
    """Show the rules and facts behind one binding's decision about one cluster."""
    result = inputs.evaluated(rules, facts, now, reschedule, explanations=True)
    try:
        placement = result.placement(binding)
    except KeyError:
        skipped = next((n for n in result.not_propagated if n.binding == binding), None)
        if skipped is not None:
            raise UsageError(f"--binding: {binding} is not propagated: {skipped.message}") from None
        known = [p.binding for p in result.placements]
        hint = did_you_mean(binding, known) or (f"; known: {', '.join(known)}" if known else "")
        raise UsageError(f"--binding: no placed binding {binding!r}{hint}") from None
    evictions = [e for e in result.evictions if e.binding == binding and e.cluster == cluster]
    say(explain_text(placement, cluster, evictions), nl=False)


@main.command()
@click.argument("rules", nargs=-1, required=True, type=click.Path())
@options.FACTS
@click.option("--events", "events", required=True, type=click.Path(), help="The timed events (YAML).")
@SIMULATE.option()
@options.REPORT
@options.evaluating
@guarded
def simulate(rules: Sequence[str], facts: Sequence[str], events: str, output: str, report_path: str | None) -> None:
    """Step failover through time: evictions, placements, deletions and injected labels."""
    rule_set, loaded = inputs.rules_and_facts(rules, facts)
    start, timeline = inputs.events(events)
    for d in loaded.warnings:
        warn(d)
    flags, reference = options.controllers(), options.reference()
    # without a report, the timeline is written as it is made, never held whole (the report needs all of it)
    writer = TimelineWriter(output, start) if report_path is None else None
    flush = None if writer is None else (lambda entries: stream([writer.piece(entries)]))
    with progress(inputs.worth_a_bar(loaded, len(timeline) + 1), "steps") as advance:
        entries = run_simulation(rule_set, loaded, start, timeline, warn, flags, reference, advance, flush=flush)
    if writer is not None:
        stream([writer.end()])
        return
    initial = {b.key: b.cluster_names for b in loaded.bindings}
    write_report(report_path, lambda: html_page(package_version(), timeline=(entries, start, initial)))
    SIMULATE.write(output, Simulated(entries, start))


@main.command()
@click.argument("rules", nargs=-1, required=True, type=click.Path())
@options.FACTS
@options.NOW
@options.RESCHEDULE
@click.option("--events", type=click.Path(), help="Also step failover through these timed events (the timeline).")
@click.option("--base", "base", multiple=True, type=click.Path(), help="Also show the change from these old rules.")
@click.option("-o", "--output", "report_path", required=True, type=click.Path(dir_okay=False), help="The HTML file.")
@options.evaluating
@guarded
def report(
    rules: Sequence[str],
    facts: Sequence[str],
    now: str | None,
    reschedule: str,
    events: str | None,
    base: Sequence[str],
    report_path: str,
) -> None:
    """Write one self-contained HTML page: the placement matrix, the failover timeline (--events) and the
    change from older rules (--base), to look at rather than read."""
    rule_set, loaded = inputs.rules_and_facts(rules, facts)
    when, again, flags, reference = options.now(now), reschedule == "all", options.controllers(), options.reference()
    result = evaluate(rule_set, loaded, when, again, flags, reference=reference)
    timeline = None
    if events is not None:
        start, planned = inputs.events(events)
        entries = run_simulation(rule_set, loaded, start, planned, warn, flags, reference)
        timeline = (entries, start, {b.key: b.cluster_names for b in loaded.bindings})
    changes = None
    if base:
        old = evaluate(inputs.rules(base), loaded, when, again, flags, reference=reference)
        changes = compare(old, result, 0)
    groups = inputs.cluster_groups()
    write_report(
        report_path, lambda: html_page(package_version(), result, timeline, changes, groups=groups), "-o/--output"
    )
    say(f"wrote {report_path}", err=True)
