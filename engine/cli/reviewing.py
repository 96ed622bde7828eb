"""The verbs of reviewing a change: ``diff`` of two versions of the rules, ``resilience`` to cluster failures,
and the rule files' own ``test``s."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import click

from engine.cli import inputs, options
from engine.cli.app import EXIT_PROBLEMS, guarded, main, package_version, progress, say, warn
from engine.cli.formats import DIFF, RESILIENCE, TEST, Compared, Swept, Tested
from engine.cli.output import html_page, write_report
from engine.codes import Code
from engine.errors import UsageError, warning
from engine.inputs.rule_files import RuleSet
from engine.karmada.notes import gate_notes
from engine.pipeline import evaluate
from engine.review.diff import CATEGORIES, compare
from engine.review.impacts import (
    FAILURES,
    GROUPINGS,
    MAX_K,
    RESILIENCE_GATES,
    Impact,
    anyway,
    never_settle,
    nothing_fails,
    resilience_changes,
    scenarios,
    told_apart,
)
from engine.review.resilience import MAX_WORKERS, sweep, usable_workers
from engine.review.testing import TEST_SUFFIX, run_tests


@main.command("diff")
@click.option("--base", "base", multiple=True, type=click.Path(), help="The old rules (repeatable).")
@click.option("--head", "head", multiple=True, required=True, type=click.Path(), help="The new rules (repeatable).")
@click.option("--base-ref", help="Take the old rules from this git revision of the --head paths.")
@options.FACTS
@options.NOW
@options.RESCHEDULE
@DIFF.option()
@options.REJECTIONS
@click.option("--threshold", type=click.IntRange(min=0), default=0, help="Ignore score changes up to this much.")
@click.option("--fail-on", "fail_on", default="", help=f"Exit 1 if any of these changed: {','.join(CATEGORIES)}.")
@options.REPORT
@options.evaluating
@guarded
def diff_command(
    base: Sequence[str],
    head: Sequence[str],
    base_ref: str | None,
    facts: Sequence[str],
    now: str | None,
    reschedule: str,
    output: str,
    rejections: str,
    threshold: int,
    fail_on: str,
    report_path: str | None,
) -> None:
    """Evaluate two versions of the rules over the same facts and report what changed."""
    gates = options.gates(fail_on, CATEGORIES)
    if bool(base) == bool(base_ref):
        raise UsageError("give the old rules with either --base or --base-ref")
    loaded = inputs.facts(facts, head)
    when = options.now(now)
    with tempfile.TemporaryDirectory(prefix="fleetrules-base-") as tmp:
        old_paths = list(base) if base else inputs.rules_at(str(base_ref), head, Path(tmp))
        old_rules, new_rules = inputs.rules(old_paths), inputs.rules(head)
        count = len(loaded.bindings)
        with progress(inputs.worth_a_bar(loaded, 2 * count), "bindings (base, head)") as advance:
            flags, again, reference = options.controllers(), reschedule == "all", options.reference()
            old = evaluate(old_rules, loaded, when, again, flags, reference, advance, explanations=False)
            then = None if advance is None else (lambda done: advance(count + done))
            new = evaluate(new_rules, loaded, when, again, flags, reference, then, explanations=False)
    for note in gate_notes(flags, (*old_rules.policies, *new_rules.policies, *loaded.policies), loaded):
        warn(note, {**old_rules.sources, **new_rules.sources})
    result = compare(old, new, threshold)
    text = DIFF.text(output, Compared(result, gates, package_version(), rejections == "all"))
    if base_ref:  # the old rules' files by the revision they were read from, not the directory they were put in
        text = _renamed(text, f"{tmp}/", f"{base_ref}:", output in ("json", "sarif"))
    write_report(
        report_path,
        lambda: html_page(
            package_version(),
            result=new,
            diff=result,
            title="fleetrules: policy change",
            groups=inputs.cluster_groups(),
        ),
    )
    say(text, nl=False)
    if any(result.count(g) for g in gates):
        sys.exit(EXIT_PROBLEMS)


def _renamed(text: str, old: str, new: str, in_json: bool) -> str:
    """``text`` with ``old`` replaced by ``new``, inside JSON strings when ``in_json`` (both as JSON escapes
    them: a revision named 'q"z' stays a string)."""
    if in_json:
        old, new = json.dumps(old)[1:-1], json.dumps(new)[1:-1]
    return text.replace(old, new)


@main.command()
@click.argument("rules", nargs=-1, required=True, type=click.Path())
@options.FACTS
@click.option(
    "--failure",
    "failures",
    multiple=True,
    type=click.Choice(list(FAILURES)),
    help="How the clusters fail (repeatable; default no-execute): "
    + "; ".join(f"{k}: {v}" for k, v in FAILURES.items()),
)
@click.option("--by", type=click.Choice(GROUPINGS), default="cluster", show_default=True, help="What fails together.")
@click.option(
    "--k", "k", type=click.IntRange(min=1, max=MAX_K), default=1, show_default=True, help="Fail every set of k at once."
)
@click.option(
    "--workers",
    type=click.IntRange(min=1, max=MAX_WORKERS),
    help="Local worker processes (default: one per core; never more than the scenarios).",
)
@click.option("--scheduler", "address", help="Run on the Dask cluster at this scheduler address (tcp://HOST:8786).")
@click.option("--base", "base", multiple=True, type=click.Path(), help="Compare with these old rules (repeatable).")
@click.option("--base-ref", help="Compare with the rules at this git revision.")
@RESILIENCE.option()
@click.option("--top", type=click.IntRange(min=1), help="Show only the N worst scenarios (text, Markdown).")
@click.option(
    "--fail-on",
    "fail_on",
    default="",
    help="Exit 1 if a scenario has any of these: unschedulable,spread-lost,state-lost (with --base: new ones).",
)
@options.REPORT
@options.evaluating
@guarded
def resilience(
    rules: Sequence[str],
    facts: Sequence[str],
    failures: Sequence[str],
    by: str,
    k: int,
    workers: int | None,
    address: str | None,
    base: Sequence[str],
    base_ref: str | None,
    output: str,
    top: int | None,
    fail_on: str,
    report_path: str | None,
) -> None:
    """What each cluster failure does to the fleet: evictions, moves, unschedulable workloads, lost spread and
    state, ranked by blast radius (a fleetrules extension; Karmada has no offline failover analysis)."""
    gates = options.gates(fail_on, RESILIENCE_GATES)
    if base and base_ref:
        raise UsageError("--base and --base-ref: give one of them")
    rule_set, loaded = inputs.rules_and_facts(rules, facts)
    chosen = list(failures) or ["no-execute"]
    if "no-execute" in chosen and not options.controllers().taint_manager:
        warn(
            warning(
                "the taint manager is off, as Karmada ships it: a NoExecute taint evicts nothing, in Karmada as "
                "here; it runs with --controller enable-no-execute-taint-eviction=true --controller "
                "feature-gates=Failover=true",
                subject="--failure no-execute",
                code=Code.GATE_OFF,
            )
        )
    for note in gate_notes(options.controllers(), (*rule_set.policies, *loaded.policies), loaded):
        warn(note, rule_set.sources)
    plan = scenarios(loaded.clusters, chosen, by, k)
    if not plan:
        what = "clusters" if by == "cluster" else f"{by} values among the clusters (a cluster without one is left out)"
        raise UsageError(f"no scenarios: fewer than {k} {what}")

    if address is None:
        usable, cut = usable_workers(workers, len(plan) + 1)
        if cut is not None:
            warn(warning(cut, subject="resilience", code=Code.EVALUATION))
            workers = usable

    def run(rule_set: RuleSet, label: str, said: bool) -> list[Impact]:
        """The impacts of the plan's scenarios; ``said``: warn of what the fleet does with nothing failing (one
        scenario more, run with them)."""
        with progress(len(plan) + 1, label) as advance:
            flags, reference = options.controllers(), options.reference()
            quiet, *impacts = sweep(
                rule_set, loaded, [nothing_fails(chosen[0]), *plan], flags, workers, address, advance, reference
            )
        if said:
            for words in (anyway(quiet), never_settle([quiet, *impacts])):
                if words is not None:
                    warn(warning(words, subject="resilience", code=Code.EVALUATION))
        return told_apart(impacts, quiet)

    new = run(rule_set, "scenarios", True)
    write_report(
        report_path,
        lambda: html_page(
            package_version(), resilience=new, title="fleetrules: resilience", groups=inputs.cluster_groups()
        ),
    )
    swept = Swept(new, package_version(), top)
    if base or base_ref:
        with tempfile.TemporaryDirectory(prefix="fleetrules-base-") as tmp:
            old_paths = list(base) if base else inputs.rules_at(str(base_ref), rules, Path(tmp))
            old = run(inputs.rules(old_paths), "base scenarios", False)
        changes = resilience_changes(old, new)
        swept = Swept(new, package_version(), top, changes)
        failed = any(gate in c.worse for c in changes for gate in gates)
    else:
        failed = any(gate in i.harms for i in new for gate in gates)
    say(RESILIENCE.text(output, swept), nl=False)
    if failed:
        sys.exit(EXIT_PROBLEMS)


@main.command("test")
@click.argument("paths", nargs=-1, type=click.Path())
@TEST.option()
@options.KARMADA
@options.ROOT
@guarded
def test_command(paths: Sequence[str], output_format: str) -> None:
    """Run rule tests (*_test.yaml files, below the current directory by default)."""
    base = [flag for flag, _ in options.config().controller]  # the config file's: each test's own go on top
    report = run_tests(paths or ["."], options.version(), options.roots(), base)
    if not report.outcomes:
        raise UsageError(f"no test files (*{TEST_SUFFIX}) found")
    say(TEST.text(output_format, Tested(report, package_version())), nl=False)
    if report.failed:
        sys.exit(EXIT_PROBLEMS)
