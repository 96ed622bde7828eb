"""fleetrules: Karmada placement and failover policy as code.

    from engine import load_rules, load_facts, evaluate
    result = evaluate(load_rules(["policy.fr"]), load_facts(["facts/"]))

The public surface is re-exported here; everything else is private to the package.
"""

import importlib
import sys
from typing import TYPE_CHECKING, Any


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

# What the API names, and the module each comes from: loaded when first read (PEP 562), so that `import
# engine.cli` and `fleetrules --version` load none of the pipeline, and `from engine import evaluate` loads what
# evaluating needs.
_EXPORTS: dict[str, str] = {
    "Binding": "engine.inputs.facts",
    "Cluster": "engine.inputs.facts",
    "Controllers": "engine.karmada.gates",
    "Diagnostic": "engine.errors",
    "Entry": "engine.results",
    "EntryKind": "engine.results",
    "Eviction": "engine.results",
    "EvictionTask": "engine.inputs.facts",
    "Explanation": "engine.results",
    "FactError": "engine.errors",
    "Facts": "engine.inputs.facts",
    "File": "engine.syntax.ast",
    "FleetrulesError": "engine.errors",
    "Placement": "engine.results",
    "Reason": "engine.results",
    "Result": "engine.results",
    "RuleError": "engine.errors",
    "RuleSet": "engine.inputs.rule_files",
    "Severity": "engine.errors",
    "Span": "engine.errors",
    "UsageError": "engine.errors",
    "check": "engine.checker.semantic",
    "evaluate": "engine.pipeline",
    "format_file": "engine.syntax.fmt",
    "format_source": "engine.syntax.fmt",
    "load_facts": "engine.inputs.objects",
    "load_rules": "engine.checker.rule_set",
    "parse": "engine.syntax.parse",
    "result_data": "engine.render.results",
    "simulate": "engine.pipeline",
    "to_json": "engine.render.results",
    "to_text": "engine.render.results",
    "to_yaml": "engine.render.results",
}

if TYPE_CHECKING:
    from engine.checker.rule_set import load_rules
    from engine.checker.semantic import check
    from engine.errors import Diagnostic, FactError, FleetrulesError, RuleError, Severity, Span, UsageError
    from engine.inputs.facts import Binding, Cluster, EvictionTask, Facts
    from engine.inputs.objects import load_facts
    from engine.inputs.rule_files import RuleSet
    from engine.karmada.gates import Controllers
    from engine.pipeline import evaluate, simulate
    from engine.render.results import result_data, to_json, to_text, to_yaml
    from engine.results import Entry, EntryKind, Eviction, Explanation, Placement, Reason, Result
    from engine.syntax.ast import File
    from engine.syntax.fmt import format_file, format_source
    from engine.syntax.parse import parse


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # read once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


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
