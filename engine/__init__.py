"""fleetrules: Karmada placement and failover policy as code.

    from engine import load_rules, load_facts, evaluate
    result = evaluate(load_rules(["policy.fr"]), load_facts(["facts/"]))

The public surface is re-exported here; everything else is private to the package.
"""

from engine.ast import File
from engine.check import check
from engine.errors import Diagnostic, FactError, FleetrulesError, RuleError, Severity, Span, UsageError
from engine.evaluate import evaluate
from engine.facts import Binding, Cluster, Facts, load_facts
from engine.fmt import format_file, format_source
from engine.load import RuleSet, load_rules
from engine.parse import parse
from engine.render import result_data, to_json, to_text, to_yaml
from engine.results import Explanation, Placement, Reason, Result

__all__ = [
    "Binding",
    "Cluster",
    "Diagnostic",
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
    "to_json",
    "to_text",
    "to_yaml",
]
