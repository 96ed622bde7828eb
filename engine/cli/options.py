"""The options several verbs share, and the values they keep for whatever the verb loads later (the rules'
Karmada version, the roots rule files may reach, the control plane's flags, the reference engine)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import click

from engine.cli.app import CONFIG_KEY, CONTROLLER_ENV
from engine.codes import Code
from engine.errors import Diagnostic, UsageError, warning
from engine.inputs.facts import Facts
from engine.karmada.config import Config, split_flags
from engine.karmada.gates import DEFAULT_CONTROLLERS, Controllers
from engine.pipeline import evaluation_time
from engine.syntax.schema import KARMADA_VERSION, KARMADA_VERSIONS, karmada_version

F = TypeVar("F", bound=Callable[..., Any])


def _kept(key: str, parse: Callable[[Any], Any]) -> Callable[[click.Context, click.Parameter, Any], None]:
    """A click callback that parses an option's value and keeps it for whatever the verb loads later
    (the rules' Karmada version, the controllers' flags); a ValueError is the option's usage error."""

    def keep(ctx: click.Context, _: click.Parameter, value: Any) -> None:
        try:
            ctx.meta[key] = parse(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None

    return keep


def _meta(key: str) -> Any:
    return click.get_current_context().meta.get(key)


_VERSION_KEY = "fleetrules.karmada_version"
KARMADA = click.option(
    "--karmada-version",
    callback=_kept(_VERSION_KEY, lambda v: _file_version() if v is None else karmada_version(v)),
    expose_value=False,
    is_eager=True,
    help=f"The Karmada version whose behaviour to model where versions differ ({', '.join(KARMADA_VERSIONS)}; "
    f"default {KARMADA_VERSION}).",
)


def _file_version() -> str:
    written = config().karmada_version
    return KARMADA_VERSION if written is None else written[0]


def version() -> str:
    """--karmada-version, else the config file's karmadaVersion, else the newest modelled."""
    return str(_meta(_VERSION_KEY) or KARMADA_VERSION)


_ROOT_KEY = "fleetrules.roots"
ROOT = click.option(
    "--root",
    multiple=True,
    type=click.Path(exists=True, file_okay=False),
    callback=_kept(_ROOT_KEY, tuple),
    expose_value=False,
    help="A directory the paths that rule and test files name (includes, a test's rules and facts) may reach "
    "besides the paths given (repeatable); nothing outside them is read.",
)


def roots() -> tuple[str, ...]:
    """--root."""
    return tuple(_meta(_ROOT_KEY) or ())


_CONTROLLERS_KEY = "fleetrules.controllers"


def config() -> Config:
    """The config file's settings (none without one)."""
    found = _meta(CONFIG_KEY)
    return found if isinstance(found, Config) else Config("")


def environment_flags() -> list[str]:
    """FLEETRULES_CONTROLLER's flags, split as a shell splits words; a UsageError for bytes that are not UTF-8."""
    raw = os.environ.get(CONTROLLER_ENV, "")
    undecodable = next((i for i, c in enumerate(raw) if "\udc80" <= c <= "\udcff"), None)  # surrogateescape's
    if undecodable is not None:
        raise click.UsageError(f"{CONTROLLER_ENV}: not UTF-8 (an undecodable byte at character {undecodable + 1})")
    return split_flags(raw)


_GIVEN_KEY = "fleetrules.controller_given"
# the modelled gates the scheduler reads too (pkg/scheduler: the affinity plugins, the queue, components); the
# others only the controller manager reads
SCHEDULER_GATES = ("MultiplePodTemplatesScheduling", "PriorityBasedScheduling", "WorkloadAffinity")


def _controllers(given: Sequence[str]) -> Controllers:
    """The config file's flags, then FLEETRULES_CONTROLLER's (a user's control plane, set once), then those given
    with --controller (a later setting of the same flag wins); the control plane's own objects among the facts
    come in after the file's once the facts are read (``take_control_plane``)."""
    click.get_current_context().meta[_GIVEN_KEY] = tuple(given)
    from_file = [flag for flag, _ in config().controller]
    from_env = environment_flags()
    try:
        Controllers.parse([*from_file, *from_env])
    except ValueError as exc:
        raise click.UsageError(f"{CONTROLLER_ENV}: {exc}") from None
    return Controllers.parse([*from_file, *from_env, *given])


def take_control_plane(facts: Facts) -> list[Diagnostic]:
    """The flags the control plane's own objects among ``facts`` run with (its components' Deployments, a Karmada
    operator object), taken over the config file's and under FLEETRULES_CONTROLLER's and --controller's; what was
    taken, and where the components' modelled gates differ, in warnings."""
    plane = control_plane_file()
    if plane is not None:
        from engine.inputs.objects import load_facts  # the file's objects: only its control plane's are used

        given_plane = load_facts([plane])
        facts = replace(facts, control_plane=(*facts.control_plane, *given_plane.control_plane))
        if not given_plane.control_plane:
            raise UsageError(f"--control-plane: {plane} holds no karmada-controller-manager or karmada-scheduler "
                             "Deployment in karmada-system, and no Karmada operator object")  # fmt: skip
    if not facts.control_plane:
        return []
    ordered = sorted(facts.control_plane, key=lambda f: f.component != "karmada-controller-manager")  # stable
    taken = [f.flag for f in ordered]
    given = _meta(_GIVEN_KEY) or ()
    from_file = [flag for flag, _ in config().controller]
    try:
        flags = Controllers.parse([*from_file, *taken, *environment_flags(), *given])
    except ValueError as exc:
        raise UsageError(f"the control plane's flags ({facts.control_plane[0].source}): {exc}") from None
    click.get_current_context().meta[_CONTROLLERS_KEY] = flags
    by_source: dict[str, list[str]] = {}
    for f in facts.control_plane:
        by_source.setdefault(f.source, []).append(f.flag)
    said = "; ".join(f"from {source}: {', '.join(found)}" for source, found in by_source.items())
    notes = [warning(f"the control plane's flags taken (under FLEETRULES_CONTROLLER and --controller): {said}",
                     subject="control plane", code=Code.CONTROL_PLANE)]  # fmt: skip
    components = {f.component for f in facts.control_plane}
    if len(components) > 1:
        each = {c: Controllers.parse([f.flag for f in facts.control_plane if f.component == c]) for c in components}
        manager, scheduler = each.get("karmada-controller-manager"), each.get("karmada-scheduler")
        if manager is not None and scheduler is not None:
            read = [(g, f) for g, f in Controllers.GATES.items() if g in SCHEDULER_GATES]  # by both components
            differ = [g for g, field in read if getattr(manager, field) != getattr(scheduler, field)]
            if differ:
                notes.append(warning(
                    f"the controller manager and the scheduler run with different feature gates ({', '.join(differ)}); "
                    "fleetrules takes one set for the control plane: the scheduler's, which come after",
                    subject="control plane", code=Code.CONTROL_PLANE
                ))  # fmt: skip
    return notes


CONTROLLER = click.option(
    "--controller",
    multiple=True,
    callback=_kept(_CONTROLLERS_KEY, _controllers),
    expose_value=False,
    metavar="FLAG=VALUE",
    help="A flag of the Karmada control plane that changes failover, policy choice or scheduling (repeatable; "
    "the defaults are Karmada's): enable-no-execute-taint-eviction=true|false (default false), "
    "no-execute-taint-eviction-purge-mode=Gracefully|Directly, graceful-eviction-timeout=10m, "
    "feature-gates=NAME=BOOL,… with Karmada's gates (pkg/features) and AllAlpha, AllBeta: modelled are Failover, "
    "MultiplePodTemplatesScheduling, PropagationPolicyPreemption, StatefulFailoverInjection and WorkloadAffinity "
    "(each off by default, as Karmada ships them) and PriorityBasedScheduling (on), "
    "skipped-propagating-namespaces=REGEXP,… (default kube-.*). Your control "
    f"plane's flags can be set once in {CONTROLLER_ENV} (space-separated); --controller adds to them.",
)


def controllers() -> Controllers:
    """FLEETRULES_CONTROLLER and --controller."""
    found = _meta(_CONTROLLERS_KEY)
    return found if isinstance(found, Controllers) else DEFAULT_CONTROLLERS


_REFERENCE_KEY = "fleetrules.reference"
REFERENCE = click.option(
    "--reference",
    is_flag=True,
    callback=_kept(_REFERENCE_KEY, bool),
    expose_value=False,
    help="Evaluate every rule inside durable-rules, without the indexed joins: slow, and the same answer "
    "(what the indexed joins are tested against; for checking a suspected difference).",
)


def reference() -> bool:
    """--reference."""
    return _meta(_REFERENCE_KEY) is True


FACTS = click.option(
    "--facts",
    "facts",
    multiple=True,
    type=click.Path(),
    help="Fact file or directory (repeatable); default: the YAML files among the rule paths, read as a snapshot.",
)
NOW = click.option("--now", help="The evaluation time, RFC 3339 (default: the facts' own times only).")
RESCHEDULE = click.option(
    "--reschedule",
    type=click.Choice(["needed", "all"]),
    default="needed",
    show_default=True,
    help="needed: run the bindings Karmada's scheduler would (not yet scheduled, placement or replicas changed, "
    "reschedule triggered, a target cluster deleting); the others keep their clusters. all: place every one anew.",
)
REPORT = click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False),
    help="Also write a self-contained HTML report (placement matrix, timeline, diff) to this file.",
)


