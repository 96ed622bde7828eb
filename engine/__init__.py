"""fleetrules: Karmada placement and failover policy as code.

The public surface is re-exported here; everything else is private to the package.
"""

from engine.ast import File
from engine.check import check
from engine.errors import Diagnostic, FactError, FleetrulesError, RuleError, Severity, Span, UsageError
from engine.fmt import format_file, format_source
from engine.load import RuleSet, load_rules
from engine.parse import parse

__all__ = [
    "Diagnostic",
    "FactError",
    "File",
    "FleetrulesError",
    "RuleError",
    "RuleSet",
    "Severity",
    "Span",
    "UsageError",
    "check",
    "format_file",
    "format_source",
    "load_rules",
    "parse",
]
