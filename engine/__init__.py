"""fleetrules: Karmada placement and failover policy as code.

    from engine import load_rules, load_facts, evaluate
    result = evaluate(load_rules(["policy.fr"]), load_facts(["facts/"]))

The public surface is re-exported here; everything else is private to the package.
"""

import sys


def unsupported_python(version: tuple[int, ...]) -> str | None:
    """Why fleetrules cannot run on this Python (pyproject's requires-python), or None."""
    if (3, 11) <= version[:2] < (3, 13):
        return None
    found = ".".join(str(n) for n in version[:3])
    return (
        f"fleetrules needs Python 3.11 or 3.12, not {found}: durable-rules 2.0.28, its rule engine, does not "
        "build or import on other versions (docs/architecture.md). Create the environment with "
        "one of them, e.g. `python3.12 -m venv .venv`."
    )


if (_why := unsupported_python(sys.version_info[:3])) is not None:  # before durable-rules fails obscurely
    raise ImportError(_why)

from engine.check.rules import load_rules
from engine.check.semantic import check
from engine.errors import Diagnostic, FactError, FleetrulesError, RuleError, Severity, Span, UsageError
from engine.evaluate import evaluate, simulate
from engine.failover.controllers import Controllers
from engine.inputs.facts import Binding, Cluster, EvictionTask, Facts
from engine.inputs.objects import load_facts
from engine.inputs.rules import RuleSet
from engine.render.results import result_data, to_json, to_text, to_yaml
from engine.results import Entry, EntryKind, Eviction, Explanation, Placement, Reason, Result
from engine.syntax.ast import File
from engine.syntax.fmt import format_file, format_source
from engine.syntax.parse import parse

__all__ = [
    "Binding",
    "Cluster",
    "Controllers",
    "Diagnostic",
    "Entry",
    "EntryKind",
    "Eviction",
    "EvictionTask",
    "Explanation",
    "FactError",
    "Facts",
    "File",
    "FleetrulesError",
    "Placement",
    "Reason",
    "Result",
    "RuleError",
    "RuleSet",
    "Severity",
    "Span",
    "UsageError",
    "check",
    "evaluate",
    "format_file",
    "format_source",
    "load_facts",
    "load_rules",
    "parse",
    "result_data",
    "simulate",
    "to_json",
    "to_text",
    "to_yaml",
]
