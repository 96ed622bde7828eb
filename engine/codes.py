"""Every kind of diagnostic fleetrules gives, with a stable code: the SARIF ruleId, the language server's code,
`check -o json`'s ``code``, and the table of docs/diagnostics.md (which a test holds to this one).

A code names a kind of problem, not one message: the words may improve, the code stays. Codes are never reused.
"""

from __future__ import annotations

import enum


class Code(enum.Enum):
    """``id`` (FRnnn), ``slug`` (a short name) and ``summary`` (what the problem is, for the docs and SARIF)."""

    USAGE = ("FR000", "usage", "A command line or API call that does not fit together")
    SYNTAX = ("FR001", "syntax", "The text does not parse: a token where the grammar has none")
    TOO_LARGE = ("FR002", "too-large", "A number, nesting, file or rule set past what fleetrules reads")
    UNREADABLE = ("FR003", "unreadable", "A file that cannot be read: missing, not text, or a link out of its tree")
    DUPLICATE = ("FR101", "duplicate", "A name, statement, block, label or field given twice where one is meant")
    UNKNOWN_NAME = ("FR102", "unknown-name", "A word the language or Karmada does not know (a value, a fact type)")
    UNKNOWN_VARIABLE = ("FR103", "unknown-variable", "A variable no pattern binds, or a condition has no parameter")
    UNKNOWN_FIELD = ("FR104", "unknown-field", "A field the fact does not have, or a whole fact where a field is")
    TYPE_MISMATCH = ("FR105", "type-mismatch", "A value compared with or used as another type, which never matches")
    INVALID_NAME = ("FR106", "invalid-name", "A name, key or value Kubernetes or the language refuses")
    OUT_OF_RANGE = ("FR107", "out-of-range", "A number or length outside what the field holds")
    KARMADA_VALIDATION = ("FR108", "karmada-validation", "What Karmada's validation refuses, in its words")
    MATCHES_NOTHING = ("FR109", "matches-nothing", "A selector or statement that matches less than it says")
    EXTENSION = ("FR110", "extension", "A fleetrules extension, refused with --strict-karmada")
    DEPRECATED = ("FR111", "deprecated", "Deprecated, or removed in the Karmada version evaluated")
    JSONPATH = ("FR112", "jsonpath", "A JSONPath Karmada admits and every use of fails, or one that may")
    CONDITION_CYCLE = ("FR113", "condition-cycle", "A named condition that uses itself, which never ends")
    NOT_COMPILABLE = ("FR114", "not-compilable", "A rule the compiler or the rule engine cannot run")
    MISUSED = ("FR115", "misused", "A statement, option or call where it has no meaning, or without what it needs")
    INCLUDE = ("FR201", "include", "An include or rule file that cannot be read where it is named")
    OBJECT = ("FR301", "object", "A Karmada or Kubernetes object that is not valid as the API server takes it")
    YAML = ("FR302", "yaml", "YAML or JSON that cannot be read safely")
    EVENTS = ("FR303", "events", "An events file that a simulation cannot use")
    POLICY_YAML = ("FR304", "policy-yaml", "PropagationPolicy YAML that Karmada or fleetrules refuses")
    CONTROL_PLANE = ("FR305", "control-plane", "A control plane setting (flag, gate, config file) that is refused")
    GATE_OFF = ("FR401", "gate-off", "A feature gate or flag off, as Karmada ships it, that the inputs use")
    NOT_MODELLED = ("FR402", "not-modelled", "A gate or flag on that fleetrules does not model, or ignores")
    CONTROLLER_CHANGE = ("FR403", "controller-change", "A controller changes what the snapshot shows")
    EVALUATION = ("FR501", "evaluation", "What the evaluation passed over or could not decide, and why")

    def __init__(self, id: str, slug: str, summary: str) -> None:
        self.id = id
        self.slug = slug
        self.summary = summary


BY_ID = {code.id: code for code in Code}