_PLANE_KEY = "fleetrules.control_plane_file"
CONTROL_PLANE = click.option(
    "--control-plane",
    "control_plane",
    type=click.Path(exists=True, dir_okay=False),
    callback=_kept(_PLANE_KEY, lambda v: v),
    expose_value=False,
    help="The control plane's own objects (`kubectl -n karmada-system get deploy karmada-controller-manager "
    "karmada-scheduler -o yaml`, or a Karmada operator object): their flags, as among the facts.",
)


def control_plane_file() -> str | None:
    """--control-plane."""
    found = _meta(_PLANE_KEY)
    return str(found) if found else None


def evaluating(command: F) -> F:
    """The options of every verb that evaluates rules: the control plane's flags and objects, the reference
    engine, the Karmada version and the roots rule files may reach (in this order in its help)."""
    for option in (ROOT, KARMADA, REFERENCE, CONTROL_PLANE, CONTROLLER):
        command = option(command)
    return command


def now(value: str | None) -> dt.datetime | None:
    """--now, as a time."""
    return evaluation_time(value, "--now")


def gates(fail_on: str, known: Sequence[str]) -> set[str]:
    """The comma-separated ``--fail-on`` categories, each one of ``known``."""
    chosen = {g.strip() for g in fail_on.split(",") if g.strip()}
    unknown = chosen - set(known)
    if unknown:
        raise UsageError(f"--fail-on: unknown {', '.join(sorted(unknown))}; choose from {', '.join(known)}")
    return chosen


REJECTIONS = click.option(
    "--rejections",
    type=click.Choice(["summary", "all"]),
    default="summary",
    show_default=True,
    help="summary: per binding, the rejected clusters counted by reason with the first few names (as Karmada's "
    "FitError counts them) and the best feasible clusters. all: also every rejected cluster with its rule and "
    "source line, and every feasible cluster with its score.",
)
